// SPDX-License-Identifier: GPL-2.0
/*
 * The line shows what a long boot trace is doing without a look at the
 * output file: how far the guest got, how fast events come, whether any
 * were dropped, and the tracer's phase (before, inside or after the
 * guest's ftrace_init). The guest console and log lines share the terminal
 * through vmm/util/statusline.c, which erases the line before they write.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "vmm/cli/progress.h"
#include "vmm/trace/tracer.h"
#include "vmm/util/statusline.h"
#include "vmm/util/util.h"

#define PROGRESS_PERIOD_NS (250 * 1000 * 1000)	/* at most four refreshes a second */

struct progress {
	struct tracer *t;
	pthread_t thread;
	atomic_int stop;
};

static void progress_draw(struct progress *p, uint64_t *last_events, uint64_t *last_ns)
{
	struct tracer_progress tp;
	uint64_t now = util_now_ns();
	double rate;
	char line[200];

	tracer_progress(p->t, &tp);
	rate = now > *last_ns ? (double)(tp.events - *last_events) * 1e9 / (double)(now - *last_ns) : 0;
	snprintf(line, sizeof(line), "vmmtrace: guest %" PRIu64 ".%01" PRIu64 " s, %" PRIu64 " events, %.0f/s, "
		 "%" PRIu64 " dropped, %s", tp.guest_ns / 1000000000, tp.guest_ns / 100000000 % 10, tp.events,
		 rate, tp.dropped, tp.phase);
	statusline_show(line);
	*last_events = tp.events;
	*last_ns = now;
}

static void *progress_thread(void *arg)
{
	struct progress *p = arg;
	struct timespec period = { 0, PROGRESS_PERIOD_NS };
	uint64_t last_events = 0, last_ns = util_now_ns();

	while (!atomic_load(&p->stop)) {
		nanosleep(&period, NULL);
		if (!atomic_load(&p->stop))
			progress_draw(p, &last_events, &last_ns);
	}
	return NULL;
}

int progress_start(struct progress **out, struct tracer *t)
{
	struct progress *p;
	int rc;

	*out = NULL;
	if (statusline_enable(2))
		return 0;	/* not a terminal: silent */
	p = calloc(1, sizeof(*p));
	if (!p) {
		statusline_disable();
		return -ENOMEM;
	}
	p->t = t;
	rc = pthread_create(&p->thread, NULL, progress_thread, p);
	if (rc) {
		statusline_disable();
		free(p);
		return -rc;
	}
	*out = p;
	return 0;
}

void progress_stop(struct progress *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, 1);
	pthread_join(p->thread, NULL);
	statusline_disable();
	free(p);
}
