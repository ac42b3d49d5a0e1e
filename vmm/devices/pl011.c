// SPDX-License-Identifier: GPL-2.0
/*
 * An ARM PL011 UART as Linux's amba-pl011 driver uses it (ARM DDI 0183):
 * the data and flag registers, the interrupt mask, raw and masked status
 * and clear, the control registers read back, and the PrimeCell IDs the
 * AMBA bus probes. Transmission is instant (the FIFO is always empty, so
 * its TX interrupt stands while unmasked); received bytes wait in a small
 * buffer. The interrupt is a level on the line the host names, set
 * through KVM_IRQ_LINE.
 */
#include <linux/kvm.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "vmm/devices/pl011.h"

#define UART_DR		0x000
#define UART_FR		0x018
#define UART_IMSC	0x038
#define UART_RIS	0x03c
#define UART_MIS	0x040
#define UART_ICR	0x044
#define FR_RXFE		(1u << 4)
#define FR_TXFE		(1u << 7)
#define INT_RX		(1u << 4)
#define INT_TX		(1u << 5)
#define INT_RT		(1u << 6)
#define PL011_RX	256

struct pl011 {
	int vm_fd;
	uint32_t irq;			/* KVM_IRQ_LINE's number for its line */
	pl011_out_fn *out;
	void *opaque;
	pthread_mutex_t lock;
	uint32_t regs[0x48 / 4];	/* what the guest wrote, read back */
	uint32_t imsc;
	uint8_t rx[PL011_RX];
	unsigned rx_head, rx_len;
	int level;
};

/* The PrimeCell's ID registers at 0xfe0..0xffc: a PL011 r1p5. */
static const uint8_t pl011_id[8] = { 0x11, 0x10, 0x14, 0x00, 0x0d, 0xf0, 0x05, 0xb1 };

static uint32_t pl011_ris(const struct pl011 *u)
{
	return INT_TX | (u->rx_len ? INT_RX | INT_RT : 0);
}

static void pl011_update(struct pl011 *u)
{
	int level = (pl011_ris(u) & u->imsc) != 0;
	struct kvm_irq_level irq = { .irq = u->irq, .level = (uint32_t)level };

	if (level == u->level)
		return;
	u->level = level;
	ioctl(u->vm_fd, KVM_IRQ_LINE, &irq);
}

struct pl011 *pl011_create(int vm_fd, uint32_t irq, pl011_out_fn *out, void *opaque)
{
	struct pl011 *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->vm_fd = vm_fd;
	u->irq = irq;
	u->out = out;
	u->opaque = opaque;
	pthread_mutex_init(&u->lock, NULL);
	return u;
}

void pl011_destroy(struct pl011 *u)
{
	if (!u)
		return;
	pthread_mutex_destroy(&u->lock);
	free(u);
}

void pl011_mmio(struct pl011 *u, uint64_t off, uint8_t *data, unsigned len, int is_write)
{
	uint32_t v = 0;

	memcpy(&v, data, len < 4 ? len : 4);
	pthread_mutex_lock(&u->lock);
	if (is_write) {
		switch (off) {
		case UART_DR: {
			char c = (char)(v & 0xff);

			if (u->out)
				u->out(u->opaque, &c, 1);
			break;
		}
		case UART_IMSC:
			u->imsc = v & 0x7ff;
			break;
		case UART_ICR:
			break;	/* TX stands while the FIFO is empty; RX while bytes wait */
		default:
			if (off < sizeof(u->regs) && !(off & 3))
				u->regs[off / 4] = v;
		}
		pl011_update(u);
		pthread_mutex_unlock(&u->lock);
		return;
	}
	switch (off) {
	case UART_DR:
		if (u->rx_len) {
			v = u->rx[u->rx_head];
			u->rx_head = (u->rx_head + 1) % PL011_RX;
			u->rx_len--;
		}
		break;
	case UART_FR:
		v = FR_TXFE | (u->rx_len ? 0 : FR_RXFE);
		break;
	case UART_IMSC:
		v = u->imsc;
		break;
	case UART_RIS:
		v = pl011_ris(u);
		break;
	case UART_MIS:
		v = pl011_ris(u) & u->imsc;
		break;
	default:
		if (off >= 0xfe0 && off < 0x1000)
			v = pl011_id[(off - 0xfe0) / 4];
		else if (off < sizeof(u->regs) && !(off & 3))
			v = u->regs[off / 4];
	}
	pl011_update(u);
	pthread_mutex_unlock(&u->lock);
	memcpy(data, &v, len < 4 ? len : 4);
}

size_t pl011_receive(struct pl011 *u, const uint8_t *buf, size_t len)
{
	size_t n = 0;

	pthread_mutex_lock(&u->lock);
	for (; n < len && u->rx_len < PL011_RX; n++, u->rx_len++)
		u->rx[(u->rx_head + u->rx_len) % PL011_RX] = buf[n];
	pl011_update(u);
	pthread_mutex_unlock(&u->lock);
	return n;
}
