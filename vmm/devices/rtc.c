// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include <time.h>

#include "vmm/devices/rtc.h"

static uint8_t bcd(int v)
{
	return (uint8_t)(((v / 10) << 4) | (v % 10));
}

static uint8_t rtc_read(uint8_t index)
{
	time_t now = time(NULL);
	struct tm tm;

	gmtime_r(&now, &tm);
	switch (index) {
	case 0x00: return bcd(tm.tm_sec);
	case 0x02: return bcd(tm.tm_min);
	case 0x04: return bcd(tm.tm_hour);
	case 0x06: return bcd(tm.tm_wday + 1);
	case 0x07: return bcd(tm.tm_mday);
	case 0x08: return bcd(tm.tm_mon + 1);
	case 0x09: return bcd(tm.tm_year % 100);
	case 0x32: return bcd(19 + tm.tm_year / 100);	/* century */
	case 0x0a: return 0x26;	/* divider on, 1024 Hz, no update in progress */
	case 0x0b: return 0x02;	/* 24-hour, BCD */
	case 0x0d: return 0x80;	/* battery good */
	default: return 0;
	}
}

void rtc_pio(void *opaque, uint64_t port, int is_write, uint8_t *data, unsigned size)
{
	struct rtc *rtc = opaque;

	if ((port & 1) == 0) {
		if (is_write)
			rtc->index = data[0] & 0x7f;	/* bit 7 is the NMI mask */
		else
			memset(data, 0xff, size);
		return;
	}
	if (!is_write)
		data[0] = rtc_read(rtc->index);
}
