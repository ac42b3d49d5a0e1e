/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guest console as the user sees it: input from stdin to the UART, and
 * a watch on the output lines for the kernel's panic and power-off messages
 * (with panic=-1 a panic ends in a reset, which alone looks like a reboot).
 */
#ifndef VMM_CONSOLE_H
#define VMM_CONSOLE_H

struct vm;

/* serial_line_fn: opaque is the vm. */
void console_watch_line(void *opaque, const char *line);

/*
 * Forwards stdin to the guest when it is a terminal (switched to raw
 * input, signals kept) or a pipe/file. Returns 0 or -errno.
 */
int console_input_start(struct vm *vm);
void console_input_stop(void);

#endif
