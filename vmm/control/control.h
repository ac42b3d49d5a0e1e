/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The control socket of a running guest (proto/control.h): a Unix socket
 * with mode 0600 that accepts peers of our own uid only. One thread serves
 * every connection; a malformed, truncated or oversized request gets an
 * error reply and never touches the guest.
 */
#ifndef VMM_CONTROL_H
#define VMM_CONTROL_H

#include "vmm/util/error.h"

struct control;
struct tracer;
struct vm;

int control_start(struct control **out, struct vm *vm, struct tracer *t, const char *path,
		  struct errbuf *err);
/* Ends every attached client (their output flushed), closes and removes the socket. */
void control_stop(struct control *c);

#endif
