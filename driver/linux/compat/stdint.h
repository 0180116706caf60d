/* The driver core's <stdint.h> inside the kernel: fixed-width types come from linux/types.h. */
#ifndef RNIC_COMPAT_STDINT_H
#define RNIC_COMPAT_STDINT_H
#include <linux/types.h>
#include <linux/limits.h>
#endif
