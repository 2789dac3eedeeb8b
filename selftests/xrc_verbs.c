// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrc_verbs: XRC (IBA 9.3.5, 10.2.5), checked byte for byte and status for
 * status, what ibv_xsrq_pingpong does not look at.
 *
 *   xrc_verbs -d DEV -g GIDX [-D DEV2 -G GIDX2]
 *
 * Side A has the XRC send QP (initiator) on DEV; side B the XRC domain,
 * its XRC SRQs (each with a CQ of its own) and the XRC receive QP (target)
 * on DEV2 (default: the same device).  Checked: sends land in the SRQ
 * their remote SRQ number names and complete on that SRQ's CQ with the
 * target QP's number and the sender's; RDMA WRITE, READ and atomics
 * through the XRC send QP, against memory of the SRQ's PD; an SRQ number
 * that names no SRQ, an SRQ of another domain or a destroyed one: remote
 * invalid request at the sender, the target QP in error, and the SRQ's
 * receives untouched (a new pair then gets them); ibv_open_qp; the
 * domain cannot go while it has users.
 * Each test is one forked child (kselftest harness); the output is KTAP.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define BUF_SZ		(1u << 20)
#define WC_WAIT_MS	10000
#define QUIET_MS	300
#define NO_SRQN		0xfffff0u	/* a number no SRQ has */
#define ALL_ACCESS	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

#include "verbs_test.h"


FIXTURE(xrc) {
	struct side s[2];
	struct side *a, *b;		/* a: initiator side, b: target side */
	struct ibv_xrcd *xrcd;
	struct ibv_cq *scq[2];		/* one CQ per SRQ */
	struct ibv_srq *srq[2];
	uint32_t srqn[2];
	struct ibv_qp *ini, *tgt;
};

static struct ibv_xrcd *xrcd_open(struct ibv_context *ctx)
{
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,		/* a domain of this process only */
		.oflags = O_CREAT,
	};

	return ibv_open_xrcd(ctx, &xa);
}

static struct ibv_srq *xsrq_create(struct side *s, struct ibv_xrcd *xrcd,
				   struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 64, .max_sge = 2 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = s->pd,
		.xrcd = xrcd,
		.cq = cq,
	};

	return ibv_create_srq_ex(s->ctx, &sa);
}

static struct ibv_qp *tgt_create(struct side *s, struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return ibv_create_qp_ex(s->ctx, &ia);
}

static struct ibv_qp *ini_create(struct side *s)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = s->cq,
		.recv_cq = s->cq,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 64, .max_send_sge = 2 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = s->pd,
	};

	return ibv_create_qp_ex(s->ctx, &ia);
}

static void ah_set(struct ibv_ah_attr *ah, struct side *from, struct side *to)
{
	ah->is_global = 1;
	ah->grh.dgid = to->gid;
	ah->grh.sgid_index = from->gidx;
	ah->grh.hop_limit = 64;
	ah->port_num = 1;
}

/*
 * Connect target @tgt on @b (to RTR, as far as a receive-only QP needs)
 * and initiator @ini on @a (to RTS); @rnr_retry for the initiator.
 */
static void xrc_connect(struct __test_metadata *_metadata, struct side *a,
			struct ibv_qp *ini, struct side *b, struct ibv_qp *tgt,
			int rnr_retry)
{
	enum ibv_mtu mtu = a->port.active_mtu < b->port.active_mtu ?
			   a->port.active_mtu : b->port.active_mtu;
	struct ibv_qp_attr t = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	struct ibv_qp_attr i = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
	};
	const int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			 IBV_QP_ACCESS_FLAGS;

	ASSERT_EQ(0, ibv_modify_qp(tgt, &t, init)) TH_LOG("TGT INIT: %s", strerror(errno));
	ASSERT_EQ(0, ibv_modify_qp(ini, &i, init)) TH_LOG("INI INIT: %s", strerror(errno));

	memset(&t, 0, sizeof(t));
	t.qp_state = IBV_QPS_RTR;
	t.path_mtu = mtu;
	t.dest_qp_num = ini->qp_num;
	t.rq_psn = 0x123;
	t.max_dest_rd_atomic = 4;
	t.min_rnr_timer = 1;
	ah_set(&t.ah_attr, b, a);
	ASSERT_EQ(0, ibv_modify_qp(tgt, &t, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER))
		TH_LOG("TGT RTR: %s", strerror(errno));

	memset(&i, 0, sizeof(i));
	i.qp_state = IBV_QPS_RTR;
	i.path_mtu = mtu;
	i.dest_qp_num = tgt->qp_num;
	i.rq_psn = 0x456;
	ah_set(&i.ah_attr, a, b);
	ASSERT_EQ(0, ibv_modify_qp(ini, &i, IBV_QP_STATE | IBV_QP_AV |
				   IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				   IBV_QP_RQ_PSN))
		TH_LOG("INI RTR: %s", strerror(errno));
	i.qp_state = IBV_QPS_RTS;
	i.sq_psn = 0x123;
	i.timeout = 14;
	i.retry_cnt = 7;
	i.rnr_retry = rnr_retry;
	i.max_rd_atomic = 4;
	ASSERT_EQ(0, ibv_modify_qp(ini, &i, IBV_QP_STATE | IBV_QP_SQ_PSN |
				   IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		TH_LOG("INI RTS: %s", strerror(errno));
}

FIXTURE_SETUP(xrc)
{
	struct side *b;
	int i;

	self->a = &self->s[0];
	self->b = &self->s[1];
	b = self->b;
	sides_open(_metadata, self->a, b, ALL_ACCESS);
	ASSERT_TRUE(b->dev.device_cap_flags & IBV_DEVICE_XRC)
		TH_LOG("the device does not advertise IBV_DEVICE_XRC");

	self->xrcd = xrcd_open(b->ctx);
	ASSERT_NE(NULL, self->xrcd) TH_LOG("ibv_open_xrcd: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		self->scq[i] = ibv_create_cq(b->ctx, 64, NULL, NULL, 0);
		ASSERT_NE(NULL, self->scq[i]);
		self->srq[i] = xsrq_create(b, self->xrcd, self->scq[i]);
		ASSERT_NE(NULL, self->srq[i]) TH_LOG("XRC SRQ: %s", strerror(errno));
		ASSERT_EQ(0, ibv_get_srq_num(self->srq[i], &self->srqn[i]));
	}
	ASSERT_NE(self->srqn[0], self->srqn[1]);
	self->tgt = tgt_create(b, self->xrcd);
	ASSERT_NE(NULL, self->tgt) TH_LOG("XRC_RECV QP: %s", strerror(errno));
	self->ini = ini_create(self->a);
	ASSERT_NE(NULL, self->ini) TH_LOG("XRC_SEND QP: %s", strerror(errno));
	xrc_connect(_metadata, self->a, self->ini, b, self->tgt, 7);
}

FIXTURE_TEARDOWN(xrc)
{
	int i;

	/* Users first, the domain last (it refuses to go before them). */
	if (self->ini)
		ibv_destroy_qp(self->ini);
	if (self->tgt)
		ibv_destroy_qp(self->tgt);
	for (i = 0; i < 2; i++) {
		if (self->srq[i])
			ibv_destroy_srq(self->srq[i]);
		if (self->scq[i])
			ibv_destroy_cq(self->scq[i]);
	}
	if (self->xrcd)
		ibv_close_xrcd(self->xrcd);
	side_close(self->a);
	side_close(self->b);
}

static int post_srq(struct side *b, struct ibv_srq *srq, uint64_t id,
		    size_t off, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)b->buf + off, .length = len, .lkey = b->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* Post one WR on the initiator, addressed to XRC SRQ @srqn. */
static int post_xrc(struct ibv_qp *ini, struct side *a, enum ibv_wr_opcode op,
		    uint64_t id, uint32_t srqn, size_t off, uint32_t len,
		    uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf + off, .length = len, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = op,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htobe32(0x5a000000u | (uint32_t)id);
	return ibv_post_send(ini, &wr, &bad);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

/*
 * Messages of 1 byte to 3 packets go, alternately, to SRQ 0 and SRQ 1;
 * each lands in a receive of the SRQ it names, in order, completes on that
 * SRQ's CQ with the target QP's number and the initiator's as source, and
 * carries its bytes exactly.
 */
TEST_F(xrc, sends_steered_by_srq_number)
{
	const uint32_t lens[] = { 1, 100, 4096, 3 * 1024 + 17, 8192, 12000 };
	const unsigned int n = sizeof(lens) / sizeof(lens[0]);
	struct side *a = self->a, *b = self->b;
	const size_t slot = 16384;
	struct ibv_wc wc;
	unsigned int i;

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, post_srq(b, self->srq[i % 2], 100 + i, i * slot, slot));
	for (i = 0; i < n; i++) {
		pattern(a->buf + i * slot, lens[i], i + 1);
		ASSERT_EQ(0, post_xrc(self->ini, a, i == n - 1 ? IBV_WR_SEND_WITH_IMM :
				      IBV_WR_SEND, i, self->srqn[i % 2], i * slot,
				      lens[i], 0, 0));
	}
	for (i = 0; i < n; i++)
		EXPECT_WC(a->cq, wc, i, IBV_WC_SUCCESS);
	for (i = 0; i < n; i++) {
		struct ibv_cq *cq = self->scq[i % 2];

		EXPECT_WC(cq, wc, 100 + i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(lens[i], wc.byte_len);
		EXPECT_EQ(self->tgt->qp_num, wc.qp_num);
		EXPECT_EQ(self->ini->qp_num, wc.src_qp);
		if (i == n - 1) {
			EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
			EXPECT_EQ(0x5a000000u | i, be32toh(wc.imm_data));
		} else {
			EXPECT_FALSE(wc.wc_flags & IBV_WC_WITH_IMM);
		}
		EXPECT_EQ(0, memcmp(a->buf + i * slot, b->buf + i * slot, lens[i]))
			TH_LOG("message %u (%u bytes) differs", i, lens[i]);
	}
	EXPECT_NO_WC(self->scq[0]);
	EXPECT_NO_WC(self->scq[1]);
}

/*
 * RDMA WRITE (with and without immediate), READ and both atomics through
 * the XRC send QP; the target checks them against the PD of the SRQ the
 * XRCETH names (the target QP has none).
 */
TEST_F(xrc, rdma_and_atomics)
{
	struct side *a = self->a, *b = self->b;
	const uint32_t len = 10000;
	uint64_t *word = (uint64_t *)(b->buf + 0x80000);
	uint64_t *got = (uint64_t *)(a->buf + 0x90000);
	struct ibv_wc wc;

	pattern(a->buf, len, 7);
	ASSERT_EQ(0, post_xrc(self->ini, a, IBV_WR_RDMA_WRITE, 1, self->srqn[0], 0,
			      len, (uintptr_t)b->buf + 0x1000, b->mr->rkey));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(a->buf, b->buf + 0x1000, len));

	/* READ it back into another part of A's buffer. */
	ASSERT_EQ(0, post_xrc(self->ini, a, IBV_WR_RDMA_READ, 2, self->srqn[1],
			      0x40000, len, (uintptr_t)b->buf + 0x1000, b->mr->rkey));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_EQ(IBV_WC_RDMA_READ, wc.opcode);
	EXPECT_EQ(0, memcmp(a->buf, a->buf + 0x40000, len));

	/* WRITE with immediate consumes a receive of the named SRQ. */
	ASSERT_EQ(0, post_srq(b, self->srq[1], 77, 0x60000, 64));
	pattern(a->buf + 0x20000, 300, 9);
	ASSERT_EQ(0, post_xrc(self->ini, a, IBV_WR_RDMA_WRITE_WITH_IMM, 3,
			      self->srqn[1], 0x20000, 300,
			      (uintptr_t)b->buf + 0x30000, b->mr->rkey));
	EXPECT_WC(a->cq, wc, 3, IBV_WC_SUCCESS);
	EXPECT_WC(self->scq[1], wc, 77, IBV_WC_SUCCESS);
	EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM, wc.opcode);
	EXPECT_EQ(300u, wc.byte_len);
	EXPECT_EQ(0x5a000003u, be32toh(wc.imm_data));
	EXPECT_EQ(0, memcmp(a->buf + 0x20000, b->buf + 0x30000, 300));

	*word = 1000;
	{
		struct ibv_sge sge = { (uintptr_t)got, 8, a->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 4, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
		}, *bad;

		wr.qp_type.xrc.remote_srqn = self->srqn[0];
		wr.wr.atomic.remote_addr = (uintptr_t)word;
		wr.wr.atomic.rkey = b->mr->rkey;
		wr.wr.atomic.compare_add = 23;
		ASSERT_EQ(0, ibv_post_send(self->ini, &wr, &bad));
		EXPECT_WC(a->cq, wc, 4, IBV_WC_SUCCESS);
		EXPECT_EQ(1000u, *got);
		EXPECT_EQ(1023u, *word);

		wr.wr_id = 5;
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.compare_add = 1023;
		wr.wr.atomic.swap = 0xabcdef;
		ASSERT_EQ(0, ibv_post_send(self->ini, &wr, &bad));
		EXPECT_WC(a->cq, wc, 5, IBV_WC_SUCCESS);
		EXPECT_EQ(1023u, *got);
		EXPECT_EQ(0xabcdefu, *word);
	}

	/* IBTA 1.5 ATOMIC WRITE: the 8 bytes at A's SGE, exactly there. */
	*(uint64_t *)(a->buf + 0x90008) = 0x0807060504030201ull;
	word[1] = 0;
	ASSERT_EQ(0, post_xrc(self->ini, a, IBV_WR_ATOMIC_WRITE, 6, self->srqn[0],
			      0x90008, 8, (uintptr_t)word, b->mr->rkey));
	EXPECT_WC(a->cq, wc, 6, IBV_WC_SUCCESS);
	EXPECT_EQ(IBV_WC_ATOMIC_WRITE, wc.opcode);
	EXPECT_EQ(0x0807060504030201ull, *word);
	EXPECT_EQ(0u, word[1]);
	EXPECT_NO_WC(self->scq[0]);
}

/*
 * The XRCETH names no SRQ, an SRQ of another domain, or one destroyed:
 * an invalid request (IBA 9.3.5.1): the sender completes with remote
 * invalid request, the target QP is in error, and nothing is taken from
 * any SRQ: a new pair then receives the WQE posted before.
 */
static void bad_srq_case(struct __test_metadata *_metadata,
			 FIXTURE_DATA(xrc) *self, uint32_t srqn)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_qp *ini2, *tgt2;
	struct ibv_wc wc;

	ASSERT_EQ(0, post_srq(b, self->srq[0], 500, 0, 4096));
	pattern(a->buf, 256, 3);
	ASSERT_EQ(0, post_xrc(self->ini, a, IBV_WR_SEND, 1, srqn, 0, 256, 0, 0));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_REM_INV_REQ_ERR);
	EXPECT_EQ(IBV_QPS_ERR, qp_state(self->tgt));
	EXPECT_NO_WC(self->scq[0]);
	EXPECT_NO_WC(self->scq[1]);

	/* The receive is still in SRQ 0: a fresh pair gets it. */
	tgt2 = tgt_create(b, self->xrcd);
	ASSERT_NE(NULL, tgt2);
	ini2 = ini_create(a);
	ASSERT_NE(NULL, ini2);
	xrc_connect(_metadata, a, ini2, b, tgt2, 7);
	pattern(a->buf, 256, 4);
	ASSERT_EQ(0, post_xrc(ini2, a, IBV_WR_SEND, 2, self->srqn[0], 0, 256, 0, 0));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_WC(self->scq[0], wc, 500, IBV_WC_SUCCESS);
	EXPECT_EQ(tgt2->qp_num, wc.qp_num);
	EXPECT_EQ(0, memcmp(a->buf, b->buf, 256));
	EXPECT_EQ(0, ibv_destroy_qp(ini2));
	EXPECT_EQ(0, ibv_destroy_qp(tgt2));
}

TEST_F(xrc, srq_number_of_no_srq)
{
	bad_srq_case(_metadata, self, NO_SRQN);
}

TEST_F(xrc, srq_of_another_domain)
{
	struct ibv_xrcd *other = xrcd_open(self->b->ctx);
	struct ibv_cq *cq = ibv_create_cq(self->b->ctx, 16, NULL, NULL, 0);
	struct ibv_srq *srq;
	uint32_t srqn;

	ASSERT_NE(NULL, other);
	ASSERT_NE(NULL, cq);
	srq = xsrq_create(self->b, other, cq);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &srqn));
	ASSERT_EQ(0, post_srq(self->b, srq, 900, 0x80000, 4096));
	bad_srq_case(_metadata, self, srqn);
	EXPECT_NO_WC(cq);	/* its receive was not taken either */
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
	EXPECT_EQ(0, ibv_close_xrcd(other));
}

TEST_F(xrc, srq_destroyed_while_target_lives)
{
	uint32_t srqn = self->srqn[1];

	/* No QP is attached to an XRC SRQ: it may go at any time. */
	ASSERT_EQ(0, ibv_destroy_srq(self->srq[1]));
	self->srq[1] = NULL;
	bad_srq_case(_metadata, self, srqn);
}

/* Send QPs have no receive queue, receive QPs no send queue. */
TEST_F(xrc, queues_each_half_lacks)
{
	struct ibv_sge sge = { (uintptr_t)self->a->buf, 16, self->a->mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_send_wr swr = {
		.wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
	}, *sbad;

	EXPECT_NE(0, ibv_post_recv(self->ini, &rwr, &rbad));
	EXPECT_NE(0, ibv_post_send(self->tgt, &swr, &sbad));
	EXPECT_NO_WC(self->a->cq);
	EXPECT_NO_WC(self->b->cq);
}

/*
 * A target QP sends no WQE: the send queue a caller asks for is not
 * allocated (it would be kernel memory, up to a GiB at these caps, and
 * the requester's shadow of it at RTR).  The QP reports none.
 */
TEST_F(xrc, target_qp_has_no_send_queue)
{
	struct ibv_qp_init_attr_ex ia = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = self->xrcd,
		.cap = { .max_send_wr = 1u << 20, .max_send_sge = 16,
			 .max_inline_data = 512 },
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	struct ibv_qp *qp;

	qp = ibv_create_qp_ex(self->b->ctx, &ia);
	ASSERT_NE(NULL, qp) TH_LOG("ibv_create_qp_ex: %s", strerror(errno));
	EXPECT_EQ(0, ia.cap.max_send_wr);
	EXPECT_EQ(0, ia.cap.max_inline_data);
	ASSERT_EQ(0, ibv_query_qp(qp, &attr, IBV_QP_CAP, &init));
	EXPECT_EQ(0, attr.cap.max_send_wr);
	EXPECT_EQ(0, attr.cap.max_send_sge);
	EXPECT_EQ(0, attr.cap.max_inline_data);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/* ibv_open_qp: another handle on the target QP, by number, in its domain. */
TEST_F(xrc, open_target_qp)
{
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = self->tgt->qp_num,
		.xrcd = self->xrcd,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp *qp = ibv_open_qp(self->b->ctx, &oa);
	struct ibv_qp *other;

	ASSERT_NE(NULL, qp) TH_LOG("ibv_open_qp: %s", strerror(errno));
	EXPECT_EQ(self->tgt->qp_num, qp->qp_num);
	EXPECT_EQ(IBV_QPS_RTR, qp_state(qp));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	/* A QP of the same device that is not a target QP of the domain. */
	other = ini_create(self->b);
	ASSERT_NE(NULL, other);
	oa.qp_num = other->qp_num;
	EXPECT_EQ(NULL, ibv_open_qp(self->b->ctx, &oa));
	EXPECT_EQ(0, ibv_destroy_qp(other));
}

/* The domain refuses to go while SRQs or target QPs use it. */
TEST_F(xrc, destroy_order)
{
	EXPECT_EQ(EBUSY, ibv_close_xrcd(self->xrcd));
	ASSERT_EQ(0, ibv_destroy_qp(self->tgt));
	self->tgt = NULL;
	EXPECT_EQ(EBUSY, ibv_close_xrcd(self->xrcd));
	ASSERT_EQ(0, ibv_destroy_srq(self->srq[0]));
	self->srq[0] = NULL;
	ASSERT_EQ(0, ibv_destroy_srq(self->srq[1]));
	self->srq[1] = NULL;
	EXPECT_EQ(0, ibv_close_xrcd(self->xrcd));
	self->xrcd = NULL;
}

/* No receive posted: RNR NAKs until the retries run out. */
TEST_F(xrc, rnr_without_receives)
{
	struct ibv_qp *ini2, *tgt2;
	struct ibv_wc wc;

	tgt2 = tgt_create(self->b, self->xrcd);
	ASSERT_NE(NULL, tgt2);
	ini2 = ini_create(self->a);
	ASSERT_NE(NULL, ini2);
	xrc_connect(_metadata, self->a, ini2, self->b, tgt2, 1);
	ASSERT_EQ(0, post_xrc(ini2, self->a, IBV_WR_SEND, 9, self->srqn[1], 0, 8,
			      0, 0));
	EXPECT_WC(self->a->cq, wc, 9, IBV_WC_RNR_RETRY_EXC_ERR);
	EXPECT_EQ(0, ibv_destroy_qp(ini2));
	EXPECT_EQ(0, ibv_destroy_qp(tgt2));
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "d:g:D:G:h")) != -1) {
		switch (opt) {
		default:
			if (device_opt(opt, optarg))
				break;
			fprintf(stderr, "usage: %s -d DEV -g GIDX [-D DEV2 -G GIDX2]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	device_opts_done();
	return test_harness_run(argc, argv);
}
