// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// The provider against a real sroce device, through the public libibverbs
// API, with the build tree's libsroce-rdmav34.so (RDMAV_DRIVERS).  On a
// machine without an sroce device (the build host) every test is skipped
// and says why; in a guest with the module loaded and a device created
// (`rdma link add sroce0 type sroce netdev ...`) they move real data.
// selftests/provider.sh runs them there, on a device it created, and
// fails on any failure or skip:
//
//   scripts/vm -- selftests/run provider.sh
//
// SROCE_DEV=name picks the device; default: the first one whose provider
// is sroce.  Traffic is loopback on one port (two QPs on the same device).
// The kernel module implements every object used here (CQs with resize,
// RC and UD QPs, SRQs, AHs): failing to create one is a failure, not a
// reason to skip.  The only skips are a missing device and a device
// without an IPv4 RoCE v2 GID.
#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <arpa/inet.h>
#include <cerrno>
#include <algorithm>
#include <chrono>
#include <unistd.h>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "abi34.h"

namespace {

struct Env {
	ibv_context *ctx = nullptr;
	std::string skip;
	int gid_index = -1;
	ibv_gid gid{};
};

Env &env()
{
	static Env e = [] {
		Env e;
		std::string so = SROCE_PROVIDER_SO;
		std::string base = so.substr(0, so.size() - strlen("-rdmav34.so"));
		setenv("RDMAV_DRIVERS", base.c_str(), 0);

		int n = 0;
		errno = 0;
		ibv_device **list = ibv_get_device_list(&n);
		if (!list) {
			e.skip = std::string("no RDMA support here (ibv_get_device_list: ") +
				 strerror(errno) + ")";
			return e;
		}
		const char *want = getenv("SROCE_DEV");
		ibv_device *dev = nullptr;
		for (int i = 0; i < n && !dev; i++) {
			// The provider that claimed the device (PABI 34 layout).
			auto *vdev = reinterpret_cast<verbs_device *>(list[i]);
			bool ours = vdev->ops && !strcmp(vdev->ops->name, "sroce");
			if (want ? !strcmp(ibv_get_device_name(list[i]), want) : ours)
				dev = list[i];
		}
		if (!dev) {
			e.skip = want ? std::string("no device named ") + want :
				 "no sroce device (load sroce.ko and `rdma link add`)";
		} else {
			e.ctx = ibv_open_device(dev);
			if (!e.ctx)
				e.skip = std::string("ibv_open_device: ") + strerror(errno);
		}
		ibv_free_device_list(list);
		if (!e.ctx)
			return e;

		// An IPv4 RoCE v2 GID for loopback traffic.
		for (int i = 0; i < 64; i++) {
			ibv_gid g;
			if (ibv_query_gid(e.ctx, 1, i, &g))
				break;
			static const uint8_t v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
			if (!memcmp(g.raw, v4, 12)) {
				e.gid_index = i;
				e.gid = g;
				break;
			}
		}
		return e;
	}();
	return e;
}

class Live : public ::testing::Test {
protected:
	ibv_context *ctx = nullptr;
	ibv_pd *pd = nullptr;

	void SetUp() override
	{
		if (!env().ctx)
			GTEST_SKIP() << env().skip;
		ctx = env().ctx;
		pd = ibv_alloc_pd(ctx);
		ASSERT_NE(pd, nullptr) << strerror(errno);
	}
	void TearDown() override
	{
		if (pd) {
			EXPECT_EQ(ibv_dealloc_pd(pd), 0);
		}
	}

	// A CQ; a failure (reported here) if the kernel refuses it.
	ibv_cq *make_cq(int cqe)
	{
		ibv_cq *cq = ibv_create_cq(ctx, cqe, nullptr, nullptr, 0);
		EXPECT_NE(cq, nullptr) << "ibv_create_cq(" << cqe << "): " << strerror(errno);
		return cq;
	}
};

// Poll until @n completions arrived (or 20 s: TCG guests are slow).
std::vector<ibv_wc> poll_n(ibv_cq *cq, int n)
{
	std::vector<ibv_wc> out;
	auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
	while ((int)out.size() < n && std::chrono::steady_clock::now() < end) {
		ibv_wc wc[8];
		int want = std::min<int>(8, n - static_cast<int>(out.size()));
		int got = ibv_poll_cq(cq, want, wc);
		EXPECT_GE(got, 0);
		if (got < 0)
			break;
		out.insert(out.end(), wc, wc + got);
	}
	return out;
}

TEST_F(Live, QueryDeviceAndPort)
{
	ibv_device_attr a;
	ASSERT_EQ(ibv_query_device(ctx, &a), 0);
	EXPECT_NE(strchr(a.fw_ver, '.'), nullptr) << a.fw_ver;
	EXPECT_GT(a.max_qp, 0);
	EXPECT_GT(a.max_cqe, 0);
	ibv_port_attr p;
	ASSERT_EQ(ibv_query_port(ctx, 1, &p), 0);
	EXPECT_EQ(p.link_layer, IBV_LINK_LAYER_ETHERNET);
	EXPECT_NE(ibv_query_port(ctx, 2, &p), 0);
}

TEST_F(Live, RegisterMemory)
{
	std::vector<char> buf(1 << 16);
	ibv_mr *mr = ibv_reg_mr(pd, buf.data(), buf.size(),
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(mr, nullptr) << strerror(errno);
	EXPECT_EQ(mr->addr, buf.data());
	EXPECT_EQ(mr->length, buf.size());
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
}

TEST_F(Live, CompletionQueueLifecycle)
{
	ibv_cq *cq = make_cq(16);
	ASSERT_NE(cq, nullptr);
	EXPECT_GE(cq->cqe, 16);
	ibv_wc wc;
	EXPECT_EQ(ibv_poll_cq(cq, 1, &wc), 0);
	EXPECT_EQ(ibv_req_notify_cq(cq, 0), 0);
	// sroce_resize_cq (kernel/cq.c): resizing is supported.
	int r = ibv_resize_cq(cq, 200);
	EXPECT_EQ(r, 0) << strerror(r);
	EXPECT_GE(cq->cqe, 200);
	EXPECT_EQ(ibv_poll_cq(cq, 1, &wc), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);

	ibv_cq_init_attr_ex ax{};
	ax.cqe = 8;
	ax.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
	ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ax);
	ASSERT_NE(cqx, nullptr) << strerror(errno);
	ibv_poll_cq_attr pa{};
	EXPECT_EQ(ibv_start_poll(cqx, &pa), ENOENT);
	EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), 0);
	ax.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	EXPECT_EQ(ibv_create_cq_ex(ctx, &ax), nullptr);
	EXPECT_EQ(errno, EOPNOTSUPP);
}

// Two connected RC QPs on one device, their CQs and a registered buffer.
struct RcPair {
	ibv_cq *cq[2] = {};
	ibv_qp *qp[2] = {};
	std::vector<uint8_t> buf;
	ibv_mr *mr = nullptr;
	bool ok = false;
	std::string why; // the first step that failed, with its errno

	RcPair(ibv_context *ctx, ibv_pd *pd, ibv_qp_type type, bool ex)
		: buf(1 << 20)
	{
		for (int i = 0; i < 2; i++) {
			cq[i] = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
			if (!cq[i]) {
				why = std::string("ibv_create_cq: ") + strerror(errno);
				return;
			}
		}
		mr = ibv_reg_mr(pd, buf.data(), buf.size(),
				IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
		if (!mr) {
			why = std::string("ibv_reg_mr: ") + strerror(errno);
			return;
		}
		for (int i = 0; i < 2; i++) {
			ibv_qp_init_attr_ex a{};
			a.send_cq = a.recv_cq = cq[i];
			a.qp_type = type;
			a.cap = { 32, 32, 4, 4, 64 };
			a.comp_mask = IBV_QP_INIT_ATTR_PD;
			a.pd = pd;
			if (ex) {
				a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
				a.send_ops_flags = IBV_QP_EX_WITH_SEND |
					IBV_QP_EX_WITH_RDMA_WRITE |
					(type == IBV_QPT_RC ? IBV_QP_EX_WITH_RDMA_READ |
					 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD : 0);
			}
			qp[i] = ibv_create_qp_ex(ctx, &a);
			if (!qp[i]) {
				why = std::string("ibv_create_qp_ex: ") + strerror(errno);
				return;
			}
			EXPECT_GE(a.cap.max_inline_data, 64u);
		}
		ok = connect();
	}

	bool connect()
	{
		for (int i = 0; i < 2; i++) {
			ibv_qp_attr a{};
			a.qp_state = IBV_QPS_INIT;
			a.port_num = 1;
			a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
					    IBV_ACCESS_REMOTE_ATOMIC;
			int m = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS;
			if (int r = ibv_modify_qp(qp[i], &a, m)) {
				ADD_FAILURE() << "INIT: " << strerror(r);
				return false;
			}
		}
		for (int i = 0; i < 2; i++) {
			ibv_qp_attr a{};
			a.qp_state = IBV_QPS_RTR;
			a.path_mtu = IBV_MTU_1024;
			a.dest_qp_num = qp[1 - i]->qp_num;
			a.rq_psn = 100 * (1 - i) + 7;
			a.max_dest_rd_atomic = 4;
			a.min_rnr_timer = 1;
			a.ah_attr.is_global = 1;
			a.ah_attr.grh.dgid = env().gid;
			a.ah_attr.grh.sgid_index = env().gid_index;
			a.ah_attr.grh.hop_limit = 64;
			a.ah_attr.port_num = 1;
			int m = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
			if (qp[i]->qp_type == IBV_QPT_RC)
				m |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
			if (int r = ibv_modify_qp(qp[i], &a, m)) {
				ADD_FAILURE() << "RTR: " << strerror(r);
				return false;
			}
			a = {};
			a.qp_state = IBV_QPS_RTS;
			a.sq_psn = 100 * i + 7;
			a.timeout = 14;
			a.retry_cnt = 7;
			a.rnr_retry = 7;
			a.max_rd_atomic = 4;
			m = IBV_QP_STATE | IBV_QP_SQ_PSN;
			if (qp[i]->qp_type == IBV_QPT_RC)
				m |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
			if (int r = ibv_modify_qp(qp[i], &a, m)) {
				ADD_FAILURE() << "RTS: " << strerror(r);
				return false;
			}
		}
		return true;
	}

	~RcPair()
	{
		for (int i = 0; i < 2; i++) {
			if (qp[i]) {
				EXPECT_EQ(ibv_destroy_qp(qp[i]), 0);
			}
		}
		if (mr) {
			EXPECT_EQ(ibv_dereg_mr(mr), 0);
		}
		for (int i = 0; i < 2; i++) {
			if (cq[i]) {
				EXPECT_EQ(ibv_destroy_cq(cq[i]), 0);
			}
		}
	}

	uint64_t addr(size_t off) { return reinterpret_cast<uintptr_t>(buf.data() + off); }
	ibv_sge sge(size_t off, uint32_t len) { return { addr(off), len, mr->lkey }; }

	void post_recv(int q, uint64_t id, size_t off, uint32_t len)
	{
		ibv_sge s = sge(off, len);
		ibv_recv_wr wr{}, *bad;
		wr.wr_id = id;
		wr.sg_list = &s;
		wr.num_sge = 1;
		ASSERT_EQ(ibv_post_recv(qp[q], &wr, &bad), 0);
	}
};

void fill(uint8_t *p, size_t n, uint8_t seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = static_cast<uint8_t>(seed + i * 7);
}

TEST_F(Live, RcSendWriteReadAtomics)
{
	if (env().gid_index < 0)
		GTEST_SKIP() << "no IPv4 RoCE GID on port 1";
	RcPair p(ctx, pd, IBV_QPT_RC, false);
	ASSERT_TRUE(p.qp[0] && p.qp[1]) << p.why;
	ASSERT_TRUE(p.ok);

	// SEND of 3000 bytes (3 packets at MTU 1024) from two SGEs.
	fill(&p.buf[0], 3000, 1);
	memset(&p.buf[65536], 0, 4096);
	p.post_recv(1, 77, 65536, 4096);
	ibv_sge sg[2] = { p.sge(0, 1000), p.sge(1000, 2000) };
	ibv_send_wr wr{}, *bad;
	wr.wr_id = 1;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_SIGNALED;
	ASSERT_EQ(ibv_post_send(p.qp[0], &wr, &bad), 0);
	auto s = poll_n(p.cq[0], 1);
	auto r = poll_n(p.cq[1], 1);
	ASSERT_EQ(s.size(), 1u);
	EXPECT_EQ(s[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(s[0].status);
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(s[0].opcode, IBV_WC_SEND);
	EXPECT_EQ(s[0].wr_id, 1u);
	EXPECT_EQ(r[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(r[0].status);
	EXPECT_EQ(r[0].opcode, IBV_WC_RECV);
	EXPECT_EQ(r[0].wr_id, 77u);
	EXPECT_EQ(r[0].byte_len, 3000u);
	EXPECT_EQ(r[0].qp_num, p.qp[1]->qp_num);
	EXPECT_EQ(memcmp(&p.buf[0], &p.buf[65536], 3000), 0);

	// Inline SEND with immediate.
	p.post_recv(1, 78, 65536, 4096);
	char msg[] = "inline payload";
	ibv_sge isg = { reinterpret_cast<uintptr_t>(msg), sizeof(msg), 0 };
	wr = {};
	wr.wr_id = 2;
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(0x12345678);
	wr.sg_list = &isg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ASSERT_EQ(ibv_post_send(p.qp[0], &wr, &bad), 0);
	s = poll_n(p.cq[0], 1);
	r = poll_n(p.cq[1], 1);
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].status, IBV_WC_SUCCESS);
	EXPECT_EQ(r[0].byte_len, sizeof(msg));
	EXPECT_TRUE(r[0].wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(r[0].imm_data, htonl(0x12345678));
	EXPECT_STREQ(reinterpret_cast<char *>(&p.buf[65536]), msg);

	// RDMA WRITE 10000 bytes into the peer's buffer, unsignaled + signaled.
	fill(&p.buf[0], 10000, 9);
	memset(&p.buf[131072], 0, 10000);
	sg[0] = p.sge(0, 10000);
	wr = {};
	wr.wr_id = 3;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = p.addr(131072);
	wr.wr.rdma.rkey = p.mr->rkey;
	ASSERT_EQ(ibv_post_send(p.qp[0], &wr, &bad), 0);
	s = poll_n(p.cq[0], 1);
	ASSERT_EQ(s.size(), 1u);
	EXPECT_EQ(s[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(s[0].status);
	EXPECT_EQ(s[0].opcode, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(memcmp(&p.buf[0], &p.buf[131072], 10000), 0);

	// RDMA READ it back somewhere else.
	memset(&p.buf[262144], 0, 10000);
	sg[0] = p.sge(262144, 10000);
	wr.wr_id = 4;
	wr.opcode = IBV_WR_RDMA_READ;
	ASSERT_EQ(ibv_post_send(p.qp[0], &wr, &bad), 0);
	s = poll_n(p.cq[0], 1);
	ASSERT_EQ(s.size(), 1u);
	EXPECT_EQ(s[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(s[0].status);
	EXPECT_EQ(s[0].opcode, IBV_WC_RDMA_READ);
	EXPECT_EQ(s[0].byte_len, 10000u);
	EXPECT_EQ(memcmp(&p.buf[0], &p.buf[262144], 10000), 0);

	// Atomics on an 8-byte word.
	uint64_t *word = reinterpret_cast<uint64_t *>(&p.buf[524288]);
	uint64_t *old = reinterpret_cast<uint64_t *>(&p.buf[524296]);
	*word = 40;
	sg[0] = p.sge(524296, 8);
	wr = {};
	wr.wr_id = 5;
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.atomic.remote_addr = p.addr(524288);
	wr.wr.atomic.rkey = p.mr->rkey;
	wr.wr.atomic.compare_add = 2;
	ASSERT_EQ(ibv_post_send(p.qp[0], &wr, &bad), 0);
	s = poll_n(p.cq[0], 1);
	ASSERT_EQ(s.size(), 1u);
	EXPECT_EQ(s[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(s[0].status);
	EXPECT_EQ(s[0].opcode, IBV_WC_FETCH_ADD);
	EXPECT_EQ(*old, 40u);
	EXPECT_EQ(*word, 42u);
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.wr.atomic.compare_add = 42;
	wr.wr.atomic.swap = 0x1122334455667788ull;
	ASSERT_EQ(ibv_post_send(p.qp[0], &wr, &bad), 0);
	s = poll_n(p.cq[0], 1);
	ASSERT_EQ(s.size(), 1u);
	EXPECT_EQ(s[0].opcode, IBV_WC_COMP_SWAP);
	EXPECT_EQ(*old, 42u);
	EXPECT_EQ(*word, 0x1122334455667788ull);
}

TEST_F(Live, QpExBatch)
{
	if (env().gid_index < 0)
		GTEST_SKIP() << "no IPv4 RoCE GID on port 1";
	RcPair p(ctx, pd, IBV_QPT_RC, true);
	ASSERT_TRUE(p.qp[0] && p.qp[1]) << p.why;
	ASSERT_TRUE(p.ok);
	ibv_qp_ex *x = ibv_qp_to_qp_ex(p.qp[0]);
	ASSERT_NE(x, nullptr);

	fill(&p.buf[0], 5000, 3);
	memset(&p.buf[131072], 0, 5000);
	p.post_recv(1, 9, 65536, 100);
	ibv_wr_start(x);
	x->wr_id = 20;
	x->wr_flags = 0;
	ibv_wr_rdma_write(x, p.mr->rkey, p.addr(131072));
	ibv_wr_set_sge(x, p.mr->lkey, p.addr(0), 5000);
	x->wr_id = 21;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, const_cast<char *>("done"), 5);
	ASSERT_EQ(ibv_wr_complete(x), 0);
	auto s = poll_n(p.cq[0], 1);
	auto r = poll_n(p.cq[1], 1);
	ASSERT_EQ(s.size(), 1u);
	EXPECT_EQ(s[0].status, IBV_WC_SUCCESS) << ibv_wc_status_str(s[0].status);
	EXPECT_EQ(s[0].wr_id, 21u); // the unsignaled write completes silently
	ASSERT_EQ(r.size(), 1u);
	EXPECT_EQ(r[0].byte_len, 5u);
	EXPECT_STREQ(reinterpret_cast<char *>(&p.buf[65536]), "done");
	// Ordering: the write landed before the send was received.
	EXPECT_EQ(memcmp(&p.buf[0], &p.buf[131072], 5000), 0);
}

TEST_F(Live, UdSendWithAddressHandle)
{
	if (env().gid_index < 0)
		GTEST_SKIP() << "no IPv4 RoCE GID on port 1";
	ibv_cq *cq = make_cq(16);
	ASSERT_NE(cq, nullptr);
	std::vector<uint8_t> buf(8192);
	ibv_mr *mr = ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(mr, nullptr);
	ibv_qp *qp[2] = {};
	for (auto &q : qp) {
		ibv_qp_init_attr a{};
		a.send_cq = a.recv_cq = cq;
		a.qp_type = IBV_QPT_UD;
		a.cap = { 8, 8, 1, 1, 0 };
		q = ibv_create_qp(pd, &a);
		ASSERT_NE(q, nullptr) << "UD QP: " << strerror(errno);
		ibv_qp_attr m{};
		m.qp_state = IBV_QPS_INIT;
		m.port_num = 1;
		m.qkey = 0x11111111;
		ASSERT_EQ(ibv_modify_qp(q, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					IBV_QP_PORT | IBV_QP_QKEY), 0);
		m = {};
		m.qp_state = IBV_QPS_RTR;
		ASSERT_EQ(ibv_modify_qp(q, &m, IBV_QP_STATE), 0);
		m.qp_state = IBV_QPS_RTS;
		m.sq_psn = 1;
		ASSERT_EQ(ibv_modify_qp(q, &m, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	}
	ibv_ah_attr aa{};
	aa.is_global = 1;
	aa.grh.dgid = env().gid;
	aa.grh.sgid_index = env().gid_index;
	aa.grh.hop_limit = 64;
	aa.port_num = 1;
	ibv_ah *ah = ibv_create_ah(pd, &aa);
	ASSERT_NE(ah, nullptr) << strerror(errno);

	ibv_sge rs = { reinterpret_cast<uintptr_t>(&buf[4096]), 40 + 512, mr->lkey };
	ibv_recv_wr rw{}, *rbad;
	rw.wr_id = 5;
	rw.sg_list = &rs;
	rw.num_sge = 1;
	ASSERT_EQ(ibv_post_recv(qp[1], &rw, &rbad), 0);
	fill(&buf[0], 512, 5);
	ibv_sge ss = { reinterpret_cast<uintptr_t>(&buf[0]), 512, mr->lkey };
	ibv_send_wr sw{}, *sbad;
	sw.wr_id = 6;
	sw.opcode = IBV_WR_SEND;
	sw.sg_list = &ss;
	sw.num_sge = 1;
	sw.send_flags = IBV_SEND_SIGNALED;
	sw.wr.ud.ah = ah;
	sw.wr.ud.remote_qpn = qp[1]->qp_num;
	sw.wr.ud.remote_qkey = 0x11111111;
	ASSERT_EQ(ibv_post_send(qp[0], &sw, &sbad), 0);
	auto wc = poll_n(cq, 2);
	ASSERT_EQ(wc.size(), 2u);
	for (const ibv_wc &w : wc) {
		EXPECT_EQ(w.status, IBV_WC_SUCCESS) << ibv_wc_status_str(w.status);
		if (w.wr_id == 5) {
			EXPECT_EQ(w.opcode, IBV_WC_RECV);
			EXPECT_EQ(w.byte_len, 40u + 512);
			EXPECT_EQ(w.src_qp, qp[0]->qp_num);
			EXPECT_TRUE(w.wc_flags & IBV_WC_GRH);
		} else {
			EXPECT_EQ(w.wr_id, 6u);
			EXPECT_EQ(w.opcode, IBV_WC_SEND);
		}
	}
	EXPECT_EQ(memcmp(&buf[0], &buf[4096 + 40], 512), 0);
	EXPECT_EQ(ibv_destroy_ah(ah), 0);
	for (auto q : qp)
		EXPECT_EQ(ibv_destroy_qp(q), 0);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

TEST_F(Live, PostErrorsMatchRdmaCore)
{
	ibv_cq *cq = make_cq(16);
	ASSERT_NE(cq, nullptr);
	ibv_qp_init_attr a{};
	a.send_cq = a.recv_cq = cq;
	a.qp_type = IBV_QPT_RC;
	a.cap = { 2, 2, 1, 1, 0 };
	ibv_qp *qp = ibv_create_qp(pd, &a);
	ASSERT_NE(qp, nullptr) << "RC QP: " << strerror(errno);
	ibv_send_wr wr{}, *bad = nullptr;
	wr.opcode = IBV_WR_SEND;
	// RESET: sends refused up front.
	EXPECT_EQ(ibv_post_send(qp, &wr, &bad), EINVAL);
	EXPECT_EQ(bad, &wr);
	ibv_recv_wr rw{}, *rbad = nullptr;
	EXPECT_EQ(ibv_post_recv(qp, &rw, &rbad), EINVAL);
	ibv_qp_attr m{};
	m.qp_state = IBV_QPS_INIT;
	m.port_num = 1;
	ASSERT_EQ(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), 0);
	// INIT: receives fine until the ring is full.
	int posted = 0;
	while (ibv_post_recv(qp, &rw, &rbad) == 0 && posted < 100000)
		posted++;
	EXPECT_GE(posted, 2);
	EXPECT_EQ(ibv_post_recv(qp, &rw, &rbad), ENOMEM);
	rw.num_sge = a.cap.max_recv_sge + 1;
	ibv_sge sg[8] = {};
	rw.sg_list = sg;
	EXPECT_NE(ibv_post_recv(qp, &rw, &rbad), 0);
	ibv_qp_attr qa;
	ibv_qp_init_attr qi;
	ASSERT_EQ(ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_CAP, &qi), 0);
	EXPECT_EQ(qa.qp_state, IBV_QPS_INIT);
	EXPECT_GE(qi.cap.max_send_wr, 2u);
	EXPECT_EQ(ibv_destroy_qp(qp), 0);
	EXPECT_EQ(ibv_destroy_cq(cq), 0);
}

} // namespace

namespace {

// RC SEND received through an SRQ, completion through the extended CQ API
// and a completion channel event.
TEST_F(Live, SrqCqExAndCompletionEvent)
{
	if (env().gid_index < 0)
		GTEST_SKIP() << "no IPv4 RoCE GID on port 1";
	ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	ASSERT_NE(ch, nullptr);
	ibv_cq_init_attr_ex ax{};
	ax.cqe = 16;
	ax.channel = ch;
	ax.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM |
		      IBV_WC_EX_WITH_IMM;
	ibv_cq_ex *rcq = ibv_create_cq_ex(ctx, &ax);
	ASSERT_NE(rcq, nullptr) << strerror(errno);
	ibv_cq *scq = make_cq(16);
	ASSERT_NE(scq, nullptr);
	ibv_srq_init_attr sa{};
	sa.attr.max_wr = 8;
	sa.attr.max_sge = 2;
	ibv_srq *srq = ibv_create_srq(pd, &sa);
	ASSERT_NE(srq, nullptr) << "SRQ: " << strerror(errno);
	std::vector<uint8_t> buf(1 << 16);
	ibv_mr *mr = ibv_reg_mr(pd, buf.data(), buf.size(), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(mr, nullptr);

	ibv_qp *qp[2] = {};
	for (int i = 0; i < 2; i++) {
		ibv_qp_init_attr a{};
		a.send_cq = scq;
		a.recv_cq = ibv_cq_ex_to_cq(rcq);
		a.srq = i == 1 ? srq : nullptr;
		a.qp_type = IBV_QPT_RC;
		a.cap = { 8, i == 1 ? 0u : 8u, 1, 1, 0 };
		qp[i] = ibv_create_qp(pd, &a);
		ASSERT_NE(qp[i], nullptr) << strerror(errno);
	}
	// Reuse the RC connection steps.
	RcPair fake(ctx, pd, IBV_QPT_RC, false);
	std::swap(fake.qp[0], qp[0]);
	std::swap(fake.qp[1], qp[1]);
	ASSERT_TRUE(fake.connect());
	std::swap(fake.qp[0], qp[0]);
	std::swap(fake.qp[1], qp[1]);

	ibv_sge rs[2] = { { reinterpret_cast<uintptr_t>(&buf[4096]), 100, mr->lkey },
			  { reinterpret_cast<uintptr_t>(&buf[8192]), 1000, mr->lkey } };
	ibv_recv_wr rw{}, *rbad;
	rw.wr_id = 31;
	rw.sg_list = rs;
	rw.num_sge = 2;
	ASSERT_EQ(ibv_post_srq_recv(srq, &rw, &rbad), 0);
	// A receive posted to a QP with an SRQ is refused.
	ibv_recv_wr *qbad = nullptr;
	EXPECT_EQ(ibv_post_recv(qp[1], &rw, &qbad), EINVAL);

	ASSERT_EQ(ibv_req_notify_cq(ibv_cq_ex_to_cq(rcq), 0), 0);
	fill(&buf[0], 600, 11);
	ibv_sge ss = { reinterpret_cast<uintptr_t>(&buf[0]), 600, mr->lkey };
	ibv_send_wr sw{}, *sbad;
	sw.wr_id = 32;
	sw.opcode = IBV_WR_SEND_WITH_IMM;
	sw.imm_data = htonl(0xfeedbeef);
	sw.sg_list = &ss;
	sw.num_sge = 1;
	ASSERT_EQ(ibv_post_send(qp[0], &sw, &sbad), 0);

	// The event arrives on the channel (blocking read, bounded by alarm).
	ibv_cq *ev_cq = nullptr;
	void *ev_ctx = nullptr;
	alarm(30);
	ASSERT_EQ(ibv_get_cq_event(ch, &ev_cq, &ev_ctx), 0);
	alarm(0);
	EXPECT_EQ(ev_cq, ibv_cq_ex_to_cq(rcq));
	ibv_ack_cq_events(ev_cq, 1);

	ibv_poll_cq_attr pa{};
	ASSERT_EQ(ibv_start_poll(rcq, &pa), 0);
	EXPECT_EQ(rcq->wr_id, 31u);
	EXPECT_EQ(rcq->status, IBV_WC_SUCCESS) << ibv_wc_status_str(rcq->status);
	EXPECT_EQ(ibv_wc_read_opcode(rcq), IBV_WC_RECV);
	EXPECT_EQ(ibv_wc_read_byte_len(rcq), 600u);
	EXPECT_EQ(ibv_wc_read_qp_num(rcq), qp[1]->qp_num);
	EXPECT_EQ(ibv_wc_read_imm_data(rcq), htonl(0xfeedbeef));
	EXPECT_TRUE(ibv_wc_read_wc_flags(rcq) & IBV_WC_WITH_IMM);
	EXPECT_EQ(ibv_next_poll(rcq), ENOENT);
	ibv_end_poll(rcq);
	// Scattered over the two receive SGEs: 100 bytes, then 500.
	EXPECT_EQ(memcmp(&buf[0], &buf[4096], 100), 0);
	EXPECT_EQ(memcmp(&buf[100], &buf[8192], 500), 0);

	for (auto q : qp)
		EXPECT_EQ(ibv_destroy_qp(q), 0);
	EXPECT_EQ(ibv_destroy_srq(srq), 0);
	EXPECT_EQ(ibv_dereg_mr(mr), 0);
	EXPECT_EQ(ibv_destroy_cq(scq), 0);
	EXPECT_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(rcq)), 0);
	EXPECT_EQ(ibv_destroy_comp_channel(ch), 0);
}

// Completions survive a resize that happens while they are unpolled.
TEST_F(Live, ResizeKeepsPendingCompletions)
{
	if (env().gid_index < 0)
		GTEST_SKIP() << "no IPv4 RoCE GID on port 1";
	RcPair p(ctx, pd, IBV_QPT_RC, false);
	ASSERT_TRUE(p.qp[0] && p.qp[1]) << p.why;
	ASSERT_TRUE(p.ok);
	ibv_send_wr wr{}, *bad;
	ibv_sge sg = p.sge(0, 64);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = p.addr(4096);
	wr.wr.rdma.rkey = p.mr->rkey;
	for (int i = 0; i < 5; i++) {
		wr.wr_id = 100 + i;
		ASSERT_EQ(ibv_post_send(p.qp[0], &wr, &bad), 0);
	}
	// Poll the first; give the other four time to land (they complete in
	// order, so the first being there means the rest follow shortly),
	// then resize with them unpolled.
	ibv_wc first;
	ASSERT_EQ(poll_n(p.cq[0], 1).size(), 1u);
	sleep(2);
	int r = ibv_resize_cq(p.cq[0], 256);
	ASSERT_EQ(r, 0) << strerror(r);
	EXPECT_GE(p.cq[0]->cqe, 256);
	auto rest = poll_n(p.cq[0], 4);
	ASSERT_EQ(rest.size(), 4u);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(rest[i].wr_id, 101u + i);
		EXPECT_EQ(rest[i].status, IBV_WC_SUCCESS);
	}
	EXPECT_EQ(ibv_poll_cq(p.cq[0], 1, &first), 0);
}

} // namespace

namespace {

// Many more messages than ring slots: both rings wrap many times, receives
// are reposted as they complete (the way perftest's send tests run).
TEST_F(Live, RcSendStreamWrapsRings)
{
	if (env().gid_index < 0)
		GTEST_SKIP() << "no IPv4 RoCE GID on port 1";
	RcPair p(ctx, pd, IBV_QPT_RC, false);
	ASSERT_TRUE(p.qp[0] && p.qp[1]) << p.why;
	ASSERT_TRUE(p.ok);

	// The RQ is kept exactly full (32 = max_recv_wr, a power of two): a
	// receive completion must free its RQ slot before it is reported, or
	// the repost below finds the ring full (ENOMEM).
	constexpr int depth = 32, total = 1000, sz = 64;
	for (int i = 0; i < depth; i++)
		p.post_recv(1, i, 65536 + i * sz, sz);
	int sent = 0, recvd = 0, send_done = 0;
	auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
	while (recvd < total && std::chrono::steady_clock::now() < end) {
		// Keep at most depth sends in flight (the receiver has depth RWQEs).
		while (sent < total && sent - recvd < depth && sent - send_done < 32) {
			uint32_t *msg = reinterpret_cast<uint32_t *>(&p.buf[(sent % 128) * sz]);
			msg[0] = sent;
			ibv_sge sg = p.sge((sent % 128) * sz, sz);
			ibv_send_wr wr{}, *bad;
			wr.wr_id = sent;
			wr.opcode = IBV_WR_SEND;
			wr.sg_list = &sg;
			wr.num_sge = 1;
			wr.send_flags = IBV_SEND_SIGNALED;
			int r = ibv_post_send(p.qp[0], &wr, &bad);
			ASSERT_EQ(r, 0) << "send " << sent << ": " << strerror(r);
			sent++;
		}
		ibv_wc wc[16];
		int n = ibv_poll_cq(p.cq[0], 16, wc);
		ASSERT_GE(n, 0);
		for (int i = 0; i < n; i++) {
			ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[i].status);
			ASSERT_EQ(wc[i].wr_id, static_cast<uint64_t>(send_done));
			send_done++;
		}
		n = ibv_poll_cq(p.cq[1], 16, wc);
		ASSERT_GE(n, 0);
		for (int i = 0; i < n; i++) {
			ASSERT_EQ(wc[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc[i].status);
			ASSERT_EQ(wc[i].byte_len, static_cast<uint32_t>(sz));
			int slot = static_cast<int>(wc[i].wr_id);
			uint32_t got;
			memcpy(&got, &p.buf[65536 + slot * sz], 4);
			ASSERT_EQ(got, static_cast<uint32_t>(recvd)) << "in order";
			recvd++;
			// Repost the same buffer.
			ibv_sge s = p.sge(65536 + slot * sz, sz);
			ibv_recv_wr rw{}, *rbad;
			rw.wr_id = slot;
			rw.sg_list = &s;
			rw.num_sge = 1;
			int r = ibv_post_recv(p.qp[1], &rw, &rbad);
			ASSERT_EQ(r, 0) << "repost after " << recvd << ": " << strerror(r);
		}
	}
	EXPECT_EQ(recvd, total);
	while (send_done < total && std::chrono::steady_clock::now() < end) {
		ibv_wc wc[16];
		int n = ibv_poll_cq(p.cq[0], 16, wc);
		ASSERT_GE(n, 0);
		send_done += n;
	}
	EXPECT_EQ(send_done, total);
}

} // namespace

namespace {

// IB semantics: once the completion of a send WQE has been polled, its SQ
// slot is free.  Keep the SQ exactly full and post one WR per polled
// completion: ENOMEM here means the kernel reported a completion before
// releasing the slot (consumer index) it occupied.
TEST_F(Live, SqSlotIsFreeOnceItsCompletionIsPolled)
{
	if (env().gid_index < 0)
		GTEST_SKIP() << "no IPv4 RoCE GID on port 1";
	RcPair p(ctx, pd, IBV_QPT_RC, false);
	ASSERT_TRUE(p.qp[0] && p.qp[1]) << p.why;
	ASSERT_TRUE(p.ok);
	ibv_qp_attr qa;
	ibv_qp_init_attr qi;
	ASSERT_EQ(ibv_query_qp(p.qp[0], &qa, IBV_QP_CAP, &qi), 0);
	const int depth = static_cast<int>(qi.cap.max_send_wr), total = 3000;
	ASSERT_GE(depth, 1);

	ibv_sge sg = p.sge(0, 8);
	ibv_send_wr wr{}, *bad;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = p.addr(8192);
	wr.wr.rdma.rkey = p.mr->rkey;
	int posted = 0, done = 0;
	auto end = std::chrono::steady_clock::now() + std::chrono::seconds(90);
	while (done < total && std::chrono::steady_clock::now() < end) {
		while (posted < total && posted - done < depth) {
			wr.wr_id = posted;
			int r = ibv_post_send(p.qp[0], &wr, &bad);
			ASSERT_EQ(r, 0) << "post " << posted << " with " << posted - done
					<< " of " << depth << " in flight: " << strerror(r);
			posted++;
		}
		ibv_wc wc;
		int n = ibv_poll_cq(p.cq[0], 1, &wc);
		ASSERT_GE(n, 0);
		if (n) {
			ASSERT_EQ(wc.status, IBV_WC_SUCCESS) << ibv_wc_status_str(wc.status);
			ASSERT_EQ(wc.wr_id, static_cast<uint64_t>(done));
			done++;
		}
	}
	EXPECT_EQ(done, total);
}

} // namespace
