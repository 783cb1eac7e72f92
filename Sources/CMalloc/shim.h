// glibc's malloc tuning and statistics (mallopt, malloc_trim, mallinfo2), which Swift's Glibc module leaves out.
#include <malloc.h>
