/*
 * narma's stand-in for foMPI-NA's fompi.h, used only by scripts/foreign-suites.sh
 * to build foMPI-NA's own tests against narma. Everything a foMPI-NA program
 * needs comes from the installed compatibility header <narma/fompi.h>; the one
 * addition is `glob_info`, a foMPI-internal global (verbosity, debug rank) that
 * the tests print with. Its definition is in fompi_driver.c.
 */
#ifndef NARMA_FOREIGN_FOMPI_H
#define NARMA_FOREIGN_FOMPI_H

#include <narma/fompi.h>

struct narma_fompi_glob_info {
    int v_option; /* verbosity of the tests' output */
    int debug_pe; /* this rank, printed in error messages */
};
extern struct narma_fompi_glob_info glob_info;

#endif
