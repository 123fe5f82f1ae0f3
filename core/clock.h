/* The monotonic clock (CLOCK_MONOTONIC) every timing reads: the report's seconds, the CLI's
 * run times, the Triton backend's timestamps. Only differences of its values mean anything. */
#ifndef SWIN_CLOCK_H
#define SWIN_CLOCK_H

#include <stdint.h>

/* In seconds. */
double swin_clock_seconds(void);
/* In nanoseconds (Triton's timestamps: its steady_clock is CLOCK_MONOTONIC). */
uint64_t swin_clock_ns(void);

#endif
