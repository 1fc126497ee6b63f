#include "orb_startup.h"

#include <stdint.h>

// libavcodec links libjxl, which links Highway (libhwy). Highway 1.0's nanobenchmark keeps the timer's resolution in
// a static constant that its library constructor measures at load: 65,536 timer reads, each fenced, which costs
// 7-9 ms of CPU before `main` of every process that loads FFmpeg (on this project's 2-core VM: an empty program
// linked with the player's libraries took 45.5 ms of CPU to start and exit, median of six runs of 20, and 37.4 ms
// with this). Nothing in the player, FFmpeg or libjxl measures code with nanobenchmark, so the value is never read;
// the constructor calls the function through the PLT, and the executable's definition, found first, answers at
// once with a typical resolution (in timer ticks) instead.
//
// The symbol is Highway's C++ name for `hwy::platform::TimerResolution()`. Where libhwy is missing or no longer
// measures at load, this definition is simply unused.
uint64_t _ZN3hwy8platform15TimerResolutionEv(void);
uint64_t _ZN3hwy8platform15TimerResolutionEv(void) { return 32; }
