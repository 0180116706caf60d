/* The soft-core testbench's firmware (tests/soc_tb/tb_soc.cpp, tests/test_fw_guard.py): what a
 * firmware gone wrong, or taken over, might try, one scenario a run, chosen by the testbench's IPv4
 * strap. It boots through the NIC firmware's own start.S and link.ld, so it runs under the
 * protection the real boot code sets. It says on the console what it tries; what the hardware
 * refused, the testbench reads from ADMIN.FW_FAULT, the DMAs that left and the RAM. */
#include <stdint.h>
#include "rnic_spec.h"

#define REG(off) (*(volatile uint32_t *)(RNIC_FW_REG_BASE + (off)))
#define WINDOW(ctx) (((uint64_t)(ctx) + 1) << RNIC_LINK_BUS_CTX_SHIFT) /* the testbench's strap */

enum { DMA = 1, CODE, EXEC, RAISE, LOWER, STACK, GUARD, TRAP };

extern uint32_t __stack_guard[]; /* link.ld */
static uint32_t data_code[4];    /* instructions written as data */
static volatile uint32_t dive_end; /* 0: the recursion has no end gcc can see, nor one it reaches */

static void say(const char *s)
{
	while (*s)
		REG(RNIC_FW_CONSOLE) = (uint8_t)*s++;
}

static void say_hex(uint64_t v)
{
	int i;

	say(" 0x");
	for (i = 60; i >= 0; i -= 4)
		REG(RNIC_FW_CONSOLE) = (uint8_t)"0123456789abcdef"[v >> i & 0xf];
}

/* a DMA of len bytes for `whose` memory, and what DMA_STATUS said of it */
static void dma(uint32_t whose, uint64_t host, uint32_t len, int write)
{
	uint32_t st;

	REG(RNIC_FW_DMA_CTX) = whose;
	REG(RNIC_FW_DMA_HOST_LO) = (uint32_t)host;
	REG(RNIC_FW_DMA_HOST_HI) = (uint32_t)(host >> 32);
	REG(RNIC_FW_DMA_LOCAL) = 0;
	REG(RNIC_FW_DMA_LEN) = len;
	REG(RNIC_FW_DMA_CTRL) = RNIC_FW_DMA_CTRL_GO_MASK | (write ? RNIC_FW_DMA_CTRL_WRITE_MASK : 0);
	while ((st = REG(RNIC_FW_DMA_STATUS)) & RNIC_FW_DMA_STATUS_BUSY_MASK)
		;
	say(write ? "dma write" : "dma read");
	say_hex(whose);
	say_hex(host);
	say_hex(len);
	say(" status");
	say_hex(st);
	say("\n");
}

static void dmas(void)
{
	dma(3, WINDOW(4) + 0x1000, 64, 0);           /* context 4's memory, for context 3 */
	dma(3, 0x1000, 64, 1);                       /* the driver's, for context 3 */
	dma(3, WINDOW(4) - 32, 64, 0);               /* running out of context 3's window */
	dma(3, WINDOW(3) + 0x2000, 128, 0);          /* context 3's own */
	dma(3, WINDOW(3) + 0x2000, 128, 1);
	dma(RNIC_DMA_CTX_DRIVER, 0x3000, 64, 0);     /* the driver's own */
	dma(RNIC_DMA_CTX_DRIVER, WINDOW(3), 64, 1);  /* a context's, for the driver */
}

/* a function whose first word the attack overwrites */
__attribute__((noinline)) void victim(void)
{
	say("victim ran\n");
}

/* run the words: store 'X' to the console, return */
static void run_data(void)
{
	data_code[0] = 0x100002b7; /* lui t0, 0x10000 (FW_REG_BASE) */
	data_code[1] = 0x05800313; /* li t1, 'X' */
	data_code[2] = 0x0062a023; /* sw t1, 0(t0) (CONSOLE) */
	data_code[3] = 0x00008067; /* ret */
	say("jump to data\n");
	((void (*)(void))(uintptr_t)data_code)();
}

/* frames of 256 bytes, every word written, until the stack runs into the guard band */
__attribute__((noinline)) static uint32_t dive(uint32_t n)
{
	volatile uint32_t frame[64];
	uint32_t i;

	for (i = 0; i < 64; i++)
		frame[i] = n;
	return n + 1 != dive_end ? dive(n + 1) + frame[n & 63] : 0;
}

static void overflow(void)
{
	volatile uint32_t *below = (volatile uint32_t *)((uintptr_t)__stack_guard - 32);
	uint32_t i;

	for (i = 0; i < 8; i++) /* the words just below the band, which nothing may reach */
		below[i] = 0xc0ffee00 + i;
	say("dive\n");
	dive(0);
}

int main(void)
{
	uint32_t scenario = REG(RNIC_FW_IPV4);

	say("attack");
	say_hex(scenario);
	say("\n");
	switch (scenario) {
	case DMA:
		dmas();
		break;
	case CODE:
		say("store into code\n");
		*(volatile uint32_t *)(uintptr_t)victim = 0x00100073; /* ebreak */
		victim();
		break;
	case RAISE: /* CODE_END over all RAM would let data run */
		REG(RNIC_FW_CODE_END) = RNIC_FW_RAM_SIZE;
		/* fall through */
	case EXEC:
		run_data();
		break;
	case LOWER: /* CODE_END at 0 would let code be written */
		REG(RNIC_FW_CODE_END) = 0;
		say("store into code\n");
		*(volatile uint32_t *)(uintptr_t)victim = 0x00100073;
		victim();
		break;
	case GUARD: /* a guard band moved off the RAM would let the stack run over .bss */
		REG(RNIC_FW_STACK_GUARD) = RNIC_FW_RAM_SIZE;
		/* fall through */
	case STACK:
		overflow();
		break;
	case TRAP:
		say("ebreak\n");
		__asm__ volatile("ebreak");
		break;
	}
	say("done\n");
	for (;;)
		;
}
