# cmake -DLIB=<libnarma.so> -DNM=<nm> -P check_pmpi_only.cmake
# Fails when the library calls an MPI_ function (an undefined MPI_ symbol): narma's own MPI
# calls must use PMPI_ names (src/util/pmpi.h), or libnarma-mpi would intercept them.
execute_process(COMMAND ${NM} -D --undefined-only ${LIB} OUTPUT_VARIABLE syms RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} failed on ${LIB}")
endif()
string(REGEX MATCHALL "[ \t]MPI_[A-Za-z0-9_]+" bad "${syms}")
string(REGEX MATCHALL "[ \t]PMPI_[A-Za-z0-9_]+" good "${syms}")
list(LENGTH good ngood)
if(bad)
  message(FATAL_ERROR "libnarma calls MPI_ names; add them to src/util/pmpi.h:${bad}")
endif()
if(ngood LESS 20)
  message(FATAL_ERROR "only ${ngood} PMPI_ symbols in ${LIB}: is this libnarma?")
endif()
message(STATUS "libnarma calls ${ngood} PMPI_ functions and no MPI_ one")
