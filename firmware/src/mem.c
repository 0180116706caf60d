/* Freestanding memset/memcpy (the compiler emits calls to them) and memcmp; the host tests use
 * libc's. Aligned buffers go a word at a time: the command path clears and copies whole entries,
 * and each access of the soft core costs a clock or two on top of its instruction. */
#include "fw.h"

void *memset(void *d, int c, size_t n)
{
	uint8_t *p = d;

	if (!(((uintptr_t)d | n) & 3)) {
		uint32_t w = (uint8_t)c * 0x01010101u, *q = d;

		for (; n; n -= 4)
			*q++ = w;
		return d;
	}
	while (n--)
		*p++ = (uint8_t)c;
	return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
	uint8_t *p = d;
	const uint8_t *q = s;

	if (!(((uintptr_t)d | (uintptr_t)s | n) & 3)) {
		uint32_t *pw = d;
		const uint32_t *qw = s;

		for (; n; n -= 4)
			*pw++ = *qw++;
		return d;
	}
	while (n--)
		*p++ = *q++;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const uint8_t *p = a, *q = b;

	for (; n; n--, p++, q++)
		if (*p != *q)
			return *p - *q;
	return 0;
}
