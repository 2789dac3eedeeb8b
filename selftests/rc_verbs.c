// SPDX-License-Identifier: GPL-2.0-only
/*
 * rc_verbs: every RC operation and every RC error completion, checked byte
 * for byte and status for status, between two RC QPs.
 *
 *   rc_verbs -d DEV -g GIDX [-D DEV2 -G GIDX2] [-m MTU] [-t TEST,...] [-N]
 *
 * Side A (the requester in every test) is a QP on DEV with the GID at GIDX;
 * side B (the responder) is a QP on DEV2/GIDX2, or by default a second QP on
 * the same device (loopback).  Each side opens its own context, PD, CQ and
 * a 4 MiB buffer registered with every access right, so the same code runs
 * on one device or on two.  Each test is one forked child (kselftest
 * harness); the output is KTAP.
 *
 * Attributes are short on purpose: every RNR wait or retransmit timeout
 * costs real time under QEMU TCG.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define BUF_SZ		(4u << 20)
#define SRC_OFF		0u		/* local source data: [0, 2 MiB) */
#define DST_OFF		(2u << 20)	/* remote target: [2 MiB, 4 MiB) */
#define MIB		(1u << 20)
#define WC_WAIT_MS	15000		/* an expected completion */
#define QUIET_MS	200		/* "no completion" means none in this long */
#define NEAR_WRAP_PSN	0xfffff0u	/* 16 PSNs before the 24-bit wrap */
#define ALL_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

#include "verbs_test.h"

static enum ibv_mtu opt_mtu;	/* 0: the smaller active MTU of the ports */
static bool opt_naks_dropped;	/* -N: the path drops remote access NAKs */
static bool opt_send_last_dropped;	/* -L: the path drops RC SEND LAST packets */

/* How to connect the two QPs; conn_defaults() gives the normal case. */
struct conn {
	int access[2];		/* qp_access_flags of A and B */
	uint8_t rnr_retry;	/* of A (the requester) */
	uint8_t retry_cnt;
	uint8_t timeout;	/* 4.096 us * 2^timeout */
	uint8_t min_rnr_timer;	/* of B */
	uint32_t psn;		/* A's sq_psn = B's rq_psn (and the reverse) */
	uint32_t a_dest_qpn;	/* 0: B's QPN; else A points at this QPN */
	int sq_sig_all;
	uint32_t max_inline;
	enum ibv_mtu mtu;	/* 0: -m, or the smaller active MTU */
};

static struct conn conn_defaults(void)
{
	return (struct conn){
		.access = { ALL_ACCESS, ALL_ACCESS },
		.rnr_retry = 7,
		.retry_cnt = 7,		/* rides out a host that stalls the guest */
		.timeout = 12,		/* 16.8 ms */
		.min_rnr_timer = 1,	/* 0.01 ms */
		.psn = 0x1234,
		.sq_sig_all = 1,
	};
}

static const char *qp_state_str(enum ibv_qp_state s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return s < sizeof(n) / sizeof(n[0]) ? n[s] : "?";
}

#define EXPECT_QP_STATE(s, want) do { \
	enum ibv_qp_state __st = qp_state(s); \
	EXPECT_EQ((want), __st) TH_LOG("%s QP: expected state %s, got %s", #s, \
				       qp_state_str(want), qp_state_str(__st)); \
} while (0)

/* LEN bytes at A+AOFF equal those at B+BOFF. */
#define EXPECT_SAME_BYTES(a, aoff, b, boff, len) do { \
	long __d = first_diff((a)->buf + (aoff), (b)->buf + (boff), (len)); \
	EXPECT_EQ(-1, __d) TH_LOG("%zu bytes differ from offset %ld: expected 0x%02x, got 0x%02x", \
				  (size_t)(len), __d, (a)->buf[(aoff) + (__d < 0 ? 0 : __d)], \
				  (b)->buf[(boff) + (__d < 0 ? 0 : __d)]); \
} while (0)

static enum ibv_qp_state qp_state(struct side *s)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(s->qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/* The QP is in ERR once the error path has run: give it a moment. */
static enum ibv_qp_state qp_state_settled(struct side *s, enum ibv_qp_state want)
{
	uint64_t end = now_ms() + 2000;
	enum ibv_qp_state st;

	while ((st = qp_state(s)) != want && now_ms() < end)
		usleep(1000);
	return st;
}

#define EXPECT_QP_STATE_SOON(s, want) do { \
	enum ibv_qp_state __st = qp_state_settled(s, want); \
	EXPECT_EQ((want), __st) TH_LOG("%s QP: expected state %s, got %s", #s, \
				       qp_state_str(want), qp_state_str(__st)); \
} while (0)

FIXTURE(rc) {
	struct side s[2];
	struct side *a, *b;
	struct side imp;	/* B's context as an importer sees it */
};

FIXTURE_SETUP(rc)
{
	self->a = &self->s[0];
	self->b = &self->s[1];
	sides_open(_metadata, self->a, self->b, ALL_ACCESS);
}

static void side_unimport(struct side *s);

FIXTURE_TEARDOWN(rc)
{
	side_close(self->a);
	side_unimport(&self->imp);
	side_close(&self->s[1]);
}

static void qp_create(struct __test_metadata *_metadata, struct side *s,
		      const struct conn *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = c->sq_sig_all,
		.cap = {
			.max_send_wr = 64,
			.max_recv_wr = 64,
			.max_send_sge = 4,
			.max_recv_sge = 4,
			.max_inline_data = c->max_inline,
		},
	};

	s->qp = ibv_create_qp(s->pd, &ia);
	ASSERT_NE(NULL, s->qp) TH_LOG("ibv_create_qp (4 SGEs, inline %u): %s",
				      c->max_inline, strerror(errno));
	s->cap = ia.cap;
}

static int max_rd_atomic(struct side *s)
{
	return s->dev.max_qp_rd_atom < 4 ? s->dev.max_qp_rd_atom : 4;
}

/* Bring S to RTR towards DQPN / DGID. */
static int qp_connect_rtr(struct side *s, const struct conn *c, int access, uint32_t dqpn,
			  const union ibv_gid *dgid, enum ibv_mtu mtu)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = access,
	};
	int err;

	err = ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = c->psn;
	a.max_dest_rd_atomic = max_rd_atomic(s);
	a.min_rnr_timer = c->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = s->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

/* RTR to RTS. */
static int qp_connect_rts(struct side *s, const struct conn *c, uint8_t rnr_retry)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS };

	a.timeout = c->timeout;
	a.retry_cnt = c->retry_cnt;
	a.rnr_retry = rnr_retry;
	a.sq_psn = c->psn;
	a.max_rd_atomic = max_rd_atomic(s);
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Bring S to RTS towards DQPN / DGID. */
static int qp_connect(struct side *s, const struct conn *c, int access, uint32_t dqpn,
		      const union ibv_gid *dgid, enum ibv_mtu mtu, uint8_t rnr_retry)
{
	return qp_connect_rtr(s, c, access, dqpn, dgid, mtu) ?:
	       qp_connect_rts(s, c, rnr_retry);
}

/* Create a QP on each side, A's to RTS, B's to RTR, and to RTS if B_RTS. */
static void connect_sides(struct __test_metadata *_metadata, struct side *a, struct side *b,
			  const struct conn *c, bool b_rts)
{
	enum ibv_mtu mtu = a->port.active_mtu < b->port.active_mtu ?
			   a->port.active_mtu : b->port.active_mtu;
	int err;

	if (opt_mtu)
		mtu = opt_mtu;
	if (c->mtu)
		mtu = c->mtu;
	/* What path_mtu_bytes() reports: the path MTU the tests run at. */
	a->port.active_mtu = mtu;
	b->port.active_mtu = mtu;

	qp_create(_metadata, a, c);
	qp_create(_metadata, b, c);
	err = qp_connect(a, c, c->access[0], c->a_dest_qpn ? c->a_dest_qpn : b->qp->qp_num,
			 &b->gid, mtu, c->rnr_retry);
	ASSERT_EQ(0, err) TH_LOG("A to RTS: %s", strerror(err));
	err = qp_connect_rtr(b, c, c->access[1], a->qp->qp_num, &a->gid, mtu);
	ASSERT_EQ(0, err) TH_LOG("B to RTR: %s", strerror(err));
	if (!b_rts)
		return;
	err = qp_connect_rts(b, c, 7);
	ASSERT_EQ(0, err) TH_LOG("B to RTS: %s", strerror(err));
}

static void connect_pair_to(struct __test_metadata *_metadata, FIXTURE_DATA(rc) *self,
			    const struct conn *c, bool b_rts)
{
	connect_sides(_metadata, self->a, self->b, c, b_rts);
}

static void connect_pair(struct __test_metadata *_metadata, FIXTURE_DATA(rc) *self,
			 const struct conn *c)
{
	connect_pair_to(_metadata, self, c, true);
}

static void connect_default(struct __test_metadata *_metadata, FIXTURE_DATA(rc) *self)
{
	struct conn c = conn_defaults();

	connect_pair(_metadata, self, &c);
}

static int path_mtu_bytes(struct side *s)
{
	return 128 << s->port.active_mtu;
}

/* ---- posting --------------------------------------------------------------- */

static struct ibv_sge sge(struct side *s, uint32_t off, uint32_t len)
{
	return (struct ibv_sge){ (uintptr_t)(s->buf + off), len, s->mr->lkey };
}

static int post_recv_sges(struct side *s, uint64_t id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sg, .num_sge = n }, *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static int post_recv(struct side *s, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sg = sge(s, off, len);

	return post_recv_sges(s, id, &sg, 1);
}

/* Any non-atomic send-queue WR; REMOTE is the peer (for raddr/rkey). */
static int post_wr(struct side *s, uint64_t id, enum ibv_wr_opcode op, struct ibv_sge *sg,
		   int n, uint64_t raddr, uint32_t rkey, uint32_t imm_host, int flags)
{
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = sg,
		.num_sge = n,
		.opcode = op,
		.send_flags = flags,
	}, *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	wr.imm_data = htobe32(imm_host);
	return ibv_post_send(s->qp, &wr, &bad);
}

static int post_simple(struct side *s, uint64_t id, enum ibv_wr_opcode op, uint32_t off,
		       uint32_t len, struct side *remote, uint32_t roff)
{
	struct ibv_sge sg = sge(s, off, len);

	return post_wr(s, id, op, &sg, 1, (uintptr_t)(remote->buf + roff), remote->mr->rkey,
		       0, IBV_SEND_SIGNALED);
}

static int post_atomic(struct side *s, uint64_t id, enum ibv_wr_opcode op, uint32_t loff,
		       uint64_t raddr, uint32_t rkey, uint64_t compare_add, uint64_t swap)
{
	struct ibv_sge sg = sge(s, loff, 8);
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = &sg,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return ibv_post_send(s->qp, &wr, &bad);
}

/* ---- data: SEND ------------------------------------------------------------- */

static const uint32_t sizes[] = {
	1, 2, 7, 63, 64, 1000, 1023, 1024, 1025, 2048, 4095, 4096, 4097,
	12345, 65536, 300000, MIB,
};

/* SEND of each size into an exactly sized receive; data, length, opcode. */
TEST_F_TIMEOUT(rc, send_sizes_1B_to_1MiB, 60)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_wc wc;
	unsigned int i;

	connect_default(_metadata, self);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i];

		pattern(a->buf + SRC_OFF, len, i);
		memset(b->buf + DST_OFF, 0, len + 1);
		ASSERT_EQ(0, post_recv(b, 100 + i, DST_OFF, len));
		ASSERT_EQ(0, post_simple(a, i, IBV_WR_SEND, SRC_OFF, len, b, 0));
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_SEND, wc.opcode);
		EXPECT_WC(b->cq, wc, 100 + i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(len, wc.byte_len) TH_LOG("size %u", len);
		EXPECT_EQ(0, wc.wc_flags & IBV_WC_WITH_IMM);
		EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF, len);
		EXPECT_EQ(0, b->buf[DST_OFF + len]) TH_LOG("byte after a %u B message written", len);
		if (!_metadata->passed)
			break;
	}
	EXPECT_NO_WC(a->cq);
	EXPECT_NO_WC(b->cq);
}

/* A short SEND into a large receive: byte_len is the message length. */
TEST_F(rc, send_into_larger_receive)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_wc wc;

	connect_default(_metadata, self);
	pattern(a->buf, 777, 3);
	ASSERT_EQ(0, post_recv(b, 2, DST_OFF, 65536));
	ASSERT_EQ(0, post_simple(a, 1, IBV_WR_SEND, 0, 777, b, 0));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_EQ(777, wc.byte_len);
	EXPECT_SAME_BYTES(a, 0, b, DST_OFF, 777);
	EXPECT_EQ(0, b->buf[DST_OFF + 777]);
}

TEST_F(rc, send_with_imm)
{
	struct side *a = self->a, *b = self->b;
	uint32_t lens[] = { 0, 1, 5000 };
	struct ibv_wc wc;
	unsigned int i;

	connect_default(_metadata, self);
	for (i = 0; i < 3; i++) {
		struct ibv_sge sg = sge(a, SRC_OFF, lens[i]);
		uint32_t imm = 0xdead0000u + i;

		pattern(a->buf, lens[i], 40 + i);
		ASSERT_EQ(0, post_recv(b, 10 + i, DST_OFF, 8192));
		ASSERT_EQ(0, post_wr(a, i, IBV_WR_SEND_WITH_IMM, &sg, lens[i] ? 1 : 0, 0, 0,
				     imm, IBV_SEND_SIGNALED));
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_SEND, wc.opcode);
		EXPECT_WC(b->cq, wc, 10 + i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(lens[i], wc.byte_len);
		EXPECT_EQ(IBV_WC_WITH_IMM, wc.wc_flags & IBV_WC_WITH_IMM);
		EXPECT_EQ(imm, be32toh(wc.imm_data)) TH_LOG("imm 0x%x, expected 0x%x",
							   be32toh(wc.imm_data), imm);
		EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF, lens[i]);
	}
}

/* Gather from 3 SGEs (odd sizes and offsets), scatter into 4 of other sizes. */
TEST_F(rc, send_multi_sge)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge ssg[3] = { sge(a, 1, 1000), sge(a, 5003, 3), sge(a, 9000, 4321) };
	struct ibv_sge rsg[4] = { sge(b, DST_OFF + 7, 17), sge(b, DST_OFF + 100, 2000),
				  sge(b, DST_OFF + 4000, 1), sge(b, DST_OFF + 8001, 8000) };
	uint32_t total = 1000 + 3 + 4321, done = 0;
	uint8_t *expect;
	struct ibv_wc wc;
	int i;

	connect_default(_metadata, self);
	pattern(a->buf, 16384, 9);
	ASSERT_EQ(0, post_recv_sges(b, 20, rsg, 4));
	ASSERT_EQ(0, post_wr(a, 21, IBV_WR_SEND, ssg, 3, 0, 0, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 21, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 20, IBV_WC_SUCCESS);
	EXPECT_EQ(total, wc.byte_len);

	/* The message is the concatenation of the send SGEs ... */
	expect = malloc(total);
	ASSERT_NE(NULL, expect);
	memcpy(expect, a->buf + 1, 1000);
	memcpy(expect + 1000, a->buf + 5003, 3);
	memcpy(expect + 1003, a->buf + 9000, 4321);
	/* ... laid out over the receive SGEs in order. */
	for (i = 0; i < 4 && done < total; i++) {
		uint32_t n = rsg[i].length < total - done ? rsg[i].length : total - done;
		long d = first_diff(expect + done, (uint8_t *)(uintptr_t)rsg[i].addr, n);

		EXPECT_EQ(-1, d) TH_LOG("receive SGE %d: differs at offset %ld", i, d);
		done += n;
	}
	EXPECT_EQ(total, done);
	/* Bytes between the receive SGEs untouched. */
	EXPECT_EQ(0, b->buf[DST_OFF + 6]);
	EXPECT_EQ(0, b->buf[DST_OFF + 7 + 17]);
	EXPECT_EQ(0, b->buf[DST_OFF + 99]);
	free(expect);
}

/*
 * Inline SENDs of @len bytes, @count of them (more than the 64-slot send
 * ring: the indices wrap): the source may change right after the post
 * returns.
 */
static void send_inline(struct __test_metadata *_metadata, FIXTURE_DATA(rc) *self,
			uint32_t len, unsigned int count)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	uint8_t orig[512];
	struct ibv_sge sg;
	struct ibv_wc wc;
	unsigned int i;

	ASSERT_GE(sizeof(orig), len);
	c.max_inline = len;
	a->qp = ibv_create_qp(a->pd, &(struct ibv_qp_init_attr){
		.send_cq = a->cq, .recv_cq = a->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = len } });
	if (!a->qp)
		SKIP(return, "no inline data support: create_qp with max_inline_data %u: %s",
		     len, strerror(errno));
	ibv_destroy_qp(a->qp);
	a->qp = NULL;
	connect_pair(_metadata, self, &c);
	EXPECT_LE(len, a->cap.max_inline_data);

	for (i = 0; i < count && _metadata->passed; i++) {
		pattern(a->buf, len, 77 + i);
		memcpy(orig, a->buf, len);
		memset(b->buf + DST_OFF, 0, len);
		ASSERT_EQ(0, post_recv(b, 2 * i + 1, DST_OFF, len));
		/* Inline data has no lkey: a zero lkey must not matter. */
		sg = (struct ibv_sge){ (uintptr_t)a->buf, len, 0 };
		ASSERT_EQ(0, post_wr(a, 2 * i, IBV_WR_SEND, &sg, 1, 0, 0, 0,
				     IBV_SEND_SIGNALED | IBV_SEND_INLINE));
		memset(a->buf, 0xee, len);
		EXPECT_WC(a->cq, wc, 2 * i, IBV_WC_SUCCESS);
		EXPECT_WC(b->cq, wc, 2 * i + 1, IBV_WC_SUCCESS);
		EXPECT_EQ(len, wc.byte_len);
		EXPECT_EQ(0, memcmp(orig, b->buf + DST_OFF, len)) TH_LOG("SEND %u", i);
	}
}

TEST_F(rc, send_inline)
{
	send_inline(_metadata, self, 64, 1);
}

/*
 * 512 B inline: send slots of 1 KiB, which cross pages of the mapped ring,
 * so the kernel reads them through a contiguous mapping (ring.c).
 */
TEST_F(rc, send_inline_512_ring_wraps)
{
	send_inline(_metadata, self, 512, 80);
}

/* ---- data: RDMA WRITE ----------------------------------------------------- */

TEST_F_TIMEOUT(rc, write_sizes_1B_to_1MiB, 60)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_wc wc;
	unsigned int i;

	connect_default(_metadata, self);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t len = sizes[i], roff = DST_OFF + (i & 7);

		pattern(a->buf + SRC_OFF, len, 50 + i);
		memset(b->buf + DST_OFF, 0, MIB + 16);
		ASSERT_EQ(0, post_simple(a, i, IBV_WR_RDMA_WRITE, SRC_OFF, len, b, roff));
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
		EXPECT_SAME_BYTES(a, SRC_OFF, b, roff, len);
		EXPECT_EQ(0, b->buf[roff + len]) TH_LOG("byte after a %u B write", len);
		if (roff > DST_OFF)
			EXPECT_EQ(0, b->buf[roff - 1]) TH_LOG("byte before a %u B write", len);
		if (!_metadata->passed)
			break;
	}
	/* A WRITE consumes no receive WQE and makes no responder completion. */
	EXPECT_NO_WC(b->cq);
}

/* WRITE with immediate: data lands, the receive WQE (no SGE) completes. */
TEST_F(rc, write_with_imm)
{
	struct side *a = self->a, *b = self->b;
	uint32_t lens[] = { 0, 1, 5000, 300000 };
	struct ibv_wc wc;
	unsigned int i;

	connect_default(_metadata, self);
	for (i = 0; i < 4; i++) {
		struct ibv_sge sg = sge(a, SRC_OFF, lens[i]);
		uint32_t imm = 0x1234500u + i;

		pattern(a->buf, lens[i], 60 + i);
		memset(b->buf, 0x5a, 64);
		ASSERT_EQ(0, post_recv_sges(b, 40 + i, NULL, 0));
		ASSERT_EQ(0, post_wr(a, i, IBV_WR_RDMA_WRITE_WITH_IMM, &sg, lens[i] ? 1 : 0,
				     (uintptr_t)(b->buf + DST_OFF), b->mr->rkey, imm,
				     IBV_SEND_SIGNALED));
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
		EXPECT_WC(b->cq, wc, 40 + i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode)
			TH_LOG("responder opcode %d, expected IBV_WC_RECV_RDMA_WITH_IMM", wc.opcode);
		EXPECT_EQ(lens[i], wc.byte_len);
		EXPECT_EQ(IBV_WC_WITH_IMM, wc.wc_flags & IBV_WC_WITH_IMM);
		EXPECT_EQ(imm, be32toh(wc.imm_data));
		EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF, lens[i]);
		EXPECT_EQ(0x5a, b->buf[0]) TH_LOG("write with imm touched the receive buffer");
	}
}

/* ---- data: RDMA READ ------------------------------------------------------ */

TEST_F_TIMEOUT(rc, read_sizes, 60)
{
	struct side *a = self->a, *b = self->b;
	uint32_t lens[] = { 1, 1024, 1025, 4096, 300 * 1024, MIB };
	struct ibv_wc wc;
	unsigned int i;

	connect_default(_metadata, self);
	if (!max_rd_atomic(a) || !max_rd_atomic(b))
		SKIP(return, "max_qp_rd_atom is 0");
	for (i = 0; i < 6; i++) {
		pattern(b->buf + DST_OFF, lens[i], 70 + i);
		memset(a->buf, 0, lens[i] + 1);
		ASSERT_EQ(0, post_simple(a, i, IBV_WR_RDMA_READ, SRC_OFF, lens[i], b, DST_OFF));
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
		EXPECT_SAME_BYTES(b, DST_OFF, a, SRC_OFF, lens[i]);
		EXPECT_EQ(0, a->buf[lens[i]]) TH_LOG("byte after a %u B read", lens[i]);
	}
	EXPECT_GT(300 * 1024, path_mtu_bytes(a));
	EXPECT_NO_WC(b->cq);
}

/* READ scattered into several local SGEs; several READs outstanding. */
TEST_F(rc, read_multi_sge_and_pipelined)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg[3] = { sge(a, 3, 1500), sge(a, 10000, 1), sge(a, 20001, 2500) };
	struct ibv_wc wc;
	int i;

	connect_default(_metadata, self);
	pattern(b->buf + DST_OFF, 65536, 81);
	ASSERT_EQ(0, post_wr(a, 1, IBV_WR_RDMA_READ, sg, 3, (uintptr_t)(b->buf + DST_OFF),
			     b->mr->rkey, 0, IBV_SEND_SIGNALED));
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, post_simple(a, 10 + i, IBV_WR_RDMA_READ, 100000 + i * 8192,
					 3000 + i, b, DST_OFF + 100 * i));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(a->buf + 3, b->buf + DST_OFF, 1500));
	EXPECT_EQ(a->buf[10000], b->buf[DST_OFF + 1500]);
	EXPECT_EQ(0, memcmp(a->buf + 20001, b->buf + DST_OFF + 1501, 2500));
	for (i = 0; i < 6; i++) {
		EXPECT_WC(a->cq, wc, 10 + i, IBV_WC_SUCCESS);
		EXPECT_SAME_BYTES(b, DST_OFF + 100 * i, a, 100000 + i * 8192, 3000 + i);
	}
}

/*
 * The READ's source MR is deregistered and its memory unmapped while the
 * responses are on their way.  sroce sends READ responses from user MRs
 * zero-copy, as fragments of the MR's pages, each holding a page
 * reference: the pages outlive the MR and the mapping, so whatever
 * arrives is the data (the memory that an mmap after the munmap gets
 * back, likely the same pages, is written with other bytes).  The READ
 * completes with all of it, or with Remote Access Error when the
 * responder met the deregistered key, or with Transport Retry Counter
 * Exceeded when that NAK (at a PSN inside the READ) found responses
 * before it missing: the requester asks again, and the responder, in
 * ERR after its fatal NAK, stays silent.  Nothing else.
 */
TEST_F(rc, read_source_deregistered_and_unmapped_mid_read)
{
	struct side *a = self->a, *b = self->b;
	const size_t len = 2 * MIB;
	struct ibv_sge sg = sge(a, SRC_OFF, len);
	uint8_t *src, *other;
	struct ibv_wc wc;
	struct ibv_mr *mr;

	connect_default(_metadata, self);
	src = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, src);
	pattern(src, len, 61);
	pattern(b->buf + DST_OFF, len, 61);		/* what A must see */
	memset(a->buf + SRC_OFF, 0, len);
	mr = ibv_reg_mr(b->pd, src, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, post_wr(a, 1, IBV_WR_RDMA_READ, &sg, 1, (uintptr_t)src, mr->rkey, 0,
			     IBV_SEND_SIGNALED));
	usleep(3000);			/* let some responses go out */
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, munmap(src, len));
	other = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, other);
	memset(other, 0xa5, len);
	ASSERT_EQ(1, poll_wc(a->cq, &wc, WC_WAIT_MS)) TH_LOG("no completion of the READ");
	EXPECT_EQ(1, wc.wr_id);
	if (wc.status == IBV_WC_SUCCESS) {
		EXPECT_SAME_BYTES(b, DST_OFF, a, SRC_OFF, len);
	} else if (wc.status != IBV_WC_RETRY_EXC_ERR) {
		EXPECT_EQ(IBV_WC_REM_ACCESS_ERR, wc.status)
			TH_LOG("READ: got %s", ibv_wc_status_str(wc.status));
	}
	munmap(other, len);
}

/* ---- data: atomics -------------------------------------------------------- */

#define SKIP_NO_ATOMICS(a) do { \
	if ((a)->dev.atomic_cap == IBV_ATOMIC_NONE || !max_rd_atomic(a)) \
		SKIP(return, "device has no atomics (atomic_cap %d)", (a)->dev.atomic_cap); \
} while (0)

TEST_F(rc, atomic_cmp_swp)
{
	struct side *a = self->a, *b = self->b;
	uint64_t *remote = (uint64_t *)(b->buf + DST_OFF + 64);
	uint64_t *got = (uint64_t *)(a->buf + 8);
	struct ibv_wc wc;

	SKIP_NO_ATOMICS(a);
	connect_default(_metadata, self);
	*remote = 0x1122334455667788ull;
	/* Compare matches: swapped, original returned. */
	*got = 0;
	ASSERT_EQ(0, post_atomic(a, 1, IBV_WR_ATOMIC_CMP_AND_SWP, 8, (uintptr_t)remote,
				 b->mr->rkey, 0x1122334455667788ull, 0xa5a5a5a5deadbeefull));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(IBV_WC_COMP_SWAP, wc.opcode);
	EXPECT_EQ(0x1122334455667788ull, *got);
	EXPECT_EQ(0xa5a5a5a5deadbeefull, *remote);
	/* Compare differs: memory unchanged, original returned. */
	*got = 0;
	ASSERT_EQ(0, post_atomic(a, 2, IBV_WR_ATOMIC_CMP_AND_SWP, 8, (uintptr_t)remote,
				 b->mr->rkey, 0x1122334455667788ull, 1));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_EQ(0xa5a5a5a5deadbeefull, *got);
	EXPECT_EQ(0xa5a5a5a5deadbeefull, *remote);
	/* Neighbours untouched. */
	EXPECT_EQ(0, *(remote - 1));
	EXPECT_EQ(0, *(remote + 1));
	EXPECT_NO_WC(b->cq);
}

TEST_F(rc, atomic_fetch_add)
{
	struct side *a = self->a, *b = self->b;
	uint64_t *remote = (uint64_t *)(b->buf + DST_OFF + 128);
	uint64_t *got = (uint64_t *)(a->buf + 16);
	uint64_t expect = 0xfffffffffffffff0ull;
	struct ibv_wc wc;
	int i;

	SKIP_NO_ATOMICS(a);
	connect_default(_metadata, self);
	*remote = expect;
	for (i = 0; i < 5; i++) {
		uint64_t add = 7 + ((uint64_t)i << 40);

		*got = 0;
		ASSERT_EQ(0, post_atomic(a, i, IBV_WR_ATOMIC_FETCH_AND_ADD, 16, (uintptr_t)remote,
					 b->mr->rkey, add, 0));
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_FETCH_ADD, wc.opcode);
		EXPECT_EQ(expect, *got) TH_LOG("fetch_add %d returned 0x%llx, expected 0x%llx", i,
					       (unsigned long long)*got, (unsigned long long)expect);
		expect += add;	/* wraps through 2^64 on the way */
		EXPECT_EQ(expect, *remote);
	}
	EXPECT_EQ(0, *(remote + 1));
}

/*
 * IBTA 1.5 ATOMIC WRITE (IB_UVERBS_DEVICE_ATOMIC_WRITE, a bit rdma-core 44
 * has no name for), on both devices: the requester's and the responder's.
 */
static bool has_atomic_write(struct side *s)
{
	struct ibv_device_attr_ex ex;

	return !ibv_query_device_ex(s->ctx, NULL, &ex) &&
	       (ex.device_cap_flags_ex & (1ULL << 40));
}

/* sroce's devices (vendor_part_id 'S' 'R', SROCE_DRIVER_ID) must have it. */
#define SKIP_NO_ATOMIC_WRITE(a, b) do { \
	if (!has_atomic_write(a) || !has_atomic_write(b)) { \
		ASSERT_FALSE((a)->dev.vendor_part_id == 0x5352 && \
			     (b)->dev.vendor_part_id == 0x5352) \
			TH_LOG("sroce does not advertise ATOMIC WRITE"); \
		SKIP(return, "no ATOMIC WRITE capability on %s or %s", \
		     ibv_get_device_name((a)->ctx->device), \
		     ibv_get_device_name((b)->ctx->device)); \
	} \
} while (0)

static int to_state(struct side *s, enum ibv_qp_state st, int mask, struct ibv_qp_attr *a);

/* ATOMIC WRITE of the LEN bytes at A's LOFF (one SGE: 8 is the only valid LEN). */
static int post_atomic_write(struct side *s, uint64_t id, uint32_t loff, uint32_t len,
			     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = sge(s, loff, len);

	return post_wr(s, id, IBV_WR_ATOMIC_WRITE, &sg, 1, raddr, rkey, 0, IBV_SEND_SIGNALED);
}

/*
 * The 8 bytes land at the remote address, exactly those; the completion
 * says IBV_WC_ATOMIC_WRITE; no receive is consumed.  Then 40 in a row on a
 * QP with max_rd_atomic 2: each holds one of the responder's resources
 * until its ACK, and none may wait forever for one.
 */
TEST_F(rc, atomic_write)
{
	struct side *a = self->a, *b = self->b;
	uint64_t *remote = (uint64_t *)(b->buf + DST_OFF + 192);
	uint64_t *src = (uint64_t *)(a->buf + 24);
	struct ibv_qp_attr x = {};
	struct ibv_wc wc;
	int i;

	SKIP_NO_ATOMIC_WRITE(a, b);
	connect_default(_metadata, self);
	memset(remote - 1, 0x5a, 3 * sizeof(*remote));
	for (i = 0; i < 4; i++) {
		*src = 0x0102030405060708ull * (i + 1);
		ASSERT_EQ(0, post_atomic_write(a, 30 + i, 24, 8, (uintptr_t)remote, b->mr->rkey));
		EXPECT_WC(a->cq, wc, 30 + i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_ATOMIC_WRITE, wc.opcode);
		EXPECT_EQ(*src, *remote);
	}
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aull, *(remote - 1));
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aull, *(remote + 1));
	EXPECT_NO_WC(b->cq);
	/* The data is one SGE of exactly 8 bytes. */
	EXPECT_EQ(EINVAL, post_atomic_write(a, 39, 24, 4, (uintptr_t)remote, b->mr->rkey));

	/* Two resources (SQD -> SQD; the queue is empty, drained at once). */
	ASSERT_EQ(0, to_state(a, IBV_QPS_SQD, 0, &x));
	x.max_rd_atomic = 2;
	ASSERT_EQ(0, to_state(a, IBV_QPS_SQD, IBV_QP_MAX_QP_RD_ATOMIC, &x));
	ASSERT_EQ(0, to_state(a, IBV_QPS_RTS, 0, &x));
	for (i = 0; i < 40; i++) {
		*(uint64_t *)(a->buf + 4096 + 8 * i) = 0xa000000000000000ull + i;
		ASSERT_EQ(0, post_atomic_write(a, 100 + i, 4096 + 8 * i, 8,
					       (uintptr_t)(remote + 4 + i), b->mr->rkey))
			TH_LOG("post %d: %s", i, strerror(errno));
	}
	for (i = 0; i < 40; i++)
		EXPECT_WC(a->cq, wc, 100 + i, IBV_WC_SUCCESS);
	for (i = 0; i < 40; i++)
		EXPECT_EQ(0xa000000000000000ull + i, remote[4 + i]) TH_LOG("word %d", i);
}

/* ---- completion policy ---------------------------------------------------- */

/* sq_sig_all=0: unsignaled WRITEs then a signaled SEND give one completion. */
TEST_F(rc, unsignaled_then_signaled)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_wc wc;
	int i, round;

	c.sq_sig_all = 0;
	connect_pair(_metadata, self, &c);
	/* Several rounds: more WRs than the send queue has slots in total. */
	for (round = 0; round < 4; round++) {
		struct ibv_sge sg;

		pattern(a->buf, 20 * 4096, round);
		for (i = 0; i < 20; i++) {
			sg = sge(a, i * 4096, 4096);
			ASSERT_EQ(0, post_wr(a, 1000 + i, IBV_WR_RDMA_WRITE, &sg, 1,
					     (uintptr_t)(b->buf + DST_OFF + i * 4096),
					     b->mr->rkey, 0, 0));
		}
		ASSERT_EQ(0, post_recv(b, 50 + round, DST_OFF + MIB, 16));
		sg = sge(a, 0, 16);
		ASSERT_EQ(0, post_wr(a, 99 + round, IBV_WR_SEND, &sg, 1, 0, 0, 0,
				     IBV_SEND_SIGNALED));
		EXPECT_WC(a->cq, wc, 99 + round, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_SEND, wc.opcode);
		EXPECT_WC(b->cq, wc, 50 + round, IBV_WC_SUCCESS);
		/* The SEND completed after every WRITE before it. */
		EXPECT_SAME_BYTES(a, 0, b, DST_OFF, 20 * 4096);
		EXPECT_NO_WC(a->cq);
	}
}

/* ---- PSN wraparound ------------------------------------------------------- */

/* Multi-packet SEND, WRITE, READ, atomics crossing PSN 0xffffff -> 0. */
TEST_F(rc, psn_wraparound)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	uint32_t len = 40 * path_mtu_bytes(a);	/* 40 packets: crosses the wrap */
	struct ibv_wc wc;
	int i;

	c.psn = NEAR_WRAP_PSN;
	connect_pair(_metadata, self, &c);
	for (i = 0; i < 3; i++) {
		pattern(a->buf, len, 90 + i);
		ASSERT_EQ(0, post_recv(b, 10 + i, DST_OFF, len));
		ASSERT_EQ(0, post_simple(a, i, IBV_WR_SEND, 0, len, b, 0));
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
		EXPECT_WC(b->cq, wc, 10 + i, IBV_WC_SUCCESS);
		EXPECT_EQ(len, wc.byte_len);
		EXPECT_SAME_BYTES(a, 0, b, DST_OFF, len);
	}
	/* Reads: response PSNs wrap on the read side too. */
	for (i = 0; i < 3; i++) {
		pattern(b->buf + DST_OFF, len, 95 + i);
		ASSERT_EQ(0, post_simple(a, 20 + i, IBV_WR_RDMA_READ, 0, len, b, DST_OFF));
		EXPECT_WC(a->cq, wc, 20 + i, IBV_WC_SUCCESS);
		EXPECT_SAME_BYTES(b, DST_OFF, a, 0, len);
	}
	pattern(a->buf, len, 99);
	ASSERT_EQ(0, post_simple(a, 30, IBV_WR_RDMA_WRITE, 0, len, b, DST_OFF));
	EXPECT_WC(a->cq, wc, 30, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, 0, b, DST_OFF, len);
	EXPECT_QP_STATE(a, IBV_QPS_RTS);
	EXPECT_QP_STATE(b, IBV_QPS_RTS);
}

/* Start exactly at the last PSN: the first packet is 0xffffff, the next 0. */
TEST_F(rc, psn_starts_at_0xffffff)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_wc wc;
	int i;

	c.psn = 0xffffff;
	connect_pair(_metadata, self, &c);
	for (i = 0; i < 4; i++) {
		pattern(a->buf, 100, i);
		ASSERT_EQ(0, post_recv(b, 10 + i, DST_OFF, 100));
		ASSERT_EQ(0, post_simple(a, i, IBV_WR_SEND, 0, 100, b, 0));
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
		EXPECT_WC(b->cq, wc, 10 + i, IBV_WC_SUCCESS);
		EXPECT_SAME_BYTES(a, 0, b, DST_OFF, 100);
	}
}

/* ---- errors: receiver not ready ------------------------------------------- */

/* ---- QP states: every legal transition, SQD ---------------------------------- */

static int to_state(struct side *s, enum ibv_qp_state st, int mask, struct ibv_qp_attr *a)
{
	a->qp_state = st;
	return ibv_modify_qp(s->qp, a, IBV_QP_STATE | mask);
}

/*
 * Every transition IBA 10.3.1 allows an RC QP (RESET->INIT, INIT->INIT,
 * INIT->RTR, RTR->RTS, RTS->RTS, RTS->SQD, SQD->SQD, SQD->RTS, x->ERR,
 * x->RESET) is accepted and reported by query_qp; some illegal ones are
 * refused with EINVAL and leave the state alone.  A QP that went the
 * whole way round still moves data.
 */
TEST_F(rc, state_transitions_all)
{
	static const enum ibv_qp_state to_err_from[] = {
		IBV_QPS_INIT, IBV_QPS_RTR, IBV_QPS_RTS, IBV_QPS_SQD,
	};
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr q, x;
	struct ibv_wc wc;
	unsigned int i;

	qp_create(_metadata, a, &c);
	qp_create(_metadata, b, &c);
	EXPECT_QP_STATE(a, IBV_QPS_RESET);

	/*
	 * Illegal from RESET: straight to RTS, SQD, and to ERR (the
	 * kernel's table of legal transitions, ib_modify_qp_is_ok(), has
	 * no RESET -> ERR: a QP in RESET has nothing to flush).
	 */
	memset(&x, 0, sizeof(x));
	EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_RTS, 0, &x));
	EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_SQD, 0, &x));
	EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_ERR, 0, &x));
	EXPECT_QP_STATE(a, IBV_QPS_RESET);

	/* x -> ERR -> RESET from every state that has one. */
	for (i = 0; i < sizeof(to_err_from) / sizeof(to_err_from[0]); i++) {
		enum ibv_qp_state from = to_err_from[i];

		{
			ASSERT_EQ(0, qp_connect(a, &c, c.access[0], b->qp->qp_num, &b->gid,
						a->port.active_mtu, 7));
			if (from == IBV_QPS_SQD) {
				memset(&x, 0, sizeof(x));
				ASSERT_EQ(0, to_state(a, IBV_QPS_SQD, 0, &x));
			} else if (from != IBV_QPS_RTS) {
				/* Back down the path: RESET, then up to FROM. */
				memset(&x, 0, sizeof(x));
				ASSERT_EQ(0, to_state(a, IBV_QPS_RESET, 0, &x));
				x.port_num = 1;
				x.qp_access_flags = c.access[0];
				ASSERT_EQ(0, to_state(a, IBV_QPS_INIT, IBV_QP_PKEY_INDEX |
						      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, &x));
				if (from == IBV_QPS_RTR) {
					memset(&x, 0, sizeof(x));
					x.path_mtu = a->port.active_mtu;
					x.dest_qp_num = b->qp->qp_num;
					x.ah_attr.is_global = 1;
					x.ah_attr.grh.dgid = b->gid;
					x.ah_attr.grh.sgid_index = a->gidx;
					x.ah_attr.grh.hop_limit = 64;
					x.ah_attr.port_num = 1;
					ASSERT_EQ(0, to_state(a, IBV_QPS_RTR, IBV_QP_AV |
							      IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
							      IBV_QP_RQ_PSN |
							      IBV_QP_MAX_DEST_RD_ATOMIC |
							      IBV_QP_MIN_RNR_TIMER, &x));
				}
			}
			EXPECT_QP_STATE(a, from);
		}
		memset(&x, 0, sizeof(x));
		EXPECT_EQ(0, to_state(a, IBV_QPS_ERR, 0, &x)) TH_LOG("%s -> ERR", qp_state_str(from));
		EXPECT_QP_STATE(a, IBV_QPS_ERR);
		/* ERR goes nowhere but RESET. */
		EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_RTS, 0, &x));
		EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_INIT, 0, &x));
		EXPECT_EQ(0, to_state(a, IBV_QPS_RESET, 0, &x));
		EXPECT_QP_STATE(a, IBV_QPS_RESET);
		while (poll_wc(a->cq, &wc, 0) > 0)
			;
	}

	/* The long way round, with the optional transitions. */
	memset(&x, 0, sizeof(x));
	x.port_num = 1;
	x.qp_access_flags = c.access[0];
	ASSERT_EQ(0, to_state(a, IBV_QPS_INIT, IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS, &x));
	memset(&x, 0, sizeof(x));
	x.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	EXPECT_EQ(0, to_state(a, IBV_QPS_INIT, IBV_QP_ACCESS_FLAGS, &x)) TH_LOG("INIT -> INIT");
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_ACCESS_FLAGS, &ia));
	EXPECT_EQ(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ, q.qp_access_flags);
	/* Illegal from INIT: RTS, SQD. */
	EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_RTS, 0, &x));
	EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_SQD, 0, &x));
	EXPECT_QP_STATE(a, IBV_QPS_INIT);
	/* qp_connect() does RESET->INIT->RTR->RTS again from RESET. */
	memset(&x, 0, sizeof(x));
	ASSERT_EQ(0, to_state(a, IBV_QPS_RESET, 0, &x));
	ASSERT_EQ(0, qp_connect(a, &c, c.access[0], b->qp->qp_num, &b->gid,
				a->port.active_mtu, 7));
	ASSERT_EQ(0, qp_connect(b, &c, c.access[1], a->qp->qp_num, &a->gid,
				a->port.active_mtu, 7));

	memset(&x, 0, sizeof(x));
	x.min_rnr_timer = 3;
	EXPECT_EQ(0, to_state(a, IBV_QPS_RTS, IBV_QP_MIN_RNR_TIMER, &x)) TH_LOG("RTS -> RTS");
	/* The timeout is not an RTS -> RTS attribute (only SQD -> SQD). */
	x.timeout = 13;
	EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_RTS, IBV_QP_TIMEOUT, &x));
	memset(&x, 0, sizeof(x));
	EXPECT_EQ(0, to_state(a, IBV_QPS_SQD, 0, &x)) TH_LOG("RTS -> SQD");
	EXPECT_QP_STATE(a, IBV_QPS_SQD);
	/* An empty send queue is drained at once: SQD -> SQD may change attributes. */
	memset(&x, 0, sizeof(x));
	x.timeout = 14;
	x.retry_cnt = 3;
	x.max_rd_atomic = 2;
	x.min_rnr_timer = 2;
	EXPECT_EQ(0, to_state(a, IBV_QPS_SQD, IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			      IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, &x))
		TH_LOG("SQD -> SQD");
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, &ia));
	EXPECT_EQ(IBV_QPS_SQD, q.qp_state);
	EXPECT_EQ(0, q.sq_draining);
	EXPECT_EQ(14, q.timeout);
	EXPECT_EQ(3, q.retry_cnt);
	EXPECT_EQ(2, q.max_rd_atomic);
	EXPECT_EQ(2, q.min_rnr_timer);
	/*
	 * SQD -> SQD may also change the path (IBA 10.3.1.4): the same peer,
	 * another traffic class (the core sets a RoCE path's hop limit from
	 * the route, ib_resolve_eth_dmac()).  The receive below checks B's
	 * packets against the new path, the WRITE after SQD -> RTS goes out
	 * on it.
	 */
	memset(&x, 0, sizeof(x));
	x.ah_attr.is_global = 1;
	x.ah_attr.grh.dgid = b->gid;
	x.ah_attr.grh.sgid_index = a->gidx;
	x.ah_attr.grh.hop_limit = 64;
	x.ah_attr.grh.traffic_class = 0x28;
	x.ah_attr.port_num = 1;
	EXPECT_EQ(0, to_state(a, IBV_QPS_SQD, IBV_QP_AV, &x)) TH_LOG("SQD -> SQD, new path");
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_STATE | IBV_QP_AV, &ia));
	EXPECT_EQ(IBV_QPS_SQD, q.qp_state);
	EXPECT_EQ(0x28, q.ah_attr.grh.traffic_class);
	EXPECT_EQ(0, memcmp(&q.ah_attr.grh.dgid, &b->gid, sizeof(b->gid)));
	/* SQD receives: B can SEND to A while A's send queue is stopped. */
	ASSERT_EQ(0, post_recv(a, 40, DST_OFF, 64));
	pattern(b->buf, 64, 40);
	ASSERT_EQ(0, post_simple(b, 41, IBV_WR_SEND, 0, 64, a, 0));
	EXPECT_WC(b->cq, wc, 41, IBV_WC_SUCCESS);
	EXPECT_WC(a->cq, wc, 40, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(b, 0, a, DST_OFF, 64);
	/* Illegal from SQD: INIT, RTR. */
	memset(&x, 0, sizeof(x));
	EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_INIT, 0, &x));
	EXPECT_EQ(EINVAL, to_state(a, IBV_QPS_RTR, 0, &x));
	memset(&x, 0, sizeof(x));
	EXPECT_EQ(0, to_state(a, IBV_QPS_RTS, 0, &x)) TH_LOG("SQD -> RTS");
	EXPECT_QP_STATE(a, IBV_QPS_RTS);

	/* Still a working QP. */
	pattern(a->buf + SRC_OFF, 5000, 42);
	ASSERT_EQ(0, post_simple(a, 42, IBV_WR_RDMA_WRITE, SRC_OFF, 5000, b, DST_OFF));
	EXPECT_WC(a->cq, wc, 42, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF, 5000);
	EXPECT_NO_WC(a->cq);
	EXPECT_NO_WC(b->cq);
}

/* The next async event of S's context within MS, acknowledged: its type, or -1. */
static int next_async_event(struct side *s, int ms, struct ibv_async_event *out)
{
	struct pollfd p = { .fd = s->ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	if (poll(&p, 1, ms) != 1 || ibv_get_async_event(s->ctx, &ev))
		return -1;
	*out = ev;
	ibv_ack_async_event(&ev);
	return out->event_type;
}

/* The next async event within MS: its type, or -1; *QP its QP. */
static int async_event(struct side *s, int ms, struct ibv_qp **qp)
{
	struct ibv_async_event ev;
	int type = next_async_event(s, ms, &ev);

	if (type >= 0)
		*qp = ev.element.qp;
	return type;
}

#define SQD_WRS		16
#define SQD_LEN		MIB	/* 1024 packets at MTU 1024: likely in flight at SQD */

/*
 * Post writes [from, to) of SQD_LEN, ids from.., all from SRC_OFF to
 * DST_OFF.  The tests post the first half in RTS and the second half in
 * SQD: how many of the first half start before SQD takes effect is a race
 * between this thread and the datapath (a requester that sends faster than
 * the posts come, on the CPU of the posting thread, has started all of
 * them), while none of the second half may ever start in SQD.
 */
static void post_sqd_writes(struct __test_metadata *_metadata, struct side *a, struct side *b,
			    unsigned int from, unsigned int to)
{
	unsigned int i;

	if (!from)
		pattern(a->buf + SRC_OFF, SQD_LEN, 77);
	for (i = from; i < to; i++)
		ASSERT_EQ(0, post_simple(a, i, IBV_WR_RDMA_WRITE, SRC_OFF, SQD_LEN, b, DST_OFF));
}

/*
 * RTS -> SQD with EN_SQD_ASYNC_NOTIFY while a stream of writes is in
 * flight (half of them posted before SQD, half after, see
 * post_sqd_writes()): the writes already started complete, no new one
 * starts, and once the last started one completed the consumer gets
 * IBV_EVENT_SQ_DRAINED and query_qp says the drain is over.  Work posted
 * in SQD waits.  SQD -> SQD changes an attribute; SQD -> RTS sends
 * everything else, in order, with the data intact.
 */
/*
 * IBA 11.6.3.1: the first request that reaches a QP in RTR raises
 * Communication Established, once; the requester, in RTS, raises none.
 * A connection manager whose RTU was lost learns from it that the peer
 * is up.  The QP in RTR executes and acknowledges the request.
 */
TEST_F(rc, comm_est_on_first_request_in_rtr)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_qp *evqp = NULL;
	struct ibv_wc wc;
	int ev;

	connect_pair_to(_metadata, self, &c, false);
	EXPECT_QP_STATE(b, IBV_QPS_RTR);
	EXPECT_EQ(-1, async_event(b, QUIET_MS, &evqp)) TH_LOG("an event before any request");

	pattern(a->buf + SRC_OFF, 3000, 5);
	ASSERT_EQ(0, post_recv(b, 1, DST_OFF, 4096));
	ASSERT_EQ(0, post_simple(a, 2, IBV_WR_SEND, SRC_OFF, 3000, b, 0));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(3000, wc.byte_len);
	EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF, 3000);
	ev = async_event(b, WC_WAIT_MS, &evqp);
	EXPECT_EQ(IBV_EVENT_COMM_EST, ev) TH_LOG("async event %d (%s)", ev,
						 ev < 0 ? "none" : ibv_event_type_str(ev));
	EXPECT_EQ(b->qp, evqp);

	/* Once: not for the next request, in RTR or in RTS. */
	pattern(a->buf + SRC_OFF + 8192, 2000, 6);
	ASSERT_EQ(0, post_simple(a, 3, IBV_WR_RDMA_WRITE, SRC_OFF + 8192, 2000, b,
				 DST_OFF + 8192));
	EXPECT_WC(a->cq, wc, 3, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, SRC_OFF + 8192, b, DST_OFF + 8192, 2000);
	ASSERT_EQ(0, qp_connect_rts(b, &c, 7));
	ASSERT_EQ(0, post_simple(a, 4, IBV_WR_RDMA_WRITE, SRC_OFF, 100, b, DST_OFF + 16384));
	EXPECT_WC(a->cq, wc, 4, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF + 16384, 100);
	EXPECT_EQ(-1, async_event(b, QUIET_MS, &evqp)) TH_LOG("a second event");
	EXPECT_EQ(-1, async_event(a, 0, &evqp)) TH_LOG("an event at the requester");
	EXPECT_NO_WC(a->cq);
	EXPECT_NO_WC(b->cq);
}

TEST_F_TIMEOUT(rc, sqd_drain_event_and_resume, 90)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr x, q;
	struct ibv_qp *evqp = NULL;
	unsigned int done = 0, i;
	struct ibv_wc wc;
	int ev;

	connect_default(_metadata, self);
	post_sqd_writes(_metadata, a, b, 0, SQD_WRS / 2);
	memset(&x, 0, sizeof(x));
	x.en_sqd_async_notify = 1;
	ASSERT_EQ(0, to_state(a, IBV_QPS_SQD, IBV_QP_EN_SQD_ASYNC_NOTIFY, &x));
	EXPECT_QP_STATE(a, IBV_QPS_SQD);
	post_sqd_writes(_metadata, a, b, SQD_WRS / 2, SQD_WRS);
	/* While it drains, attributes may not change. */
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_STATE, &ia));
	if (q.sq_draining) {
		memset(&x, 0, sizeof(x));
		x.timeout = 14;
		/*
		 * The drain may end between the query and the modify; then the
		 * modify is right to pass, and the QP must say it is drained.
		 */
		if (!to_state(a, IBV_QPS_SQD, IBV_QP_TIMEOUT, &x)) {
			ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_STATE, &ia));
			EXPECT_EQ(0, q.sq_draining)
				TH_LOG("SQD -> SQD accepted while draining");
			TH_LOG("the drain ended before SQD -> SQD: refusal not seen this run");
		}
	}

	ev = async_event(a, WC_WAIT_MS, &evqp);
	EXPECT_EQ(IBV_EVENT_SQ_DRAINED, ev) TH_LOG("async event %d (%s)", ev,
						   ev < 0 ? "none" :
						   ibv_event_type_str(ev));
	EXPECT_EQ(a->qp, evqp);
	/* Everything started has completed by now, in order. */
	while (poll_wc(a->cq, &wc, 0) == 1) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("wr_id %llu: %s",
			  (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
		EXPECT_EQ(done, wc.wr_id);
		done++;
	}
	TH_LOG("%u of the %u writes posted in RTS had started before SQD", done, SQD_WRS / 2);
	EXPECT_LE(done, SQD_WRS / 2) TH_LOG("a write posted in SQD started");
	EXPECT_GE(done, 1);
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_SQD, q.qp_state);
	EXPECT_EQ(0, q.sq_draining);
	/* Nothing more moves while in SQD, also not what is posted now. */
	pattern(a->buf + SRC_OFF + SQD_LEN, 4096, 78);
	ASSERT_EQ(0, post_simple(a, SQD_WRS, IBV_WR_RDMA_WRITE, SRC_OFF + SQD_LEN, 4096, b,
				 DST_OFF + SQD_LEN));
	EXPECT_NO_WC(a->cq);
	EXPECT_EQ(0, b->buf[DST_OFF + SQD_LEN]);
	/* No second event. */
	EXPECT_EQ(-1, async_event(a, 0, &evqp));

	memset(&x, 0, sizeof(x));
	x.retry_cnt = 5;
	EXPECT_EQ(0, to_state(a, IBV_QPS_SQD, IBV_QP_RETRY_CNT, &x)) TH_LOG("SQD -> SQD");
	memset(&x, 0, sizeof(x));
	ASSERT_EQ(0, to_state(a, IBV_QPS_RTS, 0, &x));
	for (i = done; i <= SQD_WRS; i++)
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF, SQD_LEN + 4096);
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_RETRY_CNT, &ia));
	EXPECT_EQ(5, q.retry_cnt);
	EXPECT_NO_WC(a->cq);
	EXPECT_NO_WC(b->cq);
	EXPECT_EQ(-1, async_event(a, 0, &evqp));
}

/*
 * SQD without EN_SQD_ASYNC_NOTIFY raises no event; SQD -> ERR flushes
 * what the drain held back: every write completes, the started ones
 * successfully or flushed, the rest (at least the half posted in SQD) with
 * WR_FLUSH_ERR, in order.
 */
TEST_F_TIMEOUT(rc, sqd_no_notify_then_err_flushes, 90)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_qp_attr x;
	struct ibv_qp *evqp;
	unsigned int i, flushed = 0;
	struct ibv_wc wc;

	connect_default(_metadata, self);
	post_sqd_writes(_metadata, a, b, 0, SQD_WRS / 2);
	memset(&x, 0, sizeof(x));
	ASSERT_EQ(0, to_state(a, IBV_QPS_SQD, 0, &x));
	post_sqd_writes(_metadata, a, b, SQD_WRS / 2, SQD_WRS);
	EXPECT_EQ(-1, async_event(a, QUIET_MS, &evqp));
	ASSERT_EQ(0, to_state(a, IBV_QPS_ERR, 0, &x));
	EXPECT_QP_STATE(a, IBV_QPS_ERR);
	for (i = 0; i < SQD_WRS; i++) {
		ASSERT_EQ(1, poll_wc(a->cq, &wc, WC_WAIT_MS)) TH_LOG("no completion for %u", i);
		EXPECT_EQ(i, wc.wr_id);
		if (wc.status == IBV_WC_WR_FLUSH_ERR)
			flushed++;
		else
			EXPECT_EQ(0, flushed) TH_LOG("wr_id %u: %s after a flushed one", i,
						     ibv_wc_status_str(wc.status));
		EXPECT_TRUE(wc.status == IBV_WC_SUCCESS || wc.status == IBV_WC_WR_FLUSH_ERR)
			TH_LOG("wr_id %u: %s", i, ibv_wc_status_str(wc.status));
	}
	EXPECT_GE(flushed, SQD_WRS / 2) TH_LOG("a write posted in SQD did not wait");
	EXPECT_NO_WC(a->cq);
	EXPECT_EQ(-1, async_event(a, 0, &evqp));
}

/*
 * No receive posted and rnr_retry 1: RNR_RETRY_EXC_ERR for the SEND, the WRs
 * behind it are flushed, and so is anything posted afterwards (send and
 * receive).  The responder only NAKed: no completion, still RTS.
 */
TEST_F(rc, rnr_retry_exceeded_then_flush)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_wc wc;

	c.rnr_retry = 1;
	connect_pair(_metadata, self, &c);
	ASSERT_EQ(0, post_simple(a, 1, IBV_WR_SEND, 0, 100, b, 0));
	ASSERT_EQ(0, post_simple(a, 2, IBV_WR_SEND, 0, 100, b, 0));
	ASSERT_EQ(0, post_simple(a, 3, IBV_WR_RDMA_WRITE, 0, 100, b, DST_OFF));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_RNR_RETRY_EXC_ERR);
	EXPECT_WC(a->cq, wc, 2, IBV_WC_WR_FLUSH_ERR);
	EXPECT_WC(a->cq, wc, 3, IBV_WC_WR_FLUSH_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
	/* A send posted after the QP entered ERR: flushed. */
	ASSERT_EQ(0, post_simple(a, 4, IBV_WR_SEND, 0, 100, b, 0));
	EXPECT_WC(a->cq, wc, 4, IBV_WC_WR_FLUSH_ERR);
	EXPECT_NO_WC(a->cq);
	EXPECT_NO_WC(b->cq);
	EXPECT_QP_STATE(b, IBV_QPS_RTS);
}

/*
 * IBA 10.3.1 (Error state): receives posted while the QP is in ERR complete
 * with WR_FLUSH_ERR, whether the kernel moved the QP there (here: RNR retries
 * exhausted) or the user did (ibv_modify_qp).
 */
/*
 * An RNR NAK that also acknowledges the SEND before it (one that asked for
 * no ACK of its own) still takes one of rnr_retry's tries: with rnr_retry
 * 1 the SEND is NAKed twice, then fails.  The NAK's implied ACK used to
 * restore the whole budget, so it took three.
 */
TEST_F(rc, rnr_nak_that_acknowledges_an_earlier_send_counts)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_sge sg = sge(a, SRC_OFF, 100);
	struct ibv_send_wr w[2], *bad;
	long long before;
	struct ibv_wc wc;

	c.rnr_retry = 1;
	c.sq_sig_all = 0;
	connect_pair(_metadata, self, &c);
	pattern(a->buf + SRC_OFF, 100, 31);
	before = hw_counter(a, "comp_rnr_naks");
	ASSERT_EQ(0, post_recv(b, 1, 0, 100));
	ASSERT_EQ(0, post_recv(b, 2, 100, 100));
	/* A signaled SEND first: the requester has measured a round trip. */
	ASSERT_EQ(0, post_wr(a, 10, IBV_WR_SEND, &sg, 1, 0, 0, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 10, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 1, IBV_WC_SUCCESS);
	/* 11 (unsignaled) takes receive 2, 12 finds none: in one post. */
	memset(w, 0, sizeof(w));
	w[0].wr_id = 11;
	w[0].sg_list = &sg;
	w[0].num_sge = 1;
	w[0].opcode = IBV_WR_SEND;
	w[0].next = &w[1];
	w[1] = w[0];
	w[1].wr_id = 12;
	w[1].send_flags = IBV_SEND_SIGNALED;
	w[1].next = NULL;
	ASSERT_EQ(0, ibv_post_send(a->qp, w, &bad));
	EXPECT_WC(b->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(a->buf + SRC_OFF, b->buf + 100, 100));
	EXPECT_WC(a->cq, wc, 12, IBV_WC_RNR_RETRY_EXC_ERR);
	if (before >= 0) {
		usleep(50000);	/* the RDMA core caches counters for 10 ms */
		EXPECT_EQ(before + 2, hw_counter(a, "comp_rnr_naks"))
			TH_LOG("RNR NAKs taken with rnr_retry 1");
	}
	EXPECT_NO_WC(a->cq);
	EXPECT_NO_WC(b->cq);
}

TEST_F(rc, receive_posted_in_err_after_async_error_is_flushed)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_wc wc;

	c.rnr_retry = 1;
	connect_pair(_metadata, self, &c);
	ASSERT_EQ(0, post_simple(a, 1, IBV_WR_SEND, 0, 100, b, 0));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_RNR_RETRY_EXC_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
	ASSERT_EQ(0, post_recv(a, 5, 0, 100));
	EXPECT_WC(a->cq, wc, 5, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(rc, receive_and_send_posted_after_modify_to_err_are_flushed)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_wc wc;

	connect_default(_metadata, self);
	ASSERT_EQ(0, post_recv(b, 1, DST_OFF, 100));
	ASSERT_EQ(0, ibv_modify_qp(b->qp, &attr, IBV_QP_STATE));
	EXPECT_WC(b->cq, wc, 1, IBV_WC_WR_FLUSH_ERR);
	ASSERT_EQ(0, post_simple(b, 2, IBV_WR_SEND, 0, 100, a, 0));
	EXPECT_WC(b->cq, wc, 2, IBV_WC_WR_FLUSH_ERR);
	ASSERT_EQ(0, post_recv(b, 3, DST_OFF, 100));
	EXPECT_WC(b->cq, wc, 3, IBV_WC_WR_FLUSH_ERR);
}

/* rnr_retry 7 retries forever: a receive posted late still gets the data. */
TEST_F(rc, rnr_infinite_late_receive)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_wc wc;

	c.rnr_retry = 7;
	connect_pair(_metadata, self, &c);
	pattern(a->buf, 3000, 5);
	ASSERT_EQ(0, post_simple(a, 1, IBV_WR_SEND, 0, 3000, b, 0));
	usleep(200 * 1000);	/* many RNR NAKs at min_rnr_timer 0.01 ms */
	EXPECT_NO_WC(a->cq);
	ASSERT_EQ(0, post_recv(b, 2, DST_OFF, 4096));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_EQ(3000, wc.byte_len);
	EXPECT_SAME_BYTES(a, 0, b, DST_OFF, 3000);
	EXPECT_QP_STATE(a, IBV_QPS_RTS);
}

/* ---- errors: responder checks ---------------------------------------------- */

/*
 * SEND longer than the receive WQE: the requester gets REM_INV_REQ_ERR, the
 * receive WQE LOC_LEN_ERR, the responder QP goes to ERR and flushes the next
 * receive.
 */
TEST_F(rc, send_too_long_for_receive)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_wc wc;

	connect_default(_metadata, self);
	ASSERT_EQ(0, post_recv(b, 30, DST_OFF, 1000));
	ASSERT_EQ(0, post_recv(b, 31, DST_OFF, 1000));
	ASSERT_EQ(0, post_simple(a, 3, IBV_WR_SEND, 0, 2000, b, 0));
	EXPECT_WC(a->cq, wc, 3, IBV_WC_REM_INV_REQ_ERR);
	EXPECT_WC(b->cq, wc, 30, IBV_WC_LOC_LEN_ERR);
	EXPECT_WC(b->cq, wc, 31, IBV_WC_WR_FLUSH_ERR);
	EXPECT_QP_STATE_SOON(b, IBV_QPS_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
}

/* A one-packet SEND one byte too long, to check the boundary. */
TEST_F(rc, send_one_byte_too_long)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_wc wc;

	connect_default(_metadata, self);
	ASSERT_EQ(0, post_recv(b, 30, DST_OFF, 100));
	ASSERT_EQ(0, post_simple(a, 3, IBV_WR_SEND, 0, 101, b, 0));
	EXPECT_WC(a->cq, wc, 3, IBV_WC_REM_INV_REQ_ERR);
	EXPECT_WC(b->cq, wc, 30, IBV_WC_LOC_LEN_ERR);
}

/*
 * A fatal responder error on an operation that uses no receive WQE: the
 * requester gets STATUS, the responder QP goes to ERR and flushes the
 * receive WQE posted beforehand.
 */
static void expect_remote_fatal(struct __test_metadata *_metadata, struct side *a,
				struct side *b, uint64_t id, enum ibv_wc_status status)
{
	struct ibv_wc wc;

	EXPECT_WC(a->cq, wc, id, status);
	EXPECT_WC(b->cq, wc, 77, IBV_WC_WR_FLUSH_ERR);
	EXPECT_QP_STATE_SOON(b, IBV_QPS_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
}

/*
 * A WRITE or READ (OP) of LEN bytes naming an R_Key B never gave out, on
 * QPs connected as C: the requester's completion has STATUS, and the
 * responder's QP goes to ERR (expect_remote_fatal).
 */
static void bad_rkey(struct __test_metadata *_metadata, FIXTURE_DATA(rc) *self,
		     const struct conn *c, enum ibv_wr_opcode op, uint32_t len,
		     enum ibv_wc_status status)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg = sge(a, 0, len);

	connect_pair(_metadata, self, c);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_wr(a, 4, op, &sg, 1, (uintptr_t)(b->buf + DST_OFF),
			     b->mr->rkey ^ 0x5500, 0, IBV_SEND_SIGNALED));
	expect_remote_fatal(_metadata, a, b, 4, status);
}

/* IBA 9.7.5.1.2 (R_Key checks) and o9-x: a bad R_Key is a Remote Access Error. */
TEST_F(rc, write_bad_rkey)
{
	struct conn c = conn_defaults();

	bad_rkey(_metadata, self, &c, IBV_WR_RDMA_WRITE, 2000, IBV_WC_REM_ACCESS_ERR);
}

TEST_F(rc, read_bad_rkey)
{
	struct conn c = conn_defaults();

	bad_rkey(_metadata, self, &c, IBV_WR_RDMA_READ, 100, IBV_WC_REM_ACCESS_ERR);
}

/* A WRITE that starts inside the MR and ends 1000 bytes past its end. */
TEST_F(rc, write_past_mr_end)
{
	struct side *a = self->a, *b = self->b;

	connect_default(_metadata, self);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_simple(a, 5, IBV_WR_RDMA_WRITE, 0, 2000, b, BUF_SZ - 1000));
	expect_remote_fatal(_metadata, a, b, 5, IBV_WC_REM_ACCESS_ERR);
}

/* A READ that ends one byte past the MR end. */
TEST_F(rc, read_past_mr_end)
{
	struct side *a = self->a, *b = self->b;

	connect_default(_metadata, self);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_simple(a, 5, IBV_WR_RDMA_READ, 0, 4097, b, BUF_SZ - 4096));
	expect_remote_fatal(_metadata, a, b, 5, IBV_WC_REM_ACCESS_ERR);
}

/* An MR of B registered with ACCESS (PD of B, inside B's buffer). */
static struct ibv_mr *reg_limited(struct side *b, int access)
{
	return ibv_reg_mr(b->pd, b->buf + DST_OFF, 65536, access);
}

/* The MR lacks REMOTE_WRITE (the QP allows it): R_Key violation. */
TEST_F(rc, write_to_mr_without_remote_write)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg = sge(a, 0, 100);
	struct ibv_mr *mr;

	connect_default(_metadata, self);
	mr = reg_limited(b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_wr(a, 6, IBV_WR_RDMA_WRITE, &sg, 1, (uintptr_t)(b->buf + DST_OFF),
			     mr->rkey, 0, IBV_SEND_SIGNALED));
	expect_remote_fatal(_metadata, a, b, 6, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, b->buf[DST_OFF]) TH_LOG("the refused write changed memory");
	ibv_dereg_mr(mr);
}

/* The MR lacks REMOTE_READ (the QP allows it): R_Key violation. */
TEST_F(rc, read_from_mr_without_remote_read)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg = sge(a, 0, 100);
	struct ibv_mr *mr;

	connect_default(_metadata, self);
	mr = reg_limited(b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_wr(a, 7, IBV_WR_RDMA_READ, &sg, 1, (uintptr_t)(b->buf + DST_OFF),
			     mr->rkey, 0, IBV_SEND_SIGNALED));
	expect_remote_fatal(_metadata, a, b, 7, IBV_WC_REM_ACCESS_ERR);
	ibv_dereg_mr(mr);
}

/* The MR lacks REMOTE_ATOMIC (the QP allows it): R_Key violation. */
TEST_F(rc, atomic_on_mr_without_remote_atomic)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_mr *mr;

	SKIP_NO_ATOMICS(a);
	connect_default(_metadata, self);
	mr = reg_limited(b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			 IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_atomic(a, 8, IBV_WR_ATOMIC_FETCH_AND_ADD, 0,
				 (uintptr_t)(b->buf + DST_OFF), mr->rkey, 1, 0));
	expect_remote_fatal(_metadata, a, b, 8, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, b->buf[DST_OFF]);
	ibv_dereg_mr(mr);
}

/*
 * An MR registered without write access over ordinary memory and then
 * given LOCAL_WRITE and REMOTE_WRITE by re-registration: its keys stay, and
 * a WRITE with the rkey lands.  (The kernel pins the pages again for
 * writing; see the next test for why.)
 */
TEST_F(rc, rereg_access_to_writable_then_write)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_mr *mr;
	struct ibv_sge sg;
	uint32_t rkey;
	struct ibv_wc wc;

	connect_default(_metadata, self);
	memset(b->buf + DST_OFF, 0, 4096);
	mr = reg_limited(b, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	rkey = mr->rkey;
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ));
	EXPECT_EQ(rkey, mr->rkey);
	pattern(a->buf + SRC_OFF, 3000, 29);
	sg = sge(a, SRC_OFF, 3000);
	ASSERT_EQ(0, post_wr(a, 4, IBV_WR_RDMA_WRITE, &sg, 1,
			     (uintptr_t)(b->buf + DST_OFF), mr->rkey, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 4, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF, 3000);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * Re-registration may not make writable the pages of a read-only mapping.
 * Since 6.2 ib_umem_get() pins a registration without write access
 * without FOLL_WRITE, so over a read-only shared mapping of a file the MR
 * holds the file's page-cache pages: an access change to writable that
 * kept them would let any peer's WRITE change a file the process may only
 * read.  The re-registration must fail (the pages cannot be pinned for
 * writing) and the file stay as it was.
 */
TEST_F(rc, rereg_access_cannot_make_read_only_file_writable)
{
	struct side *a = self->a, *b = self->b;
	uint8_t before[4096], after[4096];
	struct ibv_mr *mr;
	struct ibv_wc wc;
	char path[64];
	int wfd, rfd, rc;
	void *ro;

	wfd = syscall(SYS_memfd_create, "sroce-rereg", 0);
	ASSERT_LE(0, wfd) TH_LOG("memfd_create: %s", strerror(errno));
	pattern(before, sizeof(before), 91);
	ASSERT_EQ((ssize_t)sizeof(before), pwrite(wfd, before, sizeof(before), 0));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", wfd);
	rfd = open(path, O_RDONLY);
	ASSERT_LE(0, rfd) TH_LOG("%s: %s", path, strerror(errno));
	ro = mmap(NULL, sizeof(before), PROT_READ, MAP_SHARED, rfd, 0);
	ASSERT_NE(MAP_FAILED, ro) TH_LOG("mmap: %s", strerror(errno));
	mr = ibv_reg_mr(b->pd, ro, sizeof(before), IBV_ACCESS_REMOTE_READ);
	if (!mr)
		SKIP(goto out, "ibv_reg_mr of a read-only shared mapping: %s (before 6.2 the kernel pins every registration for writing)",
		     strerror(errno));
	connect_default(_metadata, self);
	rc = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ);
	EXPECT_NE(0, rc) TH_LOG("a read-only file mapping's MR was made writable");
	if (rc == 0) {
		pattern(a->buf + SRC_OFF, 64, 17);
		struct ibv_sge sg = sge(a, SRC_OFF, 64);

		ASSERT_EQ(0, post_wr(a, 6, IBV_WR_RDMA_WRITE, &sg, 1, (uintptr_t)ro,
				     mr->rkey, 0, IBV_SEND_SIGNALED));
		EXPECT_WC(a->cq, wc, 6, IBV_WC_SUCCESS);
	}
	ASSERT_EQ((ssize_t)sizeof(after), pread(wfd, after, sizeof(after), 0));
	EXPECT_EQ(-1, first_diff(before, after, sizeof(after)))
		TH_LOG("an RDMA WRITE changed a file mapped read-only");
	EXPECT_EQ(0, ibv_dereg_mr(mr));
out:
	munmap(ro, sizeof(before));
	close(rfd);
	close(wfd);
}

/*
 * OP through the rkey of an MR of another PD of B (all rights, same
 * memory): Remote Access Error NAK (B's resp_fatal_naks and resp_bad_key,
 * A's comp_naks_fatal each move by one where the device counts them),
 * REM_ACCESS_ERR at A, B's receive flushed, and not one byte of B's
 * target nor of A's local buffer changed.
 */
static void other_pd_denied(struct __test_metadata *_metadata, FIXTURE_DATA(rc) *self,
			    enum ibv_wr_opcode op)
{
	static const char *const names[] = { "resp_fatal_naks", "resp_bad_key", "comp_naks_fatal" };
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg = sge(a, SRC_OFF, op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : 4096);
	long long before[3], after[3];
	struct ibv_pd *pd2;
	struct ibv_mr *mr;
	uint8_t *snap_b, *snap_a;
	int i;

	connect_default(_metadata, self);
	pd2 = ibv_alloc_pd(b->ctx);
	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_mr(pd2, b->buf + DST_OFF, 65536, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	ASSERT_NE(NULL, mr);
	pattern(b->buf + DST_OFF, 65536, 21);
	pattern(a->buf + SRC_OFF, 65536, 22);
	snap_b = malloc(65536);
	snap_a = malloc(65536);
	ASSERT_TRUE(snap_a && snap_b);
	memcpy(snap_b, b->buf + DST_OFF, 65536);
	memcpy(snap_a, a->buf + SRC_OFF, 65536);
	before[0] = hw_counter(b, names[0]);
	before[1] = hw_counter(b, names[1]);
	before[2] = hw_counter(a, names[2]);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		ASSERT_EQ(0, post_atomic(a, 9, op, SRC_OFF, (uintptr_t)(b->buf + DST_OFF),
					 mr->rkey, 1, 0));
	} else {
		ASSERT_EQ(0, post_wr(a, 9, op, &sg, 1, (uintptr_t)(b->buf + DST_OFF), mr->rkey, 0,
				     IBV_SEND_SIGNALED));
	}
	expect_remote_fatal(_metadata, a, b, 9, IBV_WC_REM_ACCESS_ERR);
	usleep(30000);	/* the RDMA core caches hw counters for 10 ms */
	after[0] = hw_counter(b, names[0]);
	after[1] = hw_counter(b, names[1]);
	after[2] = hw_counter(a, names[2]);
	for (i = 0; i < 3; i++) {
		long long d = after[i] - before[i];

		if (before[i] < 0)
			continue;
		EXPECT_EQ(1, d) TH_LOG("%s moved by %lld", names[i], d);
	}
	EXPECT_EQ(-1, first_diff(snap_b, b->buf + DST_OFF, 65536))
		TH_LOG("the refused request changed the target");
	EXPECT_EQ(-1, first_diff(snap_a, a->buf + SRC_OFF, 65536))
		TH_LOG("the refused request changed the requester's buffer");
	free(snap_a);
	free(snap_b);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd2);
}

/* An R_Key is valid only for QPs of the MR's own PD (IBA 10.6.3). */
TEST_F(rc, write_rkey_of_another_pd)
{
	other_pd_denied(_metadata, self, IBV_WR_RDMA_WRITE);
}

TEST_F(rc, read_rkey_of_another_pd)
{
	other_pd_denied(_metadata, self, IBV_WR_RDMA_READ);
}

TEST_F(rc, atomic_rkey_of_another_pd)
{
	SKIP_NO_ATOMICS(self->a);
	other_pd_denied(_metadata, self, IBV_WR_ATOMIC_FETCH_AND_ADD);
}

/* ---- a shared context: ibv_import_device(), _pd(), _mr() ------------------ */

/*
 * Every way data reaches and leaves @b's buffer through its QP, PD and MR
 * (an imported or parent domain side): A's SEND into B's receive, B's
 * WRITE from its MR into A, A's WRITE into B's R_Key and A's READ of it,
 * all 64 KiB, byte for byte.  @seed varies the patterns.
 */
static void traffic_through(struct __test_metadata *_metadata, struct side *a, struct side *b,
			    unsigned int seed)
{
	struct ibv_wc wc;

	pattern(a->buf + SRC_OFF, 65536, seed);
	ASSERT_EQ(0, post_recv(b, 1, DST_OFF, 65536));
	ASSERT_EQ(0, post_simple(a, 2, IBV_WR_SEND, SRC_OFF, 65536, b, 0));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(65536, wc.byte_len);
	EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF, 65536);

	pattern(b->buf + SRC_OFF, 65536, seed + 1);
	ASSERT_EQ(0, post_simple(b, 3, IBV_WR_RDMA_WRITE, SRC_OFF, 65536, a, DST_OFF));
	EXPECT_WC(b->cq, wc, 3, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(b, SRC_OFF, a, DST_OFF, 65536);

	pattern(a->buf + SRC_OFF, 65536, seed + 2);
	ASSERT_EQ(0, post_simple(a, 4, IBV_WR_RDMA_WRITE, SRC_OFF, 65536, b, DST_OFF));
	EXPECT_WC(a->cq, wc, 4, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF, 65536);
	ASSERT_EQ(0, post_simple(a, 5, IBV_WR_RDMA_READ, SRC_OFF + MIB, 65536, b, SRC_OFF));
	EXPECT_WC(a->cq, wc, 5, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(b, SRC_OFF, a, SRC_OFF + MIB, 65536);
}

/*
 * @b's context, PD and MR as another holder of its command fd sees them
 * (a process it was handed to with SCM_RIGHTS): ibv_import_device() on a
 * dup, then the PD and the MR by handle, and a CQ of the importer's own.
 * The MR's address is the owner's; an importer learns it from the owner
 * (rdma-core leaves it null), here the same process.
 */
static void side_import(struct __test_metadata *_metadata, struct side *b, struct side *ib)
{
	int fd = dup(b->ctx->cmd_fd);

	ASSERT_LE(0, fd) TH_LOG("dup: %s", strerror(errno));
	*ib = *b;
	ib->qp = NULL;
	ib->cq = NULL;
	ib->mr = NULL;
	ib->pd = NULL;
	ib->mr2 = NULL;
	ib->mw = NULL;
	ib->ctx = ibv_import_device(fd);
	if (!ib->ctx && errno == EOPNOTSUPP && b->dev.vendor_part_id != 0x5352) {
		close(fd);
		SKIP(return, "the provider of a device other than sroce cannot import contexts");
	}
	ASSERT_NE(NULL, ib->ctx) TH_LOG("ibv_import_device: %s", strerror(errno));
	ib->pd = ibv_import_pd(ib->ctx, b->pd->handle);
	ASSERT_NE(NULL, ib->pd) TH_LOG("ibv_import_pd(%u): %s", b->pd->handle, strerror(errno));
	EXPECT_EQ(b->pd->handle, ib->pd->handle);
	ib->mr = ibv_import_mr(ib->pd, b->mr->handle);
	ASSERT_NE(NULL, ib->mr) TH_LOG("ibv_import_mr(%u): %s", b->mr->handle, strerror(errno));
	EXPECT_EQ(b->mr->lkey, ib->mr->lkey);
	EXPECT_EQ(b->mr->rkey, ib->mr->rkey);
	EXPECT_EQ(BUF_SZ, ib->mr->length);
	EXPECT_EQ(NULL, ib->mr->addr);
	ib->cq = ibv_create_cq(ib->ctx, 256, NULL, NULL, 0);
	ASSERT_NE(NULL, ib->cq) TH_LOG("ibv_create_cq on the import: %s", strerror(errno));
}

/* Undoes side_import(): the importer's own objects go, the shared ones stay. */
static void side_unimport(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->mr)
		ibv_unimport_mr(s->mr);
	if (s->pd)
		ibv_unimport_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	memset(s, 0, sizeof(*s));
}

/*
 * An imported context moves data with the imported PD and MR: a QP of the
 * importer on the imported PD receives a SEND into the imported MR's
 * L_Key, WRITEs from it, and is the target of A's READ and WRITE through
 * its R_Key.  Closing the import leaves the owner's context, PD and MR
 * working (a new pair on them moves data) and its command fd open.
 */
TEST_F(rc, imported_context_pd_and_mr_move_data)
{
	struct side *a = self->a, *owner = self->b, *b = &self->imp;
	int fd0 = fcntl(0, F_GETFD);
	struct ibv_wc wc;

	side_import(_metadata, owner, b);
	if (!b->ctx)
		return;		/* skipped */
	self->b = b;
	connect_default(_metadata, self);
	traffic_through(_metadata, a, b, 31);

	/* Closed in the order an importer would: its QP and CQ, then the rest. */
	ibv_destroy_qp(a->qp);
	a->qp = NULL;
	side_unimport(b);
	self->b = owner;
	EXPECT_EQ(fd0, fcntl(0, F_GETFD)) TH_LOG("closing the import closed fd 0");
	ASSERT_LE(0, fcntl(owner->ctx->cmd_fd, F_GETFD)) TH_LOG("the owner's command fd closed");

	connect_default(_metadata, self);
	pattern(a->buf + SRC_OFF, 4096, 34);
	ASSERT_EQ(0, post_recv(owner, 6, DST_OFF, 4096));
	ASSERT_EQ(0, post_simple(a, 7, IBV_WR_SEND, SRC_OFF, 4096, owner, 0));
	EXPECT_WC(a->cq, wc, 7, IBV_WC_SUCCESS);
	EXPECT_WC(owner->cq, wc, 6, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, SRC_OFF, owner, DST_OFF, 4096);
}

/*
 * The importer's half of imported_in_another_process, in a fork child: it
 * imports B's context and PD, creates a CQ, a QP and an MR of its own
 * there, connects the QP to A's, tells the parent the QPN, waits while the
 * parent READs B's MR through that QP, then WRITEs its own pattern into
 * A's buffer and tears its objects down.  Returns the exit status: 0, or
 * the step that failed.
 */
static int import_child(struct side *a, struct side *b, const struct conn *c, enum ibv_mtu mtu,
			int to_parent, int from_parent)
{
	int fd = dup(b->ctx->cmd_fd);
	struct side ib = *b;
	struct ibv_wc wc;
	uint8_t *mine;
	char go;

	alarm(60);
	ib.ctx = fd < 0 ? NULL : ibv_import_device(fd);
	if (!ib.ctx)
		return 10;
	ib.pd = ibv_import_pd(ib.ctx, b->pd->handle);
	ib.cq = ib.pd ? ibv_create_cq(ib.ctx, 16, NULL, NULL, 0) : NULL;
	if (!ib.cq)
		return 11;
	mine = aligned_alloc(4096, 65536);
	ib.mr = mine ? ibv_reg_mr(ib.pd, mine, 65536, IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!ib.mr)
		return 12;
	{
		struct ibv_qp_init_attr ia = {
			.send_cq = ib.cq, .recv_cq = ib.cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = 4, .max_recv_wr = 4,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		ib.qp = ibv_create_qp(ib.pd, &ia);
	}
	if (!ib.qp || qp_connect(&ib, c, ALL_ACCESS, a->qp->qp_num, &a->gid, mtu, 7))
		return 13;
	if (write(to_parent, &ib.qp->qp_num, 4) != 4 || read(from_parent, &go, 1) != 1)
		return 14;
	pattern(mine, 65536, 42);
	ib.buf = mine;
	if (post_simple(&ib, 1, IBV_WR_RDMA_WRITE, 0, 65536, a, DST_OFF))
		return 15;
	if (poll_wc(ib.cq, &wc, WC_WAIT_MS) != 1 || wc.status != IBV_WC_SUCCESS || wc.wr_id != 1)
		return 16;
	if (ibv_destroy_qp(ib.qp) || ibv_destroy_cq(ib.cq) || ibv_dereg_mr(ib.mr))
		return 17;
	ibv_unimport_pd(ib.pd);
	return ibv_close_device(ib.ctx) ? 18 : 0;
}

/*
 * A shared context's use across processes: a fork child (its own
 * credentials, so its own doorbell file, as a process handed the fd with
 * SCM_RIGHTS) imports B's context and PD and creates a QP there.  A READs
 * B's MR, registered by the parent, through the child's QP; the child
 * WRITEs from an MR it registered into A.  Both byte for byte.
 */
TEST_F(rc, imported_in_another_process)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	enum ibv_mtu mtu = a->port.active_mtu < b->port.active_mtu ?
			   a->port.active_mtu : b->port.active_mtu;
	int to_parent[2], from_parent[2], st = 0, err;
	uint8_t expect[4096];
	uint32_t child_qpn;
	struct ibv_wc wc;
	pid_t pid;

	if (b->dev.vendor_part_id != 0x5352)
		SKIP(return, "sroce's import; %s is another device", ibv_get_device_name(b->ctx->device));
	if (opt_mtu)
		mtu = opt_mtu;
	qp_create(_metadata, a, &c);
	pattern(b->buf + SRC_OFF, 65536, 41);
	ASSERT_EQ(0, pipe(to_parent));
	ASSERT_EQ(0, pipe(from_parent));
	fflush(stdout);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(import_child(a, b, &c, mtu, to_parent[1], from_parent[0]));
	close(to_parent[1]);
	close(from_parent[0]);
	if (read(to_parent[0], &child_qpn, 4) != 4) {
		waitpid(pid, &st, 0);
		ASSERT_TRUE(false) TH_LOG("the child stopped before its QP was up: exit %d",
					  WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	err = qp_connect(a, &c, ALL_ACCESS, child_qpn, &b->gid, mtu, 7);
	EXPECT_EQ(0, err) TH_LOG("A to RTS towards the child's QP: %s", strerror(err));
	if (!err) {
		EXPECT_EQ(0, post_simple(a, 1, IBV_WR_RDMA_READ, SRC_OFF + MIB, 65536, b, SRC_OFF));
		EXPECT_WC(a->cq, wc, 1, IBV_WC_SUCCESS);
		EXPECT_SAME_BYTES(b, SRC_OFF, a, SRC_OFF + MIB, 65536);
	}
	EXPECT_EQ(1, write(from_parent[1], "g", 1));
	close(from_parent[1]);
	close(to_parent[0]);
	waitpid(pid, &st, 0);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("the child failed at step %d (status %#x)", WIFEXITED(st) ? WEXITSTATUS(st) : -1, st);
	pattern(expect, sizeof(expect), 42);
	EXPECT_EQ(-1, first_diff(expect, a->buf + DST_OFF, sizeof(expect)))
		TH_LOG("the child's WRITE did not land");
}

/* ---- parent and thread domains --------------------------------------------- */

/*
 * B's objects under a parent domain with a thread domain (ibv_alloc_td(),
 * ibv_alloc_parent_domain()): a QP, an extended CQ that belongs to the
 * parent domain, an MR registered through it; the provider takes no lock
 * for them (the thread domain's promise).  SEND, WRITE and READ move data
 * byte for byte.  While the parent domain exists its PD and thread domain
 * cannot go (EBUSY); a CQ may not name a PD that is not a parent domain.
 */
TEST_F(rc, parent_domain_with_thread_domain)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_td_init_attr ta = {};
	struct ibv_parent_domain_init_attr pa = {};
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 256,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_pd *kpd = b->pd, *parent;
	struct ibv_cq *kcq = b->cq;
	struct ibv_cq_ex *cq;
	struct ibv_mr *kmr = b->mr;
	struct ibv_td *td;

	if (b->dev.vendor_part_id != 0x5352)
		SKIP(return, "sroce's parent domains; %s is another device",
		     ibv_get_device_name(b->ctx->device));
	td = ibv_alloc_td(b->ctx, &ta);
	ASSERT_NE(NULL, td) TH_LOG("ibv_alloc_td: %s", strerror(errno));
	pa.pd = kpd;
	pa.td = td;
	parent = ibv_alloc_parent_domain(b->ctx, &pa);
	ASSERT_NE(NULL, parent) TH_LOG("ibv_alloc_parent_domain: %s", strerror(errno));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(kpd));
	EXPECT_EQ(EBUSY, ibv_dealloc_td(td));

	ca.parent_domain = kpd;
	errno = 0;
	cq = ibv_create_cq_ex(b->ctx, &ca);
	EXPECT_EQ(NULL, cq) TH_LOG("a CQ of a PD that is not a parent domain");
	EXPECT_EQ(EINVAL, errno);
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ca.parent_domain = parent;
	cq = ibv_create_cq_ex(b->ctx, &ca);
	ASSERT_NE(NULL, cq) TH_LOG("ibv_create_cq_ex of the parent domain: %s", strerror(errno));

	/* B's objects, under the parent domain, for the test's length. */
	b->pd = parent;
	b->cq = ibv_cq_ex_to_cq(cq);
	b->mr = ibv_reg_mr(parent, b->buf, BUF_SZ, ALL_ACCESS);
	ASSERT_NE(NULL, b->mr) TH_LOG("ibv_reg_mr through the parent domain: %s", strerror(errno));
	EXPECT_EQ(parent, b->mr->pd);
	connect_default(_metadata, self);
	traffic_through(_metadata, a, b, 51);

	/* Users before owners: QP, CQ, MR, parent domain, thread domain. */
	EXPECT_EQ(0, ibv_destroy_qp(b->qp));
	b->qp = NULL;
	EXPECT_EQ(0, ibv_destroy_cq(b->cq));
	EXPECT_EQ(0, ibv_dereg_mr(b->mr));
	b->cq = kcq;
	b->mr = kmr;
	b->pd = kpd;
	EXPECT_EQ(0, ibv_dealloc_pd(parent));
	EXPECT_EQ(0, ibv_dealloc_td(td));
}

/* ---- on-demand paging ---------------------------------------------------- */

/* Does @s's device offer on-demand paging for RC in every role? */
static bool has_rc_odp(struct side *s)
{
	const uint32_t all = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			     IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			     IBV_ODP_SUPPORT_ATOMIC;
	struct ibv_device_attr_ex x;

	if (ibv_query_device_ex(s->ctx, NULL, &x))
		return false;
	return (x.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
	       (x.odp_caps.per_transport_caps.rc_odp_caps & all) == all;
}

/*
 * @s with a fresh mapping, never touched, registered as its buffer: on
 * demand if @odp, else pinned as usual (the peer of an ODP side whose
 * device has no ODP).
 */
static void side_mapped(struct __test_metadata *_metadata, struct side *s, struct side *o,
			bool odp)
{
	*o = *s;
	o->buf = mmap(NULL, BUF_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, o->buf);
	o->mr = ibv_reg_mr(s->pd, o->buf, BUF_SZ, ALL_ACCESS | (odp ? IBV_ACCESS_ON_DEMAND : 0));
	ASSERT_NE(NULL, o->mr) TH_LOG("ibv_reg_mr(%s): %s", odp ? "IBV_ACCESS_ON_DEMAND" : "pinned",
				      strerror(errno));
}

static void side_odp(struct __test_metadata *_metadata, struct side *s, struct side *o)
{
	side_mapped(_metadata, s, o, true);
}

/*
 * Connect A and B, and give each a fresh mapping as its buffer (*@oa,
 * *@ob): on demand where the device has RC ODP, pinned where it has not.
 * False, with nothing done, if neither device has it.
 */
static bool connect_odp_where_offered(struct __test_metadata *_metadata, FIXTURE_DATA(rc) *self,
				      struct side *oa, struct side *ob)
{
	bool odp_a = has_rc_odp(self->a), odp_b = has_rc_odp(self->b);

	if (!odp_a && !odp_b)
		return false;
	connect_default(_metadata, self);
	side_mapped(_metadata, self->a, oa, odp_a);
	side_mapped(_metadata, self->b, ob, odp_b);
	return true;
}

/*
 * ODP MRs (IBV_ACCESS_ON_DEMAND: nothing pinned) on both sides, or on the
 * one whose device has ODP against another device (rdma_rxe, pinned MRs):
 * every operation moves data into and out of pages no one has touched
 * (the responder answers with RNR NAKs while it faults them in, the
 * requester faults its own before it sends); then an ODP side's kernel
 * takes its pages back (MADV_DONTNEED) and the next transfers must see
 * what the mapping holds now, zeros and then new bytes, not the pages the
 * MR saw before; a prefetch works; and a WRITE into a part of an ODP MR
 * that is no longer mapped fails with a remote access error.
 */
TEST_F_TIMEOUT(rc, odp_mrs_fault_in_and_follow_the_mapping, 90)
{
	static const uint8_t zeros[65536];
	struct side *a = self->a, *b = self->b;
	bool odp_a = has_rc_odp(a), odp_b = has_rc_odp(b);
	struct side oa = {}, ob = {};
	struct ibv_sge sg;
	struct ibv_wc wc;
	uint64_t *word;

	if (!connect_odp_where_offered(_metadata, self, &oa, &ob))
		SKIP(return, "neither %s nor %s has RC on-demand paging",
		     ibv_get_device_name(a->ctx->device), ibv_get_device_name(b->ctx->device));

	traffic_through(_metadata, &oa, &ob, 91);

	/* Fetch&add on a page never touched: the old value is 0. */
	word = (uint64_t *)(ob.buf + DST_OFF + MIB);
	ASSERT_EQ(0, post_atomic(&oa, 6, IBV_WR_ATOMIC_FETCH_AND_ADD, 3 * MIB, (uintptr_t)word,
				 ob.mr->rkey, 5, 0));
	EXPECT_WC(a->cq, wc, 6, IBV_WC_SUCCESS);
	EXPECT_EQ(0, *(uint64_t *)(oa.buf + 3 * MIB));
	EXPECT_EQ(5, *word);

	/* B's pages taken back: READ sees zeros, then what B writes. */
	if (odp_b) {
		ASSERT_EQ(0, madvise(ob.buf, BUF_SZ, MADV_DONTNEED));
		memset(oa.buf + SRC_OFF, 0xa5, 65536);
		ASSERT_EQ(0, post_simple(&oa, 7, IBV_WR_RDMA_READ, SRC_OFF, 65536, &ob, DST_OFF));
		EXPECT_WC(a->cq, wc, 7, IBV_WC_SUCCESS);
		EXPECT_EQ(-1, first_diff(oa.buf + SRC_OFF, zeros, 65536))
			TH_LOG("READ after MADV_DONTNEED: not the zeros the mapping holds");
	}
	pattern(ob.buf + DST_OFF, 65536, 93);
	ASSERT_EQ(0, post_simple(&oa, 8, IBV_WR_RDMA_READ, SRC_OFF, 65536, &ob, DST_OFF));
	EXPECT_WC(a->cq, wc, 8, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(&ob, DST_OFF, &oa, SRC_OFF, 65536);

	/* A's pages taken back: a WRITE sends what A's mapping holds now. */
	if (odp_a)
		ASSERT_EQ(0, madvise(oa.buf, BUF_SZ, MADV_DONTNEED));
	pattern(oa.buf + SRC_OFF, 65536, 94);
	ASSERT_EQ(0, post_simple(&oa, 9, IBV_WR_RDMA_WRITE, SRC_OFF, 65536, &ob, DST_OFF));
	EXPECT_WC(a->cq, wc, 9, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(&oa, SRC_OFF, &ob, DST_OFF, 65536);

	/* Prefetch for writing, waiting for it; a key of no ODP MR is refused. */
	if (odp_a) {
		sg = (struct ibv_sge){ (uintptr_t)oa.buf, BUF_SZ, oa.mr->lkey };
		EXPECT_EQ(0, ibv_advise_mr(oa.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
					   IBV_ADVISE_MR_FLAG_FLUSH, &sg, 1));
		sg = (struct ibv_sge){ (uintptr_t)a->buf, 4096, a->mr->lkey };
		EXPECT_NE(0, ibv_advise_mr(a->pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0, &sg, 1));
	}

	/* Part of B's MR unmapped: nothing to fault in, a remote access error. */
	if (odp_b) {
		ASSERT_EQ(0, munmap(ob.buf + 3 * MIB, MIB));
		ASSERT_EQ(0, post_simple(&oa, 10, IBV_WR_RDMA_WRITE, SRC_OFF, 4096, &ob, 3 * MIB));
		EXPECT_WC(a->cq, wc, 10, IBV_WC_REM_ACCESS_ERR);
	}

	EXPECT_EQ(0, ibv_dereg_mr(oa.mr));
	EXPECT_EQ(0, ibv_dereg_mr(ob.mr));
	munmap(oa.buf, BUF_SZ);
	munmap(ob.buf, odp_b ? 3 * MIB : BUF_SZ);
}

/*
 * Poll @cq for one completion, fork()ing all the while: each fork
 * write-protects the process's private pages for copy-on-write, which the
 * MMU notifier passes on as an invalidation of every ODP MR's pages (the
 * data stays).  1 with *@wc, or 0 after @ms.
 */
static int poll_wc_forking(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	uint64_t end = now_ms() + ms;
	pid_t pid;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n || now_ms() > end)
			return n;
		pid = fork();
		if (pid == 0)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

#define EXPECT_WC_FORKING(cq, wc, want_id) do { \
	ASSERT_EQ(1, poll_wc_forking((cq), &(wc), WC_WAIT_MS)) \
		TH_LOG("%s: no completion in %d ms (expected wr_id %llu) while invalidations ran", \
		       #cq, WC_WAIT_MS, (unsigned long long)(want_id)); \
	EXPECT_EQ(IBV_WC_SUCCESS, (wc).status) \
		TH_LOG("%s wr_id %llu: %s", #cq, (unsigned long long)(wc).wr_id, \
		       ibv_wc_status_str((wc).status)); \
	EXPECT_EQ((uint64_t)(want_id), (wc).wr_id); \
} while (0)

/*
 * ODP MRs whose pages are invalidated again and again while 64 KiB SENDs,
 * WRITEs and READs move through them (fork() in the polling loop, see
 * poll_wc_forking()): a page can go between a responder's check and its
 * copy, between a requester's prefault and its packets, in the middle of
 * a message.  Every transfer completes with the right bytes, and the
 * invalidations did happen.
 */
TEST_F_TIMEOUT(rc, odp_transfers_through_invalidations, 180)
{
	struct side *a = self->a, *b = self->b;
	struct side *odp_side = has_rc_odp(b) ? b : a;
	struct side oa = {}, ob = {};
	long long inval = hw_counter(odp_side, "odp_invalidations");
	unsigned int round;
	struct ibv_wc wc;

	if (!connect_odp_where_offered(_metadata, self, &oa, &ob))
		SKIP(return, "neither %s nor %s has RC on-demand paging",
		     ibv_get_device_name(a->ctx->device), ibv_get_device_name(b->ctx->device));

	for (round = 0; round < 10; round++) {
		pattern(oa.buf + SRC_OFF, 65536, 200 + round);
		ASSERT_EQ(0, post_recv(&ob, 1, DST_OFF, 65536));
		ASSERT_EQ(0, post_simple(&oa, 2, IBV_WR_SEND, SRC_OFF, 65536, &ob, 0));
		EXPECT_WC_FORKING(a->cq, wc, 2);
		EXPECT_WC_FORKING(b->cq, wc, 1);
		EXPECT_SAME_BYTES(&oa, SRC_OFF, &ob, DST_OFF, 65536);

		pattern(oa.buf + SRC_OFF + MIB, 65536, 300 + round);
		ASSERT_EQ(0, post_simple(&oa, 3, IBV_WR_RDMA_WRITE, SRC_OFF + MIB, 65536,
					 &ob, DST_OFF + MIB));
		EXPECT_WC_FORKING(a->cq, wc, 3);
		EXPECT_SAME_BYTES(&oa, SRC_OFF + MIB, &ob, DST_OFF + MIB, 65536);

		pattern(ob.buf + SRC_OFF, 65536, 400 + round);
		ASSERT_EQ(0, post_simple(&oa, 4, IBV_WR_RDMA_READ, DST_OFF, 65536, &ob, SRC_OFF));
		EXPECT_WC_FORKING(a->cq, wc, 4);
		EXPECT_SAME_BYTES(&ob, SRC_OFF, &oa, DST_OFF, 65536);
	}
	if (inval >= 0)
		EXPECT_LT(inval + 20, hw_counter(odp_side, "odp_invalidations"))
			TH_LOG("fork() did not invalidate the ODP MRs' pages");

	EXPECT_EQ(0, ibv_dereg_mr(oa.mr));
	EXPECT_EQ(0, ibv_dereg_mr(ob.mr));
	munmap(oa.buf, BUF_SZ);
	munmap(ob.buf, BUF_SZ);
}

/*
 * A window of 64 KiB WRITEs, posted at once as perftest does (signaled
 * only every 8th and the last), each into its own 64 KiB of B's ODP MR
 * that no one has touched: the first packet of each meets a fault, often
 * while the responder executes the packets it held behind the previous
 * one's RNR NAK.  All complete, and every byte is where it belongs.
 */
TEST_F_TIMEOUT(rc, odp_pipelined_writes_into_untouched_pages, 90)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct side ob = {};
	const unsigned int n = 32;
	struct ibv_sge sg;
	struct ibv_wc wc;
	unsigned int i;

	if (!has_rc_odp(b))
		SKIP(return, "%s has no RC on-demand paging", ibv_get_device_name(b->ctx->device));
	c.sq_sig_all = 0;
	side_odp(_metadata, b, &ob);
	connect_sides(_metadata, a, &ob, &c, true);
	pattern(a->buf + SRC_OFF, n * 65536, 97);
	for (i = 0; i < n; i++) {
		sg = sge(a, SRC_OFF + i * 65536, 65536);
		ASSERT_EQ(0, post_wr(a, i, IBV_WR_RDMA_WRITE, &sg, 1,
				     (uintptr_t)(ob.buf + DST_OFF + i * 65536), ob.mr->rkey, 0,
				     i % 8 == 7 || i == n - 1 ? IBV_SEND_SIGNALED : 0));
	}
	for (i = 7; i < n; i += 8)
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, SRC_OFF, &ob, DST_OFF, n * 65536);

	EXPECT_EQ(0, ibv_destroy_qp(ob.qp));
	EXPECT_EQ(0, ibv_dereg_mr(ob.mr));
	munmap(ob.buf, BUF_SZ);
}

/*
 * A page of B's ODP MR made read-only (the MR grants remote writes): a
 * WRITE into it fails with a remote access error, and a READ of it still
 * works, even while B's failed fault is on record.  B's long RNR timer
 * (655 ms) holds the WRITE's retry back, so the READ, on a second QP,
 * arrives after B's fault for the WRITE failed and before the WRITE's
 * retry hears of it: the failure must be the WRITE's alone.
 */
TEST_F_TIMEOUT(rc, odp_read_only_page_fails_only_writes, 60)
{
	struct side *a = self->a, *b = self->b;
	struct side ob = {}, a2, b2;
	struct conn c = conn_defaults();
	const uint32_t ro_off = MIB;
	struct ibv_wc wc;

	if (!has_rc_odp(b))
		SKIP(return, "%s has no RC on-demand paging", ibv_get_device_name(b->ctx->device));
	c.min_rnr_timer = 0;	/* 655.36 ms */
	side_odp(_metadata, b, &ob);
	pattern(ob.buf + ro_off, 4096, 96);
	ASSERT_EQ(0, mprotect(ob.buf + ro_off, 4096, PROT_READ));
	connect_sides(_metadata, a, &ob, &c, true);
	a2 = *a;
	b2 = ob;
	connect_sides(_metadata, &a2, &b2, &c, true);

	ASSERT_EQ(0, post_simple(a, 1, IBV_WR_RDMA_WRITE, SRC_OFF, 4096, &ob, ro_off));
	usleep(200 * 1000);	/* B's fault runs and fails; the retry waits */
	memset(a2.buf + DST_OFF, 0, 4096);
	ASSERT_EQ(0, post_simple(&a2, 2, IBV_WR_RDMA_READ, DST_OFF, 4096, &b2, ro_off));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(&b2, ro_off, &a2, DST_OFF, 4096);
	EXPECT_WC(a->cq, wc, 1, IBV_WC_REM_ACCESS_ERR);

	EXPECT_EQ(0, ibv_destroy_qp(a2.qp));
	EXPECT_EQ(0, ibv_destroy_qp(b2.qp));
	EXPECT_EQ(0, ibv_destroy_qp(ob.qp));
	EXPECT_EQ(0, ibv_dereg_mr(ob.mr));
	munmap(ob.buf, BUF_SZ);
}

/*
 * A receive SGE that starts in an ODP MR, in pages never touched, and
 * runs past its end: the part inside is faulted in (RNR NAKs meanwhile),
 * the part outside is a local protection error on B's receive and a
 * Remote Operational Error for A's SEND, as for a pinned MR.
 */
TEST_F(rc, odp_receive_past_the_mr_end)
{
	struct side *a = self->a, *b = self->b;
	struct side ob = {};
	struct ibv_sge sg;
	struct ibv_wc wc;

	if (!has_rc_odp(b))
		SKIP(return, "%s has no RC on-demand paging", ibv_get_device_name(b->ctx->device));
	connect_default(_metadata, self);
	side_odp(_metadata, b, &ob);
	sg = (struct ibv_sge){ (uintptr_t)(ob.buf + BUF_SZ - 8192), 65536, ob.mr->lkey };
	ASSERT_EQ(0, post_recv_sges(&ob, 21, &sg, 1));
	pattern(a->buf + SRC_OFF, 65536, 95);
	ASSERT_EQ(0, post_simple(a, 15, IBV_WR_SEND, SRC_OFF, 65536, &ob, 0));
	EXPECT_WC(a->cq, wc, 15, IBV_WC_REM_OP_ERR);
	EXPECT_WC(b->cq, wc, 21, IBV_WC_LOC_PROT_ERR);
	EXPECT_QP_STATE_SOON(b, IBV_QPS_ERR);
	EXPECT_EQ(0, ibv_dereg_mr(ob.mr));
	munmap(ob.buf, BUF_SZ);
}

/*
 * Importing checks the handle: a number that is no object of the context,
 * or a PD's handle given as an MR's, fails, and so does a command fd that
 * is not a device's.
 */
TEST_F(rc, import_of_a_bad_handle_fails)
{
	struct side *b = self->b;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;

	if (b->dev.vendor_part_id != 0x5352)
		SKIP(return, "sroce's import checks; %s is another device", ibv_get_device_name(b->ctx->device));
	errno = 0;
	pd = ibv_import_pd(b->ctx, 0x7ffffff0);
	EXPECT_EQ(NULL, pd);
	EXPECT_NE(0, errno);
	if (pd)
		ibv_unimport_pd(pd);
	ASSERT_NE(b->pd->handle, b->mr->handle);
	errno = 0;
	mr = ibv_import_mr(b->pd, b->pd->handle);
	EXPECT_EQ(NULL, mr) TH_LOG("a PD's handle imported as an MR");
	EXPECT_NE(0, errno);
	if (mr)
		ibv_unimport_mr(mr);
	ctx = ibv_import_device(0);
	EXPECT_EQ(NULL, ctx) TH_LOG("fd 0 imported as a device");
	if (ctx)
		ibv_close_device(ctx);
}

/*
 * The responder QP is not enabled for the operation (qp_access_flags): an
 * Invalid Request (IBA 9.7.5.1.1 / C9-28 "operation not supported by this
 * QP"; rdma_rxe answers the same), not an access error.
 */
TEST_F(rc, write_to_qp_without_remote_write)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();

	c.access[1] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ;
	connect_pair(_metadata, self, &c);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_simple(a, 9, IBV_WR_RDMA_WRITE, 0, 100, b, DST_OFF));
	expect_remote_fatal(_metadata, a, b, 9, IBV_WC_REM_INV_REQ_ERR);
	EXPECT_EQ(0, b->buf[DST_OFF]);
}

TEST_F(rc, read_from_qp_without_remote_read)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();

	c.access[1] = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	connect_pair(_metadata, self, &c);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_simple(a, 10, IBV_WR_RDMA_READ, 0, 100, b, DST_OFF));
	expect_remote_fatal(_metadata, a, b, 10, IBV_WC_REM_INV_REQ_ERR);
}

/* IBA 9.4.5: an atomic's address must be 8-byte aligned: Invalid Request. */
TEST_F(rc, atomic_misaligned)
{
	struct side *a = self->a, *b = self->b;

	SKIP_NO_ATOMICS(a);
	connect_default(_metadata, self);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_atomic(a, 11, IBV_WR_ATOMIC_FETCH_AND_ADD, 0,
				 (uintptr_t)(b->buf + DST_OFF + 4), b->mr->rkey, 1, 0));
	expect_remote_fatal(_metadata, a, b, 11, IBV_WC_REM_INV_REQ_ERR);
	EXPECT_EQ(0, *(uint64_t *)(b->buf + DST_OFF));
	EXPECT_EQ(0, *(uint64_t *)(b->buf + DST_OFF + 8));
}

/* ATOMIC WRITE's address must be 8-byte aligned, as an atomic's. */
TEST_F(rc, atomic_write_misaligned)
{
	struct side *a = self->a, *b = self->b;

	SKIP_NO_ATOMIC_WRITE(a, b);
	connect_default(_metadata, self);
	*(uint64_t *)(a->buf + 24) = ~0ull;
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_atomic_write(a, 12, 24, 8, (uintptr_t)(b->buf + DST_OFF + 4),
				       b->mr->rkey));
	expect_remote_fatal(_metadata, a, b, 12, IBV_WC_REM_INV_REQ_ERR);
	EXPECT_EQ(0, *(uint64_t *)(b->buf + DST_OFF));
	EXPECT_EQ(0, *(uint64_t *)(b->buf + DST_OFF + 8));
}

/* ATOMIC WRITE needs REMOTE_WRITE on the MR (REMOTE_ATOMIC is not it). */
TEST_F(rc, atomic_write_to_mr_without_remote_write)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_mr *mr;

	SKIP_NO_ATOMIC_WRITE(a, b);
	connect_default(_metadata, self);
	mr = reg_limited(b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_ATOMIC);
	ASSERT_NE(NULL, mr);
	*(uint64_t *)(a->buf + 24) = ~0ull;
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_atomic_write(a, 13, 24, 8, (uintptr_t)(b->buf + DST_OFF), mr->rkey));
	expect_remote_fatal(_metadata, a, b, 13, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0, *(uint64_t *)(b->buf + DST_OFF));
	ibv_dereg_mr(mr);
}

/* ---- memory windows (IBA 10.6.7) -------------------------------------------- */

#define MW_OFF		(DST_OFF + 4096)	/* the window: [MW_OFF, MW_OFF + MW_LEN) */
#define MW_LEN		8192u
#define MW_RIGHTS	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* B gets a window of TYPE and an MR that windows may be bound to. */
static void mw_setup(struct __test_metadata *_metadata, struct side *b, enum ibv_mw_type type)
{
	b->mr2 = ibv_reg_mr(b->pd, b->buf + DST_OFF, MIB,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, b->mr2) TH_LOG("ibv_reg_mr with MW_BIND: %s", strerror(errno));
	b->mw = ibv_alloc_mw(b->pd, type);
	ASSERT_NE(NULL, b->mw) TH_LOG("ibv_alloc_mw type %d: %s", type, strerror(errno));
	EXPECT_EQ(type, b->mw->type);
}

static struct ibv_mw_bind_info mw_info(struct side *b, struct ibv_mr *mr, uint32_t len, int rights)
{
	return (struct ibv_mw_bind_info){
		.mr = mr, .addr = (uintptr_t)(b->buf + MW_OFF), .length = len,
		.mw_access_flags = (unsigned int)rights,
	};
}

/* Type 1: ibv_bind_mw() on B's QP; B's completion must be ID with STATUS. */
static void mw_bind1(struct __test_metadata *_metadata, struct side *b, uint64_t id,
		     struct ibv_mw_bind_info info, enum ibv_wc_status status)
{
	struct ibv_mw_bind mb = { .wr_id = id, .send_flags = IBV_SEND_SIGNALED, .bind_info = info };
	uint32_t before = b->mw->rkey;
	struct ibv_wc wc;

	ASSERT_EQ(0, ibv_bind_mw(b->qp, b->mw, &mb));
	EXPECT_EQ(before >> 8, b->mw->rkey >> 8) TH_LOG("the key index changed");
	EXPECT_NE(before, b->mw->rkey) TH_LOG("the key byte did not change");
	EXPECT_WC(b->cq, wc, id, status);
	if (status == IBV_WC_SUCCESS)
		EXPECT_EQ(IBV_WC_BIND_MW, wc.opcode);
}

/* Type 2: an IBV_WR_BIND_MW work request on B's QP; returns the new rkey. */
static uint32_t mw_bind2(struct __test_metadata *_metadata, struct side *b, uint64_t id,
			 struct ibv_mw_bind_info info, enum ibv_wc_status status)
{
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	wr.bind_mw.mw = b->mw;
	wr.bind_mw.rkey = ibv_inc_rkey(b->mw->rkey);
	wr.bind_mw.bind_info = info;
	EXPECT_EQ(0, ibv_post_send(b->qp, &wr, &bad));
	EXPECT_WC(b->cq, wc, id, status);
	if (status == IBV_WC_SUCCESS)
		EXPECT_EQ(IBV_WC_BIND_MW, wc.opcode);
	return wr.bind_mw.rkey;
}

/* A writes LEN pattern bytes at window offset OFF through RKEY and reads them back. */
static void mw_write_read(struct __test_metadata *_metadata, struct side *a, struct side *b,
			  uint32_t rkey, uint32_t off, uint32_t len, unsigned int seed)
{
	struct ibv_sge sg = sge(a, SRC_OFF, len);
	struct ibv_wc wc;

	pattern(a->buf + SRC_OFF, len, seed);
	ASSERT_EQ(0, post_wr(a, 70, IBV_WR_RDMA_WRITE, &sg, 1, (uintptr_t)(b->buf + MW_OFF + off),
			     rkey, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 70, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(a, SRC_OFF, b, MW_OFF + off, len);
	sg = sge(a, SRC_OFF + MIB, len);
	memset(a->buf + SRC_OFF + MIB, 0, len);
	ASSERT_EQ(0, post_wr(a, 71, IBV_WR_RDMA_READ, &sg, 1, (uintptr_t)(b->buf + MW_OFF + off),
			     rkey, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 71, IBV_WC_SUCCESS);
	EXPECT_SAME_BYTES(b, MW_OFF + off, a, SRC_OFF + MIB, len);
}

/* A writes through RKEY at window offset OFF and gets a remote access error. */
static void mw_write_denied(struct __test_metadata *_metadata, struct side *a, struct side *b,
			    uint32_t rkey, uint32_t off, uint32_t len)
{
	struct ibv_sge sg = sge(a, SRC_OFF, len);

	memset(b->buf + MW_OFF - 64, 0xee, MW_LEN + 128);
	pattern(a->buf + SRC_OFF, len, 9);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ASSERT_EQ(0, post_wr(a, 72, IBV_WR_RDMA_WRITE, &sg, 1, (uintptr_t)(b->buf + MW_OFF + off),
			     rkey, 0, IBV_SEND_SIGNALED));
	expect_remote_fatal(_metadata, a, b, 72, IBV_WC_REM_ACCESS_ERR);
	EXPECT_EQ(0xee, b->buf[MW_OFF + off]) TH_LOG("the denied write reached memory");
}

/*
 * Type 1: bound with ibv_bind_mw(), A writes and reads the whole window
 * (data checked); the MR cannot be deregistered while the window is
 * bound (EBUSY); rebinding with length 0 unbinds, and the rkey then fails.
 */
TEST_F(rc, mw_type1_bind_access_unbind)
{
	struct side *a = self->a, *b = self->b;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_1);
	mw_bind1(_metadata, b, 60, mw_info(b, b->mr2, MW_LEN, MW_RIGHTS), IBV_WC_SUCCESS);
	mw_write_read(_metadata, a, b, b->mw->rkey, 0, MW_LEN, 60);
	EXPECT_EQ(EBUSY, ibv_dereg_mr(b->mr2)) TH_LOG("deregistered an MR with a bound window");
	mw_bind1(_metadata, b, 61, mw_info(b, b->mr2, 0, 0), IBV_WC_SUCCESS);
	mw_write_denied(_metadata, a, b, b->mw->rkey, 0, 16);
}

/* Only within the window: a write that runs one byte past its end fails. */
TEST_F(rc, mw_type1_write_past_window_end)
{
	struct side *a = self->a, *b = self->b;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_1);
	mw_bind1(_metadata, b, 62, mw_info(b, b->mr2, MW_LEN, MW_RIGHTS), IBV_WC_SUCCESS);
	mw_write_denied(_metadata, a, b, b->mw->rkey, MW_LEN - 16, 17);
	EXPECT_EQ(0xee, b->buf[MW_OFF + MW_LEN - 1]);
}

/* Only with its rights: a read-only window refuses a write. */
TEST_F(rc, mw_type1_write_to_read_only_window)
{
	struct side *a = self->a, *b = self->b;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_1);
	mw_bind1(_metadata, b, 63, mw_info(b, b->mr2, MW_LEN, IBV_ACCESS_REMOTE_READ),
		 IBV_WC_SUCCESS);
	mw_write_denied(_metadata, a, b, b->mw->rkey, 0, 16);
}

/* A window on an MR registered without IBV_ACCESS_MW_BIND: MW_BIND_ERR. */
TEST_F(rc, mw_bind_to_mr_without_mw_bind)
{
	struct side *b = self->b;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_1);
	mw_bind1(_metadata, b, 64, mw_info(b, b->mr, MW_LEN, MW_RIGHTS), IBV_WC_MW_BIND_ERR);
	EXPECT_QP_STATE_SOON(b, IBV_QPS_ERR);
}

/* A type 1 window cannot be invalidated with LOCAL_INV: LOC_PROT_ERR. */
TEST_F(rc, mw_type1_local_inv)
{
	struct side *b = self->b;
	struct ibv_send_wr wr = { .wr_id = 65, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_1);
	mw_bind1(_metadata, b, 66, mw_info(b, b->mr2, MW_LEN, MW_RIGHTS), IBV_WC_SUCCESS);
	wr.invalidate_rkey = b->mw->rkey;
	ASSERT_EQ(0, ibv_post_send(b->qp, &wr, &bad));
	EXPECT_WC(b->cq, wc, 65, IBV_WC_LOC_PROT_ERR);
}

/*
 * Type 2: bound by a work request, used, then invalidated by B's own
 * LOCAL_INV (IBV_WC_LOCAL_INV): the rkey fails afterwards.
 */
TEST_F(rc, mw_type2_bind_access_local_inv)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_send_wr wr = { .wr_id = 67, .opcode = IBV_WR_LOCAL_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	uint32_t rkey;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_2);
	rkey = mw_bind2(_metadata, b, 68, mw_info(b, b->mr2, MW_LEN, MW_RIGHTS), IBV_WC_SUCCESS);
	mw_write_read(_metadata, a, b, rkey, 100, 5000, 68);
	wr.invalidate_rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(b->qp, &wr, &bad));
	EXPECT_WC(b->cq, wc, 67, IBV_WC_SUCCESS);
	EXPECT_EQ(IBV_WC_LOCAL_INV, wc.opcode);
	mw_write_denied(_metadata, a, b, rkey, 0, 16);
}

/*
 * Type 2, remote invalidation: A's SEND_WITH_INV names the window's rkey;
 * B's receive reports it (IBV_WC_WITH_INV) and the rkey fails afterwards.
 */
TEST_F(rc, mw_type2_send_with_inv)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg = sge(a, SRC_OFF, 32);
	struct ibv_send_wr wr = { .wr_id = 69, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	uint32_t rkey;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_2);
	rkey = mw_bind2(_metadata, b, 70, mw_info(b, b->mr2, MW_LEN, MW_RIGHTS), IBV_WC_SUCCESS);
	mw_write_read(_metadata, a, b, rkey, 0, MW_LEN, 70);
	ASSERT_EQ(0, post_recv(b, 78, 0, 64));
	wr.invalidate_rkey = rkey;
	ASSERT_EQ(0, ibv_post_send(a->qp, &wr, &bad));
	EXPECT_WC(a->cq, wc, 69, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 78, IBV_WC_SUCCESS);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV) TH_LOG("wc_flags %#x", wc.wc_flags);
	EXPECT_EQ(rkey, wc.invalidated_rkey);
	mw_write_denied(_metadata, a, b, rkey, 0, 16);
}

/* A bound type 2 window is not free: binding it again is MW_BIND_ERR. */
TEST_F(rc, mw_type2_bind_twice)
{
	struct side *b = self->b;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_2);
	mw_bind2(_metadata, b, 71, mw_info(b, b->mr2, MW_LEN, MW_RIGHTS), IBV_WC_SUCCESS);
	b->mw->rkey = ibv_inc_rkey(b->mw->rkey);
	mw_bind2(_metadata, b, 72, mw_info(b, b->mr2, MW_LEN, MW_RIGHTS), IBV_WC_MW_BIND_ERR);
}

/* A type 1 window bound by a work request (type 2 only): MW_BIND_ERR. */
TEST_F(rc, mw_type1_bound_by_work_request)
{
	struct side *b = self->b;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_1);
	mw_bind2(_metadata, b, 73, mw_info(b, b->mr2, MW_LEN, MW_RIGHTS), IBV_WC_MW_BIND_ERR);
}

/* Deallocating a bound type 2 window ends the access it granted. */
TEST_F(rc, mw_type2_dealloc_bound)
{
	struct side *a = self->a, *b = self->b;
	uint32_t rkey;

	connect_default(_metadata, self);
	mw_setup(_metadata, b, IBV_MW_TYPE_2);
	rkey = mw_bind2(_metadata, b, 74, mw_info(b, b->mr2, MW_LEN, MW_RIGHTS), IBV_WC_SUCCESS);
	mw_write_read(_metadata, a, b, rkey, 0, 64, 74);
	ASSERT_EQ(0, ibv_dealloc_mw(b->mw));
	b->mw = NULL;
	mw_write_denied(_metadata, a, b, rkey, 0, 16);
}

/* ---- errors: local protection --------------------------------------------- */

/* The SEND's own SGE has a bad lkey: LOC_PROT_ERR; nothing reaches B. */
TEST_F(rc, send_bad_lkey)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg = sge(a, 0, 100);
	struct ibv_wc wc;

	connect_default(_metadata, self);
	sg.lkey ^= 0x7700;
	ASSERT_EQ(0, post_recv(b, 20, DST_OFF, 4096));
	ASSERT_EQ(0, post_wr(a, 12, IBV_WR_SEND, &sg, 1, 0, 0, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 12, IBV_WC_LOC_PROT_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
	EXPECT_NO_WC(b->cq);
	EXPECT_QP_STATE(b, IBV_QPS_RTS);
}

/*
 * A one-packet SEND has its SGEs checked when its packet is built, not
 * when it is fetched: the good SEND before a bad one still arrives whole,
 * the bad one fails with LOC_PROT_ERR and the one after it is flushed.
 */
TEST_F(rc, send_bad_lkey_between_good_sends)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge good = sge(a, 0, 200), bad = sge(a, 4096, 100);
	struct ibv_wc wc;

	connect_default(_metadata, self);
	pattern(a->buf, 200, 31);
	bad.lkey ^= 0x7700;
	ASSERT_EQ(0, post_recv(b, 20, DST_OFF, 4096));
	ASSERT_EQ(0, post_recv(b, 21, DST_OFF + 4096, 4096));
	ASSERT_EQ(0, post_wr(a, 1, IBV_WR_SEND, &good, 1, 0, 0, 0, IBV_SEND_SIGNALED));
	ASSERT_EQ(0, post_wr(a, 2, IBV_WR_SEND, &bad, 1, 0, 0, 0, IBV_SEND_SIGNALED));
	ASSERT_EQ(0, post_wr(a, 3, IBV_WR_SEND, &good, 1, 0, 0, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_WC(a->cq, wc, 2, IBV_WC_LOC_PROT_ERR);
	EXPECT_WC(a->cq, wc, 3, IBV_WC_WR_FLUSH_ERR);
	EXPECT_WC(b->cq, wc, 20, IBV_WC_SUCCESS);
	EXPECT_EQ(200, wc.byte_len);
	EXPECT_SAME_BYTES(a, 0, b, DST_OFF, 200);
	EXPECT_NO_WC(b->cq);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
	EXPECT_QP_STATE(b, IBV_QPS_RTS);
}

/*
 * A path MTU above what the netdev carries (its MTU lowered under a
 * connected QP, or a path set by hand): IP refuses every full packet with
 * EMSGSIZE.  That is a loss, not backpressure: the requester runs out of
 * retries, resending once per timeout, where it used to take the refusal
 * for a full queue and send the packet again at once, tens of thousands
 * of times until the timer ended it.  Two devices only: loopback delivers
 * without the IP output path.
 */
TEST_F(rc, path_mtu_above_netdev_mtu)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	long long resent;
	struct ibv_wc wc;

	if (!opt_dev[1] || !strcmp(opt_dev[0], opt_dev[1]))
		SKIP(return, "loopback: packets to this host do not take the IP output path");
	if (a->port.active_mtu >= IBV_MTU_4096)
		SKIP(return, "the netdev carries 4096-byte packets");
	c.mtu = IBV_MTU_4096;
	c.retry_cnt = 2;
	connect_pair(_metadata, self, &c);
	resent = hw_counter(a, "req_retransmits");
	ASSERT_EQ(0, post_recv(b, 77, 0, 8192));
	ASSERT_EQ(0, post_simple(a, 5, IBV_WR_SEND, 0, 4096, b, 0));
	EXPECT_WC(a->cq, wc, 5, IBV_WC_RETRY_EXC_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
	/* One resend per timeout (and per probe), not one per pass. */
	if (resent >= 0) {
		resent = hw_counter(a, "req_retransmits") - resent;
		EXPECT_GE(10, resent) TH_LOG("%lld packets sent again", resent);
	}
}

/*
 * A local operation waits until everything posted before it was
 * acknowledged, and an unsignaled SEND asks for no ACK of its own: the
 * requester must ask for that ACK once the local operation waits.  rc.sh
 * also runs this against rdma_rxe, which acknowledges only when asked;
 * with a local ACK timeout of 0 (no timer) the bind then never completed.
 */
TEST_F(rc, local_op_after_unsignaled_send)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_sge sg = sge(a, SRC_OFF, 64);
	struct ibv_wc wc;

	c.sq_sig_all = 0;
	c.timeout = 0;
	connect_pair(_metadata, self, &c);
	mw_setup(_metadata, a, IBV_MW_TYPE_2);
	ASSERT_EQ(0, post_recv(b, 1, 0, 64));
	ASSERT_EQ(0, post_recv(b, 2, 64, 64));
	/* A signaled SEND first: the requester has measured a round trip. */
	ASSERT_EQ(0, post_wr(a, 10, IBV_WR_SEND, &sg, 1, 0, 0, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 10, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 1, IBV_WC_SUCCESS);
	ASSERT_EQ(0, post_wr(a, 11, IBV_WR_SEND, &sg, 1, 0, 0, 0, 0));
	mw_bind2(_metadata, a, 12, mw_info(a, a->mr2, 4096, IBV_ACCESS_REMOTE_WRITE),
		 IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_NO_WC(a->cq);
}

/*
 * Two WQEs in one post: a WRITE naming an R_Key B never gave out, then a
 * SEND with a bad lkey.  The SEND fails its check when its packet is built,
 * before the WRITE's NAK is back, but waits for the WRITE to complete;
 * the WRITE's remote access error puts the QP in error first, so the SEND
 * completes with IBV_WC_WR_FLUSH_ERR (every WQE after the one in error is
 * flushed), not with its own IBV_WC_LOC_PROT_ERR.
 */
/*
 * The same for an SQD drain: unsignaled SENDs were the last to leave,
 * without AckReq.  Against rdma_rxe, which acknowledges only when asked,
 * with a local ACK timeout of 0 (no probe timer), the drain ends only if
 * the requester asks; rc.sh runs this against rdma_rxe.
 */
TEST_F(rc, sqd_drain_after_unsignaled_sends)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_sge sg = sge(a, SRC_OFF, 64);
	struct ibv_qp *evqp = NULL;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr x;
	struct ibv_wc wc;
	int ev, i;

	c.sq_sig_all = 0;
	c.timeout = 0;
	connect_pair(_metadata, self, &c);
	pattern(a->buf + SRC_OFF, 64, 21);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, post_recv(b, i, i * 64, 64));
	/* A signaled SEND first: the requester has measured a round trip. */
	ASSERT_EQ(0, post_wr(a, 10, IBV_WR_SEND, &sg, 1, 0, 0, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 10, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 0, IBV_WC_SUCCESS);
	for (i = 1; i < 4; i++)
		ASSERT_EQ(0, post_wr(a, 10 + i, IBV_WR_SEND, &sg, 1, 0, 0, 0, 0));
	for (i = 1; i < 4; i++) {
		EXPECT_WC(b->cq, wc, i, IBV_WC_SUCCESS);
		EXPECT_EQ(0, memcmp(a->buf + SRC_OFF, b->buf + i * 64, 64));
	}
	memset(&x, 0, sizeof(x));
	x.en_sqd_async_notify = 1;
	ASSERT_EQ(0, to_state(a, IBV_QPS_SQD, IBV_QP_EN_SQD_ASYNC_NOTIFY, &x));
	ev = async_event(a, 5000, &evqp);
	EXPECT_EQ(IBV_EVENT_SQ_DRAINED, ev) TH_LOG("async event %d (%s)", ev,
						   ev < 0 ? "none in 5 s" :
						   ibv_event_type_str(ev));
	EXPECT_EQ(a->qp, evqp);
	ASSERT_EQ(0, ibv_query_qp(a->qp, &x, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_SQD, x.qp_state);
	EXPECT_EQ(0, x.sq_draining);
	EXPECT_NO_WC(a->cq);
}

TEST_F(rc, bad_rkey_then_bad_lkey_in_one_post)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge wsg = sge(a, 0, 64), ssg = sge(a, 4096, 100);
	struct ibv_send_wr wr[2], *bad = NULL;
	struct ibv_wc wc;

	connect_default(_metadata, self);
	ASSERT_EQ(0, post_recv(b, 77, 0, 64));
	ssg.lkey ^= 0x7700;
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].sg_list = &wsg;
	wr[0].num_sge = 1;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = (uintptr_t)(b->buf + DST_OFF);
	wr[0].wr.rdma.rkey = b->mr->rkey ^ 0x5500;
	wr[0].next = &wr[1];
	wr[1].wr_id = 2;
	wr[1].opcode = IBV_WR_SEND;
	wr[1].sg_list = &ssg;
	wr[1].num_sge = 1;
	wr[1].send_flags = IBV_SEND_SIGNALED;
	ASSERT_EQ(0, ibv_post_send(a->qp, wr, &bad));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_REM_ACCESS_ERR);
	EXPECT_WC(a->cq, wc, 2, IBV_WC_WR_FLUSH_ERR);
	EXPECT_NO_WC(a->cq);
	EXPECT_WC(b->cq, wc, 77, IBV_WC_WR_FLUSH_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
	EXPECT_QP_STATE_SOON(b, IBV_QPS_ERR);
}

/*
 * A one-packet WRITE whose second SGE has a bad lkey: the build checks
 * every SGE before the packet leaves, so nothing of it reaches B.
 */
TEST_F(rc, write_second_sge_bad_lkey)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg[2] = { sge(a, 0, 64), sge(a, 8192, 64) };
	static const uint8_t zero[128];
	struct ibv_wc wc;

	connect_default(_metadata, self);
	pattern(a->buf, 64, 47);
	memset(b->buf + DST_OFF, 0, sizeof(zero));
	sg[1].lkey ^= 0x7700;
	ASSERT_EQ(0, post_wr(a, 5, IBV_WR_RDMA_WRITE, sg, 2, (uintptr_t)(b->buf + DST_OFF),
			     b->mr->rkey, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 5, IBV_WC_LOC_PROT_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
	usleep(100 * 1000);
	EXPECT_EQ(-1, first_diff(zero, b->buf + DST_OFF, sizeof(zero)))
		TH_LOG("a byte of the WRITE reached B");
	EXPECT_QP_STATE(b, IBV_QPS_RTS);
}

/* A local SGE that runs past the end of its MR: LOC_PROT_ERR too. */
TEST_F(rc, write_local_sge_past_mr_end)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg = sge(a, BUF_SZ - 10, 20);
	struct ibv_wc wc;

	connect_default(_metadata, self);
	ASSERT_EQ(0, post_wr(a, 13, IBV_WR_RDMA_WRITE, &sg, 1, (uintptr_t)(b->buf + DST_OFF),
			     b->mr->rkey, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 13, IBV_WC_LOC_PROT_ERR);
	EXPECT_EQ(0, b->buf[DST_OFF]);
}

/* The READ's local target SGE has a bad lkey: LOC_PROT_ERR. */
TEST_F(rc, read_bad_lkey)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg = sge(a, 0, 100);
	struct ibv_wc wc;

	connect_default(_metadata, self);
	sg.lkey ^= 0x7700;
	ASSERT_EQ(0, post_wr(a, 14, IBV_WR_RDMA_READ, &sg, 1, (uintptr_t)(b->buf + DST_OFF),
			     b->mr->rkey, 0, IBV_SEND_SIGNALED));
	EXPECT_WC(a->cq, wc, 14, IBV_WC_LOC_PROT_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
}

/*
 * The responder's receive WQE has a bad lkey: LOC_PROT_ERR on B's receive,
 * and the requester learns of it by a Remote Operational Error NAK.
 */
TEST_F(rc, receive_bad_lkey)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_sge sg = sge(b, DST_OFF, 4096);
	struct ibv_wc wc;

	connect_default(_metadata, self);
	sg.lkey ^= 0x7700;
	ASSERT_EQ(0, post_recv_sges(b, 21, &sg, 1));
	ASSERT_EQ(0, post_simple(a, 15, IBV_WR_SEND, 0, 100, b, 0));
	EXPECT_WC(a->cq, wc, 15, IBV_WC_REM_OP_ERR);
	EXPECT_WC(b->cq, wc, 21, IBV_WC_LOC_PROT_ERR);
	EXPECT_QP_STATE_SOON(b, IBV_QPS_ERR);
}

/* ---- errors: transport retries --------------------------------------------- */

/* The peer QP is destroyed: no ACK ever comes, retry_cnt 1 runs out. */
TEST_F(rc, retry_exceeded_peer_destroyed)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_wc wc;

	c.retry_cnt = 1;
	c.timeout = 10;	/* 4.2 ms */
	connect_pair(_metadata, self, &c);
	ASSERT_EQ(0, ibv_destroy_qp(b->qp));
	b->qp = NULL;
	ASSERT_EQ(0, post_simple(a, 16, IBV_WR_SEND, 0, 100, b, 0));
	ASSERT_EQ(0, post_simple(a, 17, IBV_WR_RDMA_WRITE, 0, 100, b, DST_OFF));
	EXPECT_WC(a->cq, wc, 16, IBV_WC_RETRY_EXC_ERR);
	EXPECT_WC(a->cq, wc, 17, IBV_WC_WR_FLUSH_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
}

/*
 * An R_Key error whose NAK the path drops (-N: rc.sh has a packet filter
 * drop every remote access NAK).  The responder's QP went to ERR as it
 * sent the NAK (a remote access error is fatal to the responder's QP, as
 * write_bad_rkey checks), so it answers none of the requester's resends,
 * and the requester runs out of retries: RETRY_EXC_ERR after retry_cnt
 * timeouts, not a wait without end and not an answer from a QP in the
 * error state.  Why a ULP on a lossy path can see either status for the
 * same fault (rds.sh).
 */
static void bad_rkey_nak_lost(struct __test_metadata *_metadata, FIXTURE_DATA(rc) *self,
			      enum ibv_wr_opcode op)
{
	struct conn c = conn_defaults();

	if (!opt_naks_dropped)
		SKIP(return, "needs -N, a path that drops remote access NAKs (rc.sh sets one)");
	c.retry_cnt = 2;
	c.timeout = 10;	/* 4.2 ms */
	bad_rkey(_metadata, self, &c, op, 2000, IBV_WC_RETRY_EXC_ERR);
}

/*
 * RTS -> RTS modifies (access flags) every 2 ms while the requester times
 * out against a destroyed peer: they do not restore its retry budget, so
 * the SEND still fails with RETRY_EXC_ERR after retry_cnt (1) resends.
 * Each modify used to refill the budget, keeping the QP retrying as long
 * as they came.
 */
TEST_F(rc, rts_to_rts_keeps_the_retry_budget)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_qp_attr x;
	uint64_t end;
	struct ibv_wc wc;
	int n = 0, got = 0;

	c.retry_cnt = 1;
	c.timeout = 10;	/* 4.2 ms; at least two jiffies */
	connect_pair(_metadata, self, &c);
	ASSERT_EQ(0, ibv_destroy_qp(b->qp));
	b->qp = NULL;
	ASSERT_EQ(0, post_simple(a, 16, IBV_WR_SEND, 0, 100, b, 0));
	end = now_ms() + 5000;
	while (!(got = poll_wc(a->cq, &wc, 0))) {
		ASSERT_LT(now_ms(), end) TH_LOG("still retrying after %d RTS -> RTS modifies", n);
		memset(&x, 0, sizeof(x));
		x.qp_access_flags = n++ & 1 ? ALL_ACCESS : IBV_ACCESS_LOCAL_WRITE;
		if (to_state(a, IBV_QPS_RTS, IBV_QP_ACCESS_FLAGS, &x)) {
			/* In ERR already: the completion is on its way. */
			got = poll_wc(a->cq, &wc, WC_WAIT_MS);
			break;
		}
		usleep(2000);
	}
	ASSERT_EQ(1, got);
	EXPECT_EQ(16, wc.wr_id);
	EXPECT_EQ(IBV_WC_RETRY_EXC_ERR, wc.status) TH_LOG("%s", ibv_wc_status_str(wc.status));
	TH_LOG("RETRY_EXC_ERR after %d RTS -> RTS modifies", n);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
}

TEST_F(rc, write_bad_rkey_nak_lost)
{
	bad_rkey_nak_lost(_metadata, self, IBV_WR_RDMA_WRITE);
}

TEST_F(rc, read_bad_rkey_nak_lost)
{
	bad_rkey_nak_lost(_metadata, self, IBV_WR_RDMA_READ);
}

/* A QP pointed at a QPN nobody has: RETRY_EXC_ERR for a READ as well. */
TEST_F(rc, retry_exceeded_no_such_qpn)
{
	struct side *a = self->a, *b = self->b;
	struct conn c = conn_defaults();
	struct ibv_wc wc;

	c.retry_cnt = 2;
	c.timeout = 10;
	c.a_dest_qpn = 0xfffff0;
	connect_pair(_metadata, self, &c);
	ASSERT_EQ(0, post_simple(a, 18, IBV_WR_RDMA_READ, 0, 100, b, DST_OFF));
	EXPECT_WC(a->cq, wc, 18, IBV_WC_RETRY_EXC_ERR);
	EXPECT_QP_STATE_SOON(a, IBV_QPS_ERR);
	/* B was never addressed. */
	EXPECT_NO_WC(b->cq);
	EXPECT_QP_STATE(b, IBV_QPS_RTS);
}

/* ---- shared receive queues --------------------------------------------------- */

#define SRQ_QPS		3	/* QP pairs whose B sides share one SRQ */
#define SRQ_MSGS	4	/* SENDs from each A QP */
#define SRQ_SLOT	8192u	/* one receive buffer / source message each */
#define SRQ_MSG_LEN	5000u	/* > MTU 4096: two or more packets */

static struct ibv_srq *srq_create(struct side *s, uint32_t max_wr)
{
	struct ibv_srq_init_attr ia = {
		.attr = { .max_wr = max_wr, .max_sge = 2 },
	};

	return ibv_create_srq(s->pd, &ia);
}

/* A QP of S receiving through SRQ (NULL: a QP with its own RQ). */
static struct ibv_qp *srq_qp(struct side *s, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.srq = srq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16,
			 .max_send_sge = 1, .max_recv_sge = srq ? 0 : 1 },
	};

	return ibv_create_qp(s->pd, &ia);
}

/* Connect QA of side A with QB of side B (both to RTS). */
static int srq_connect(struct side *a, struct ibv_qp *qa, struct side *b, struct ibv_qp *qb)
{
	enum ibv_mtu mtu = a->port.active_mtu < b->port.active_mtu ?
			   a->port.active_mtu : b->port.active_mtu;
	struct conn c = conn_defaults();
	struct ibv_qp *sa = a->qp, *sb = b->qp;
	int err;

	if (opt_mtu)
		mtu = opt_mtu;
	a->qp = qa;
	b->qp = qb;
	err = qp_connect(a, &c, c.access[0], qb->qp_num, &b->gid, mtu, c.rnr_retry);
	if (!err)
		err = qp_connect(b, &c, c.access[1], qa->qp_num, &a->gid, mtu, 7);
	a->qp = sa;
	b->qp = sb;
	return err;
}

static int srq_post(struct ibv_srq *srq, struct side *s, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sg = sge(s, off, len);
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* The next async event within MS: its type, or -1; *SRQ its SRQ. */
static int srq_event(struct side *s, int ms, struct ibv_srq **srq)
{
	struct ibv_async_event ev;
	int type = next_async_event(s, ms, &ev);

	if (type >= 0)
		*srq = ev.element.srq;
	return type;
}

/* query_srq reports what create and modify set. */
TEST_F(rc, srq_create_modify_query)
{
	struct side *b = self->b;
	struct ibv_srq_attr at = { .srq_limit = 7 };
	struct ibv_srq *srq = srq_create(b, 32);

	ASSERT_NE(NULL, srq) TH_LOG("ibv_create_srq: %s", strerror(errno));
	memset(&at, 0xff, sizeof(at));
	ASSERT_EQ(0, ibv_query_srq(srq, &at));
	EXPECT_LE(32, at.max_wr);
	EXPECT_LE(2, at.max_sge);
	EXPECT_EQ(0, at.srq_limit);
	at.srq_limit = 7;
	ASSERT_EQ(0, ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT));
	memset(&at, 0, sizeof(at));
	ASSERT_EQ(0, ibv_query_srq(srq, &at));
	EXPECT_EQ(7, at.srq_limit);
	at.srq_limit = at.max_wr + 1;
	EXPECT_NE(0, ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT));
	ASSERT_EQ(0, ibv_query_srq(srq, &at));
	EXPECT_EQ(7, at.srq_limit);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/*
 * ibv_create_srq's srq_limit is documented as irrelevant, and programs
 * leave garbage in it: a limit above max_wr is ignored, not refused.
 */
TEST_F(rc, srq_create_ignores_a_limit_above_max_wr)
{
	struct ibv_srq_init_attr ia = {
		.attr = { .max_wr = 16, .max_sge = 1, .srq_limit = 100 },
	};
	struct ibv_srq_attr at;
	struct ibv_srq *srq = ibv_create_srq(self->b->pd, &ia);

	ASSERT_NE(NULL, srq) TH_LOG("ibv_create_srq (srq_limit 100): %s", strerror(errno));
	ASSERT_EQ(0, ibv_query_srq(srq, &at));
	EXPECT_EQ(0, at.srq_limit);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/*
 * SRQ_QPS QPs of B share one SRQ; each A QP sends SRQ_MSGS messages.  The
 * SRQ's WQEs are consumed in arrival order across the QPs, each QP's own
 * messages in order: every receive buffer (named by wr_id) must hold the
 * next message of the QP its completion names, byte for byte.
 */
TEST_F_TIMEOUT(rc, srq_shared_by_qps, 60)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_qp *qa[SRQ_QPS] = {}, *qb[SRQ_QPS] = {};
	unsigned int next[SRQ_QPS] = {}, i, j, k, n = SRQ_QPS * SRQ_MSGS;
	struct ibv_srq *srq = srq_create(b, 64);
	struct ibv_wc wc;

	ASSERT_NE(NULL, srq) TH_LOG("ibv_create_srq: %s", strerror(errno));
	for (j = 0; j < SRQ_QPS; j++) {
		qa[j] = srq_qp(a, NULL);
		qb[j] = srq_qp(b, srq);
		ASSERT_TRUE(qa[j] && qb[j]) TH_LOG("ibv_create_qp: %s", strerror(errno));
		ASSERT_EQ(0, srq_connect(a, qa[j], b, qb[j]));
	}
	memset(b->buf + DST_OFF, 0, n * SRQ_SLOT);
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, srq_post(srq, b, 1000 + i, DST_OFF + i * SRQ_SLOT, SRQ_SLOT));
	for (k = 0; k < SRQ_MSGS; k++) {
		for (j = 0; j < SRQ_QPS; j++) {
			uint32_t off = SRC_OFF + (j * SRQ_MSGS + k) * SRQ_SLOT;
			struct ibv_sge sg = sge(a, off, SRQ_MSG_LEN);
			struct ibv_send_wr wr = {
				.wr_id = j * SRQ_MSGS + k, .sg_list = &sg, .num_sge = 1,
				.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			}, *bad;

			pattern(a->buf + off, SRQ_MSG_LEN, 17 * j + k);
			ASSERT_EQ(0, ibv_post_send(qa[j], &wr, &bad));
		}
	}
	for (i = 0; i < n; i++) {
		ASSERT_EQ(1, poll_wc(a->cq, &wc, WC_WAIT_MS)) TH_LOG("send %u: no completion", i);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("send wr_id %llu: %s",
			(unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
	}
	for (i = 0; i < n; i++) {
		uint32_t slot;

		ASSERT_EQ(1, poll_wc(b->cq, &wc, WC_WAIT_MS)) TH_LOG("receive %u: no completion", i);
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("receive: %s",
			ibv_wc_status_str(wc.status));
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(SRQ_MSG_LEN, wc.byte_len);
		for (j = 0; j < SRQ_QPS && qb[j]->qp_num != wc.qp_num; j++)
			;
		ASSERT_LT(j, SRQ_QPS) TH_LOG("completion for QPN %u, not one of B's", wc.qp_num);
		ASSERT_LE(1000, wc.wr_id);
		slot = wc.wr_id - 1000;
		ASSERT_LT(slot, n);
		k = next[j]++;
		ASSERT_LT(k, SRQ_MSGS) TH_LOG("QP %u: more than %d receives", wc.qp_num, SRQ_MSGS);
		EXPECT_SAME_BYTES(a, SRC_OFF + (j * SRQ_MSGS + k) * SRQ_SLOT,
				  b, DST_OFF + slot * SRQ_SLOT, SRQ_MSG_LEN);
	}
	EXPECT_NO_WC(b->cq);
	for (j = 0; j < SRQ_QPS; j++) {
		EXPECT_EQ(SRQ_MSGS, next[j]);
		ibv_destroy_qp(qb[j]);
		ibv_destroy_qp(qa[j]);
	}
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/* Send one message on QA; both completions must succeed. */
static void srq_send1(struct __test_metadata *_metadata, struct side *a, struct ibv_qp *qa,
		      struct side *b, uint64_t id)
{
	struct ibv_sge sg = sge(a, SRC_OFF, 64);
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	ASSERT_EQ(0, ibv_post_send(qa, &wr, &bad));
	EXPECT_WC(a->cq, wc, id, IBV_WC_SUCCESS);
	ASSERT_EQ(1, poll_wc(b->cq, &wc, WC_WAIT_MS)) TH_LOG("send %llu: no receive",
							     (unsigned long long)id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
}

/*
 * IBV_EVENT_SRQ_LIMIT_REACHED fires once when the SRQ's WQE count drops
 * below srq_limit, then the limit is disarmed (query says 0) until
 * modify_srq sets it again.
 */
TEST_F_TIMEOUT(rc, srq_limit_event_once_and_rearm, 60)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_srq_attr at = { .srq_limit = 4 };
	struct ibv_srq *srq = srq_create(b, 16), *esrq = NULL;
	struct ibv_qp *qa, *qb;
	uint64_t id = 1;
	int i;

	ASSERT_NE(NULL, srq) TH_LOG("ibv_create_srq: %s", strerror(errno));
	qa = srq_qp(a, NULL);
	qb = srq_qp(b, srq);
	ASSERT_TRUE(qa && qb) TH_LOG("ibv_create_qp: %s", strerror(errno));
	ASSERT_EQ(0, srq_connect(a, qa, b, qb));
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, srq_post(srq, b, 100 + i, DST_OFF + i * 4096, 4096));
	ASSERT_EQ(0, ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT));

	/* 8 -> 4 WQEs: not below 4 yet. */
	for (i = 0; i < 4; i++)
		srq_send1(_metadata, a, qa, b, id++);
	EXPECT_EQ(-1, srq_event(b, QUIET_MS, &esrq)) TH_LOG("event at 4 WQEs, limit 4");
	/* 4 -> 3: the event, once. */
	srq_send1(_metadata, a, qa, b, id++);
	EXPECT_EQ(IBV_EVENT_SRQ_LIMIT_REACHED, srq_event(b, WC_WAIT_MS, &esrq));
	EXPECT_EQ(srq, esrq);
	ASSERT_EQ(0, ibv_query_srq(srq, &at));
	EXPECT_EQ(0, at.srq_limit) TH_LOG("the limit stays armed after its event");
	srq_send1(_metadata, a, qa, b, id++);
	EXPECT_EQ(-1, srq_event(b, QUIET_MS, &esrq)) TH_LOG("a second event without re-arming");

	/* 2 WQEs left; refill to 8, re-arm at 4, consume 5: one event again. */
	for (i = 0; i < 6; i++)
		ASSERT_EQ(0, srq_post(srq, b, 200 + i, DST_OFF + i * 4096, 4096));
	at.srq_limit = 4;
	ASSERT_EQ(0, ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT));
	for (i = 0; i < 4; i++)
		srq_send1(_metadata, a, qa, b, id++);
	EXPECT_EQ(-1, srq_event(b, QUIET_MS, &esrq)) TH_LOG("re-armed: event at 4 WQEs");
	srq_send1(_metadata, a, qa, b, id++);
	EXPECT_EQ(IBV_EVENT_SRQ_LIMIT_REACHED, srq_event(b, WC_WAIT_MS, &esrq))
		TH_LOG("no event after re-arming");
	srq_send1(_metadata, a, qa, b, id++);
	EXPECT_EQ(-1, srq_event(b, QUIET_MS, &esrq));

	ibv_destroy_qp(qb);
	ibv_destroy_qp(qa);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/*
 * ATOMIC WRITE through the extended API (ibv_wr_atomic_write), on a QP
 * created for it: the one rdma_rxe's provider implements, so rc.sh runs
 * this one with rdma_rxe as the requester.
 */
TEST_F(rc, atomic_write_ex)
{
	struct side *a = self->a, *b = self->b;
	uint64_t *remote = (uint64_t *)(b->buf + DST_OFF + 512);
	const uint64_t val = 0x1020304050607080ull;
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = a->cq,
		.recv_cq = a->cq,
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = a->pd,
		.send_ops_flags = IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	struct ibv_qp *qa, *qb;
	struct ibv_qp_ex *x;
	struct ibv_wc wc;

	SKIP_NO_ATOMIC_WRITE(a, b);
	qa = ibv_create_qp_ex(a->ctx, &ia);
	ASSERT_NE(NULL, qa) TH_LOG("ibv_create_qp_ex with ATOMIC_WRITE: %s", strerror(errno));
	qb = srq_qp(b, NULL);
	ASSERT_NE(NULL, qb) TH_LOG("ibv_create_qp: %s", strerror(errno));
	ASSERT_EQ(0, srq_connect(a, qa, b, qb));
	memset(remote - 1, 0x5a, 3 * sizeof(*remote));

	x = ibv_qp_to_qp_ex(qa);
	ibv_wr_start(x);
	x->wr_id = 50;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, b->mr->rkey, (uintptr_t)remote, &val);
	ASSERT_EQ(0, ibv_wr_complete(x));
	EXPECT_WC(a->cq, wc, 50, IBV_WC_SUCCESS);
	EXPECT_EQ(IBV_WC_ATOMIC_WRITE, wc.opcode);
	EXPECT_EQ(val, *remote);
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aull, *(remote - 1));
	EXPECT_EQ(0x5a5a5a5a5a5a5a5aull, *(remote + 1));
	EXPECT_NO_WC(b->cq);
	ibv_destroy_qp(qb);
	ibv_destroy_qp(qa);
}

/* Move QP to the error state (from any state). */
static int qp_to_err(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

/*
 * IBV_EVENT_QP_LAST_WQE_REACHED: a QP of an SRQ that enters the error
 * state raises it once (the kernel's ib_drain_qp() waits for it since
 * Linux 6.11); the SRQ's WQEs stay for its other QPs; after RESET and
 * INIT the next error raises it again; a QP with its own RQ never does.
 */
TEST_F_TIMEOUT(rc, srq_last_wqe_reached, 60)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_srq *srq = srq_create(b, 16);
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_qp_attr init = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qa1, *qa2, *qb1, *qb2, *evqp = NULL;
	struct ibv_wc wc;
	int i, ev;

	ASSERT_NE(NULL, srq) TH_LOG("ibv_create_srq: %s", strerror(errno));
	qa1 = srq_qp(a, NULL);
	qa2 = srq_qp(a, NULL);
	qb1 = srq_qp(b, srq);
	qb2 = srq_qp(b, srq);
	ASSERT_TRUE(qa1 && qa2 && qb1 && qb2) TH_LOG("ibv_create_qp: %s", strerror(errno));
	ASSERT_EQ(0, srq_connect(a, qa1, b, qb1));
	ASSERT_EQ(0, srq_connect(a, qa2, b, qb2));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, srq_post(srq, b, 300 + i, DST_OFF + i * 4096, 4096));
	srq_send1(_metadata, a, qa1, b, 1);

	ASSERT_EQ(0, qp_to_err(qb1));
	ev = async_event(b, WC_WAIT_MS, &evqp);
	EXPECT_EQ(IBV_EVENT_QP_LAST_WQE_REACHED, ev) TH_LOG("async event %d (%s)", ev,
							    ev < 0 ? "none" : ibv_event_type_str(ev));
	EXPECT_EQ(qb1, evqp);
	/* The three WQEs left are the SRQ's, not the QP's: nothing flushed. */
	EXPECT_NO_WC(b->cq);
	ASSERT_EQ(0, qp_to_err(qb1));
	EXPECT_EQ(-1, async_event(b, QUIET_MS, &evqp)) TH_LOG("a second event in one error state");
	srq_send1(_metadata, a, qa2, b, 2);

	/* Each entry into the error state is one event (RESET -> INIT -> ERR). */
	ASSERT_EQ(0, ibv_modify_qp(qb1, &reset, IBV_QP_STATE));
	ASSERT_EQ(0, ibv_modify_qp(qb1, &init, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	ASSERT_EQ(0, qp_to_err(qb1));
	ev = async_event(b, WC_WAIT_MS, &evqp);
	EXPECT_EQ(IBV_EVENT_QP_LAST_WQE_REACHED, ev) TH_LOG("INIT -> ERR after RESET: %d", ev);
	EXPECT_EQ(qb1, evqp);

	/* A QP with its own receive queue: its receives flush, no event. */
	ASSERT_EQ(0, qp_to_err(qa2));
	EXPECT_EQ(-1, async_event(a, QUIET_MS, &evqp)) TH_LOG("event for a QP without SRQ");
	EXPECT_EQ(0, poll_wc(a->cq, &wc, 0)) TH_LOG("wr_id %llu", (unsigned long long)wc.wr_id);

	ibv_destroy_qp(qb2);
	ibv_destroy_qp(qb1);
	ibv_destroy_qp(qa2);
	ibv_destroy_qp(qa1);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/*
 * A QP on an SRQ took a WQE for a SEND whose last packet never comes (the
 * path drops every RC SEND LAST) and is moved from RTS to RESET: the WQE
 * has left the SRQ, so it comes back as a flush completion (RESET forgets
 * only the QP's own receives), and the SRQ's next WQE serves the next
 * message.  The WQE used to be dropped without a completion, its buffer
 * lost to the program.
 */
TEST_F_TIMEOUT(rc, srq_wqe_held_mid_message_flushed_at_reset, 60)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct ibv_srq_attr at = { .srq_limit = 2 };
	struct ibv_qp *qa, *qb, *qa2, *qb2;
	struct ibv_srq *srq, *esrq = NULL;
	struct ibv_sge sg = sge(a, SRC_OFF, 5000);
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_wc wc;

	if (!opt_send_last_dropped)
		SKIP(return, "needs -L, a path that drops RC SEND LAST packets (rc.sh sets one)");
	srq = srq_create(b, 16);
	ASSERT_NE(NULL, srq) TH_LOG("ibv_create_srq: %s", strerror(errno));
	qa = srq_qp(a, NULL);
	qb = srq_qp(b, srq);
	ASSERT_TRUE(qa && qb) TH_LOG("ibv_create_qp: %s", strerror(errno));
	ASSERT_EQ(0, srq_connect(a, qa, b, qb));
	ASSERT_EQ(0, srq_post(srq, b, 500, DST_OFF, 8192));
	ASSERT_EQ(0, srq_post(srq, b, 501, DST_OFF + 8192, 8192));
	ASSERT_EQ(0, ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT));

	/* 5000 bytes are two packets or more at any path MTU: FIRST ... LAST. */
	ASSERT_EQ(0, ibv_post_send(qa, &wr, &bad));
	/* The SEND FIRST took WQE 500: one WQE left, below the limit. */
	ASSERT_EQ(IBV_EVENT_SRQ_LIMIT_REACHED, srq_event(b, WC_WAIT_MS, &esrq))
		TH_LOG("the SEND FIRST took no SRQ WQE");
	EXPECT_NO_WC(b->cq);

	ASSERT_EQ(0, ibv_modify_qp(qb, &reset, IBV_QP_STATE));
	ASSERT_EQ(1, poll_wc(b->cq, &wc, WC_WAIT_MS))
		TH_LOG("no completion for the SRQ WQE the QP held at RESET");
	EXPECT_EQ(500, wc.wr_id);
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status) TH_LOG("status %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(qb->qp_num, wc.qp_num);
	EXPECT_NO_WC(b->cq);
	/* Its resends go to a QP in RESET; its completion goes with it. */
	ibv_destroy_qp(qa);

	/* WQE 501 is still the SRQ's: a SEND ONLY on a new pair lands in it. */
	qa2 = srq_qp(a, NULL);
	qb2 = srq_qp(b, srq);
	ASSERT_TRUE(qa2 && qb2) TH_LOG("ibv_create_qp: %s", strerror(errno));
	ASSERT_EQ(0, srq_connect(a, qa2, b, qb2));
	pattern(a->buf + SRC_OFF, 64, 501);
	memset(b->buf + DST_OFF + 8192, 0, 65);
	sg.length = 64;
	wr.wr_id = 2;
	ASSERT_EQ(0, ibv_post_send(qa2, &wr, &bad));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	ASSERT_EQ(1, poll_wc(b->cq, &wc, WC_WAIT_MS)) TH_LOG("the SEND ONLY: no receive");
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("status %s", ibv_wc_status_str(wc.status));
	EXPECT_EQ(501, wc.wr_id);
	EXPECT_EQ(64, wc.byte_len);
	EXPECT_EQ(qb2->qp_num, wc.qp_num);
	EXPECT_SAME_BYTES(a, SRC_OFF, b, DST_OFF + 8192, 64);
	EXPECT_EQ(0, b->buf[DST_OFF + 8192 + 64]);

	ibv_destroy_qp(qb2);
	ibv_destroy_qp(qa2);
	ibv_destroy_qp(qb);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/* Is @name one of the comma-separated test names in @list? */
static bool test_selected(const char *name, const char *list)
{
	size_t n = strlen(name);
	const char *p;

	for (p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

/* -t: keep only the tests named in @list in the harness's lists. */
static int keep_tests(const char *list)
{
	struct __fixture_metadata *f;
	int kept = 0;

	for (f = __fixture_list; f; f = f->next) {
		struct __test_metadata *t, *next, *head = NULL, *tail = NULL;

		for (t = f->tests; t; t = next) {
			next = t->next;
			if (!test_selected(t->name, list))
				continue;
			t->next = NULL;
			t->prev = tail;
			if (tail)
				tail->next = t;
			else
				head = t;
			tail = t;
			kept++;
		}
		/* The harness's lists: only the head's prev is circular. */
		if (head)
			head->prev = tail;
		f->tests = head;
	}
	return kept;
}

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s -d DEV -g GIDX [-D DEV2 -G GIDX2] [-m MTU] [-t TESTS] [-N] [-L]\n"
		"  A QP on DEV (GID index GIDX) is the requester; the responder is a\n"
		"  second QP on DEV, or on DEV2 (GID index GIDX2) if given.\n"
		"  -m: path MTU 256, 512, 1024, 2048 or 4096 (default: the ports')\n"
		"  -t NAME[,NAME...]: run only these tests\n"
		"  -N: the path drops remote access NAKs: run the *_nak_lost tests\n"
		"      (which skip without it; the other R_Key tests then fail)\n"
		"  -L: the path drops RC SEND LAST packets: run the test that needs\n"
		"      it (srq_wqe_held_mid_message_flushed_at_reset)\n",
		prog);
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "d:g:D:G:m:t:NLh")) != -1) {
		switch (opt) {
		case 't':
			if (!keep_tests(optarg)) {
				fprintf(stderr, "%s: -t %s: no such test\n", argv[0], optarg);
				return 2;
			}
			break;
		case 'N':
			opt_naks_dropped = true;
			break;
		case 'L':
			opt_send_last_dropped = true;
			break;
		case 'm':
			switch (atoi(optarg)) {
			case 256: opt_mtu = IBV_MTU_256; break;
			case 512: opt_mtu = IBV_MTU_512; break;
			case 1024: opt_mtu = IBV_MTU_1024; break;
			case 2048: opt_mtu = IBV_MTU_2048; break;
			case 4096: opt_mtu = IBV_MTU_4096; break;
			default:
				fprintf(stderr, "%s: -m %s: not an IB MTU\n", argv[0], optarg);
				return 2;
			}
			break;
		default:
			if (device_opt(opt, optarg))
				break;
			usage(argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	device_opts_done();
	return test_harness_run(argc, argv);
}
