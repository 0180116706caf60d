/* The verbs library's devices: the list (cards, then live simulators), their attributes and
 * port, GIDs, and UD address handles. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rnic/rnicdv.h"
#include "rnic_verbs.h"

#define DEFAULT_SIM_DIR "/tmp/rnic-sim"

/* ---- devices: one per rnic-sim socket in $RNIC_SIM_DIR (default /tmp/rnic-sim) */
static int is_sock(const struct dirent *e)
{
	size_t n = strlen(e->d_name);

	return n > 5 && !strcmp(e->d_name + n - 5, ".sock") && n - 5 < IBV_SYSFS_NAME_MAX;
}

/* Is a simulator behind this socket? One that died leaves its socket file behind, bound to
 * nothing: /proc/net/unix lists the paths of live sockets (bound, listening or not yet: a
 * simulator still starting counts), without connecting to them. The entry may be a symbolic link
 * to a simulator's socket: a directory of links gives a process some of the NICs only. */
static int live_socket(const char *name)
{
	FILE *f = fopen("/proc/net/unix", "r");
	char line[1024], path[PATH_MAX];
	int found = 0;

	if (!realpath(name, path))
		snprintf(path, sizeof(path), "%s", name);
	if (!f)
		return 1; /* cannot tell: let ibv_open_device find out */
	while (!found && fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		size_t n;

		if (!p)
			continue;
		n = strcspn(p, "\n");
		found = n == strlen(path) && !strncmp(p, path, n);
	}
	fclose(f);
	return found;
}

static int is_card(const struct dirent *e)
{
	const char *p = e->d_name;

	if (strncmp(p, "rnic", 4) || !p[4] || strlen(p) > 16)
		return 0;
	for (p += 4; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

/* rdma-core numbers uverbs devices in the order it lists them: cards first, then simulators */
static struct rnic_device *add_device(struct ibv_device **list, int *found, const char *name, int card)
{
	struct rnic_device *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->card = card;
	d->index = *found;
	d->ibv.node_type = IBV_NODE_CA;
	d->ibv.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->ibv.name, sizeof(d->ibv.name), "%s", name);
	snprintf(d->ibv.dev_name, sizeof(d->ibv.dev_name), "uverbs%d", *found);
	list[(*found)++] = &d->ibv;
	return d;
}

/* A simulator directory is trusted only if this user (or root) made it and nobody else may write
 * to it: another user could otherwise put a socket of theirs there and play the NIC. */
static int trusted_dir(const char *dir)
{
	struct stat s;

	return !lstat(dir, &s) && S_ISDIR(s.st_mode) && (s.st_uid == geteuid() || s.st_uid == 0) &&
	       !(s.st_mode & (S_IWGRP | S_IWOTH));
}

/* Devices: one per card the kernel module drives (/dev/rnicN, listed as rnic_pciN, attributes in
 * /sys/class/misc/rnicN), then one per live rnic-sim socket in $RNIC_SIM_DIR (default
 * /tmp/rnic-sim) */
struct ibv_device **ibv_get_device_list(int *num_devices)
{
	const char *dir = getenv("RNIC_SIM_DIR");
	char real[PATH_MAX], name[IBV_SYSFS_NAME_MAX + 16];
	struct dirent **names = NULL, **cards = NULL;
	struct ibv_device **list;
	int n, ncards, i, found = 0;

	if (!dir)
		dir = DEFAULT_SIM_DIR;
	if (!realpath(dir, real))
		snprintf(real, sizeof(real), "%s", dir);
	ncards = scandir("/dev", &cards, is_card, alphasort);
	if (ncards < 0)
		ncards = 0;
	n = trusted_dir(real) ? scandir(real, &names, is_sock, alphasort) : -1;
	if (n < 0)
		n = 0; /* no simulator directory: no simulated device */
	list = calloc((size_t)(n + ncards) + 1, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		goto out;
	}
	for (i = 0; i < ncards; i++) {
		struct rnic_device *d;

		snprintf(name, sizeof(name), "rnic_pci%s", cards[i]->d_name + 4);
		d = add_device(list, &found, name, 1);
		if (!d)
			goto nomem;
		snprintf(d->path, sizeof(d->path), "/dev/%.16s", cards[i]->d_name);
		snprintf(d->ibv.dev_path, sizeof(d->ibv.dev_path), "/sys/class/misc/%.16s", cards[i]->d_name);
		snprintf(d->ibv.ibdev_path, sizeof(d->ibv.ibdev_path), "/sys/class/misc/%.16s",
			 cards[i]->d_name);
	}
	for (i = 0; i < n; i++) {
		char path[sizeof(((struct rnic_device *)0)->path)];
		int len = (int)strlen(names[i]->d_name) - 5;
		struct rnic_device *d;

		/* a path too long for a socket address or for ibv_device cannot be a device */
		if (snprintf(path, sizeof(path), "%s/%s", real, names[i]->d_name) >= (int)sizeof(path) ||
		    strlen(real) >= sizeof(d->ibv.dev_path) ||
		    strlen(real) + 1 + (size_t)len >= sizeof(d->ibv.ibdev_path) || !live_socket(path))
			continue;
		snprintf(name, sizeof(name), "%.*s", len, names[i]->d_name);
		d = add_device(list, &found, name, 0);
		if (!d)
			goto nomem;
		memcpy(d->path, path, sizeof(path));
		/* ibdev_path: where ibv_read_sysfs_file finds the device's attributes (compat.c) */
		snprintf(d->ibv.dev_path, sizeof(d->ibv.dev_path), "%s", real);
		snprintf(d->ibv.ibdev_path, sizeof(d->ibv.ibdev_path), "%s/%.*s", real, len, names[i]->d_name);
	}
	if (num_devices)
		*num_devices = found;
	goto out;
nomem:
	ibv_free_device_list(list);
	list = NULL;
	errno = ENOMEM;
out:
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	for (i = 0; i < ncards; i++)
		free(cards[i]);
	free(cards);
	return list;
}

void ibv_free_device_list(struct ibv_device **list)
{
	struct ibv_device **d;

	for (d = list; d && *d; d++)
		free(*d);
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

static uint64_t guid_from_mac(const uint8_t *m)
{
	/* EUI-64 from the MAC, as RoCE devices do */
	uint8_t g[8] = {m[0] ^ 2, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5]};
	uint64_t v;

	memcpy(&v, g, 8);
	return v;
}

__be64 ibv_get_device_guid(struct ibv_device *device)
{
	struct ibv_context *c = ibv_open_device(device);
	__be64 guid = 0;

	if (c) {
		guid = guid_from_mac(to_ctx(c)->dev.info + RNIC_CMDO_QUERY_DEVICE_MAC_OFF);
		ibv_close_device(c);
	}
	return guid;
}


/* ---- device and port */
int rnic_query_port(struct ibv_context *context, uint8_t port, struct ibv_port_attr *a, size_t len)
{
	const uint8_t *i = to_ctx(context)->dev.info;
	struct ibv_port_attr p = {0};
	uint32_t gbps = RNIC_CMDO_QUERY_DEVICE_SPEED_GBPS_GET(i);

	if (port != 1)
		return EINVAL;
	/* what the firmware reports of its Ethernet port */
	p.state = RNIC_CMDO_QUERY_DEVICE_LINK_UP_GET(i) ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	p.phys_state = RNIC_CMDO_QUERY_DEVICE_LINK_UP_GET(i) ? 5 : 3; /* LinkUp / Disabled */
	p.max_mtu = (enum ibv_mtu)RNIC_CMDO_QUERY_DEVICE_MAX_MTU_GET(i); /* enum MTU = enum ibv_mtu */
	p.active_mtu = (enum ibv_mtu)RNIC_CMDO_QUERY_DEVICE_ACTIVE_MTU_GET(i); /* as the network's Ethernet MTU allows */
	p.gid_tbl_len = 2;
	p.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	p.max_msg_sz = 1u << 31;
	p.pkey_tbl_len = 1;
	p.max_vl_num = 1;
	/* the line rate as IB width x lane speed: 100G = 4x EDR (25G), 25G = 1x EDR */
	p.active_width = gbps >= 100 ? 2 : 1;
	p.active_speed = 32;
	p.link_layer = IBV_LINK_LAYER_ETHERNET;
	memcpy(a, &p, len < sizeof(p) ? len : sizeof(p));
	return 0;
}

#undef ibv_query_port
int ibv_query_port(struct ibv_context *context, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	/* the old layout is the new one without its last member */
	return rnic_query_port(context, port, (struct ibv_port_attr *)attr,
			       offsetof(struct ibv_port_attr, port_cap_flags2));
}

int rnic_query_device_attr(struct ibv_context *context, struct ibv_device_attr *a)
{
	const uint8_t *i = to_ctx(context)->dev.info;
	uint32_t fw = RNIC_CMDO_QUERY_DEVICE_FW_VERSION_GET(i);

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%u.%u.%u", fw >> 16, (fw >> 8) & 0xff, fw & 0xff);
	a->node_guid = a->sys_image_guid = guid_from_mac(i + RNIC_CMDO_QUERY_DEVICE_MAC_OFF);
	a->max_mr_size = RNIC_CMDO_QUERY_DEVICE_MAX_MR_SIZE_GET(i);
	a->page_size_cap = RNIC_CMDO_QUERY_DEVICE_PAGE_SIZE_CAP_GET(i);
	a->vendor_id = RNIC_VENDOR_ID;
	a->vendor_part_id = RNIC_DEVICE_ID;
	a->hw_ver = 1;
	a->max_qp = (int)RNIC_CMDO_QUERY_DEVICE_MAX_QP_GET(i);
	a->max_qp_wr = (int)RNIC_CMDO_QUERY_DEVICE_MAX_QP_WR_GET(i);
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN;
	/* one limit for both queues: a receive WQE holds RNIC_MAX_RECV_SGE */
	a->max_sge = (int)RNIC_CMDO_QUERY_DEVICE_MAX_SGE_GET(i);
	if (a->max_sge > (int)RNIC_MAX_RECV_SGE)
		a->max_sge = (int)RNIC_MAX_RECV_SGE;
	a->max_sge_rd = a->max_sge;
	a->max_cq = (int)RNIC_CMDO_QUERY_DEVICE_MAX_CQ_GET(i);
	a->max_cqe = (int)RNIC_CMDO_QUERY_DEVICE_MAX_CQE_GET(i);
	a->max_mr = (int)RNIC_CMDO_QUERY_DEVICE_MAX_MR_GET(i);
	a->max_pd = (int)RNIC_CMDO_QUERY_DEVICE_MAX_PD_GET(i);
	a->max_qp_rd_atom = (int)RNIC_CMDO_QUERY_DEVICE_MAX_QP_RD_ATOM_GET(i);
	a->max_qp_init_rd_atom = (int)RNIC_CMDO_QUERY_DEVICE_MAX_QP_INIT_RD_ATOM_GET(i);
	a->atomic_cap = IBV_ATOMIC_HCA; /* atomic among this NIC's operations, not with the CPU */
	a->max_srq = RNIC_MAX_SRQ;
	a->max_srq_wr = a->max_qp_wr;
	a->max_srq_sge = (int)RNIC_MAX_RECV_SGE;
	a->max_ah = INT32_MAX; /* address handles live in host memory (the WQE carries the AV) */
	a->max_pkeys = 1;
	a->phys_port_cnt = 1;
	return 0;
}

int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
	return rnic_query_device_attr(context, a);
}

/* The port's GID table: 0 = ::ffff:IPv4, 1 = fe80:: link-local, both RoCEv2. 0 or -1. */
int rnic_gid(struct ibv_context *context, uint32_t index, union ibv_gid *gid)
{
	uint32_t ip = RNIC_CMDO_QUERY_DEVICE_IPV4_GET(to_ctx(context)->dev.info);

	if (index > 1)
		return -1;
	if (index == 1) {
		/* RoCEv2 GID of the port's IPv6 link-local address */
		memcpy(gid->raw, to_ctx(context)->dev.info + RNIC_CMDO_QUERY_DEVICE_IPV6_OFF, 16);
		return 0;
	}
	memset(gid, 0, sizeof(*gid));
	/* RoCEv2 GID of an IPv4 address: ::ffff:a.b.c.d */
	gid->raw[10] = gid->raw[11] = 0xff;
	gid->raw[12] = (uint8_t)(ip >> 24);
	gid->raw[13] = (uint8_t)(ip >> 16);
	gid->raw[14] = (uint8_t)(ip >> 8);
	gid->raw[15] = (uint8_t)ip;
	return 0;
}

int ibv_query_gid(struct ibv_context *context, uint8_t port, int index, union ibv_gid *gid)
{
	if (port != 1 || index < 0)
		return -1; /* rdma-core returns -1 for an index past the table */
	return rnic_gid(context, (uint32_t)index, gid);
}

/* ---- address handles (UD): RoCEv2 over IPv4, the GID is ::ffff:a.b.c.d */
static int gid_to_ipv4(const union ibv_gid *g, uint32_t *ip)
{
	static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (memcmp(g->raw, prefix, sizeof(prefix)))
		return -1;
	*ip = (uint32_t)g->raw[12] << 24 | (uint32_t)g->raw[13] << 16 | (uint32_t)g->raw[14] << 8 | g->raw[15];
	return 0;
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct rnic_context *c;
	uint8_t in[RNIC_CMDI_CREATE_AH_SIZE] = {0}, out[RNIC_CMDO_CREATE_AH_SIZE];
	struct rnic_ah *ah;
	uint32_t ip;
	int ret;

	if (!pd || !attr || !attr->is_global || attr->port_num != 1 || attr->grh.dgid.raw[0] == 0xff) {
		errno = EINVAL; /* RoCE address handles need a GRH with a unicast RoCEv2 GID */
		return NULL;
	}
	c = to_ctx(pd->context);
	memcpy(in + RNIC_CMDI_CREATE_AH_DGID_OFF, attr->grh.dgid.raw, 16);
	pthread_mutex_lock(&c->cmd_lock);
	ret = rnic_cmd_exec(&c->dev, RNIC_CMD_CREATE_AH, in, sizeof(in), out, sizeof(out));
	pthread_mutex_unlock(&c->cmd_lock);
	if (ret) {
		errno = -ret; /* the driver core's errors are negative */
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(ah->mac, out + RNIC_CMDO_CREATE_AH_MAC_OFF, 6);
	ah->ipv6 = gid_to_ipv4(&attr->grh.dgid, &ip) != 0;
	ah->ip = ah->ipv6 ? 0 : ip;
	memcpy(ah->ip6, attr->grh.dgid.raw, 16);
	ah->ibv.context = pd->context;
	ah->ibv.pd = pd;
	return &ah->ibv;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	free(ah);
	return 0;
}

/* The address vector back to the sender of a UD receive: its GRH area holds the IPv6 header, or,
 * for RoCEv2 over IPv4, the IPv4 header in its last 20 bytes (as mlx5 and rxe write it). */
int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc, struct ibv_grh *grh,
			struct ibv_ah_attr *ah_attr)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;

	(void)context;
	if (!wc || !grh || !ah_attr || !(wc->wc_flags & IBV_WC_GRH))
		return EINVAL;
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->is_global = 1;
	ah_attr->port_num = port_num;
	ah_attr->grh.hop_limit = 64;
	if ((((const uint8_t *)grh)[0] >> 4) == 6) {
		ah_attr->grh.traffic_class = (uint8_t)(((const uint8_t *)grh)[0] << 4 | ((const uint8_t *)grh)[1] >> 4);
		ah_attr->grh.dgid = grh->sgid;
		return 0;
	}
	ah_attr->grh.traffic_class = ip4[1];
	ah_attr->grh.dgid.raw[10] = ah_attr->grh.dgid.raw[11] = 0xff;
	memcpy(&ah_attr->grh.dgid.raw[12], ip4 + 12, 4); /* the sender's address */
	return 0;
}

struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr a;
	int ret = ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &a);

	if (ret) {
		errno = ret;
		return NULL;
	}
	return ibv_create_ah(pd, &a);
}

int ibv_query_pkey(struct ibv_context *context, uint8_t port, int index, __be16 *pkey)
{
	(void)context;
	if (port != 1 || index != 0)
		return -1;
	*pkey = 0xffff;
	return 0;
}
