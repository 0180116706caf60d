/* The driver core's <string.h> inside the kernel. */
#ifndef RNIC_COMPAT_STRING_H
#define RNIC_COMPAT_STRING_H
#include <linux/string.h>
#endif
