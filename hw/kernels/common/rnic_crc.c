/* CRC-32 of a beat in parallel form, written bit by bit and unrolled, as synthesis takes it: each
 * state bit after it is the XOR of a fixed set of the state's and the beat's bits, a tree of LUT6
 * four levels deep (tests/timing's calibration, ref_crc32_beat). A frame's last, partial beat
 * needs no step of its own: the ICRC's stages move it into a window behind zeros (rnic_icrc.c).
 * HLS: no state, II=1. */
#include "rnic_frame.h"

/* the simulator takes carry-less multiplies where the processor has them (the same function; it
 * is the simulator's largest single cost otherwise), synthesis the XOR network */
#if !defined(__SYNTHESIS__) && defined(__PCLMUL__) && defined(__SSE4_1__)
#include "rnic_crc_clmul.h"

uint32_t rnic_crc32_beat(uint32_t crc, const uint8_t *p)
{
	return rnic_crc_clmul_beat(crc, p);
}
#else
uint32_t rnic_crc32_beat(uint32_t crc, const uint8_t *p)
{
	uint32_t i, k;

	for (i = 0; i < RNIC_BEAT; i++) {
#pragma HLS UNROLL
		crc ^= p[i];
		for (k = 0; k < 8; k++) {
#pragma HLS UNROLL
			crc = crc >> 1 ^ (crc & 1 ? 0xEDB88320u : 0);
		}
	}
	return crc;
}
#endif
