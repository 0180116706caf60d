/* A small printf for the firmware log. */
#include <stdarg.h>
#include "fw.h"
#include "hal.h"

static void put_num(uint32_t v, uint32_t base)
{
	char buf[12];
	int i = 0;

	do {
		buf[i++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	while (i)
		hal_putc(buf[--i]);
}

/* %u %d %x %s %c and %I (IPv4 address) */
void fw_printf(const char *fmt, ...)
{
	va_list ap;
	const char *s;
	uint32_t v;
	int32_t d;

	va_start(ap, fmt);
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			hal_putc(*fmt);
			continue;
		}
		switch (*++fmt) {
		case 'u':
			put_num(va_arg(ap, uint32_t), 10);
			break;
		case 'd':
			d = va_arg(ap, int32_t);
			if (d < 0) {
				hal_putc('-');
				d = -d;
			}
			put_num((uint32_t)d, 10);
			break;
		case 'x':
			put_num(va_arg(ap, uint32_t), 16);
			break;
		case 's':
			for (s = va_arg(ap, const char *); *s; s++)
				hal_putc(*s);
			break;
		case 'c':
			hal_putc((char)va_arg(ap, int));
			break;
		case 'I':
			v = va_arg(ap, uint32_t);
			put_num(v >> 24, 10);
			hal_putc('.');
			put_num((v >> 16) & 0xff, 10);
			hal_putc('.');
			put_num((v >> 8) & 0xff, 10);
			hal_putc('.');
			put_num(v & 0xff, 10);
			break;
		default:
			hal_putc('%');
			hal_putc(*fmt);
			break;
		}
	}
	va_end(ap);
}
