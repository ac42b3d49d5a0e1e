// SPDX-License-Identifier: GPL-2.0
/*
 * Register semantics from the 16550A data sheet. Transmission is instant:
 * THR is always empty again right after a write, so the THRE interrupt is
 * re-armed by every write and cleared by an IIR read that reports it.
 */
#include <linux/kvm.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "vmm/devices/serial.h"
#include "vmm/util/statusline.h"

enum { REG_RBR_THR, REG_IER, REG_IIR_FCR, REG_LCR, REG_MCR, REG_LSR, REG_MSR, REG_SCR };

#define IER_RDI   0x01
#define IER_THRI  0x02
#define IER_RLSI  0x04
#define IER_MSI   0x08
#define IIR_NONE  0x01
#define IIR_MSI   0x00
#define IIR_THRI  0x02
#define IIR_RDI   0x04
#define IIR_FIFO  0xc0
#define FCR_FIFO  0x01
#define FCR_CLR_RX 0x02
#define LCR_DLAB  0x80
#define MCR_DTR   0x01
#define MCR_RTS   0x02
#define MCR_OUT1  0x04
#define MCR_OUT2  0x08
#define MCR_LOOP  0x10
#define LSR_DR    0x01
#define LSR_THRE  0x20
#define LSR_TEMT  0x40
#define MSR_DCTS  0x01
#define MSR_DDSR  0x02
#define MSR_TERI  0x04
#define MSR_DDCD  0x08
#define MSR_CTS   0x10
#define MSR_DSR   0x20
#define MSR_RI    0x40
#define MSR_DCD   0x80

#define RX_SIZE   4096
#define OUT_SIZE  4096

struct serial {
	pthread_mutex_t lock;
	int vm_fd;
	unsigned irq;
	int irq_level;
	int out_fd;
	serial_line_fn *on_line;
	void *opaque;

	uint8_t ier, fcr, lcr, mcr, msr, scr, dll, dlm;
	int thri_pending;
	uint8_t rx[RX_SIZE];
	unsigned rx_head, rx_len;

	char out[OUT_SIZE];
	unsigned out_len;
	char line[512];
	unsigned line_len;
};

struct serial *serial_create(int vm_fd, unsigned irq, int out_fd,
			     serial_line_fn *on_line, void *opaque)
{
	struct serial *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	pthread_mutex_init(&s->lock, NULL);
	s->vm_fd = vm_fd;
	s->irq = irq;
	s->out_fd = out_fd;
	s->on_line = on_line;
	s->opaque = opaque;
	s->msr = MSR_DCD | MSR_DSR | MSR_CTS;
	s->dll = 12;	/* 9600 baud, as after reset */
	return s;
}

void serial_destroy(struct serial *s)
{
	if (!s)
		return;
	serial_flush(s);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static uint8_t serial_iir(const struct serial *s)
{
	uint8_t fifo = (s->fcr & FCR_FIFO) ? IIR_FIFO : 0;

	if ((s->ier & IER_RDI) && s->rx_len)
		return fifo | IIR_RDI;
	if ((s->ier & IER_THRI) && s->thri_pending)
		return fifo | IIR_THRI;
	if ((s->ier & IER_MSI) && (s->msr & (MSR_DCTS | MSR_DDSR | MSR_TERI | MSR_DDCD)))
		return fifo | IIR_MSI;
	return fifo | IIR_NONE;
}

/* On a PC the UART's interrupt reaches the PIC only through OUT2. */
static void serial_update_irq(struct serial *s)
{
	int level = !(serial_iir(s) & IIR_NONE) && (s->mcr & MCR_OUT2) && !(s->mcr & MCR_LOOP);
	struct kvm_irq_level irq = { .irq = s->irq, .level = level };

	if (level == s->irq_level)
		return;
	s->irq_level = level;
	ioctl(s->vm_fd, KVM_IRQ_LINE, &irq);
}

static void serial_write_out(int fd, const char *buf, size_t len)
{
	/* A failed write (output closed) is ignored: the guest keeps running. */
	statusline_write(fd, buf, len);
}

static void serial_emit(struct serial *s, uint8_t c)
{
	s->out[s->out_len++] = c;
	if (c == '\n' || s->out_len == OUT_SIZE) {
		serial_write_out(s->out_fd, s->out, s->out_len);
		s->out_len = 0;
	}
	if (c == '\n' || s->line_len == sizeof(s->line) - 1) {
		s->line[s->line_len] = 0;
		if (s->line_len && s->line[s->line_len - 1] == '\r')
			s->line[s->line_len - 1] = 0;
		if (s->on_line)
			s->on_line(s->opaque, s->line);
		s->line_len = 0;
	}
	if (c != '\n')
		s->line[s->line_len++] = c;
}

static void serial_rx_push(struct serial *s, uint8_t c)
{
	if (s->rx_len == RX_SIZE)
		return;
	s->rx[(s->rx_head + s->rx_len++) % RX_SIZE] = c;
}

static void serial_set_mcr(struct serial *s, uint8_t mcr)
{
	uint8_t old = s->msr, msr;

	s->mcr = mcr & 0x1f;
	if (s->mcr & MCR_LOOP) {
		msr = 0;
		if (s->mcr & MCR_RTS) msr |= MSR_CTS;
		if (s->mcr & MCR_DTR) msr |= MSR_DSR;
		if (s->mcr & MCR_OUT1) msr |= MSR_RI;
		if (s->mcr & MCR_OUT2) msr |= MSR_DCD;
	} else {
		msr = MSR_DCD | MSR_DSR | MSR_CTS;
	}
	if ((msr ^ old) & MSR_CTS) msr |= MSR_DCTS;
	if ((msr ^ old) & MSR_DSR) msr |= MSR_DDSR;
	if ((old & MSR_RI) && !(msr & MSR_RI)) msr |= MSR_TERI;
	if ((msr ^ old) & MSR_DCD) msr |= MSR_DDCD;
	s->msr = msr | (old & (MSR_DCTS | MSR_DDSR | MSR_TERI | MSR_DDCD));
}

static void serial_write_reg(struct serial *s, unsigned reg, uint8_t v)
{
	switch (reg) {
	case REG_RBR_THR:
		if (s->lcr & LCR_DLAB) {
			s->dll = v;
		} else {
			if (s->mcr & MCR_LOOP)
				serial_rx_push(s, v);
			else
				serial_emit(s, v);
			s->thri_pending = 1;
		}
		break;
	case REG_IER:
		if (s->lcr & LCR_DLAB) {
			s->dlm = v;
		} else {
			if (!(s->ier & IER_THRI) && (v & IER_THRI))
				s->thri_pending = 1;
			s->ier = v & 0x0f;
		}
		break;
	case REG_IIR_FCR:
		if (v & FCR_CLR_RX)
			s->rx_len = 0;
		s->fcr = v & 0xc9;
		break;
	case REG_LCR:
		s->lcr = v;
		break;
	case REG_MCR:
		serial_set_mcr(s, v);
		break;
	case REG_SCR:
		s->scr = v;
		break;
	default:
		break;	/* LSR and MSR are read-only */
	}
}

static uint8_t serial_read_reg(struct serial *s, unsigned reg)
{
	uint8_t v;

	switch (reg) {
	case REG_RBR_THR:
		if (s->lcr & LCR_DLAB)
			return s->dll;
		if (!s->rx_len)
			return 0;
		v = s->rx[s->rx_head];
		s->rx_head = (s->rx_head + 1) % RX_SIZE;
		s->rx_len--;
		return v;
	case REG_IER:
		return (s->lcr & LCR_DLAB) ? s->dlm : s->ier;
	case REG_IIR_FCR:
		v = serial_iir(s);
		if ((v & 0x0f) == IIR_THRI)
			s->thri_pending = 0;
		return v;
	case REG_LCR:
		return s->lcr;
	case REG_MCR:
		return s->mcr;
	case REG_LSR:
		return LSR_THRE | LSR_TEMT | (s->rx_len ? LSR_DR : 0);
	case REG_MSR:
		v = s->msr;
		s->msr &= ~(MSR_DCTS | MSR_DDSR | MSR_TERI | MSR_DDCD);
		return v;
	default:
		return s->scr;
	}
}

void serial_pio(void *opaque, uint64_t port, int is_write, uint8_t *data, unsigned size)
{
	struct serial *s = opaque;
	unsigned reg = port & 7;

	pthread_mutex_lock(&s->lock);
	if (is_write)
		serial_write_reg(s, reg, data[0]);
	else
		data[0] = serial_read_reg(s, reg);
	for (unsigned i = 1; !is_write && i < size; i++)
		data[i] = 0xff;
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
}

unsigned serial_receive(struct serial *s, const uint8_t *buf, unsigned len)
{
	unsigned n = 0;

	pthread_mutex_lock(&s->lock);
	while (n < len && s->rx_len < RX_SIZE)
		serial_rx_push(s, buf[n++]);
	serial_update_irq(s);
	pthread_mutex_unlock(&s->lock);
	return n;
}

void serial_flush(struct serial *s)
{
	pthread_mutex_lock(&s->lock);
	serial_write_out(s->out_fd, s->out, s->out_len);
	s->out_len = 0;
	pthread_mutex_unlock(&s->lock);
}
