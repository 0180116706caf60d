/* The rest of rdma-core 44's libibverbs interface, so that every binary built against Debian's
 * library loads this one (all are linked BIND_NOW): small helpers done as rdma-core does them,
 * verbs this NIC does not offer returning rdma-core's error for them, and the provider
 * interface (IBVERBS_PRIVATE_34) that Debian's libmlx5/libefa import when perftest loads them.
 * No provider is ever registered: their constructors' verbs_register_driver_34 does nothing. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <infiniband/sa.h>
#include <rdma/ib_user_sa.h>
#include <rdma/ib_user_verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rnic_verbs.h"

/* ---- sysfs: a simulated device's attributes come from here, anything else from the file */
int rnic_device_file(const char *dir, const char *file, char *buf, size_t size)
{
	char sock[PATH_MAX];
	struct stat st;
	const char *v;

	if (snprintf(sock, sizeof(sock), "%s.sock", dir) >= (int)sizeof(sock) || stat(sock, &st) ||
	    !S_ISSOCK(st.st_mode))
		return -1;
	if (!strcmp(file, "board_id"))
		v = "RNIC-SIM"; /* rnic-sim: the Verilated card */
	else if (!strcmp(file, "node_type"))
		v = "1: CA";
	else
		return -1;
	return snprintf(buf, size, "%s", v) < (int)size ? (int)strlen(buf) : -1;
}

const char *ibv_get_sysfs_path(void)
{
	const char *p = getenv("SYSFS_PATH");

	return p && *p ? p : "/sys";
}

int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t len;
	int fd, n = rnic_device_file(dir, file, buf, size);

	if (n >= 0)
		return n;
	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	len = read(fd, buf, size);
	close(fd);
	if (len > 0) {
		if ((size_t)len < size && buf[len - 1] == '\n')
			buf[--len] = '\0';
		else if ((size_t)len < size)
			buf[len] = '\0';
	}
	return (int)len;
}

/* ---- devices */
int ibv_get_device_index(struct ibv_device *device)
{
	return ((struct rnic_device *)device)->index;
}

struct ibv_context *ibv_import_device(int cmd_fd)
{
	(void)cmd_fd;
	errno = EOPNOTSUPP; /* a context lives in its process: there is no kernel object to share */
	return NULL;
}

struct ibv_pd *ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	(void)context;
	(void)pd_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_pd(struct ibv_pd *pd)
{
	(void)pd;
}

struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	(void)pd;
	(void)mr_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_mr(struct ibv_mr *mr)
{
	(void)mr;
}

struct ibv_dm *ibv_import_dm(struct ibv_context *context, uint32_t dm_handle)
{
	(void)context;
	(void)dm_handle;
	errno = EOPNOTSUPP;
	return NULL;
}

void ibv_unimport_dm(struct ibv_dm *dm)
{
	(void)dm;
}

/* ---- GIDs and P_Keys: both GIDs are RoCEv2 */
int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
		      struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
	struct ibv_gid_entry e = {0};

	if (flags || port_num != 1 || entry_size < sizeof(e))
		return EINVAL;
	if (rnic_gid(context, gid_index, &e.gid))
		return ENODATA;
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = IBV_GID_TYPE_ROCE_V2;
	memcpy(entry, &e, sizeof(e));
	return 0;
}

ssize_t _ibv_query_gid_table(struct ibv_context *context, struct ibv_gid_entry *entries, size_t max_entries,
			     uint32_t flags, size_t entry_size)
{
	size_t n = 0;

	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;
	while (n < max_entries && !_ibv_query_gid_ex(context, 1, (uint32_t)n,
						     (struct ibv_gid_entry *)((char *)entries + n * entry_size),
						     0, entry_size))
		n++;
	if (n < 2 && n == max_entries)
		return -EINVAL; /* as rdma-core: the table does not fit */
	return (ssize_t)n;
}

/* enum ibv_gid_type_sysfs (rdma-core's driver.h): 0 = IB/RoCE v1, 1 = RoCE v2 */
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index, int *type)
{
	union ibv_gid g;

	if (port_num != 1 || rnic_gid(context, index, &g))
		return -1;
	*type = 1;
	return 0;
}

int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	(void)context;
	/* the default P_Key, full or limited member: RoCE has no other */
	return port_num == 1 && (be16toh(pkey) & 0x7fff) == 0x7fff ? 0 : -1;
}

int ibv_resolve_eth_l2_from_gid(struct ibv_context *context, struct ibv_ah_attr *attr, uint8_t eth_mac[6],
				uint16_t *vid)
{
	(void)context;
	(void)attr;
	(void)eth_mac;
	(void)vid;
	return ENOSYS; /* the NIC's firmware resolves addresses itself (ARP, neighbour discovery) */
}

/* ---- verbs this NIC does not offer */
int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	(void)qp;
	(void)gid;
	(void)lid;
	return EOPNOTSUPP;
}

struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd,
				 int access)
{
	(void)pd;
	(void)offset;
	(void)length;
	(void)iova;
	(void)fd;
	(void)access;
	errno = EOPNOTSUPP;
	return NULL;
}

#undef ibv_reg_mr_iova
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
	return ibv_reg_mr_iova2(pd, addr, length, iova, (unsigned int)access);
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
	(void)qp;
	(void)op;
	(void)flags;
	return 0; /* not promised: the application must not rely on placement order */
}

/* ---- fork(): registered memory stays in this process; a child gets its own copy */
int ibv_fork_init(void)
{
	return 0;
}

enum ibv_fork_status ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

int ibv_dontfork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

int ibv_dofork_range(void *base, size_t size)
{
	(void)base;
	(void)size;
	return 0;
}

/* ---- names and rates */
const char *ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter", [IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router", [IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC", [IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return (unsigned)t < sizeof(s) / sizeof(s[0]) && s[t] ? s[t] : "unknown";
}

const char *ibv_port_state_str(enum ibv_port_state st)
{
	static const char *const s[] = {
		[IBV_PORT_NOP] = "no state change (NOP)", [IBV_PORT_DOWN] = "down", [IBV_PORT_INIT] = "init",
		[IBV_PORT_ARMED] = "armed", [IBV_PORT_ACTIVE] = "active", [IBV_PORT_ACTIVE_DEFER] = "active defer",
	};

	return (unsigned)st < sizeof(s) / sizeof(s[0]) && s[st] ? s[st] : "unknown";
}

static const struct {
	enum ibv_rate rate;
	int mult, mbps; /* mult: of 2.5 Gb/s, -1 for the rates that are not a multiple */
} rates[] = {
	{IBV_RATE_2_5_GBPS, 1, 2500}, {IBV_RATE_5_GBPS, 2, 5000}, {IBV_RATE_10_GBPS, 4, 10000},
	{IBV_RATE_20_GBPS, 8, 20000}, {IBV_RATE_30_GBPS, 12, 30000}, {IBV_RATE_40_GBPS, 16, 40000},
	{IBV_RATE_60_GBPS, 24, 60000}, {IBV_RATE_80_GBPS, 32, 80000}, {IBV_RATE_120_GBPS, 48, 120000},
	{IBV_RATE_14_GBPS, -1, 14062}, {IBV_RATE_56_GBPS, -1, 56250}, {IBV_RATE_112_GBPS, -1, 112500},
	{IBV_RATE_168_GBPS, -1, 168750}, {IBV_RATE_25_GBPS, -1, 25781}, {IBV_RATE_100_GBPS, -1, 103125},
	{IBV_RATE_200_GBPS, -1, 206250}, {IBV_RATE_300_GBPS, -1, 309375}, {IBV_RATE_28_GBPS, -1, 28125},
	{IBV_RATE_50_GBPS, -1, 53125}, {IBV_RATE_400_GBPS, -1, 425000}, {IBV_RATE_600_GBPS, -1, 637500},
};
#define NRATES (sizeof(rates) / sizeof(rates[0]))

int ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

enum ibv_rate mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

int ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

enum ibv_rate mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* ---- kernel ABI structs to verbs structs (used by librdmacm; rdma-core's marshall.c) */
void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src);
void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src);
void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src);
void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src);

void ibv_copy_ah_attr_from_kern(struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src)
{
	memcpy(dst->grh.dgid.raw, src->grh.dgid, sizeof(dst->grh.dgid));
	dst->grh.flow_label = src->grh.flow_label;
	dst->grh.sgid_index = src->grh.sgid_index;
	dst->grh.hop_limit = src->grh.hop_limit;
	dst->grh.traffic_class = src->grh.traffic_class;
	dst->dlid = src->dlid;
	dst->sl = src->sl;
	dst->src_path_bits = src->src_path_bits;
	dst->static_rate = src->static_rate;
	dst->is_global = src->is_global;
	dst->port_num = src->port_num;
}

void ibv_copy_qp_attr_from_kern(struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src)
{
	dst->cur_qp_state = src->cur_qp_state;
	dst->path_mtu = src->path_mtu;
	dst->path_mig_state = src->path_mig_state;
	dst->qkey = src->qkey;
	dst->rq_psn = src->rq_psn;
	dst->sq_psn = src->sq_psn;
	dst->dest_qp_num = src->dest_qp_num;
	dst->qp_access_flags = src->qp_access_flags;
	dst->cap.max_send_wr = src->max_send_wr;
	dst->cap.max_recv_wr = src->max_recv_wr;
	dst->cap.max_send_sge = src->max_send_sge;
	dst->cap.max_recv_sge = src->max_recv_sge;
	dst->cap.max_inline_data = src->max_inline_data;
	ibv_copy_ah_attr_from_kern(&dst->ah_attr, &src->ah_attr);
	ibv_copy_ah_attr_from_kern(&dst->alt_ah_attr, &src->alt_ah_attr);
	dst->pkey_index = src->pkey_index;
	dst->alt_pkey_index = src->alt_pkey_index;
	dst->en_sqd_async_notify = src->en_sqd_async_notify;
	dst->sq_draining = src->sq_draining;
	dst->max_rd_atomic = src->max_rd_atomic;
	dst->max_dest_rd_atomic = src->max_dest_rd_atomic;
	dst->min_rnr_timer = src->min_rnr_timer;
	dst->port_num = src->port_num;
	dst->timeout = src->timeout;
	dst->retry_cnt = src->retry_cnt;
	dst->rnr_retry = src->rnr_retry;
	dst->alt_port_num = src->alt_port_num;
	dst->alt_timeout = src->alt_timeout;
}

#define PATH_FIELDS(X) X(dlid) X(slid) X(raw_traffic) X(flow_label) X(hop_limit) X(traffic_class) \
	X(reversible) X(numb_path) X(pkey) X(sl) X(mtu_selector) X(mtu) X(rate_selector) X(rate) \
	X(packet_life_time_selector) X(packet_life_time) X(preference)
#define COPY(f) dst->f = src->f;

void ibv_copy_path_rec_from_kern(struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src)
{
	memcpy(dst->dgid.raw, src->dgid, sizeof(dst->dgid));
	memcpy(dst->sgid.raw, src->sgid, sizeof(dst->sgid));
	PATH_FIELDS(COPY)
}

void ibv_copy_path_rec_to_kern(struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src)
{
	memcpy(dst->dgid, src->dgid.raw, sizeof(dst->dgid));
	memcpy(dst->sgid, src->sgid.raw, sizeof(dst->sgid));
	PATH_FIELDS(COPY)
}

/* ---- the provider interface (IBVERBS_PRIVATE_34). Only Debian's libmlx5/libefa/librdmacm
 * import it, and nothing of theirs runs without a registered provider: their constructors call
 * verbs_register_driver_34, the rest answers EOPNOTSUPP. */
void verbs_register_driver_34(const void *ops);
void verbs_register_driver_34(const void *ops)
{
	(void)ops;
}

void __verbs_log(void *ctx, const char *fmt, ...);
void __verbs_log(void *ctx, const char *fmt, ...)
{
	(void)ctx;
	(void)fmt;
}

#define PRIVATE_INT(name) \
	int name(void);   \
	int name(void) { return EOPNOTSUPP; }
#define PRIVATE_PTR(name) \
	void *name(void); \
	void *name(void) { errno = EOPNOTSUPP; return NULL; }
#define PRIVATE_VOID(name) \
	void name(void);  \
	void name(void) {}

PRIVATE_INT(__ioctl_final_num_attrs)
PRIVATE_PTR(_verbs_init_and_alloc_context)
PRIVATE_INT(execute_ioctl)
PRIVATE_INT(ibv_cmd_advise_mr)
PRIVATE_INT(ibv_cmd_alloc_dm)
PRIVATE_INT(ibv_cmd_alloc_mw)
PRIVATE_INT(ibv_cmd_alloc_pd)
PRIVATE_INT(ibv_cmd_attach_mcast)
PRIVATE_INT(ibv_cmd_close_xrcd)
PRIVATE_INT(ibv_cmd_create_ah)
PRIVATE_INT(ibv_cmd_create_counters)
PRIVATE_INT(ibv_cmd_create_cq)
PRIVATE_INT(ibv_cmd_create_cq_ex)
PRIVATE_INT(ibv_cmd_create_flow)
PRIVATE_INT(ibv_cmd_create_flow_action_esp)
PRIVATE_INT(ibv_cmd_create_qp)
PRIVATE_INT(ibv_cmd_create_qp_ex)
PRIVATE_INT(ibv_cmd_create_qp_ex2)
PRIVATE_INT(ibv_cmd_create_rwq_ind_table)
PRIVATE_INT(ibv_cmd_create_srq)
PRIVATE_INT(ibv_cmd_create_srq_ex)
PRIVATE_INT(ibv_cmd_create_wq)
PRIVATE_INT(ibv_cmd_dealloc_mw)
PRIVATE_INT(ibv_cmd_dealloc_pd)
PRIVATE_INT(ibv_cmd_dereg_mr)
PRIVATE_INT(ibv_cmd_destroy_ah)
PRIVATE_INT(ibv_cmd_destroy_counters)
PRIVATE_INT(ibv_cmd_destroy_cq)
PRIVATE_INT(ibv_cmd_destroy_flow)
PRIVATE_INT(ibv_cmd_destroy_flow_action)
PRIVATE_INT(ibv_cmd_destroy_qp)
PRIVATE_INT(ibv_cmd_destroy_rwq_ind_table)
PRIVATE_INT(ibv_cmd_destroy_srq)
PRIVATE_INT(ibv_cmd_destroy_wq)
PRIVATE_INT(ibv_cmd_detach_mcast)
PRIVATE_INT(ibv_cmd_free_dm)
PRIVATE_INT(ibv_cmd_get_context)
PRIVATE_INT(ibv_cmd_modify_cq)
PRIVATE_INT(ibv_cmd_modify_flow_action_esp)
PRIVATE_INT(ibv_cmd_modify_qp)
PRIVATE_INT(ibv_cmd_modify_qp_ex)
PRIVATE_INT(ibv_cmd_modify_srq)
PRIVATE_INT(ibv_cmd_modify_wq)
PRIVATE_INT(ibv_cmd_open_qp)
PRIVATE_INT(ibv_cmd_open_xrcd)
PRIVATE_INT(ibv_cmd_poll_cq)
PRIVATE_INT(ibv_cmd_post_recv)
PRIVATE_INT(ibv_cmd_post_send)
PRIVATE_INT(ibv_cmd_post_srq_recv)
PRIVATE_INT(ibv_cmd_query_context)
PRIVATE_INT(ibv_cmd_query_device_any)
PRIVATE_INT(ibv_cmd_query_mr)
PRIVATE_INT(ibv_cmd_query_port)
PRIVATE_INT(ibv_cmd_query_qp)
PRIVATE_INT(ibv_cmd_query_srq)
PRIVATE_INT(ibv_cmd_read_counters)
PRIVATE_INT(ibv_cmd_reg_dm_mr)
PRIVATE_INT(ibv_cmd_reg_dmabuf_mr)
PRIVATE_INT(ibv_cmd_reg_mr)
PRIVATE_INT(ibv_cmd_req_notify_cq)
PRIVATE_INT(ibv_cmd_rereg_mr)
PRIVATE_INT(ibv_cmd_resize_cq)
PRIVATE_INT(ibv_read_ibdev_sysfs_file)
PRIVATE_INT(verbs_allow_disassociate_destroy)
PRIVATE_VOID(verbs_init_cq)
PRIVATE_PTR(verbs_open_device)
PRIVATE_VOID(verbs_set_ops)
PRIVATE_VOID(verbs_uninit_context)
