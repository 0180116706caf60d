/* Connections through librdmacm (the project's librdmacm.so.1), made and broken ROUNDS times in
 * one process: a listener on SERVER_IP:PORT, a client from CLIENT_IP (the same address: the
 * NIC's internal loopback). Each round: resolve, connect with private data, accept with private
 * data, one SEND over the connection, disconnect from alternating sides, destroy everything.
 * Events are waited for with poll() on the channels' file descriptors. Then: a second listener
 * on the port gets EADDRINUSE, a connect to a port nobody listens on is REJECTED (reason 8).
 * Last, teardown as threaded applications do it (rping): rdma_destroy_id waits until an event
 * another thread holds for the ID is acked, and a channel destroyed under a thread blocked in
 * rdma_get_cm_event (its ID's event gone, the count left) leaves the thread blocked, not crashed.
 *
 *   cm_cycles ROUNDS SERVER_IP CLIENT_IP PORT
 * Prints "cm_cycles: N rounds ok" and exits 0, or names what failed. */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>

#define CHECK(c)                                                                           \
	do {                                                                               \
		if (!(c)) {                                                                \
			fprintf(stderr, "cm_cycles: %s:%d: %s (%s)\n", __FILE__, __LINE__, #c, \
				strerror(errno));                                           \
			exit(1);                                                           \
		}                                                                          \
	} while (0)

/* the next event of the channel, of the type wanted, within 120 s of wall time */
static struct rdma_cm_event *expect(struct rdma_event_channel *ch, enum rdma_cm_event_type type)
{
	struct pollfd p = {.fd = ch->fd, .events = POLLIN};
	struct rdma_cm_event *e;

	CHECK(poll(&p, 1, 120000) == 1);
	CHECK(rdma_get_cm_event(ch, &e) == 0);
	if (e->event != type) {
		fprintf(stderr, "cm_cycles: %s (status %d), expected %s\n", rdma_event_str(e->event), e->status,
			rdma_event_str(type));
		exit(1);
	}
	return e;
}

static struct sockaddr_in addr(const char *ip, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};

	CHECK(inet_pton(AF_INET, ip, &a.sin_addr) == 1);
	return a;
}

static struct ibv_qp_init_attr qp_attr(void)
{
	struct ibv_qp_init_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_type = IBV_QPT_RC;
	a.cap.max_send_wr = a.cap.max_recv_wr = 4;
	a.cap.max_send_sge = a.cap.max_recv_sge = 1;
	return a; /* no CQs: the library makes them */
}

static void wait_wc(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	long i;

	for (i = 0; i < 100000000 && ibv_poll_cq(cq, 1, &wc) == 0; i++)
		;
	CHECK(i < 100000000 && wc.status == IBV_WC_SUCCESS);
}

static struct rdma_cm_id *client(struct rdma_event_channel *ch, const char *src, const char *dst, int port)
{
	struct sockaddr_in s = addr(src, 0), d = addr(dst, port);
	struct rdma_cm_id *id;

	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(id, (struct sockaddr *)&s, (struct sockaddr *)&d, 2000) == 0);
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED));
	CHECK(rdma_resolve_route(id, 2000) == 0);
	rdma_ack_cm_event(expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED));
	CHECK(id->verbs && rdma_get_dst_port(id) == htons((uint16_t)port));
	return id;
}

static volatile int got, acked, returned;

/* another thread takes the event and acks it a second later */
static void *slow_acker(void *ch)
{
	struct rdma_cm_event *e;

	CHECK(rdma_get_cm_event(ch, &e) == 0 && e->event == RDMA_CM_EVENT_ADDR_RESOLVED);
	got = 1;
	sleep(1);
	acked = 1;
	rdma_ack_cm_event(e);
	return NULL;
}

static void *blocked_reader(void *ch)
{
	struct rdma_cm_event *e;

	rdma_get_cm_event(ch, &e);
	returned = 1;
	return NULL;
}

static void threaded_teardown(const char *src, const char *dst, int port)
{
	struct sockaddr_in s = addr(src, 0), d = addr(dst, port);
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_cm_id *id;
	pthread_t t;

	CHECK(ch && rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(id, (struct sockaddr *)&s, (struct sockaddr *)&d, 2000) == 0);
	CHECK(pthread_create(&t, NULL, slow_acker, ch) == 0);
	while (!got)
		usleep(1000);
	CHECK(rdma_destroy_id(id) == 0 && acked);
	CHECK(pthread_join(t, NULL) == 0);
	/* the event goes with its ID, its count stays for the reader to read past */
	CHECK(rdma_create_id(ch, &id, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_resolve_addr(id, (struct sockaddr *)&s, (struct sockaddr *)&d, 2000) == 0);
	CHECK(rdma_destroy_id(id) == 0);
	CHECK(pthread_create(&t, NULL, blocked_reader, ch) == 0);
	usleep(100000);
	rdma_destroy_event_channel(ch);
	usleep(100000);
	CHECK(!returned); /* the process exits with it blocked, as rping's CM thread */
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *sch, *cch;
	struct rdma_cm_id *listen, *second;
	struct rdma_cm_event *e;
	struct sockaddr_in la;
	int rounds, port, r;

	if (argc != 5) {
		fprintf(stderr, "usage: cm_cycles ROUNDS SERVER_IP CLIENT_IP PORT\n");
		return 2;
	}
	rounds = atoi(argv[1]);
	port = atoi(argv[4]);
	sch = rdma_create_event_channel();
	cch = rdma_create_event_channel();
	CHECK(sch && cch);
	la = addr(argv[2], port);
	CHECK(rdma_create_id(sch, &listen, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(listen, (struct sockaddr *)&la) == 0);
	CHECK(rdma_listen(listen, 8) == 0);
	for (r = 0; r < rounds; r++) {
		struct rdma_cm_id *c = client(cch, argv[3], argv[2], port), *s;
		struct ibv_qp_init_attr qa = qp_attr();
		struct rdma_conn_param cp;
		char hello[24], reply[24], msg[8] = "payload";
		struct ibv_mr *smr, *cmr;
		char *rbuf = calloc(1, 64);

		CHECK(rdma_create_qp(c, NULL, &qa) == 0 && c->qp && c->send_cq && c->recv_cq);
		memset(&cp, 0, sizeof(cp));
		snprintf(hello, sizeof(hello), "hello %d", r);
		cp.private_data = hello;
		cp.private_data_len = sizeof(hello);
		cp.responder_resources = cp.initiator_depth = 1;
		cp.retry_count = cp.rnr_retry_count = 7;
		CHECK(rdma_connect(c, &cp) == 0);
		/* the server: the request with the client's data and addresses */
		e = expect(sch, RDMA_CM_EVENT_CONNECT_REQUEST);
		s = e->id;
		CHECK(e->listen_id == listen && !memcmp(e->param.conn.private_data, hello, sizeof(hello)));
		CHECK(e->param.conn.private_data_len == 56 && s->verbs);
		CHECK(((struct sockaddr_in *)&s->route.addr.dst_addr)->sin_port == rdma_get_src_port(c));
		CHECK(rdma_get_src_port(s) == htons((uint16_t)port));
		rdma_ack_cm_event(e);
		qa = qp_attr();
		CHECK(rdma_create_qp(s, NULL, &qa) == 0);
		smr = ibv_reg_mr(s->pd, rbuf, 64, IBV_ACCESS_LOCAL_WRITE);
		CHECK(smr);
		CHECK(rdma_post_recv(s, NULL, rbuf, 64, smr) == 0);
		snprintf(reply, sizeof(reply), "welcome %d", r);
		memset(&cp, 0, sizeof(cp));
		cp.private_data = reply;
		cp.private_data_len = sizeof(reply);
		cp.responder_resources = cp.initiator_depth = 1;
		cp.rnr_retry_count = 7;
		CHECK(rdma_accept(s, &cp) == 0);
		e = expect(cch, RDMA_CM_EVENT_ESTABLISHED);
		CHECK(e->id == c && !memcmp(e->param.conn.private_data, reply, sizeof(reply)));
		CHECK(e->param.conn.qp_num == s->qp->qp_num);
		rdma_ack_cm_event(e);
		rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_ESTABLISHED));
		/* the connection carries data */
		cmr = ibv_reg_mr(c->pd, msg, sizeof(msg), 0);
		CHECK(cmr);
		CHECK(rdma_post_send(c, NULL, msg, sizeof(msg), cmr, IBV_SEND_SIGNALED) == 0);
		wait_wc(c->send_cq);
		wait_wc(s->recv_cq);
		CHECK(!strcmp(rbuf, "payload"));
		/* hang up, from either side in turn */
		CHECK(rdma_disconnect(r & 1 ? s : c) == 0);
		rdma_ack_cm_event(expect(cch, RDMA_CM_EVENT_DISCONNECTED));
		rdma_ack_cm_event(expect(sch, RDMA_CM_EVENT_DISCONNECTED));
		CHECK(rdma_disconnect(r & 1 ? c : s) == 0);
		CHECK(ibv_dereg_mr(cmr) == 0 && ibv_dereg_mr(smr) == 0);
		rdma_destroy_qp(c);
		rdma_destroy_qp(s);
		CHECK(rdma_destroy_id(c) == 0 && rdma_destroy_id(s) == 0);
		free(rbuf);
	}
	/* the port has one listener on the NIC */
	CHECK(rdma_create_id(sch, &second, NULL, RDMA_PS_TCP) == 0);
	CHECK(rdma_bind_addr(second, (struct sockaddr *)&la) == 0);
	CHECK(rdma_listen(second, 8) == -1 && errno == EADDRINUSE);
	CHECK(rdma_destroy_id(second) == 0);
	/* nobody listens on the next port: rejected, not left to time out */
	{
		struct rdma_cm_id *c = client(cch, argv[3], argv[2], port + 1);
		struct ibv_qp_init_attr qa = qp_attr();

		CHECK(rdma_create_qp(c, NULL, &qa) == 0);
		CHECK(rdma_connect(c, NULL) == 0);
		e = expect(cch, RDMA_CM_EVENT_REJECTED);
		CHECK(e->status == 8); /* IB_CM_REJ_INVALID_SERVICE_ID */
		rdma_ack_cm_event(e);
		rdma_destroy_qp(c);
		CHECK(rdma_destroy_id(c) == 0);
	}
	CHECK(rdma_destroy_id(listen) == 0);
	rdma_destroy_event_channel(sch);
	rdma_destroy_event_channel(cch);
	threaded_teardown(argv[3], argv[2], port);
	printf("cm_cycles: %d rounds ok\n", rounds);
	return 0;
}
