// SPDX-License-Identifier: GPL-2.0-only
/*
 * lat_verbs: the small-message flow of scripts/cc-bench and cc.sh: an RC
 * SEND ping-pong between two RDMA devices in one process that sleeps on
 * completion events, and its latency in perftest's result format.
 *
 *   lat_verbs -d DEV_A -g GID_A -D DEV_B -G GID_B [-s SIZE] [-n ITERS]
 *             [-T TCLASS] [-u QP_TIMEOUT] [-w WAIT_S]
 *
 * Side A (the client, thread main) sends SIZE bytes (default 64), signaled,
 * to side B (the server, its own thread), which checks them and replies
 * with SIZE bytes of its own; a round trip ends when A holds both the
 * reply's receive completion and its send's completion.  ITERS round trips
 * (default 1000), one at a time.  Devices of other network namespaces are
 * visible in the shared rdma netns mode, and each QP's packets go through
 * its own device's netdev: A and B may sit in different namespaces.  Path
 * MTU 1024, RoCE v2 (the GID indices name the peers' GIDs), TCLASS (default
 * 0) as the GRH traffic class of both QPs, local ACK timeout QP_TIMEOUT
 * (default 18: 4.096 us * 2^18 = 1.07 s, a TCG guest stalls for longer
 * than perftest's 67 ms).
 *
 * Why not ib_send_lat -e: perftest 4.5's -e shares one completion channel
 * between the send and the receive CQ and, after an event, polls the send
 * CQ once and reads its work completion even when there was none; when the
 * reply overtakes the ACK of the send it fails with a garbage status or
 * hangs on an overflowed one-entry CQ.  Here each side has one channel and
 * one CQ (its send and receive queue share it); after every event it acks,
 * re-arms, then polls until the CQ is empty, so an event without a new
 * completion (or with several) is harmless.  Nothing spins: a side blocks
 * in poll(2) on its channel's fd, at most WAIT_S s (default 60) per wait,
 * then gives up with a message.
 *
 * Every completion must be IBV_WC_SUCCESS with the expected opcode and
 * length, every received payload is compared byte for byte with what the
 * peer sent (a pattern seeded by the iteration and the direction).  Any
 * failure: a message on stderr and exit 1.
 *
 * Output: perftest's header and result line (ib_send_lat's columns), so
 * the parsers of ib_send_lat output read it unchanged:
 *   " #bytes #iterations t_min[usec] t_max[usec] t_typical[usec]
 *     t_avg[usec] t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]"
 * The figures are defined as perftest's print_report_lat() defines them
 * for a SEND test: the latency is half the round trip; the samples are
 * sorted and the largest two dropped (LAT_MEASURE_TAIL); t_typical is the
 * median of the rest, t_avg and t_stdev their mean and standard deviation
 * (perftest rounds each deviation to whole microseconds; here it is not
 * rounded), t_max the sample just above the kept ones, the percentiles the
 * samples at ceil(kept * 0.99) and ceil(kept * 0.999).  One difference:
 * perftest's samples are the times between successive posts (ITERS - 1 of
 * them), here each sample is one round trip (ITERS of them) measured with
 * CLOCK_MONOTONIC.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define RECV_SLOTS	4	/* receives each side keeps posted */
#define LAT_MEASURE_TAIL 2	/* as perftest: the largest samples dropped */
#define MAX_SIZE	4096

enum { CLIENT, SERVER };

struct side {
	const char *name;	/* "client" or "server" */
	const char *dev_name;
	int gidx;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;		/* send buffer, then RECV_SLOTS receive slots */
	struct ibv_mr *mr;
	union ibv_gid gid;
	unsigned int unacked;	/* CQ events not yet acknowledged */
	/* completions taken off the CQ, not yet consumed by the loop */
	unsigned int sends_done, recvs_done;
	unsigned int recv_slot;	/* slot of the oldest posted receive */
};

static size_t opt_size = 64;
static unsigned int opt_iters = 1000;
static int opt_tclass;
static int opt_timeout = 18;
static int opt_wait_s = 60;

static void die(const struct side *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

static void die(const struct side *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "lat_verbs: %s%s", s ? s->name : "", s ? ": " : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

/* The payload of iteration @iter in direction @dir (no two alike). */
static void pattern(uint8_t *p, size_t len, unsigned int iter, int dir)
{
	uint32_t x = iter * 2654435761u + (dir ? 0x9e3779b9u : 0x7f4a7c15u);
	size_t i;

	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (uint8_t)x;
	}
}

static uint8_t *slot(struct side *s, unsigned int i)
{
	return s->buf + (1 + i) * MAX_SIZE;
}

static void post_recv(struct side *s, unsigned int i)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)slot(s, i), .length = MAX_SIZE, .lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;
	int err = ibv_post_recv(s->qp, &wr, &bad);

	if (err)
		die(s, "ibv_post_recv: %s", strerror(err));
}

static void post_send(struct side *s, unsigned int iter)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = opt_size, .lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = iter, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err = ibv_post_send(s->qp, &wr, &bad);

	if (err)
		die(s, "ibv_post_send (iteration %u): %s", iter, strerror(err));
}

/* Checks one completion and counts it. */
static void take_wc(struct side *s, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_SUCCESS)
		die(s, "completion with error: wr_id %llu opcode %d status %s (%d), vendor_err 0x%x",
		    (unsigned long long)wc->wr_id, wc->opcode,
		    ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
	switch (wc->opcode) {
	case IBV_WC_SEND:
		s->sends_done++;
		break;
	case IBV_WC_RECV:
		if (wc->byte_len != opt_size)
			die(s, "received %u bytes, expected %zu", wc->byte_len, opt_size);
		if (wc->wr_id != s->recv_slot)
			die(s, "receive completion of slot %llu, expected slot %u",
			    (unsigned long long)wc->wr_id, s->recv_slot);
		s->recvs_done++;
		break;
	default:
		die(s, "unexpected completion opcode %d (wr_id %llu)", wc->opcode,
		    (unsigned long long)wc->wr_id);
	}
}

/* Takes every completion the CQ holds; returns how many. */
static int drain(struct side *s)
{
	struct ibv_wc wc[8];
	int n, i, total = 0;

	do {
		n = ibv_poll_cq(s->cq, 8, wc);
		if (n < 0)
			die(s, "ibv_poll_cq: %d", n);
		for (i = 0; i < n; i++)
			take_wc(s, &wc[i]);
		total += n;
	} while (n > 0);
	return total;
}

/*
 * Until @sends and @recvs completions are there: sleep on the channel,
 * ack the event, re-arm, then empty the CQ.  Re-arming before the last
 * poll is what makes this race-free: a completion that lands after the
 * poll raises a new event.
 */
static void wait_for(struct side *s, unsigned int sends, unsigned int recvs,
		     unsigned int iter)
{
	struct pollfd pfd = { .fd = s->ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int n, err;

	drain(s);
	while (s->sends_done < sends || s->recvs_done < recvs) {
		n = poll(&pfd, 1, opt_wait_s * 1000);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die(s, "poll: %s", strerror(errno));
		if (n == 0)
			die(s, "iteration %u: no completion in %d s (have %u of %u sends, %u of %u receives)",
			    iter, opt_wait_s, s->sends_done, sends, s->recvs_done, recvs);
		if (ibv_get_cq_event(s->ch, &ev_cq, &ev_ctx))
			die(s, "ibv_get_cq_event: %s", strerror(errno));
		if (ev_cq != s->cq)
			die(s, "event of a CQ not ours");
		/* ibv_ack_cq_events takes a mutex: batch it */
		if (++s->unacked == 64) {
			ibv_ack_cq_events(s->cq, s->unacked);
			s->unacked = 0;
		}
		err = ibv_req_notify_cq(s->cq, 0);
		if (err)
			die(s, "ibv_req_notify_cq: %s", strerror(err));
		drain(s);
	}
}

/* The receive just completed: check it against @iter's payload, repost. */
static void check_recv(struct side *s, unsigned int iter, int dir)
{
	static __thread uint8_t want[MAX_SIZE];
	uint8_t *got = slot(s, s->recv_slot);
	size_t i;

	pattern(want, opt_size, iter, dir);
	for (i = 0; i < opt_size; i++)
		if (got[i] != want[i])
			die(s, "iteration %u: payload byte %zu is 0x%02x, sent 0x%02x",
			    iter, i, got[i], want[i]);
	memset(got, 0, opt_size);
	post_recv(s, s->recv_slot);
	s->recv_slot = (s->recv_slot + 1) % RECV_SLOTS;
}

static void side_open(struct side *s)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = RECV_SLOTS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_port_attr port;
	int i, err;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), s->dev_name))
			s->ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!s->ctx)
		die(s, "no device %s (or it cannot be opened)", s->dev_name);
	err = ibv_query_port(s->ctx, 1, &port);
	if (err)
		die(s, "ibv_query_port %s: %s", s->dev_name, strerror(err));
	if (port.state != IBV_PORT_ACTIVE)
		die(s, "%s port 1 is not ACTIVE", s->dev_name);
	if (ibv_query_gid(s->ctx, 1, s->gidx, &s->gid))
		die(s, "%s has no GID %d", s->dev_name, s->gidx);
	s->pd = ibv_alloc_pd(s->ctx);
	s->ch = ibv_create_comp_channel(s->ctx);
	if (!s->pd || !s->ch)
		die(s, "ibv_alloc_pd/ibv_create_comp_channel: %s", strerror(errno));
	s->cq = ibv_create_cq(s->ctx, 4 + RECV_SLOTS, NULL, s->ch, 0);
	if (!s->cq)
		die(s, "ibv_create_cq: %s", strerror(errno));
	s->buf = aligned_alloc(4096, (1 + RECV_SLOTS) * MAX_SIZE);
	if (!s->buf)
		die(s, "out of memory");
	memset(s->buf, 0, (1 + RECV_SLOTS) * MAX_SIZE);
	s->mr = ibv_reg_mr(s->pd, s->buf, (1 + RECV_SLOTS) * MAX_SIZE,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		die(s, "ibv_reg_mr: %s", strerror(errno));
	qa.send_cq = s->cq;
	qa.recv_cq = s->cq;
	s->qp = ibv_create_qp(s->pd, &qa);
	if (!s->qp)
		die(s, "ibv_create_qp: %s", strerror(errno));
	err = ibv_req_notify_cq(s->cq, 0);
	if (err)
		die(s, "ibv_req_notify_cq: %s", strerror(err));
}

static void qp_connect(struct side *s, const struct side *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};
	int err;

	err = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		die(s, "modify_qp INIT: %s", strerror(err));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = s->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.traffic_class = opt_tclass;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (err)
		die(s, "modify_qp RTR: %s", strerror(err));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = opt_timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	err = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			    IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		die(s, "modify_qp RTS: %s", strerror(err));
}

/* Server: each message checked, then answered; its send completion awaited. */
static void *server(void *arg)
{
	struct side *s = arg;
	unsigned int i;

	for (i = 0; i < opt_iters; i++) {
		wait_for(s, i, i + 1, i);
		check_recv(s, i, CLIENT);
		pattern(s->buf, opt_size, i, SERVER);
		post_send(s, i);
	}
	wait_for(s, opt_iters, opt_iters, opt_iters);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* perftest's print_report_lat() figures of @n half round trips (sorts them). */
static void report(double *lat, unsigned int n)
{
	unsigned int cnt = n - LAT_MEASURE_TAIL, i;
	double sum = 0, var = 0, avg, typ;

	qsort(lat, n, sizeof(*lat), cmp_double);
	typ = (cnt - 1) % 2 ? (lat[cnt / 2] + lat[cnt / 2 - 1]) / 2 : lat[cnt / 2];
	for (i = 0; i < cnt; i++)
		sum += lat[i];
	avg = sum / cnt;
	for (i = 0; i < cnt; i++)
		var += (lat[i] - avg) * (lat[i] - avg);
	printf("---------------------------------------------------------------------------------------\n");
	printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec] \n");
	printf(" %-7zu %-10u          %-7.2f        %-7.2f      %-7.2f  \t       %-7.2f     \t%-7.2f\t\t%-7.2f \t\t%-7.2f\n",
	       opt_size, n, lat[0], lat[cnt], typ, avg, sqrt(var / cnt),
	       lat[(unsigned int)ceil(cnt * 0.99)], lat[(unsigned int)ceil(cnt * 0.999)]);
	printf("---------------------------------------------------------------------------------------\n");
}

static void usage(void)
{
	fprintf(stderr,
		"usage: lat_verbs -d DEV_A -g GID_A -D DEV_B -G GID_B [-s SIZE] [-n ITERS]\n"
		"                 [-T TCLASS] [-u QP_TIMEOUT] [-w WAIT_S]\n");
	exit(2);
}

/* A whole number in [@min, @max] or exit 2. */
static long num_arg(int opt, const char *arg, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 0);
	if (errno || !*arg || *end || v < min || v > max) {
		fprintf(stderr, "lat_verbs: -%c needs a number from %ld to %ld, not '%s'\n",
			opt, min, max, arg);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct side sides[2] = {
		{ .name = "client", .gidx = -1 }, { .name = "server", .gidx = -1 },
	};
	struct side *c = &sides[CLIENT], *sv = &sides[SERVER];
	pthread_t srv;
	unsigned int i;
	double *lat, t0;
	int opt, err;

	while ((opt = getopt(argc, argv, "d:g:D:G:s:n:T:u:w:h")) != -1) {
		switch (opt) {
		case 'd': c->dev_name = optarg; break;
		case 'g': c->gidx = num_arg(opt, optarg, 0, 255); break;
		case 'D': sv->dev_name = optarg; break;
		case 'G': sv->gidx = num_arg(opt, optarg, 0, 255); break;
		case 's': opt_size = num_arg(opt, optarg, 1, MAX_SIZE); break;
		case 'n': opt_iters = num_arg(opt, optarg, LAT_MEASURE_TAIL + 1, 10000000); break;
		case 'T': opt_tclass = num_arg(opt, optarg, 0, 255); break;
		case 'u': opt_timeout = num_arg(opt, optarg, 0, 31); break;
		case 'w': opt_wait_s = num_arg(opt, optarg, 1, 3600); break;
		default: usage();
		}
	}
	if (optind != argc || !c->dev_name || !sv->dev_name || c->gidx < 0 || sv->gidx < 0)
		usage();
	lat = calloc(opt_iters, sizeof(*lat));
	if (!lat)
		die(NULL, "out of memory");

	side_open(c);
	side_open(sv);
	qp_connect(c, sv);
	qp_connect(sv, c);
	for (i = 0; i < RECV_SLOTS; i++) {
		post_recv(c, i);
		post_recv(sv, i);
	}
	err = pthread_create(&srv, NULL, server, sv);
	if (err)
		die(NULL, "pthread_create: %s", strerror(err));

	for (i = 0; i < opt_iters; i++) {
		pattern(c->buf, opt_size, i, CLIENT);
		t0 = now_us();
		post_send(c, i);
		wait_for(c, i + 1, i + 1, i);
		lat[i] = (now_us() - t0) / 2;
		check_recv(c, i, SERVER);
	}
	err = pthread_join(srv, NULL);
	if (err)
		die(NULL, "pthread_join: %s", strerror(err));
	report(lat, opt_iters);

	for (i = 0; i < 2; i++) {
		struct side *s = &sides[i];

		if (s->unacked)
			ibv_ack_cq_events(s->cq, s->unacked);
		if (ibv_destroy_qp(s->qp) || ibv_destroy_cq(s->cq) ||
		    ibv_destroy_comp_channel(s->ch) || ibv_dereg_mr(s->mr) ||
		    ibv_dealloc_pd(s->pd) || ibv_close_device(s->ctx))
			die(s, "teardown failed: %s", strerror(errno));
		free(s->buf);
	}
	free(lat);
	return 0;
}
