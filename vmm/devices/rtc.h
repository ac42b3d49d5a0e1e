/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A read-only MC146818 CMOS clock showing host UTC time, so the guest's
 * boot-time clock read finds a sane date and no update in progress.
 */
#ifndef VMM_RTC_H
#define VMM_RTC_H

#include <stdint.h>

struct rtc {
	uint8_t index;
};

/* bus_fn for the index (0x70) and data (0x71) ports. */
void rtc_pio(void *opaque, uint64_t port, int is_write, uint8_t *data, unsigned size);

#endif
