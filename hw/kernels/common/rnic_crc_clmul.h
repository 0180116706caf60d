/* The simulator's CRC-32 of a whole beat, by carry-less multiplication: the same function as the
 * parallel form of rnic_crc.c (test_kernels.py compares the two), in ~20 instructions instead of
 * 64 ROM lookups. Not for synthesis: rnic_crc.c takes it only where the compiler targets an x86
 * with PCLMULQDQ and SSE4.1 and __SYNTHESIS__ is not set.
 * Method (Intel, "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ", 2009): the four
 * 128-bit words of the beat are folded into one with x^(128+64) and x^128 mod P, then 128 -> 64 ->
 * 32 bits, then a Barrett reduction; constants bit-reflected, as Linux's crc32-pclmul uses them. */
#ifndef RNIC_CRC_CLMUL_H
#define RNIC_CRC_CLMUL_H

#include <stdint.h>
#include <immintrin.h>

static inline uint32_t rnic_crc_clmul_beat(uint32_t crc, const uint8_t *p)
{
	const __m128i k43 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);  /* fold by 128 bits */
	const __m128i k5 = _mm_set_epi64x(0, 0x163cd6124LL);               /* 64 -> 32 bits */
	const __m128i mu_p = _mm_set_epi64x(0x1f7011641LL, 0x1db710641LL); /* Barrett: mu, P */
	const __m128i lo32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x = _mm_xor_si128(_mm_loadu_si128((const __m128i *)p), _mm_cvtsi32_si128((int)crc));
	__m128i t;
	int i;

	for (i = 1; i < 4; i++)
		x = _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(x, k43, 0x00), _mm_clmulepi64_si128(x, k43, 0x11)),
				  _mm_loadu_si128((const __m128i *)(p + 16 * i)));
	x = _mm_xor_si128(_mm_clmulepi64_si128(x, k43, 0x10), _mm_srli_si128(x, 8));
	x = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x, lo32), k5, 0x00), _mm_srli_si128(x, 4));
	t = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x, lo32), mu_p, 0x10), lo32);
	x = _mm_xor_si128(x, _mm_clmulepi64_si128(t, mu_p, 0x00));
	return (uint32_t)_mm_extract_epi32(x, 1);
}

#endif
