// The kernel's NTP status (adjtimex(2), struct timex, STA_UNSYNC, TIME_ERROR), which Swift's Glibc module leaves out.
#include <sys/timex.h>
