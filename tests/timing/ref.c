/* Reference functions of the timing model's calibration (tests/test_hls_timing.py): each is
 * written again in ref.sv, which Yosys maps to UltraScale+ cells; the model's levels for the C
 * must be within one of Yosys's. Each is the kind of logic the kernels are made of. */
#include <stdint.h>

/* a 32-bit adder whose sum is compared with a third operand */
uint32_t ref_add_cmp(uint32_t a, uint32_t b, uint32_t c)
{
	return a + b < c;
}

/* an 8:1 multiplexer of 32-bit words */
struct ref_words {
	uint32_t d[8];
};

uint32_t ref_mux8(const struct ref_words *w, uint32_t s)
{
	return w->d[s & 7];
}

/* the lowest set bit of 64 requests (a priority encoder), 64 when none */
uint32_t ref_prio64(uint64_t req)
{
	uint32_t i, r = 64;

	for (i = 64; i-- > 0;)
		if (req >> i & 1)
			r = i;
	return r;
}

/* the CRC-32 (reflected, 0xEDB88320) of one 64-byte beat from a running state */
uint32_t ref_crc32_beat(uint32_t crc, const uint8_t d[64])
{
	uint32_t i, k;

	for (i = 0; i < 64; i++) {
		crc ^= d[i];
		for (k = 0; k < 8; k++)
			crc = crc >> 1 ^ (crc & 1 ? 0xEDB88320u : 0);
	}
	return crc;
}

/* a 16-bit state machine: a counter with a mode, loaded, counted down or held by the inputs */
struct ref_fsm {
	uint16_t s;
};

void ref_fsm16(struct ref_fsm *st, uint32_t go, uint32_t load, uint16_t v)
{
	uint16_t s = st->s;

	if (load)
		s = v;
	else if (go && (s & 0x7fff) != 0)
		s = (uint16_t)((s & 0x8000) | ((s - 1) & 0x7fff));
	else if (go)
		s ^= 0x8000;
	st->s = s;
}
