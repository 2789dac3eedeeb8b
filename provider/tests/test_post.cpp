// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// The data path on rings in ordinary memory: post_send / post_recv /
// ibv_wr_* against a QP whose "command fd" is a pipe, so the doorbell the
// kernel would receive is read back and checked byte for byte; poll_cq and
// the extended polling API against a CQ ring the test fills as the kernel
// would.
#include <fcntl.h>
#include <sys/mman.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "fake_ring.h"
#include "sroce.h"
#include "wqe.h"

namespace {

template <typename T>
T at(const uint8_t *p, size_t off)
{
	T v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

struct FakeQp {
	int pipefd[2];		// the "command fd": uverbs doorbells
	int dbpipe[2];		// the doorbell file, once use_doorbell_file()
	sroce::Context ctx{};
	FakeRing sq;
	FakeRing rq;
	sroce::Qp *qp;

	FakeQp(ibv_qp_type type, uint32_t sq_log2 = 2, uint32_t rq_log2 = 2)
		: sq(sq_log2, 128), rq(rq_log2, 64)
	{
		EXPECT_EQ(pipe2(pipefd, O_NONBLOCK), 0);
		EXPECT_EQ(pipe2(dbpipe, O_NONBLOCK), 0);
		ctx.vctx.context.cmd_fd = pipefd[1];
		ctx.doorbell_fd = -1;
		qp = static_cast<sroce::Qp *>(calloc(1, sizeof(sroce::Qp)));
		qp->sq.lock.init();
		qp->rq.lock.init();
		qp->sq.ring.attach(sq.mem, sq.info.log2_entries, sq.info.entry_size);
		qp->rq.ring.attach(rq.mem, rq.info.log2_entries, rq.info.entry_size);
		qp->send = { type, sroce::send_slot_max_sge(128),
			     sroce::send_slot_max_inline(128), false };
		qp->max_recv_sge = sroce::recv_slot_max_sge(64);
		ibv_qp *ib = &qp->vqp.qp;
		ib->context = &ctx.vctx.context;
		ib->handle = 0x1234;
		ib->qp_num = 0x11;
		ib->qp_type = type;
		ib->state = IBV_QPS_RTS;
		sroce::install_wr_ops(&qp->vqp.qp_ex);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	~FakeQp()
	{
		close(pipefd[0]);
		close(pipefd[1]);
		close(dbpipe[0]);
		close(dbpipe[1]);
		free(qp);
	}
	ibv_qp *ib() { return &qp->vqp.qp; }
	ibv_qp_ex *ex() { return &qp->vqp.qp_ex; }

	void use_doorbell_file() { ctx.doorbell_fd = dbpipe[1]; }

	// Doorbells rung so far, each checked to be well formed: a uverbs
	// command on the command fd or, once use_doorbell_file(), the QPN on
	// the doorbell file (and then nothing on the command fd).
	int doorbells()
	{
		int n = 0;
		uint8_t b[32];
		ssize_t r;

		while ((r = read(pipefd[0], b, sizeof(b))) > 0) {
			EXPECT_LT(ctx.doorbell_fd, 0) << "command despite the file";
			EXPECT_EQ(r, 32);
			// struct ib_uverbs_cmd_hdr
			EXPECT_EQ(at<uint32_t>(b, 0), uint32_t(IB_USER_VERBS_CMD_POST_SEND));
			EXPECT_EQ(at<uint16_t>(b, 4), 8); // in_words: 32 bytes
			EXPECT_EQ(at<uint16_t>(b, 6), 1); // out_words: post_send_resp
			EXPECT_NE(at<uint64_t>(b, 8), 0u); // response pointer
			EXPECT_EQ(at<uint32_t>(b, 16), 0x1234u); // qp_handle
			EXPECT_EQ(at<uint32_t>(b, 20), 0u); // wr_count
			EXPECT_EQ(at<uint32_t>(b, 24), 0u); // sge_count
			EXPECT_EQ(at<uint32_t>(b, 28), sizeof(ibv_send_wr));
			n++;
		}
		// A pipe keeps write() boundaries apart only by their content:
		// every doorbell is one 4-byte struct sroce_doorbell.
		while ((r = read(dbpipe[0], b, sizeof(b))) > 0) {
			EXPECT_EQ(r % sizeof(sroce_doorbell), 0u);
			for (ssize_t i = 0; i < r; i += sizeof(sroce_doorbell)) {
				EXPECT_EQ(at<uint32_t>(b, i), 0x11u); // qp_num
				n++;
			}
		}
		return n;
	}
};

ibv_send_wr send_wr(uint64_t id, ibv_sge *sg, ibv_send_wr *next = nullptr)
{
	ibv_send_wr wr{};
	wr.wr_id = id;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.next = next;
	return wr;
}

TEST(PostSend, BatchIsPublishedWithOneDoorbell)
{
	FakeQp f(IBV_QPT_RC);
	ibv_sge sg = { 0x1000, 10, 5 };
	ibv_send_wr w3 = send_wr(3, &sg);
	ibv_send_wr w2 = send_wr(2, &sg, &w3);
	ibv_send_wr w1 = send_wr(1, &sg, &w2);
	ibv_send_wr *bad = nullptr;

	EXPECT_EQ(sroce::post_send(f.ib(), &w1, &bad), 0);
	EXPECT_EQ(f.sq.hdr()->producer, 3u);
	EXPECT_EQ(f.doorbells(), 1);
	for (uint32_t i = 0; i < 3; i++) {
		EXPECT_EQ(at<uint64_t>(f.sq.slot(i), 0), i + 1);
		EXPECT_EQ(at<uint64_t>(f.sq.slot(i), 64), 0x1000u);
	}
}

TEST(PostSend, FullRingFailsWithEnomemAtTheFirstThatDoesNotFit)
{
	FakeQp f(IBV_QPT_RC);
	f.sq.set_indices(10, 7); // 4 slots, 3 in flight, 1 free
	ibv_sge sg = { 0x1000, 10, 5 };
	ibv_send_wr w2 = send_wr(2, &sg);
	ibv_send_wr w1 = send_wr(1, &sg, &w2);
	ibv_send_wr *bad = nullptr;

	EXPECT_EQ(sroce::post_send(f.ib(), &w1, &bad), ENOMEM);
	EXPECT_EQ(bad, &w2);
	EXPECT_EQ(f.sq.hdr()->producer, 11u); // w1 is posted
	EXPECT_EQ(at<uint64_t>(f.sq.slot(10), 0), 1u);
	EXPECT_EQ(f.doorbells(), 1);          // and the kernel told
}

TEST(PostSend, InvalidRequestStopsTheList)
{
	FakeQp f(IBV_QPT_UC);
	ibv_sge sg = { 0x1000, 10, 5 };
	ibv_send_wr w2 = send_wr(2, &sg);
	w2.opcode = IBV_WR_RDMA_READ; // not on UC
	ibv_send_wr w1 = send_wr(1, &sg, &w2);
	ibv_send_wr *bad = nullptr;

	EXPECT_EQ(sroce::post_send(f.ib(), &w1, &bad), EINVAL);
	EXPECT_EQ(bad, &w2);
	EXPECT_EQ(f.sq.hdr()->producer, 1u);
	EXPECT_EQ(f.doorbells(), 1);

	// Failing on the first request posts nothing and rings nothing.
	bad = nullptr;
	EXPECT_EQ(sroce::post_send(f.ib(), &w2, &bad), EINVAL);
	EXPECT_EQ(bad, &w2);
	EXPECT_EQ(f.sq.hdr()->producer, 1u);
	EXPECT_EQ(f.doorbells(), 0);
}

TEST(PostSend, RefusedBeforeRts)
{
	FakeQp f(IBV_QPT_RC);
	ibv_sge sg = { 0x1000, 10, 5 };
	ibv_send_wr w1 = send_wr(1, &sg);
	ibv_send_wr *bad = nullptr;

	for (ibv_qp_state s : { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR }) {
		f.ib()->state = s;
		bad = nullptr;
		EXPECT_EQ(sroce::post_send(f.ib(), &w1, &bad), EINVAL);
		EXPECT_EQ(bad, &w1);
	}
	EXPECT_EQ(f.sq.hdr()->producer, 0u);
	EXPECT_EQ(f.doorbells(), 0);
	// In ERR the kernel flushes what is posted; posting is allowed.
	f.ib()->state = IBV_QPS_ERR;
	EXPECT_EQ(sroce::post_send(f.ib(), &w1, &bad), 0);
	EXPECT_EQ(f.doorbells(), 1);
}

// One 10-byte SEND through the extended API (ibv_wr_*): its result.
static int post_ex_send(ibv_qp_ex *x, uint64_t wr_id)
{
	ibv_wr_start(x);
	x->wr_id = wr_id;
	x->wr_flags = 0;
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 5, 0x1000, 10);
	return ibv_wr_complete(x);
}

// One 16-byte receive: its result.
static int post_one_recv(ibv_qp *qp)
{
	ibv_sge sg = { 0x2000, 16, 5 };
	ibv_recv_wr r{};
	ibv_recv_wr *bad = nullptr;

	r.wr_id = 9;
	r.sg_list = &sg;
	r.num_sge = 1;
	return sroce::post_recv(qp, &r, &bad);
}

// SROCE_SQ_FLAG_POLLED: the kernel's SQ poller watches the producer index,
// so posting publishes the WQEs and makes no system call; with the flag
// clear again, the doorbell is back.  The RQ flush doorbell (QP in ERR)
// does not depend on it.
TEST(PostSend, PolledSqNeedsNoDoorbell)
{
	FakeQp f(IBV_QPT_RC);
	ibv_sge sg = { 0x1000, 10, 5 };
	ibv_send_wr w2 = send_wr(2, &sg);
	ibv_send_wr w1 = send_wr(1, &sg, &w2);
	ibv_send_wr *bad = nullptr;

	f.sq.hdr()->flags = SROCE_SQ_FLAG_POLLED;
	EXPECT_EQ(sroce::post_send(f.ib(), &w1, &bad), 0);
	EXPECT_EQ(f.sq.hdr()->producer, 2u);
	EXPECT_EQ(f.doorbells(), 0);

	ibv_qp_ex *x = f.ex();
	EXPECT_EQ(post_ex_send(x, 3), 0);
	EXPECT_EQ(f.sq.hdr()->producer, 3u);
	EXPECT_EQ(f.doorbells(), 0);

	f.sq.hdr()->flags = 0;
	EXPECT_EQ(sroce::post_send(f.ib(), &w2, &bad), 0);
	EXPECT_EQ(f.sq.hdr()->producer, 4u);
	EXPECT_EQ(f.doorbells(), 1);

	// In ERR with the RQ flush flag: the receive doorbell is rung even
	// while the SQ is polled.
	f.sq.hdr()->flags = SROCE_SQ_FLAG_POLLED;
	f.rq.hdr()->flags = SROCE_RQ_FLAG_FLUSH;
	f.ib()->state = IBV_QPS_ERR;
	EXPECT_EQ(post_one_recv(f.ib()), 0);
	EXPECT_EQ(f.doorbells(), 1);
}

TEST(PostSend, DoorbellFailureIsReported)
{
	FakeQp f(IBV_QPT_RC);
	close(f.pipefd[0]); // writes to the pipe now fail with EPIPE
	f.pipefd[0] = open("/dev/null", O_RDONLY);
	signal(SIGPIPE, SIG_IGN);
	ibv_sge sg = { 0x1000, 10, 5 };
	ibv_send_wr w1 = send_wr(1, &sg);
	ibv_send_wr *bad = &w1;

	EXPECT_EQ(sroce::post_send(f.ib(), &w1, &bad), EPIPE);
	EXPECT_EQ(bad, nullptr); // every request was queued
	EXPECT_EQ(f.sq.hdr()->producer, 1u);
}

// With the context's doorbell file, a post is one write() of the QPN into
// it and no uverbs command; the RQ flush doorbell (ERR) goes the same way,
// and a failing write() is the post's error.
TEST(PostSend, DoorbellFileCarriesTheQpn)
{
	FakeQp f(IBV_QPT_RC);
	f.use_doorbell_file();
	ibv_sge sg = { 0x1000, 10, 5 };
	ibv_send_wr w2 = send_wr(2, &sg);
	ibv_send_wr w1 = send_wr(1, &sg, &w2);
	ibv_send_wr *bad = nullptr;

	EXPECT_EQ(sroce::post_send(f.ib(), &w1, &bad), 0);
	EXPECT_EQ(f.sq.hdr()->producer, 2u);
	EXPECT_EQ(f.doorbells(), 1);

	ibv_qp_ex *x = f.ex();
	EXPECT_EQ(post_ex_send(x, 3), 0);
	EXPECT_EQ(f.doorbells(), 1);

	f.rq.hdr()->flags = SROCE_RQ_FLAG_FLUSH;
	f.ib()->state = IBV_QPS_ERR;
	EXPECT_EQ(post_one_recv(f.ib()), 0);
	EXPECT_EQ(f.doorbells(), 1);

	f.ib()->state = IBV_QPS_RTS;
	close(f.dbpipe[0]); // writes to the file now fail with EPIPE
	f.dbpipe[0] = open("/dev/null", O_RDONLY);
	signal(SIGPIPE, SIG_IGN);
	bad = &w1;
	w1.next = nullptr;
	EXPECT_EQ(sroce::post_send(f.ib(), &w1, &bad), EPIPE);
	EXPECT_EQ(bad, nullptr); // the request was queued
	EXPECT_EQ(f.doorbells(), 0);
}

TEST(PostRecv, WritesSlotsWithoutSyscall)
{
	FakeQp f(IBV_QPT_RC);
	ibv_sge sg[2] = { { 0x10, 20, 30 }, { 0x40, 50, 60 } };
	ibv_recv_wr r2{};
	r2.wr_id = 2;
	r2.sg_list = sg;
	r2.num_sge = 2;
	ibv_recv_wr r1 = r2;
	r1.wr_id = 1;
	r1.num_sge = 1;
	r1.next = &r2;
	ibv_recv_wr *bad = nullptr;

	f.ib()->state = IBV_QPS_INIT;
	EXPECT_EQ(sroce::post_recv(f.ib(), &r1, &bad), 0);
	EXPECT_EQ(f.rq.hdr()->producer, 2u);
	EXPECT_EQ(at<uint64_t>(f.rq.slot(0), 0), 1u);
	EXPECT_EQ(at<uint32_t>(f.rq.slot(0), 8), 1u);
	EXPECT_EQ(at<uint64_t>(f.rq.slot(1), 0), 2u);
	EXPECT_EQ(at<uint32_t>(f.rq.slot(1), 8), 2u);
	EXPECT_EQ(at<uint64_t>(f.rq.slot(1), 32), 0x40u);
	EXPECT_EQ(f.doorbells(), 0);

	// Four slots: two more fit, the third is ENOMEM.
	ibv_recv_wr r5 = r2, r4 = r2, r3 = r2;
	r3.next = &r4;
	r4.next = &r5;
	r5.next = nullptr;
	EXPECT_EQ(sroce::post_recv(f.ib(), &r3, &bad), ENOMEM);
	EXPECT_EQ(bad, &r5);
	EXPECT_EQ(f.rq.hdr()->producer, 4u);

	// Too many SGEs for the slot.
	f.rq.hdr()->consumer = 4;
	r5.num_sge = 4;
	EXPECT_EQ(sroce::post_recv(f.ib(), &r5, &bad), EINVAL);
	EXPECT_EQ(bad, &r5);
	EXPECT_EQ(f.rq.hdr()->producer, 4u);
}

TEST(PostRecv, RefusedInResetAndOnSrqQps)
{
	FakeQp f(IBV_QPT_UD);
	ibv_recv_wr r{};
	ibv_recv_wr *bad = nullptr;

	f.ib()->state = IBV_QPS_RESET;
	EXPECT_EQ(sroce::post_recv(f.ib(), &r, &bad), EINVAL);
	EXPECT_EQ(bad, &r);
	f.ib()->state = IBV_QPS_RTR;
	sroce::Srq srq{};
	f.qp->srq = &srq;
	bad = nullptr;
	EXPECT_EQ(sroce::post_recv(f.ib(), &r, &bad), EINVAL);
	EXPECT_EQ(bad, &r);
	EXPECT_EQ(f.rq.hdr()->producer, 0u);
}

TEST(WrEx, BatchOfDifferentOpcodes)
{
	FakeQp f(IBV_QPT_RC);
	ibv_qp_ex *x = f.ex();

	ibv_wr_start(x);
	x->wr_id = 10;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, 0xaa, 0x5000);
	ibv_wr_set_sge(x, 7, 0x9000, 4096);
	x->wr_id = 11;
	x->wr_flags = 0;
	ibv_wr_send_imm(x, htonl(0xcafe));
	ibv_wr_set_inline_data(x, const_cast<char *>("inline!"), 7);
	x->wr_id = 12;
	ibv_wr_atomic_fetch_add(x, 0xbb, 0x6000, 5);
	ibv_sge sgl[2] = { { 0x100, 8, 1 }, { 0x200, 0, 1 } };
	ibv_wr_set_sge_list(x, 1, sgl);
	EXPECT_EQ(f.sq.hdr()->producer, 0u); // nothing visible before complete
	EXPECT_EQ(ibv_wr_complete(x), 0);
	EXPECT_EQ(f.sq.hdr()->producer, 3u);
	EXPECT_EQ(f.doorbells(), 1);

	const uint8_t *s0 = f.sq.slot(0), *s1 = f.sq.slot(1), *s2 = f.sq.slot(2);
	EXPECT_EQ(at<uint64_t>(s0, 0), 10u);
	EXPECT_EQ(s0[8], IBV_WR_RDMA_WRITE);
	EXPECT_EQ(s0[9], 1);
	EXPECT_EQ(at<uint16_t>(s0, 10), SROCE_SEND_SIGNALED);
	EXPECT_EQ(at<uint64_t>(s0, 24), 0x5000u);
	EXPECT_EQ(at<uint32_t>(s0, 32), 0xaau);
	EXPECT_EQ(at<uint64_t>(s0, 64), 0x9000u);
	EXPECT_EQ(at<uint32_t>(s0, 72), 4096u);
	EXPECT_EQ(at<uint32_t>(s0, 76), 7u);

	EXPECT_EQ(at<uint64_t>(s1, 0), 11u);
	EXPECT_EQ(s1[8], IBV_WR_SEND_WITH_IMM);
	EXPECT_EQ(s1[9], 0);
	EXPECT_EQ(at<uint16_t>(s1, 10), SROCE_SEND_INLINE);
	EXPECT_EQ(at<uint32_t>(s1, 12), 7u);
	EXPECT_EQ(at<uint32_t>(s1, 16), htonl(0xcafe));
	EXPECT_EQ(memcmp(s1 + 64, "inline!", 7), 0);

	EXPECT_EQ(s2[8], IBV_WR_ATOMIC_FETCH_AND_ADD);
	EXPECT_EQ(at<uint64_t>(s2, 24), 0x6000u);
	EXPECT_EQ(at<uint64_t>(s2, 32), 5u);
	EXPECT_EQ(at<uint32_t>(s2, 48), 0xbbu);
	EXPECT_EQ(at<uint64_t>(s2, 64), 0x100u);
}

TEST(WrEx, AtomicWrite)
{
	FakeQp f(IBV_QPT_RC);
	ibv_qp_ex *x = f.ex();
	const uint64_t v = 0x0102030405060708ull;

	ibv_wr_start(x);
	x->wr_id = 21;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, 0xcc, 0x7000, &v);
	EXPECT_EQ(ibv_wr_complete(x), 0);
	EXPECT_EQ(f.sq.hdr()->producer, 1u);
	const uint8_t *s0 = f.sq.slot(0);
	EXPECT_EQ(at<uint64_t>(s0, 0), 21u);
	EXPECT_EQ(s0[8], IBV_WR_ATOMIC_WRITE);
	EXPECT_EQ(s0[9], 0);
	EXPECT_EQ(at<uint64_t>(s0, 24), 0x7000u);
	EXPECT_EQ(at<uint32_t>(s0, 32), 0xccu);
	EXPECT_EQ(at<uint64_t>(s0, 40), v);

	// A UC QP cannot carry it: the batch fails, nothing is published.
	FakeQp u(IBV_QPT_UC);
	ibv_wr_start(u.ex());
	ibv_wr_atomic_write(u.ex(), 0xcc, 0x7000, &v);
	EXPECT_EQ(ibv_wr_complete(u.ex()), EINVAL);
	EXPECT_EQ(u.sq.hdr()->producer, 0u);
}

TEST(WrEx, AbortPublishesNothing)
{
	FakeQp f(IBV_QPT_UC);
	ibv_qp_ex *x = f.ex();

	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, 1, 2, 3);
	ibv_wr_abort(x);
	EXPECT_EQ(f.sq.hdr()->producer, 0u);
	EXPECT_EQ(f.doorbells(), 0);
	// The lock was released: a new batch works.
	ibv_wr_start(x);
	ibv_wr_send(x);
	EXPECT_EQ(ibv_wr_complete(x), 0);
	EXPECT_EQ(f.sq.hdr()->producer, 1u);
}

TEST(WrEx, FirstErrorFailsTheWholeBatch)
{
	FakeQp f(IBV_QPT_UC);
	ibv_qp_ex *x = f.ex();
	static char big[200];

	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, big, sizeof(big)); // > 64 bytes of slot
	ibv_wr_send(x);
	EXPECT_EQ(ibv_wr_complete(x), EINVAL);
	EXPECT_EQ(f.sq.hdr()->producer, 0u);
	EXPECT_EQ(f.doorbells(), 0);

	ibv_wr_start(x);
	ibv_wr_rdma_read(x, 1, 2); // RC only
	EXPECT_EQ(ibv_wr_complete(x), EINVAL);

	ibv_wr_start(x);
	for (int i = 0; i < 5; i++) // four slots
		ibv_wr_send(x);
	EXPECT_EQ(ibv_wr_complete(x), ENOMEM);
	EXPECT_EQ(f.sq.hdr()->producer, 0u);

	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_sge sgl[5] = {};
	ibv_wr_set_sge_list(x, 5, sgl); // 128-byte slot: 4 SGEs
	EXPECT_EQ(ibv_wr_complete(x), EINVAL);
	EXPECT_EQ(f.doorbells(), 0);
}

TEST(WrEx, RefusedBeforeRts)
{
	FakeQp f(IBV_QPT_UD);
	ibv_qp_ex *x = f.ex();

	for (ibv_qp_state s : { IBV_QPS_RESET, IBV_QPS_INIT, IBV_QPS_RTR }) {
		f.ib()->state = s;
		ibv_wr_start(x);
		ibv_wr_send(x);
		ibv_wr_set_sge(x, 1, 2, 3);
		EXPECT_EQ(ibv_wr_complete(x), EINVAL);
	}
	EXPECT_EQ(f.sq.hdr()->producer, 0u);
	EXPECT_EQ(f.doorbells(), 0);
	f.ib()->state = IBV_QPS_RTS;
	ibv_wr_start(x);
	ibv_wr_send(x);
	EXPECT_EQ(ibv_wr_complete(x), 0);
	EXPECT_EQ(f.doorbells(), 1);
}

TEST(WrEx, UdAddress)
{
	FakeQp f(IBV_QPT_UD);
	ibv_qp_ex *x = f.ex();
	sroce::Ah ah{};
	ah.ah_num = 9;

	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, &ah.ibah, 0x77, 0x1111);
	ibv_wr_set_sge(x, 1, 0x2000, 64);
	EXPECT_EQ(ibv_wr_complete(x), 0);
	const uint8_t *s = f.sq.slot(0);
	EXPECT_EQ(at<uint32_t>(s, 24), 9u);
	EXPECT_EQ(at<uint32_t>(s, 28), 0x77u);
	EXPECT_EQ(at<uint32_t>(s, 32), 0x1111u);
}

// ---- completion queue ----

struct FakeCq {
	FakeRing ring{ 3, 64 };
	sroce::Cq *cq;

	explicit FakeCq(uint64_t wc_flags = 0)
	{
		cq = static_cast<sroce::Cq *>(calloc(1, sizeof(sroce::Cq)));
		cq->q.lock.init();
		cq->q.ring.attach(ring.mem, 3, 64);
		sroce::install_poll_ops(&cq->vcq.cq_ex, wc_flags);
	}
	~FakeCq() { free(cq); }

	// What the kernel does: write the entry, then release the producer.
	void produce(uint64_t wr_id, uint32_t opcode, uint32_t byte_len)
	{
		uint32_t p = ring.hdr()->producer;
		ib_uverbs_wc wc{};
		wc.wr_id = wr_id;
		wc.status = IBV_WC_SUCCESS;
		wc.opcode = opcode;
		wc.byte_len = byte_len;
		wc.qp_num = 0x11;
		wc.src_qp = 0x22;
		wc.wc_flags = IBV_WC_WITH_IMM;
		wc.ex.imm_data = htonl(0xabcd);
		wc.slid = 0x33;
		wc.sl = 4;
		memcpy(ring.slot(p), &wc, sizeof(wc));
		__atomic_store_n(&ring.hdr()->producer, p + 1, __ATOMIC_RELEASE);
	}
};

TEST(Cq, PollCopiesEntriesAndFreesSlots)
{
	FakeCq f;
	f.ring.set_indices(UINT32_MAX - 1, UINT32_MAX - 1); // wrap while polling
	ibv_wc wc[8];

	EXPECT_EQ(sroce::poll_cq(&f.cq->vcq.cq, 8, wc), 0);
	for (int i = 0; i < 5; i++)
		f.produce(100 + i, IBV_WC_RECV, 10 * i);
	EXPECT_EQ(sroce::poll_cq(&f.cq->vcq.cq, 3, wc), 3);
	EXPECT_EQ(f.ring.hdr()->consumer, 1u);
	for (int i = 0; i < 3; i++) {
		EXPECT_EQ(wc[i].wr_id, 100u + i);
		EXPECT_EQ(wc[i].status, IBV_WC_SUCCESS);
		EXPECT_EQ(wc[i].opcode, IBV_WC_RECV);
		EXPECT_EQ(wc[i].byte_len, 10u * i);
		EXPECT_EQ(wc[i].qp_num, 0x11u);
		EXPECT_EQ(wc[i].src_qp, 0x22u);
		EXPECT_EQ(wc[i].wc_flags, unsigned(IBV_WC_WITH_IMM));
		EXPECT_EQ(wc[i].imm_data, htonl(0xabcd));
		EXPECT_EQ(wc[i].slid, 0x33);
		EXPECT_EQ(wc[i].sl, 4);
	}
	EXPECT_EQ(sroce::poll_cq(&f.cq->vcq.cq, 8, wc), 2);
	EXPECT_EQ(wc[1].wr_id, 104u);
	EXPECT_EQ(sroce::poll_cq(&f.cq->vcq.cq, 8, wc), 0);
	EXPECT_EQ(f.ring.hdr()->consumer, 3u);
}

TEST(Cq, CorruptProducerIsAnError)
{
	FakeCq f;
	ibv_wc wc[2];

	f.ring.set_indices(100, 0);
	EXPECT_LT(sroce::poll_cq(&f.cq->vcq.cq, 2, wc), 0);
	EXPECT_EQ(f.ring.hdr()->consumer, 0u);
}

TEST(Cq, ExtendedPolling)
{
	FakeCq f(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
		 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
		 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL);
	ibv_cq_ex *x = &f.cq->vcq.cq_ex;
	ibv_poll_cq_attr attr{};

	EXPECT_EQ(x->read_dlid_path_bits, nullptr); // not requested
	EXPECT_EQ(ibv_start_poll(x, &attr), ENOENT); // no end_poll after this
	f.produce(1, IBV_WC_SEND, 0);
	f.produce(2, IBV_WC_RDMA_READ, 4096);
	ASSERT_EQ(ibv_start_poll(x, &attr), 0);
	EXPECT_EQ(x->wr_id, 1u);
	EXPECT_EQ(x->status, IBV_WC_SUCCESS);
	EXPECT_EQ(ibv_wc_read_opcode(x), IBV_WC_SEND);
	ASSERT_EQ(ibv_next_poll(x), 0);
	EXPECT_EQ(f.ring.hdr()->consumer, 1u);
	EXPECT_EQ(x->wr_id, 2u);
	EXPECT_EQ(ibv_wc_read_opcode(x), IBV_WC_RDMA_READ);
	EXPECT_EQ(ibv_wc_read_byte_len(x), 4096u);
	EXPECT_EQ(ibv_wc_read_imm_data(x), htonl(0xabcd));
	EXPECT_EQ(ibv_wc_read_qp_num(x), 0x11u);
	EXPECT_EQ(ibv_wc_read_src_qp(x), 0x22u);
	EXPECT_EQ(ibv_wc_read_slid(x), 0x33u);
	EXPECT_EQ(ibv_wc_read_sl(x), 4);
	EXPECT_EQ(ibv_wc_read_wc_flags(x), unsigned(IBV_WC_WITH_IMM));
	EXPECT_EQ(ibv_next_poll(x), ENOENT);
	ibv_end_poll(x);
	EXPECT_EQ(f.ring.hdr()->consumer, 2u);

	// end_poll consumes the entry start_poll made current.
	f.produce(3, IBV_WC_SEND, 0);
	ASSERT_EQ(ibv_start_poll(x, &attr), 0);
	ibv_end_poll(x);
	EXPECT_EQ(f.ring.hdr()->consumer, 3u);
	// And the lock is free again.
	EXPECT_EQ(ibv_start_poll(x, &attr), ENOENT);
	attr.comp_mask = 1;
	EXPECT_EQ(ibv_start_poll(x, &attr), EINVAL);
}

} // namespace

namespace {

TEST(PostSend, QueuesOfZeroEntriesRefuseWithEnomem)
{
	FakeQp f(IBV_QPT_RC);
	f.qp->sq.ring = sroce::RingView();
	f.qp->rq.ring = sroce::RingView();
	ibv_send_wr w{}, *bad = nullptr;
	w.opcode = IBV_WR_SEND;
	EXPECT_EQ(sroce::post_send(f.ib(), &w, &bad), ENOMEM);
	EXPECT_EQ(bad, &w);
	ibv_recv_wr r{}, *rbad = nullptr;
	EXPECT_EQ(sroce::post_recv(f.ib(), &r, &rbad), ENOMEM);
	EXPECT_EQ(rbad, &r);
	ibv_wr_start(f.ex());
	ibv_wr_send(f.ex());
	EXPECT_EQ(ibv_wr_complete(f.ex()), ENOMEM);
	EXPECT_EQ(f.doorbells(), 0);
}

} // namespace

namespace {

// Two threads post to one QP while a third plays the kernel and consumes
// the SQ: the per-queue lock must keep every WQE whole and none lost or
// duplicated.  The "command fd" is /dev/null, so doorbells always succeed.
TEST(PostSend, ConcurrentPostersAgainstAConsumer)
{
	FakeQp f(IBV_QPT_RC, 6);
	int devnull = open("/dev/null", O_WRONLY);
	ASSERT_GE(devnull, 0);
	f.ctx.vctx.context.cmd_fd = devnull;
	constexpr uint64_t per_thread = 20000;
	std::atomic<bool> stop{ false };
	std::vector<uint8_t> seen(2 * per_thread, 0);
	std::atomic<uint64_t> bad{ 0 };

	std::thread kernel([&] {
		sroce::RingView r = f.sq.view();
		uint64_t got = 0;
		// Until everything arrived, or the posters are done and the
		// ring stayed empty (a lost WQE must fail the test, not hang it).
		int idle = 0;
		while (got < 2 * per_thread && idle < 1000) {
			uint32_t cons = r.consumer_owned();
			uint32_t prod = r.producer_acquire();
			if (cons == prod && stop) {
				idle++;
				std::this_thread::sleep_for(std::chrono::milliseconds(1));
			}
			for (; cons != prod; cons++, got++) {
				const uint8_t *s = static_cast<const uint8_t *>(r.slot(cons));
				uint64_t id = at<uint64_t>(s, 0);
				// The SGE carries the wr_id too: a torn WQE shows.
				if (id >= seen.size() || at<uint64_t>(s, 64) != id ||
				    s[8] != IBV_WR_SEND || s[9] != 1 || seen[id]++)
					bad++;
			}
			r.release(cons);
		}
	});
	auto poster = [&](uint64_t base) {
		for (uint64_t i = 0; i < per_thread;) {
			ibv_sge sg = { base + i, 1, 2 };
			ibv_send_wr w{}, *b;
			w.wr_id = base + i;
			w.opcode = IBV_WR_SEND;
			w.sg_list = &sg;
			w.num_sge = 1;
			int r = sroce::post_send(f.ib(), &w, &b);
			if (r == 0)
				i++;
			else if (r != ENOMEM)
				bad++;
		}
	};
	std::thread a(poster, 0), b(poster, per_thread);
	a.join();
	b.join();
	stop = true;
	kernel.join();
	close(devnull);
	f.ctx.vctx.context.cmd_fd = f.pipefd[1];
	EXPECT_EQ(bad.load(), 0u);
	for (uint64_t i = 0; i < seen.size(); i++)
		ASSERT_EQ(seen[i], 1) << "wr_id " << i;
	EXPECT_EQ(f.sq.hdr()->producer, static_cast<uint32_t>(2 * per_thread));
}

} // namespace

namespace {

// In the error state a receive rings the flush doorbell; when that write()
// fails the post reports it as a failed send doorbell does: the receive is
// queued (producer moved, bad_wr NULL) but the error is not swallowed.
TEST(PostRecv, FlushDoorbellFailureIsReported)
{
	FakeQp f(IBV_QPT_RC);
	close(f.pipefd[0]); // writes to the pipe now fail with EPIPE
	f.pipefd[0] = open("/dev/null", O_RDONLY);
	signal(SIGPIPE, SIG_IGN);
	f.rq.hdr()->flags = SROCE_RQ_FLAG_FLUSH;
	f.ib()->state = IBV_QPS_ERR;
	ibv_sge sg = { 0x2000, 16, 5 };
	ibv_recv_wr r{};
	ibv_recv_wr *bad = &r;
	r.wr_id = 9;
	r.sg_list = &sg;
	r.num_sge = 1;

	EXPECT_EQ(sroce::post_recv(f.ib(), &r, &bad), EPIPE);
	EXPECT_EQ(bad, nullptr); // the request was queued
	EXPECT_EQ(f.rq.hdr()->producer, 1u);

	// Outside the error state no doorbell, so nothing to fail.
	f.rq.hdr()->flags = 0;
	f.ib()->state = IBV_QPS_RTS;
	EXPECT_EQ(sroce::post_recv(f.ib(), &r, &bad), 0);
	EXPECT_EQ(f.rq.hdr()->producer, 2u);
}

// A CQ whose ring is an anonymous mapping, as if mapped by create_cq, and
// a memfd standing in for the command fd that the new ring is mapped from.
struct MappedCq {
	sroce::Context ctx{};
	sroce::Cq *cq;
	void *old_map;
	int memfd;

	MappedCq()
	{
		memfd = memfd_create("sroce-cq", 0);
		EXPECT_GE(memfd, 0);
		EXPECT_EQ(ftruncate(memfd, 4096), 0);
		ctx.vctx.context.cmd_fd = memfd;
		cq = static_cast<sroce::Cq *>(calloc(1, sizeof(sroce::Cq)));
		cq->q.lock.init();
		cq->vcq.cq.context = &ctx.vctx.context;
		old_map = mmap(nullptr, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		EXPECT_NE(old_map, MAP_FAILED);
		cq->q.map = old_map;
		cq->q.map_size = 4096;
		cq->q.ring.attach(old_map, 3, 64);
		sroce::install_poll_ops(&cq->vcq.cq_ex, 0);
	}
	~MappedCq()
	{
		if (cq->q.map)
			munmap(cq->q.map, cq->q.map_size);
		free(cq);
		close(memfd);
	}
	static bool mapped(void *p)
	{
		return msync(p, 4096, MS_ASYNC) == 0;
	}
};

TEST(Cq, ReplacedRingIsPolled)
{
	MappedCq m;
	sroce_ring_info info{};
	info.mmap_size = 4096;
	info.log2_entries = 4;
	info.entry_size = 64;
	// The kernel moved one unpolled CQE into the new ring (kernel/cq.c).
	ib_uverbs_wc wc{};
	wc.wr_id = 77;
	auto *hdr = static_cast<sroce_ring_hdr *>(
		mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, m.memfd, 0));
	ASSERT_NE(hdr, MAP_FAILED);
	hdr->consumer = 5;
	hdr->producer = 6;
	memcpy(reinterpret_cast<uint8_t *>(hdr) + SROCE_RING_HDR_SIZE + 5 * 64,
	       &wc, sizeof(wc));

	EXPECT_EQ(sroce::cq_replace_ring(m.cq, &m.ctx.vctx.context, info), 0);
	EXPECT_FALSE(MappedCq::mapped(m.old_map));
	EXPECT_EQ(m.cq->q.ring.size(), 16u);
	ibv_wc out[2];
	ASSERT_EQ(sroce::poll_cq(&m.cq->vcq.cq, 2, out), 1);
	EXPECT_EQ(out[0].wr_id, 77u);
	EXPECT_EQ(hdr->consumer, 6u);
	munmap(hdr, 4096);
}

// The kernel already swapped rings, the new one does not map (here: a bad
// description): the dead old ring is unmapped, the CQ has no ring, and
// every way of polling it fails with EIO instead of touching either ring.
TEST(Cq, UnmappableReplacementLeavesNoRing)
{
	MappedCq m;
	sroce_ring_info bad{}; // entry_size 0: refused before mmap()

	EXPECT_EQ(sroce::cq_replace_ring(m.cq, &m.ctx.vctx.context, bad), EPROTO);
	EXPECT_FALSE(MappedCq::mapped(m.old_map));
	EXPECT_EQ(m.cq->q.map, nullptr);
	EXPECT_FALSE(m.cq->q.ring.attached());

	ibv_wc out[2];
	EXPECT_EQ(sroce::poll_cq(&m.cq->vcq.cq, 2, out), -EIO);
	ibv_poll_cq_attr attr{};
	EXPECT_EQ(ibv_start_poll(&m.cq->vcq.cq_ex, &attr), EIO);
	// The lock was dropped (no end_poll after a failed start_poll).
	EXPECT_EQ(sroce::poll_cq(&m.cq->vcq.cq, 2, out), -EIO);
	sroce::cq_clean(m.cq, 0x11, false); // nothing to clean, no crash
}

// RESET drops a QP's unpolled completions, but on an SRQ its receive
// completions carry the SRQ's buffers: those stay, in order; its send
// completions and other QPs' completions are handled as before.
TEST(Cq, CleanKeepsReceivesOfSrqQps)
{
	FakeCq f;
	auto put = [&](uint64_t id, uint32_t opcode, uint32_t qpn) {
		f.produce(id, opcode, 0);
		auto *wc = reinterpret_cast<ib_uverbs_wc *>(
			f.ring.slot(f.ring.hdr()->producer - 1));
		wc->qp_num = qpn;
	};
	put(1, IBV_WC_SEND, 0x11);
	put(2, IBV_WC_RECV, 0x11);
	put(3, IBV_WC_RECV, 0x99);
	put(4, IBV_WC_RDMA_WRITE, 0x11);
	put(5, IBV_WC_RECV_RDMA_WITH_IMM, 0x11);

	sroce::cq_clean(f.cq, 0x11, true);
	ibv_wc wc[8];
	ASSERT_EQ(sroce::poll_cq(&f.cq->vcq.cq, 8, wc), 3);
	EXPECT_EQ(wc[0].wr_id, 2u);
	EXPECT_EQ(wc[1].wr_id, 3u);
	EXPECT_EQ(wc[2].wr_id, 5u);

	// Without an SRQ everything of the QP goes.
	put(6, IBV_WC_RECV, 0x11);
	put(7, IBV_WC_RECV, 0x99);
	put(8, IBV_WC_SEND, 0x11);
	sroce::cq_clean(f.cq, 0x11, false);
	ASSERT_EQ(sroce::poll_cq(&f.cq->vcq.cq, 8, wc), 1);
	EXPECT_EQ(wc[0].wr_id, 7u);
}

} // namespace
