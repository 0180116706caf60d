/* CRC-32 byte step, table driven (the table is a 1 KiB ROM in HLS). */
#include "rnic_frame.h"

static const uint32_t crc_table[256] = {
#define C1(c) (((c) & 1) ? (0xedb88320u ^ ((c) >> 1)) : ((c) >> 1))
#define C8(c) C1(C1(C1(C1(C1(C1(C1(C1((uint32_t)(c)))))))))
#define R4(n) C8(n), C8(n + 1), C8(n + 2), C8(n + 3)
#define R16(n) R4(n), R4(n + 4), R4(n + 8), R4(n + 12)
#define R64(n) R16(n), R16(n + 16), R16(n + 32), R16(n + 48)
	R64(0), R64(64), R64(128), R64(192)
};

uint32_t rnic_crc32_byte(uint32_t crc, uint8_t b)
{
	return crc_table[(crc ^ b) & 0xff] ^ (crc >> 8);
}
