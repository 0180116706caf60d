/* Find RNIC cards on the PCI bus with libpci: prints "DDDD:BB:DD.F VVVV:DDDD" per card, the
 * function the flash tools and the driver address. The access method and its parameters are
 * libpci's own (-A dump -O dump.name=FILE reads an `lspci -x` dump: how the tests check it).
 *
 *   rnic-pci-find [-A METHOD] [-O PARAM=VALUE]... [-d VENDOR:DEVICE]
 *
 * Exit status: 0 one or more cards, 1 none, 2 usage or access error. */
#include <pci/pci.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rnic_spec.h"

static void usage(void)
{
	fprintf(stderr, "usage: rnic-pci-find [-A METHOD] [-O PARAM=VALUE]... [-d VENDOR:DEVICE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct pci_access *pacc = pci_alloc();
	unsigned vendor = RNIC_VENDOR_ID, device = RNIC_DEVICE_ID;
	struct pci_dev *d;
	int i, found = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-A") && i + 1 < argc) {
			int m = pci_lookup_method(argv[++i]);

			if (m < 0) {
				fprintf(stderr, "rnic-pci-find: unknown access method %s\n", argv[i]);
				return 2;
			}
			pacc->method = (unsigned)m;
		} else if (!strcmp(argv[i], "-O") && i + 1 < argc) {
			char *eq = strchr(argv[++i], '=');

			if (!eq)
				usage();
			*eq = 0;
			if (pci_set_param(pacc, argv[i], eq + 1)) {
				fprintf(stderr, "rnic-pci-find: unknown parameter %s\n", argv[i]);
				return 2;
			}
		} else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
			if (sscanf(argv[++i], "%x:%x", &vendor, &device) != 2)
				usage();
		} else {
			usage();
		}
	}
	pci_init(pacc); /* exits with a message if the method cannot work */
	pci_scan_bus(pacc);
	for (d = pacc->devices; d; d = d->next) {
		pci_fill_info(d, PCI_FILL_IDENT);
		if (d->vendor_id != vendor || d->device_id != device)
			continue;
		printf("%04x:%02x:%02x.%d %04x:%04x\n", d->domain, d->bus, d->dev, d->func, d->vendor_id, d->device_id);
		found++;
	}
	pci_cleanup(pacc);
	return found ? 0 : 1;
}
