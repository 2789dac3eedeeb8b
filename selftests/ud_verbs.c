// SPDX-License-Identifier: GPL-2.0-only
/*
 * ud_verbs: what the UD and UC example programs do not look at, checked
 * byte for byte and status for status.
 *
 *   ud_verbs -d DEV -g GIDX [-D DEV2 -G GIDX2] [-u UNREACHABLE_IP] [-L]
 *
 * Side A sends, side B receives: a QP on DEV (GID index GIDX) and one on
 * DEV2/GIDX2 (default: the same device).  UD: the 40-byte GRH area (IPv4
 * header in its last 20 bytes after 20 zero bytes, or the IPv6 header),
 * src_qp, wc_flags, Q_Key matching, the receive-too-short error, the MTU
 * limit, multicast attach/detach with delivery to every attached QP, and
 * an address handle to an address with no neighbour.  UC: the loss of a
 * message (-L: the caller put netem loss on the path).
 * Each test is one forked child (kselftest harness); the output is KTAP.
 */
#include <arpa/inet.h>
#include <errno.h>
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
#define GRH_LEN		40
#define QKEY		0x11223344u
#define MCAST_QPN	0xffffffu
#define WC_WAIT_MS	10000
#define QUIET_MS	300

#include "verbs_test.h"

static const char *opt_unreach;
static bool opt_loss;		/* -L: the path drops packets; UC test only */
static bool opt_queue;		/* -Q: the path holds packets; reuse test only */

/*
 * Under -L only the UC loss test runs: UD over a lossy path proves nothing;
 * under -Q only the buffer reuse test.
 */
#define SKIP_UNDER_LOSS() do { \
	if (opt_loss) \
		SKIP(return, "-L: only the UC loss test runs"); \
	if (opt_queue) \
		SKIP(return, "-Q: only the buffer reuse test runs"); \
} while (0)

FIXTURE(ud) {
	struct side s[2];
	struct side *a, *b;
	struct ibv_qp *extra;		/* a second receiving QP on B */
	struct ibv_ah *ah;
};

FIXTURE_SETUP(ud)
{
	self->a = &self->s[0];
	self->b = &self->s[1];
	sides_open(_metadata, self->a, self->b, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

FIXTURE_TEARDOWN(ud)
{
	if (self->ah)
		ibv_destroy_ah(self->ah);
	if (self->extra)
		ibv_destroy_qp(self->extra);
	side_close(self->a);
	side_close(self->b);
}

/* A QP of @type on @s in INIT. */
static struct ibv_qp *qp_init(struct __test_metadata *_metadata, struct side *s,
			      enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = type,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(s->pd, &ia);
	int mask;

	EXPECT_NE(NULL, qp) TH_LOG("ibv_create_qp type %d: %s", type, strerror(errno));
	if (!qp)
		return NULL;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (type == IBV_QPT_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, mask));
	return qp;
}

/* INIT -> RTR -> RTS; UC: connected to @dqpn at @dgid. */
static void qp_rts(struct __test_metadata *_metadata, struct side *s,
		   struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a;
	int mask = IBV_QP_STATE;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (qp->qp_type == IBV_QPT_UC) {
		a.path_mtu = s->port.active_mtu;
		a.dest_qp_num = dqpn;
		a.rq_psn = 100;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = *dgid;
		a.ah_attr.grh.sgid_index = s->gidx;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	}
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, mask)) TH_LOG("to RTR: %s", strerror(errno));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 100;
	EXPECT_EQ(0, ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		TH_LOG("to RTS: %s", strerror(errno));
}

static struct ibv_qp *qp_up(struct __test_metadata *_metadata, struct side *s,
			    enum ibv_qp_type type)
{
	struct ibv_qp *qp = qp_init(_metadata, s, type);

	if (qp)
		qp_rts(_metadata, s, qp, 0, NULL);
	return qp;
}

static struct ibv_ah *ah_to(struct side *from, const union ibv_gid *dgid)
{
	struct ibv_ah_attr aa = {
		.is_global = 1,
		.grh = { .dgid = *dgid, .sgid_index = from->gidx, .hop_limit = 64 },
		.port_num = 1,
	};

	return ibv_create_ah(from->pd, &aa);
}

static int post_recv(struct ibv_qp *qp, struct side *s, uint64_t id,
		     uint32_t off, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_ud(struct side *s, struct ibv_ah *ah, uint32_t dqpn, uint32_t qkey,
		   uint64_t id, uint32_t off, uint32_t len, bool imm)
{
	struct ibv_sge sg = { (uintptr_t)s->buf + off, len, s->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.imm_data = htonl(0xabcd0000u | (uint32_t)id),
	}, *bad;

	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = dqpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(s->qp, &wr, &bad);
}

static bool gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

/* The GRH area of a message from A to B: the IP header of the packet. */
static void check_grh(struct __test_metadata *_metadata, const uint8_t *grh,
		      const union ibv_gid *src, const union ibv_gid *dst,
		      uint32_t paylen, bool imm)
{
	static const uint8_t zero[20];

	if (gid_is_v4(src)) {
		const uint8_t *ip = grh + 20;

		EXPECT_EQ(0, memcmp(grh, zero, 20)) TH_LOG("IPv4: first 20 bytes not zero");
		EXPECT_EQ(0x45, ip[0]) TH_LOG("IPv4 version/IHL 0x%02x", ip[0]);
		EXPECT_EQ(17, ip[9]) TH_LOG("IPv4 protocol %u", ip[9]);
		/* IP + UDP + BTH + DETH + payload + ICRC */
		EXPECT_EQ(20 + 8 + 12 + 8 + (imm ? 4 : 0) + paylen +
			  ((4 - paylen % 4) % 4) + 4, (uint32_t)(ip[2] << 8 | ip[3]));
		EXPECT_EQ(0, memcmp(ip + 12, src->raw + 12, 4)) TH_LOG("IPv4 source");
		EXPECT_EQ(0, memcmp(ip + 16, dst->raw + 12, 4)) TH_LOG("IPv4 destination");
	} else {
		EXPECT_EQ(6, grh[0] >> 4) TH_LOG("IPv6 version %u", grh[0] >> 4);
		EXPECT_EQ(17, grh[6]) TH_LOG("IPv6 next header %u", grh[6]);
		EXPECT_EQ(0, memcmp(grh + 8, src->raw, 16)) TH_LOG("IPv6 source");
		EXPECT_EQ(0, memcmp(grh + 24, dst->raw, 16)) TH_LOG("IPv6 destination");
	}
}

static void ud_pair(struct __test_metadata *_metadata, FIXTURE_DATA(ud) *self)
{
	self->a->qp = qp_up(_metadata, self->a, IBV_QPT_UD);
	self->b->qp = qp_up(_metadata, self->b, IBV_QPT_UD);
	ASSERT_NE(NULL, self->a->qp);
	ASSERT_NE(NULL, self->b->qp);
	self->ah = ah_to(self->a, &self->b->gid);
	ASSERT_NE(NULL, self->ah) TH_LOG("ibv_create_ah: %s", strerror(errno));
}

/* A UC QP on each side, connected to the other's, in RTS. */
static void uc_pair(struct __test_metadata *_metadata, FIXTURE_DATA(ud) *self)
{
	struct side *a = self->a, *b = self->b;

	a->qp = qp_init(_metadata, a, IBV_QPT_UC);
	b->qp = qp_init(_metadata, b, IBV_QPT_UC);
	ASSERT_NE(NULL, a->qp);
	ASSERT_NE(NULL, b->qp);
	qp_rts(_metadata, a, a->qp, b->qp->qp_num, &b->gid);
	qp_rts(_metadata, b, b->qp, a->qp->qp_num, &a->gid);
}

static int mtu_bytes(struct side *s)
{
	return 128 << s->port.active_mtu;
}

/* 1 byte, a middle size and exactly the MTU; with and without immediate. */
TEST_F(ud, send_grh_and_completion_fields)
{
	struct side *a = self->a, *b = self->b;
	uint32_t lens[] = { 1, 333, 0 };
	struct ibv_wc wc;
	unsigned int i;

	SKIP_UNDER_LOSS();
	ud_pair(_metadata, self);
	lens[2] = mtu_bytes(a) < mtu_bytes(b) ? mtu_bytes(a) : mtu_bytes(b);
	for (i = 0; i < 3; i++) {
		uint32_t roff = i * 8192;

		pattern(a->buf + i * 8192, lens[i], i + 1);
		memset(b->buf + roff, 0xee, lens[i] + GRH_LEN + 16);
		ASSERT_EQ(0, post_recv(b->qp, b, 10 + i, roff, lens[i] + GRH_LEN + 16));
		ASSERT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 20 + i,
				     i * 8192, lens[i], i == 1));
		EXPECT_WC(a->cq, wc, 20 + i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_SEND, wc.opcode);
		EXPECT_WC(b->cq, wc, 10 + i, IBV_WC_SUCCESS);
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(lens[i] + GRH_LEN, wc.byte_len);
		EXPECT_EQ(a->qp->qp_num, wc.src_qp);
		EXPECT_EQ(b->qp->qp_num, wc.qp_num);
		EXPECT_TRUE(wc.wc_flags & IBV_WC_GRH);
		EXPECT_EQ(i == 1, !!(wc.wc_flags & IBV_WC_WITH_IMM));
		if (i == 1)
			EXPECT_EQ(htonl(0xabcd0000u | 21), wc.imm_data);
		EXPECT_EQ(0, wc.sl);
		EXPECT_EQ(0, memcmp(a->buf + i * 8192, b->buf + roff + GRH_LEN, lens[i]))
			TH_LOG("payload of %u bytes differs", lens[i]);
		EXPECT_EQ(0xee, b->buf[roff + GRH_LEN + lens[i]]) TH_LOG("wrote past the message");
		check_grh(_metadata, b->buf + roff, &a->gid, &b->gid, lens[i], i == 1);
	}
}

/* A wrong Q_Key is dropped silently; the receive WQE stays for the next. */
TEST_F(ud, qkey_mismatch_dropped)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_wc wc;

	SKIP_UNDER_LOSS();
	ud_pair(_metadata, self);
	pattern(a->buf, 64, 7);
	ASSERT_EQ(0, post_recv(b->qp, b, 1, 0, 4096));
	ASSERT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY ^ 1, 2, 0, 64, false));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_NO_WC(b->cq);
	ASSERT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 3, 0, 64, false));
	EXPECT_WC(a->cq, wc, 3, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(64 + GRH_LEN, wc.byte_len);
}

/*
 * No room for GRH + payload: the datagram is dropped and the receive WQE
 * stays for the next one that fits (IBA class D1; rdma_rxe does the same
 * for a QP without an SRQ).  Nothing is written to the buffer.
 */
TEST_F(ud, receive_without_room_for_grh_keeps_the_wqe)
{
	struct side *a = self->a, *b = self->b;
	long long before;
	struct ibv_wc wc;

	SKIP_UNDER_LOSS();
	ud_pair(_metadata, self);
	pattern(a->buf, 100, 9);
	memset(b->buf, 0xee, 200);
	before = hw_counter(b, "resp_dropped");
	ASSERT_EQ(0, post_recv(b->qp, b, 1, 0, 100 + GRH_LEN - 1));
	ASSERT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 2, 0, 100, false));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_NO_WC(b->cq);
	for (int i = 0; i < 200; i++)
		if (b->buf[i] != 0xee) {
			EXPECT_EQ(0xee, b->buf[i]) TH_LOG("byte %d written", i);
			break;
		}
	if (before >= 0)
		EXPECT_EQ(before + 1, hw_counter(b, "resp_dropped"));
	ASSERT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 3, 0, 99, false));
	EXPECT_WC(a->cq, wc, 3, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(99 + GRH_LEN, wc.byte_len);
	EXPECT_EQ(0, memcmp(a->buf, b->buf + GRH_LEN, 99)) TH_LOG("payload differs");
	EXPECT_EQ(0xee, b->buf[GRH_LEN + 99]) TH_LOG("wrote past the message");
	EXPECT_NO_WC(b->cq);
}

/* A UD message longer than the MTU never leaves: LOC_LEN_ERR. */
TEST_F(ud, send_longer_than_mtu)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_wc wc;

	SKIP_UNDER_LOSS();
	ud_pair(_metadata, self);
	ASSERT_EQ(0, post_recv(b->qp, b, 1, 0, 16384));
	ASSERT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 2, 0,
			     mtu_bytes(a) + 1, false));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_LOC_LEN_ERR);
	EXPECT_NO_WC(b->cq);
}

/*
 * A send error takes a UD QP to SQE (IBA 10.3.1), not ERR: what is posted
 * there completes with WR_FLUSH_ERR, receives go on, and SQE -> RTS
 * naming the current state (the MAD layer's recovery of QP1) sends
 * again.  A modify that names a current state the QP is not in is
 * refused: from ERR, the same SQE -> RTS would report RTS over queues that
 * flush everything.
 */
TEST_F(ud, send_error_moves_to_sqe_and_rts_resumes)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr x, q;
	struct ibv_ah *back;
	struct ibv_wc wc;

	SKIP_UNDER_LOSS();
	if (hw_counter(a, "resp_dropped") < 0)
		SKIP(return, "%s is not sroce: rdma_rxe moves the QP to ERR",
		     ibv_get_device_name(a->ctx->device));
	ud_pair(_metadata, self);
	ASSERT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 1, 0,
			     mtu_bytes(a) + 1, false));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_LOC_LEN_ERR);
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_STATE, &ia));
	ASSERT_EQ(IBV_QPS_SQE, q.qp_state);

	/* Posted in SQE: flushed, not sent. */
	ASSERT_EQ(0, post_recv(b->qp, b, 2, 0, 64 + GRH_LEN));
	ASSERT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 3, 0, 64, false));
	EXPECT_WC(a->cq, wc, 3, IBV_WC_WR_FLUSH_ERR);
	EXPECT_NO_WC(b->cq);

	/* Its receive queue still works. */
	back = ah_to(b, &a->gid);
	ASSERT_NE(NULL, back) TH_LOG("ibv_create_ah: %s", strerror(errno));
	pattern(b->buf + 4096, 64, 4);
	ASSERT_EQ(0, post_recv(a->qp, a, 4, 8192, 64 + GRH_LEN));
	ASSERT_EQ(0, post_ud(b, back, a->qp->qp_num, QKEY, 5, 4096, 64, false));
	EXPECT_WC(b->cq, wc, 5, IBV_WC_SUCCESS);
	EXPECT_WC(a->cq, wc, 4, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(b->buf + 4096, a->buf + 8192 + GRH_LEN, 64))
		TH_LOG("payload received in SQE differs");
	ibv_destroy_ah(back);

	/* A wrong current state is refused; the right one recovers. */
	memset(&x, 0, sizeof(x));
	x.qp_state = IBV_QPS_RTS;
	x.cur_qp_state = IBV_QPS_RTS;
	EXPECT_EQ(EINVAL, ibv_modify_qp(a->qp, &x, IBV_QP_STATE | IBV_QP_CUR_STATE));
	x.cur_qp_state = IBV_QPS_SQE;
	ASSERT_EQ(0, ibv_modify_qp(a->qp, &x, IBV_QP_STATE | IBV_QP_CUR_STATE));
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_RTS, q.qp_state);
	pattern(a->buf, 64, 6);
	ASSERT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 6, 0, 64, false));
	EXPECT_WC(a->cq, wc, 6, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(a->buf, b->buf + GRH_LEN, 64)) TH_LOG("payload after RTS differs");

	/* From ERR, the MAD layer's SQE -> RTS is refused. */
	memset(&x, 0, sizeof(x));
	x.qp_state = IBV_QPS_ERR;
	ASSERT_EQ(0, ibv_modify_qp(a->qp, &x, IBV_QP_STATE));
	x.qp_state = IBV_QPS_RTS;
	x.cur_qp_state = IBV_QPS_SQE;
	EXPECT_EQ(EINVAL, ibv_modify_qp(a->qp, &x, IBV_QP_STATE | IBV_QP_CUR_STATE));
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_ERR, q.qp_state);
}

/*
 * A 100-byte UC SEND from @from to @to (receive id @id, send id @id + 1),
 * both completions successful and the bytes checked.
 */
static void uc_send_checked(struct __test_metadata *_metadata, struct side *from,
			    struct side *to, uint64_t id)
{
	struct ibv_sge sg = { (uintptr_t)from->buf, 100, from->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id + 1, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	struct ibv_wc wc;

	pattern(from->buf, 100, id);
	ASSERT_EQ(0, post_recv(to->qp, to, id, 8192, 100));
	ASSERT_EQ(0, ibv_post_send(from->qp, &wr, &bad));
	EXPECT_WC(from->cq, wc, id + 1, IBV_WC_SUCCESS);
	EXPECT_WC(to->cq, wc, id, IBV_WC_SUCCESS);
	EXPECT_EQ(0, memcmp(from->buf, to->buf + 8192, 100))
		TH_LOG("UC payload %llu differs", (unsigned long long)id);
}

/*
 * UC too: a send error moves the QP to SQE, its receives go on, and
 * SQE -> RTS sends again.
 */
TEST_F(ud, uc_send_error_moves_to_sqe_and_rts_resumes)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_send_wr wr, *bad;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr x, q;
	struct ibv_sge sg;
	struct ibv_wc wc;

	SKIP_UNDER_LOSS();
	if (hw_counter(a, "resp_dropped") < 0)
		SKIP(return, "%s is not sroce: rdma_rxe moves the QP to ERR",
		     ibv_get_device_name(a->ctx->device));
	uc_pair(_metadata, self);
	/* A bad L_Key: LOC_PROT_ERR. */
	sg = (struct ibv_sge){ (uintptr_t)a->buf, 64, a->mr->lkey ^ 0x80 };
	wr = (struct ibv_send_wr){ .wr_id = 1, .sg_list = &sg, .num_sge = 1,
				   .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED };
	ASSERT_EQ(0, ibv_post_send(a->qp, &wr, &bad));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_LOC_PROT_ERR);
	ASSERT_EQ(0, ibv_query_qp(a->qp, &q, IBV_QP_STATE, &ia));
	ASSERT_EQ(IBV_QPS_SQE, q.qp_state);

	/* b -> a still delivers. */
	uc_send_checked(_metadata, b, a, 2);

	memset(&x, 0, sizeof(x));
	x.qp_state = IBV_QPS_RTS;
	x.cur_qp_state = IBV_QPS_SQE;
	ASSERT_EQ(0, ibv_modify_qp(a->qp, &x, IBV_QP_STATE | IBV_QP_CUR_STATE));
	uc_send_checked(_metadata, a, b, 4);
}

/*
 * The netdev's MTU changes under a UD QP in RTS: its messages follow the
 * MTU as it is now, not as it was at RTS.  UD_MTU_LOWER and UD_MTU_RESTORE
 * are shell commands (ud.sh sets them) that set both veth ends to 1500 and
 * back to what they were (9000: RoCE MTU 1024 and 4096).
 */
TEST_F(ud, mtu_lowered_after_rts)
{
	const char *lower = getenv("UD_MTU_LOWER"), *restore = getenv("UD_MTU_RESTORE");
	struct side *a = self->a, *b = self->b;
	struct ibv_wc wc;

	if (!lower || !restore)
		SKIP(return, "UD_MTU_LOWER and UD_MTU_RESTORE not set (ud.sh sets them)");
	SKIP_UNDER_LOSS();
	ud_pair(_metadata, self);
	if (mtu_bytes(a) <= 1024)
		SKIP(return, "active MTU %d: the test lowers it from above 1024", mtu_bytes(a));
	ASSERT_EQ(0, system(lower)) TH_LOG("%s", lower);
	/* One of the new MTU goes through. */
	EXPECT_EQ(0, post_recv(b->qp, b, 1, 0, 16384));
	EXPECT_EQ(0, post_recv(b->qp, b, 2, 16384, 16384));
	EXPECT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 3, 0, 1024, false));
	EXPECT_WC(a->cq, wc, 3, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(1024 + GRH_LEN, wc.byte_len);
	/* One longer than the MTU now is refused before it leaves. */
	EXPECT_EQ(0, post_ud(a, self->ah, b->qp->qp_num, QKEY, 4, 0, 2048, false));
	EXPECT_WC(a->cq, wc, 4, IBV_WC_LOC_LEN_ERR);
	EXPECT_NO_WC(b->cq);
	EXPECT_EQ(0, system(restore)) TH_LOG("%s", restore);
}

/* An address handle to an address nobody answers ARP/ND for fails. */
TEST_F(ud, ah_unresolvable_neighbour)
{
	union ibv_gid g;
	struct ibv_ah *ah;

	SKIP_UNDER_LOSS();
	if (!opt_unreach)
		SKIP(return, "no -u UNREACHABLE_IP given");
	memset(&g, 0, sizeof(g));
	if (strchr(opt_unreach, ':')) {
		ASSERT_EQ(1, inet_pton(AF_INET6, opt_unreach, g.raw));
	} else {
		g.raw[10] = g.raw[11] = 0xff;
		ASSERT_EQ(1, inet_pton(AF_INET, opt_unreach, g.raw + 12));
	}
	errno = 0;
	ah = ah_to(self->a, &g);
	EXPECT_EQ(NULL, ah) TH_LOG("ibv_create_ah to %s succeeded", opt_unreach);
	if (ah)
		ibv_destroy_ah(ah);
	EXPECT_NE(0, errno);
	TH_LOG("ibv_create_ah to %s: %s", opt_unreach, strerror(errno));
}

/* Two QPs of B in one group get one copy each; a detached one none. */
static void mcast_case(struct __test_metadata *_metadata, FIXTURE_DATA(ud) *self,
		       const char *group)
{
	struct side *a = self->a, *b = self->b;
	struct ibv_qp *q[2];
	union ibv_gid mg;
	struct ibv_ah *ah;
	struct ibv_wc wc;
	int i, got[2] = { 0, 0 };

	memset(&mg, 0, sizeof(mg));
	if (strchr(group, ':')) {
		ASSERT_EQ(1, inet_pton(AF_INET6, group, mg.raw));
	} else {
		mg.raw[10] = mg.raw[11] = 0xff;
		ASSERT_EQ(1, inet_pton(AF_INET, group, mg.raw + 12));
	}
	if (gid_is_v4(&mg) != gid_is_v4(&a->gid))
		SKIP(return, "group %s and the GID are of different families", group);
	ud_pair(_metadata, self);
	self->extra = qp_up(_metadata, b, IBV_QPT_UD);
	ASSERT_NE(NULL, self->extra);
	q[0] = b->qp;
	q[1] = self->extra;
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, ibv_attach_mcast(q[i], &mg, 0)) TH_LOG("attach: %s", strerror(errno));
		ASSERT_EQ(0, post_recv(q[i], b, 100 + i, i * 8192, 4096));
		ASSERT_EQ(0, post_recv(q[i], b, 200 + i, 65536 + i * 8192, 4096));
	}
	ah = ah_to(a, &mg);
	ASSERT_NE(NULL, ah) TH_LOG("ibv_create_ah to %s: %s", group, strerror(errno));
	pattern(a->buf, 200, 3);
	ASSERT_EQ(0, post_ud(a, ah, MCAST_QPN, QKEY, 1, 0, 200, false));
	EXPECT_WC(a->cq, wc, 1, IBV_WC_SUCCESS);
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(1, poll_wc(b->cq, &wc, WC_WAIT_MS)) TH_LOG("copy %d missing", i);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(200 + GRH_LEN, wc.byte_len);
		EXPECT_EQ(a->qp->qp_num, wc.src_qp);
		if (wc.wr_id == 100 || wc.wr_id == 101) {
			got[wc.wr_id - 100]++;
			EXPECT_EQ(0, memcmp(a->buf, b->buf + (wc.wr_id - 100) * 8192 + GRH_LEN, 200));
			check_grh(_metadata, b->buf + (wc.wr_id - 100) * 8192, &a->gid, &mg, 200, false);
		}
	}
	EXPECT_EQ(1, got[0]);
	EXPECT_EQ(1, got[1]);
	/* Detach the second QP: only the first receives now. */
	EXPECT_EQ(0, ibv_detach_mcast(q[1], &mg, 0));
	EXPECT_NE(0, ibv_detach_mcast(q[1], &mg, 0)) TH_LOG("second detach succeeded");
	ASSERT_EQ(0, post_ud(a, ah, MCAST_QPN, QKEY, 2, 0, 200, false));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	EXPECT_WC(b->cq, wc, 200, IBV_WC_SUCCESS);
	EXPECT_NO_WC(b->cq);
	EXPECT_EQ(0, ibv_detach_mcast(q[0], &mg, 0));
	ibv_destroy_ah(ah);
}

TEST_F(ud, multicast_ipv4)
{
	SKIP_UNDER_LOSS();
	mcast_case(_metadata, self, "239.1.2.3");
}

TEST_F(ud, multicast_ipv6)
{
	SKIP_UNDER_LOSS();
	mcast_case(_metadata, self, "ff0e::1:2");
}

/* Only UD QPs join groups, and only multicast GIDs are groups. */
TEST_F(ud, multicast_attach_errors)
{
	struct side *b = self->b;
	union ibv_gid mg;
	struct ibv_qp *uc;

	SKIP_UNDER_LOSS();
	ud_pair(_metadata, self);
	memset(&mg, 0, sizeof(mg));
	mg.raw[10] = mg.raw[11] = 0xff;
	mg.raw[12] = 192;
	mg.raw[15] = 1;
	EXPECT_NE(0, ibv_attach_mcast(b->qp, &mg, 0)) TH_LOG("unicast GID attached");
	mg.raw[12] = 239;
	uc = qp_init(_metadata, b, IBV_QPT_UC);
	ASSERT_NE(NULL, uc);
	EXPECT_NE(0, ibv_attach_mcast(uc, &mg, 0)) TH_LOG("UC QP attached");
	ibv_destroy_qp(uc);
}

/*
 * UC: messages of several packets, each checked; with -L the
 * caller drops packets on the path (-L): some messages are lost (never
 * partially delivered), later ones still arrive and the QPs stay in RTS.
 */
TEST_F_TIMEOUT(ud, uc_multi_packet_and_loss, 120)
{
	struct side *a = self->a, *b = self->b;
	bool loss = opt_loss;
	int i, n = 40, got = 0, mtu = mtu_bytes(a);
	uint32_t len = 3 * mtu + 100;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;

	if (opt_queue)
		SKIP(return, "-Q: only the buffer reuse test runs");
	uc_pair(_metadata, self);

	for (i = 0; i < n; i++)
		ASSERT_EQ(0, post_recv(b->qp, b, 1000 + i, i * 16384, 16384));
	for (i = 0; i < n; i++) {
		struct ibv_sge sg = { (uintptr_t)a->buf + i * 16384, len, a->mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_SEND_WITH_IMM, .imm_data = htonl(i),
		}, *bad;

		pattern(a->buf + i * 16384, len, i);
		ASSERT_EQ(0, ibv_post_send(a->qp, &wr, &bad));
		EXPECT_WC(a->cq, wc, (uint64_t)i, IBV_WC_SUCCESS);
	}
	while (poll_wc(b->cq, &wc, 1000) == 1) {
		uint32_t m = ntohl(wc.imm_data);

		ASSERT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("wr_id %llu", (unsigned long long)wc.wr_id);
		ASSERT_TRUE(m < (uint32_t)n);
		EXPECT_EQ(len, wc.byte_len);
		/* Message m landed in the receive WQE the next in order. */
		EXPECT_EQ(0, memcmp(a->buf + m * 16384,
				    b->buf + (wc.wr_id - 1000) * 16384, len))
			TH_LOG("message %u in WQE %llu differs", m,
			       (unsigned long long)(wc.wr_id - 1000));
		EXPECT_EQ(1000 + got, (int)wc.wr_id);
		got++;
	}
	TH_LOG("UC: %d of %d messages of %u bytes arrived%s", got, n, len,
	       loss ? " (packets dropped on the path)" : "");
	if (loss) {
		EXPECT_LT(got, n);
		EXPECT_GT(got, 0);
	} else {
		EXPECT_EQ(n, got);
	}
	ASSERT_EQ(0, ibv_query_qp(b->qp, &qa, IBV_QP_STATE, &ia));
	EXPECT_EQ(IBV_QPS_RTS, qa.qp_state);
}

/*
 * UD and UC complete a send once it is on its way: the application may
 * then write the next data into the buffer.  With -Q the caller holds A's
 * packets on the path (netem delay) for longer than that takes; the
 * message must still arrive as it was when posted, whole.
 */
static void reuse_case(struct __test_metadata *_metadata, FIXTURE_DATA(ud) *self,
		       enum ibv_qp_type type)
{
	struct side *a = self->a, *b = self->b;
	uint32_t len = type == IBV_QPT_UD ? (uint32_t)mtu_bytes(a) : 3u * mtu_bytes(a) + 100;
	uint32_t grh = type == IBV_QPT_UD ? GRH_LEN : 0;
	struct ibv_sge sg = { (uintptr_t)a->buf, len, a->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	uint8_t *sent;
	struct ibv_wc wc;

	if (!opt_queue)
		SKIP(return, "needs a path that holds packets (-Q)");
	sent = malloc(len);
	ASSERT_NE(NULL, sent);
	if (type == IBV_QPT_UD) {
		ud_pair(_metadata, self);
		wr.wr.ud.ah = self->ah;
		wr.wr.ud.remote_qpn = b->qp->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	} else {
		uc_pair(_metadata, self);
	}
	pattern(a->buf, len, 5);
	memcpy(sent, a->buf, len);
	ASSERT_EQ(0, post_recv(b->qp, b, 1, 0, len + grh));
	ASSERT_EQ(0, ibv_post_send(a->qp, &wr, &bad));
	EXPECT_WC(a->cq, wc, 2, IBV_WC_SUCCESS);
	/* Still held on the path: the next data goes into the buffer. */
	memset(a->buf, 0x5a, len);
	EXPECT_WC(b->cq, wc, 1, IBV_WC_SUCCESS);
	EXPECT_EQ(len + grh, wc.byte_len);
	EXPECT_EQ(0, memcmp(sent, b->buf + grh, len))
		TH_LOG("%s: the message arrived with bytes written after its completion",
		       type == IBV_QPT_UD ? "UD" : "UC");
	free(sent);
}

TEST_F(ud, ud_send_buffer_reused_after_completion)
{
	reuse_case(_metadata, self, IBV_QPT_UD);
}

TEST_F(ud, uc_send_buffer_reused_after_completion)
{
	reuse_case(_metadata, self, IBV_QPT_UC);
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "d:g:D:G:u:LQh")) != -1) {
		switch (opt) {
		case 'd': opt_dev[0] = optarg; break;
		case 'g': opt_gidx[0] = atoi(optarg); break;
		case 'D': opt_dev[1] = optarg; break;
		case 'G': opt_gidx[1] = atoi(optarg); break;
		case 'u': opt_unreach = optarg; break;
		case 'L': opt_loss = true; break;
		case 'Q': opt_queue = true; break;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GIDX [-D DEV2 -G GIDX2] [-u IP] [-L | -Q]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	device_opts_done();
	return test_harness_run(argc, argv);
}
