/* Target of the malformed-frame tests: an RC QP on a simulated NIC whose peer is a test script
 * speaking raw RoCEv2 frames over rnic-sim's UDP backend.
 *
 *   inject_target DEV PEER_IP PEER_QPN
 *
 * Registers the middle 8 KiB of a 16 KiB buffer filled with 0xaa (REMOTE_WRITE), a second 4 KiB
 * MR without remote access, moves the QP to RTS (the firmware resolves PEER_IP by ARP), prints
 *   READY qpn=Q rkey=K addr=A len=L rkey_ro=K2 addr_ro=A2 rq_psn=P
 * then answers each "check" line on stdin with the changed byte ranges of the whole buffer
 * ("CHANGED start end" lines, offsets from the start of the 16 KiB buffer) and "DONE", and each
 * "reconnect" line by taking the QP through RESET to RTS again (RQ PSN back to its start), "DONE".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <rnic/rnicdv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE 16384
#define MR_OFF 4096
#define MR_LEN 8192
#define RO_OFF 12288
#define RO_LEN 4096
#define RQ_PSN 1000

static void die(const char *what)
{
	fprintf(stderr, "inject_target: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* RESET -> INIT -> RTR -> RTS toward the peer: a responder that failed a request starts over */
static void connect_qp(struct ibv_qp *qp, uint32_t peer_qpn, uint32_t peer)
{
	struct ibv_qp_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RESET;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (ret)
		errno = ret, die("modify RESET");
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_INIT;
	attr.port_num = 1;
	attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		errno = ret, die("modify INIT");

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = peer_qpn;
	attr.rq_psn = RQ_PSN;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = 1;
	attr.ah_attr.grh.hop_limit = 64;
	attr.ah_attr.grh.dgid.raw[10] = 0xff;
	attr.ah_attr.grh.dgid.raw[11] = 0xff;
	memcpy(&attr.ah_attr.grh.dgid.raw[12], &peer, 4);
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		errno = ret, die("modify RTR");

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.sq_psn = 5000;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.max_rd_atomic = 1;
	ret = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			    IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	if (ret)
		errno = ret, die("modify RTS");

}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr, *mr_ro;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr init = {0};
	struct in_addr peer;
	unsigned char *buf;
	char line[64];
	int i, n;

	if (argc != 4 || inet_pton(AF_INET, argv[2], &peer) != 1) {
		fprintf(stderr, "usage: inject_target DEV PEER_IP PEER_QPN\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	if (!list)
		die("ibv_get_device_list");
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			break;
	if (i == n) {
		fprintf(stderr, "inject_target: no device %s\n", argv[1]);
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("ibv_open_device");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd");
	if (posix_memalign((void **)&buf, 4096, BUF_SIZE))
		die("posix_memalign");
	memset(buf, 0xaa, BUF_SIZE);
	mr = ibv_reg_mr(pd, buf + MR_OFF, MR_LEN, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	mr_ro = ibv_reg_mr(pd, buf + RO_OFF, RO_LEN, IBV_ACCESS_LOCAL_WRITE);
	if (!mr || !mr_ro)
		die("ibv_reg_mr");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!cq)
		die("ibv_create_cq");
	init.send_cq = cq;
	init.recv_cq = cq;
	init.qp_type = IBV_QPT_RC;
	init.cap.max_send_wr = 16;
	init.cap.max_recv_wr = 16;
	init.cap.max_send_sge = 1;
	init.cap.max_recv_sge = 1;
	qp = ibv_create_qp(pd, &init);
	if (!qp)
		die("ibv_create_qp");

	connect_qp(qp, (uint32_t)strtoul(argv[3], NULL, 0), peer.s_addr);

	printf("READY qpn=%u rkey=%u addr=%llu len=%u rkey_ro=%u addr_ro=%llu rq_psn=%u buf=%llu\n",
	       qp->qp_num, mr->rkey, (unsigned long long)(uintptr_t)mr->addr, MR_LEN, mr_ro->rkey,
	       (unsigned long long)(uintptr_t)mr_ro->addr, RQ_PSN, (unsigned long long)(uintptr_t)buf);
	fflush(stdout);

	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "reconnect", 9)) {
			connect_qp(qp, (uint32_t)strtoul(argv[3], NULL, 0), peer.s_addr);
			printf("DONE\n");
			fflush(stdout);
			continue;
		}
		if (strncmp(line, "check", 5))
			break;
		/* a read of the NIC flushes its earlier DMA writes to us (as on PCIe): the ACK the
		 * peer saw may have overtaken the write it acknowledges on its way here */
		rnicdv_read_clock(ctx);
		for (i = 0; i < BUF_SIZE; i++) {
			int start = i;

			if (buf[i] == 0xaa)
				continue;
			while (i < BUF_SIZE && buf[i] != 0xaa)
				i++;
			printf("CHANGED %d %d\n", start, i);
		}
		printf("DONE\n");
		fflush(stdout);
	}

	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dereg_mr(mr_ro);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
