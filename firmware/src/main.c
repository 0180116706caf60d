/* NIC firmware entry: boot, then serve frames, context resets and command queues forever. */
#include "fw.h"
#include "hal.h"
#include "prf.h"

/* -fstack-protector-strong's canary (firmware.mk). Until the host's seed comes it is this fixed
 * terminator canary: its lowest byte, the first a string running over a buffer reaches, is zero,
 * so a string copy cannot write it back. main then draws it from the seed, keeping that zero. */
#define CANARY_BOOT 0xff0a0d00u
uintptr_t __stack_chk_guard;

/* A frame's canary was overwritten: whatever overran it may have changed anything else, so the
 * firmware stops for good. Touching the guard band halts the core: ADMIN.FW_FAULT says STACK. The
 * log line is written by hand: fw_printf's frames are checked too, and would call back here. */
__attribute__((noreturn, no_stack_protector)) void __stack_chk_fail(void)
{
	extern uint32_t __stack_guard[]; /* link.ld */
	const char *s;

	hal_set_status(RNIC_ID_FW_STATUS_FAILED_MASK);
	for (s = "rnic firmware: stack smashed, stopped\n"; *s; s++)
		hal_putc(*s);
	for (;;)
		(void)*(volatile uint32_t *)__stack_guard;
}

__attribute__((no_stack_protector)) int main(void)
{
	uint32_t ctx, resets, pending, more = 0, keyed = 0;

	__stack_chk_guard = CANARY_BOOT;
	fw_init();
	hal_set_version(FW_VERSION_CODE);
	fw_printf("rnic firmware %u.%u.%u: mac %x:%x:%x:%x:%x:%x ip %I\n", FW_VERSION_CODE >> 16,
		  (FW_VERSION_CODE >> 8) & 0xff, FW_VERSION_CODE & 0xff, fw.mac[0], fw.mac[1], fw.mac[2],
		  fw.mac[3], fw.mac[4], fw.mac[5], fw.ip);
	hal_set_status(RNIC_ID_FW_STATUS_READY_MASK);
	for (;;) {
		/* here no frame that checks a canary is live (main has none and never returns): the
		 * canary may change */
		if (!keyed && fw_prf_keyed()) {
			__stack_chk_guard = (uint32_t)fw_prf(PRF_CANARY, 0) & ~0xffu;
			keyed = 1;
		}
		fw_icm_poll();
		fw_poll_frames();
		fw_cm_poll();
		resets = hal_reset_pending();
		for (ctx = 0; resets && ctx < RNIC_NUM_CTX; ctx++) {
			if ((resets & (1u << ctx)) && !fw_ctx_reset(ctx)) {
				hal_reset_clear(1u << ctx); /* its memory may go back to the host now */
				more &= ~(1u << ctx);
			}
		}
		/* only the queues that were rung, or still hold commands: clear, then look */
		pending = hal_cmdq_pending();
		if (pending)
			hal_cmdq_ack(pending);
		pending |= more;
		more = 0;
		for (ctx = 0; pending && ctx < RNIC_NUM_CTX; ctx++)
			if ((pending & (1u << ctx)) && fw_poll_cmdq(ctx))
				more |= 1u << ctx;
		/* nothing left over: park (held frames, resets still to finish and new doorbells
		 * wake the core at once) until there is work or a CM timer falls due */
		if (!more)
			hal_wait(fw_cm_idle(UINT32_MAX));
	}
}
