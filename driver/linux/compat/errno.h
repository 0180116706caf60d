/* The driver core's <errno.h> inside the kernel. */
#ifndef RNIC_COMPAT_ERRNO_H
#define RNIC_COMPAT_ERRNO_H
#include <linux/errno.h>
#endif
