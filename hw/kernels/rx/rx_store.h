/* RX kernel, the frame store and the ports it writes (rx_store.c). */
#ifndef RX_STORE_H
#define RX_STORE_H

#include "rx_msg.h"

#define RX_BUF_BEATS 2048 /* frame store: 128 KiB (two banks of block RAM): absorbs a burst of 4 KiB
                          * messages from many QPs while receive WQEs are fetched */

/* A beat on its way to a port: read from the store (beat b and b + 1, the even one at ev of its
 * bank and the odd at od, b odd: swap; a payload beat starts at byte sh of them; the firmware's
 * is the first) or a DATA command's bytes (dat), the GRH area's bytes before byte gh, an
 * atomic's value's on bytes from byte at (at < 0: before the beat) */
typedef struct {
	uint8_t fw, dat, last, sh, gh, on, swap;
	int32_t at;
	uint16_t ev, od, len;
	uint64_t val, addr, keep;
	uint8_t grh[RNIC_GRH_LEN];
	uint8_t data[16];
} rx_job_t;

typedef struct {
	/* the store: beat i in bank i % 2, so that two adjacent beats are read in one clock */
	uint8_t buf_even[RX_BUF_BEATS / 2][RNIC_BEAT];
	uint8_t buf_odd[RX_BUF_BEATS / 2][RNIC_BEAT];
	uint32_t wr_beat, rd_beat;  /* next free beat, oldest held (free running) */
	uint32_t held;              /* frames handed to rx_core and not given back */
	uint8_t arrived, came;      /* this clock's and the last's: a frame handed over */
	uint16_t rel, freed;        /* a frame's beats to give back once the beats addressed before
	                             * (rel_need) were read; given back this clock */
	uint8_t rel_need, reads;    /* beats read, counted (wrapping) */
	/* the frame coming in */
	uint32_t cur_start, cur_beats, cur_len;
	uint8_t cur_drop, in_frame;
	uint8_t head[2 * RNIC_BEAT];
	/* the command at the head of cmdq: its write on its way (past), bytes or beats of it
	 * addressed (done); beats addressed and taken, counted (wrapping); the posts of the last
	 * command that had any, still to go once the beats addressed before them (p_need) are taken */
	uint8_t past, addressed, taken;
	uint32_t done;
	rx_posts_t p;
	uint8_t p_need;
	/* a beat's way to its port, a clock each: its address worked out (a), read (r, the two
	 * beats in r_two), merged onto the port */
	uint8_t a_valid, r_valid;
	rx_job_t a, r;
	uint8_t r_two[2 * RNIC_BEAT];
	/* the ports, each held until taken */
	uint8_t wr_valid, wr_last, fw_valid, fw_last, cpl_valid, ack_valid, ack_rd, rsp_valid, fence;
	uint64_t wr_addr, fw_keep;
	uint16_t wr_len;
	uint8_t wr_data[RNIC_BEAT], fw_data[RNIC_BEAT];
	rnic_cpl_t cpl;
	rnic_rsp_t rsp;
	uint32_t ack_qpn, ack_psn;
	uint8_t ack_syndrome;
	uint32_t stat_frames, stat_drop_overflow;
} rx_store_t;

void rx_store(rx_store_t *st, const rnic_rx_in_t *in, rnic_rx_beatq_t *beats, rnic_rx_descq_t *descs,
	      rnic_rx_arriveq_t *arrivals, rnic_rx_cmdq_t *cmds, rnic_rx_doneq_t *dones);
/* its ports on the kernel's outputs (wiring, after the clock's stages) */
void rx_store_out(const rx_store_t *st, rnic_rx_out_t *out);

#endif
