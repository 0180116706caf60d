/* The driver core's <stddef.h> inside the kernel. */
#ifndef RNIC_COMPAT_STDDEF_H
#define RNIC_COMPAT_STDDEF_H
#include <linux/stddef.h>
#include <linux/types.h>
#endif
