/* NIC firmware entry: boot, then serve frames, context resets and command queues forever. */
#include "fw.h"
#include "hal.h"

int main(void)
{
	uint32_t ctx, resets, pending, more = 0;

	fw_init();
	hal_set_version(FW_VERSION_CODE);
	fw_printf("rnic firmware %u.%u.%u: mac %x:%x:%x:%x:%x:%x ip %I\n", FW_VERSION_CODE >> 16,
		  (FW_VERSION_CODE >> 8) & 0xff, FW_VERSION_CODE & 0xff, fw.mac[0], fw.mac[1], fw.mac[2],
		  fw.mac[3], fw.mac[4], fw.mac[5], fw.ip);
	hal_set_status(RNIC_ID_FW_STATUS_READY_MASK);
	for (;;) {
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
