/* Uses only the installed headers and library: the version query must match the header. */
#include <narma/narma.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    if (strcmp(NARMA_Get_version(), NARMA_VERSION) != 0) {
        fprintf(stderr, "library %s, header %s\n", NARMA_Get_version(), NARMA_VERSION);
        return 1;
    }
    printf("narma %s: %s\n", NARMA_VERSION, NARMA_Strerror(NARMA_SUCCESS));
    return 0;
}
