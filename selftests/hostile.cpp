// SPDX-License-Identifier: GPL-2.0-only
/*
 * hostile: a process that lies to sroce through every channel it has.
 *
 *   hostile -d DEV -g GIDX
 *
 * The rings a process maps are hostile memory to the kernel (Documentation/
 * abi.rst).  This program reaches into the provider's own objects
 * (provider/src/sroce.h) to get at the mapped send, receive and completion
 * rings of live RC QPs on one device (loopback) and writes garbage into
 * them: indices far out of range, unknown and kernel-only opcodes, num_sge
 * past the maximum, SGEs outside any MR, unknown lkeys, another PD's MR,
 * address + length wrapping, lengths past 2^31, inline sizes past the slot,
 * receive WQEs of the same kinds, a CQ consumer index from nowhere.  Each
 * must end in the exact error completion (status and wr_id) or state the
 * design defines.  Then raw uverbs commands with bad handles and work
 * requests, bad MR access flags, bad QP attributes and transitions, bad
 * create_qp driver data, bad mmap() offsets, sizes and flags on the
 * command fd, mremap/munmap of a ring in use, a fork child that writes
 * into the parent's rings, and every bad write() into the doorbell file:
 * each with its exact errno or outcome.
 *
 * All memory the QPs may use lies between canary pages, and the pages of
 * another PD's MR and a receive buffer that no failed case may reach are
 * checked byte for byte after every case.  At the end a fresh pair moves
 * verified SEND, WRITE, READ and fetch-and-add data.  Output is KTAP.
 */
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ktap.hpp"

#include "sroce.h" // provider internals: Qp, Cq and their mapped rings

namespace {

using ktap::n_failed;
using ktap::n_tests;
using ktap::result;

std::string err_str(int e)
{
	return e ? std::string(strerrorname_np(e) ? strerrorname_np(e) : "?") : "success";
}

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char *f, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, f);
	std::vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	return buf;
}

ibv_context *ctx;
ibv_pd *pd, *pd2;
ibv_port_attr port;
ibv_gid gid;
int gidx = -1;
long pg;

/*
 * page 0 canary, 1 send buffer, 2 receive buffer, 3 canary, 4 another PD's
 * MR, 5 canary.  mr covers pages 1-2 (every right), mr_ro page 1 (local
 * read only), mr_pd2 page 4 (pd2, every right).
 */
uint8_t *region;
uint8_t *sendbuf, *recvbuf, *otherbuf;
ibv_mr *mr, *mr_ro, *mr_pd2;

constexpr uint8_t CANARY = 0xa5, RECV_FILL = 0x5a, OTHER_FILL = 0x3c;

uint8_t send_pattern(size_t i) { return static_cast<uint8_t>(i * 7 + 3); }

void fill_memory()
{
	std::memset(region, CANARY, 6 * pg);
	for (long i = 0; i < pg; i++)
		sendbuf[i] = send_pattern(i);
	std::memset(recvbuf, RECV_FILL, pg);
	std::memset(otherbuf, OTHER_FILL, pg);
}

/* Every byte no failed case may touch: "" when intact, else where not. */
std::string memory_damage()
{
	struct {
		const uint8_t *p;
		const char *what;
		int fill; /* -1: the send pattern */
	} areas[] = {
		{ region, "canary page before the MR", CANARY },
		{ sendbuf, "send buffer", -1 },
		{ recvbuf, "receive buffer", RECV_FILL },
		{ region + 3 * pg, "canary page after the MR", CANARY },
		{ otherbuf, "other PD's MR", OTHER_FILL },
		{ region + 5 * pg, "last canary page", CANARY },
	};

	for (const auto &a : areas) {
		for (long i = 0; i < pg; i++) {
			int want = a.fill < 0 ? send_pattern(i) : a.fill;

			if (a.p[i] != want)
				return fmt("%s byte %ld is %#x, not %#x", a.what, i, a.p[i], want);
		}
	}
	return "";
}

void check_memory(const std::string &name)
{
	std::string d = memory_damage();

	result(d.empty(), name + ": no byte outside the intended buffers changed", d);
	if (!d.empty())
		fill_memory();
}

/* ---- rings --------------------------------------------------------------- */

sroce::RingView &sq_ring(ibv_qp *qp) { return sroce::from_qp(qp)->sq.ring; }
sroce::RingView &rq_ring(ibv_qp *qp) { return sroce::from_qp(qp)->rq.ring; }
sroce::RingView &cq_ring(ibv_cq *cq) { return sroce::from_cq(cq)->q.ring; }

void store_release(uint32_t *p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

/* Write @wqe (+ @tail bytes) into the next SQ slot and publish it. */
void sq_publish(ibv_qp *qp, const sroce_send_wqe &wqe, const void *tail, size_t tail_len)
{
	auto &r = sq_ring(qp);
	uint32_t p = r.header()->producer;
	auto *slot = static_cast<uint8_t *>(r.slot(p));
	size_t room = r.entry_size() - sizeof(wqe);

	std::memset(slot, 0, r.entry_size());
	std::memcpy(slot, &wqe, sizeof(wqe));
	std::memcpy(slot + sizeof(wqe), tail, tail_len < room ? tail_len : room);
	store_release(&r.header()->producer, p + 1);
}

void rq_publish(ibv_qp *qp, const sroce_recv_wqe &wqe, const std::vector<sroce_sge> &sges)
{
	auto &r = rq_ring(qp);
	uint32_t p = r.header()->producer;
	auto *slot = static_cast<uint8_t *>(r.slot(p));
	size_t room = r.entry_size() - sizeof(wqe);
	size_t len = sges.size() * sizeof(sroce_sge);

	std::memset(slot, 0, r.entry_size());
	std::memcpy(slot, &wqe, sizeof(wqe));
	std::memcpy(slot + sizeof(wqe), sges.data(), len < room ? len : room);
	store_release(&r.header()->producer, p + 1);
}

/* A legacy write() command: header, core struct, then @n trailing parts. */
struct RawCmd {
	alignas(8) uint8_t buf[256];
	size_t len = 0;

	template <typename T> T *add()
	{
		T *p = reinterpret_cast<T *>(buf + len);

		std::memset(p, 0, sizeof(T));
		len += sizeof(T);
		return p;
	}
	int write_to(int fd)
	{
		reinterpret_cast<ib_uverbs_cmd_hdr *>(buf)->in_words = len / 4;
		ssize_t n = write(fd, buf, len);

		return n < 0 ? errno : 0;
	}
};

/*
 * The provider's doorbell, by hand: a POST_SEND command with @wr_count work
 * requests (normally none) for @handle.  0 or the errno of write().
 */
int raw_post_send(uint32_t handle, uint32_t wr_count = 0, uint32_t *bad_wr = nullptr)
{
	RawCmd c;
	ib_uverbs_post_send_resp resp = {};
	int err;
	auto *hdr = c.add<ib_uverbs_cmd_hdr>();
	auto *core = c.add<ib_uverbs_post_send>();

	hdr->command = IB_USER_VERBS_CMD_POST_SEND;
	hdr->out_words = sizeof(resp) / 4;
	core->response = reinterpret_cast<uintptr_t>(&resp);
	core->qp_handle = handle;
	core->wr_count = wr_count;
	core->sge_count = wr_count;
	core->wqe_size = sizeof(ib_uverbs_send_wr);
	if (wr_count) {
		auto *wr = c.add<ib_uverbs_send_wr>();
		auto *sge = c.add<ib_uverbs_sge>();

		wr->wr_id = 77;
		wr->num_sge = 1;
		wr->opcode = IB_UVERBS_WR_SEND;
		wr->send_flags = IBV_SEND_SIGNALED;
		sge->addr = reinterpret_cast<uintptr_t>(sendbuf);
		sge->length = 64;
		sge->lkey = mr->lkey;
	}
	resp.bad_wr = 0xffffffff;
	err = c.write_to(ctx->cmd_fd);
	if (bad_wr)
		*bad_wr = resp.bad_wr;
	return err;
}

int raw_post_recv(uint32_t handle)
{
	RawCmd c;
	ib_uverbs_post_recv_resp resp = {};
	auto *hdr = c.add<ib_uverbs_cmd_hdr>();
	auto *core = c.add<ib_uverbs_post_recv>();

	hdr->command = IB_USER_VERBS_CMD_POST_RECV;
	hdr->out_words = sizeof(resp) / 4;
	core->response = reinterpret_cast<uintptr_t>(&resp);
	core->qp_handle = handle;
	core->wqe_size = sizeof(ib_uverbs_recv_wr);
	return c.write_to(ctx->cmd_fd);
}

/* DEALLOC_PD: the handle is the whole command. */
int raw_dealloc_pd(uint32_t handle)
{
	struct {
		ib_uverbs_cmd_hdr hdr;
		ib_uverbs_dealloc_pd core;
	} cmd = {};

	cmd.hdr.command = IB_USER_VERBS_CMD_DEALLOC_PD;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.core.pd_handle = handle;
	ssize_t n = write(ctx->cmd_fd, &cmd, sizeof(cmd));
	return n < 0 ? errno : 0;
}

/* DESTROY_CQ / DESTROY_QP: response pointer, handle, reserved. */
int raw_destroy(uint32_t command, uint32_t handle)
{
	struct {
		ib_uverbs_cmd_hdr hdr;
		uint64_t response;
		uint32_t handle;
		uint32_t reserved;
	} cmd = {};
	uint8_t resp[64] = {};

	cmd.hdr.command = command;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.response = reinterpret_cast<uintptr_t>(resp);
	cmd.handle = handle;
	ssize_t n = write(ctx->cmd_fd, &cmd, sizeof(cmd));
	return n < 0 ? errno : 0;
}

/*
 * CREATE_QP with @len bytes of driver data @drv after the core command (the
 * uapi's struct sroce_create_qp_cmd, or something else), through
 * libibverbs' own command path, as the provider sends it.  0 or the errno;
 * a QP created is destroyed at once.
 */
int raw_create_qp(const void *drv, size_t len)
{
	struct {
		sroce_cmd_ex_create_qp core;
		uint8_t drv[32];
	} cmd;
	sroce::DrvResp<ib_uverbs_ex_create_qp_resp, sroce_create_qp_resp> resp;
	ibv_qp_init_attr_ex ia = {};
	verbs_qp vqp;
	ibv_cq *cq = ibv_create_cq(ctx, 8, nullptr, nullptr, 0);
	int e;

	static_assert(offsetof(decltype(cmd), drv) == sizeof(sroce_cmd_ex_create_qp));
	if (!cq || len > sizeof(cmd.drv))
		return cq ? E2BIG : errno;
	std::memset(&cmd, 0, sizeof(cmd));
	std::memset(&resp, 0, sizeof(resp));
	std::memset(&vqp, 0, sizeof(vqp));
	std::memcpy(cmd.drv, drv, len);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	ia.comp_mask = IBV_QP_INIT_ATTR_PD;
	ia.pd = pd;
	e = ibv_cmd_create_qp_ex2(ctx, &vqp, &ia, &cmd.core, sizeof(cmd.core) + len,
				  resp.core(), sizeof(resp));
	if (!e && ibv_cmd_destroy_qp(&vqp.qp))
		e = -1;
	ibv_destroy_cq(cq);
	return e;
}

/*
 * create_qp's driver data (the SQ poller request): what the uapi defines is
 * taken, shorter is taken as zeros, and anything the kernel does not know
 * (the reserved word, bytes beyond the struct) is refused, EOPNOTSUPP.
 */
void create_qp_cmd_cases()
{
	const uint32_t ok200[] = { 200, 0 }, huge[] = { 0xffffffffu, 0 };
	const uint32_t reserved[] = { 200, 1 }, tail0[] = { 200, 0, 0, 0 };
	const uint32_t tail1[] = { 200, 0, 0, 1 };
	int e;

	e = raw_create_qp(nullptr, 0);
	result(e == 0, "CREATE_QP without driver data (an older provider): created", err_str(e));
	e = raw_create_qp(ok200, sizeof(ok200));
	result(e == 0, "CREATE_QP asking sq_poll_us 200: created", err_str(e));
	e = raw_create_qp(huge, sizeof(huge));
	result(e == 0, "CREATE_QP asking sq_poll_us 2^32-1 (bounded by sq_poll_max_us): created",
	       err_str(e));
	e = raw_create_qp(ok200, 4);
	result(e == 0, "CREATE_QP with 4 bytes of driver data (the rest read as 0): created",
	       err_str(e));
	e = raw_create_qp(reserved, sizeof(reserved));
	result(e == EOPNOTSUPP, "CREATE_QP with its reserved word set: EOPNOTSUPP", err_str(e));
	e = raw_create_qp(tail0, sizeof(tail0));
	result(e == 0, "CREATE_QP with zeros beyond the driver data: created", err_str(e));
	e = raw_create_qp(tail1, sizeof(tail1));
	result(e == EOPNOTSUPP, "CREATE_QP with a non-zero byte beyond the driver data: EOPNOTSUPP",
	       err_str(e));
}

/* ---- QPs ----------------------------------------------------------------- */

struct Pair {
	ibv_cq *cqa = nullptr, *cqb = nullptr;
	ibv_qp *a = nullptr, *b = nullptr;
};

ibv_qp *make_qp(ibv_cq *cq, uint32_t depth)
{
	ibv_qp_init_attr ia = {};

	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = depth;
	ia.cap.max_recv_wr = depth;
	ia.cap.max_send_sge = 4;
	ia.cap.max_recv_sge = 4;
	ia.cap.max_inline_data = 64;
	return ibv_create_qp(pd, &ia);
}

int connect_qp(ibv_qp *qp, uint32_t dqpn)
{
	ibv_qp_attr a = {};

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return errno;
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = port.active_mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return errno;
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 1;
	a.sq_psn = 100;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC))
		return errno;
	return 0;
}

bool pair_make(Pair &p, const std::string &name, uint32_t depth = 8)
{
	int err = 0;

	p.cqa = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
	p.cqb = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
	if (p.cqa && p.cqb) {
		p.a = make_qp(p.cqa, depth);
		p.b = make_qp(p.cqb, depth);
	}
	if (!p.a || !p.b)
		err = errno;
	if (!err)
		err = connect_qp(p.a, p.b->qp_num);
	if (!err)
		err = connect_qp(p.b, p.a->qp_num);
	if (err)
		result(false, name + ": set up a connected QP pair", err_str(err));
	return !err;
}

void pair_destroy(Pair &p, const std::string &name)
{
	int err = 0;

	if (p.a && ibv_destroy_qp(p.a))
		err = errno;
	if (p.b && ibv_destroy_qp(p.b) && !err)
		err = errno;
	if (p.cqa && ibv_destroy_cq(p.cqa) && !err)
		err = errno;
	if (p.cqb && ibv_destroy_cq(p.cqb) && !err)
		err = errno;
	if (err)
		result(false, name + ": destroy the pair", err_str(err));
	p = Pair();
}

/* The next completion within @ms, or false. */
bool poll1(ibv_cq *cq, ibv_wc &wc, int ms)
{
	for (int i = 0; i < ms; i++) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n)
			return n == 1;
		usleep(1000);
	}
	return false;
}

int qp_state(ibv_qp *qp)
{
	ibv_qp_attr a = {};
	ibv_qp_init_attr ia = {};

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

const char *state_name(int s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return s >= 0 && s <= 6 ? n[s] : "?";
}

std::string wc_str(const ibv_wc &wc)
{
	return fmt("wr_id %" PRIu64 " status %s", wc.wr_id, ibv_wc_status_str(wc.status));
}

/* Expect one completion with @status for @wr_id on @cq. */
void expect_wc(const std::string &name, ibv_cq *cq, uint64_t wr_id, ibv_wc_status status,
	       int ms = 3000)
{
	ibv_wc wc = {};

	if (!poll1(cq, wc, ms)) {
		result(false, name, fmt("no completion (want %s)", ibv_wc_status_str(status)));
		return;
	}
	result(wc.wr_id == wr_id && wc.status == status, name,
	       fmt("%s (want wr_id %" PRIu64 " %s)", wc_str(wc).c_str(), wr_id,
		   ibv_wc_status_str(status)));
}

void expect_no_wc(const std::string &name, ibv_cq *cq, int ms)
{
	ibv_wc wc = {};

	if (poll1(cq, wc, ms))
		result(false, name, "unexpected completion: " + wc_str(wc));
	else
		result(true, name);
}

void expect_state(const std::string &name, ibv_qp *qp, int want)
{
	int s = qp_state(qp);

	result(s == want, fmt("%s: QP in %s", name.c_str(), state_name(want)),
	       s == want ? "" : fmt("QP is in %s", state_name(s)));
}

ibv_sge sge_of(void *addr, uint32_t len, uint32_t lkey)
{
	return ibv_sge{ reinterpret_cast<uintptr_t>(addr), len, lkey };
}

int post_recv_ok(ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len)
{
	ibv_sge s = sge_of(addr, len, mr->lkey);
	ibv_recv_wr wr = {}, *bad;

	wr.wr_id = wr_id;
	wr.sg_list = &s;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad);
}

int post_send_ok(ibv_qp *qp, uint64_t wr_id, ibv_wr_opcode op, void *addr, uint32_t len,
		 uint64_t raddr = 0, uint64_t add = 0)
{
	ibv_sge s = sge_of(addr, len, mr->lkey);
	ibv_send_wr wr = {}, *bad;

	wr.wr_id = wr_id;
	wr.opcode = op;
	wr.sg_list = &s;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = mr->rkey;
		wr.wr.atomic.compare_add = add;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = mr->rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* A verified 64-byte SEND a -> b: the pair is alive. */
void expect_send_works(const std::string &name, Pair &p)
{
	ibv_wc wc = {};
	int err = post_recv_ok(p.b, 901, recvbuf, 64);

	if (!err)
		err = post_send_ok(p.a, 902, IBV_WR_SEND, sendbuf, 64);
	if (err) {
		result(false, name + ": a valid SEND afterwards", "post: " + err_str(err));
		return;
	}
	bool ok = poll1(p.cqa, wc, 3000) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 902;
	std::string d = ok ? "" : "sender: " + wc_str(wc);
	if (ok) {
		wc = {};
		ok = poll1(p.cqb, wc, 3000) && wc.status == IBV_WC_SUCCESS && wc.wr_id == 901 &&
		     wc.byte_len == 64;
		d = ok ? "" : "receiver: " + wc_str(wc);
	}
	for (int i = 0; ok && i < 64; i++) {
		if (recvbuf[i] != send_pattern(i)) {
			ok = false;
			d = fmt("received byte %d is %#x", i, recvbuf[i]);
		}
	}
	result(ok, name + ": a valid SEND afterwards moves verified data", d);
	std::memset(recvbuf, RECV_FILL, 64);
}

/* ---- send queue garbage ------------------------------------------------ */

sroce_send_wqe default_send(uint64_t wr_id)
{
	sroce_send_wqe w = {};

	w.wr_id = wr_id;
	w.opcode = IB_UVERBS_WR_SEND;
	w.num_sge = 1;
	w.flags = SROCE_SEND_SIGNALED;
	return w;
}

sroce_sge ssge(const void *addr, uint32_t len, uint32_t lkey)
{
	return sroce_sge{ reinterpret_cast<uintptr_t>(addr), len, lkey };
}

/*
 * One garbage send WQE at a fresh pair: @status on the sender with the
 * WQE's wr_id, sender QP in ERR, nothing received, no byte touched.
 */
void send_case(const std::string &name, ibv_wc_status status,
	       const std::function<void(sroce_send_wqe &, std::vector<sroce_sge> &)> &build)
{
	Pair p;

	if (!pair_make(p, name))
		return;
	sroce_send_wqe w = default_send(0x1000 + n_tests);
	std::vector<sroce_sge> sges = { ssge(sendbuf, 64, mr->lkey) };

	build(w, sges);
	int perr = post_recv_ok(p.b, 1, recvbuf, pg);
	sq_publish(p.a, w, sges.data(), sges.size() * sizeof(sroce_sge));
	int db = raw_post_send(p.a->handle);
	result(!perr && !db, name + ": doorbell accepted", "post_recv " + err_str(perr) +
	       ", doorbell " + err_str(db));
	expect_wc(name + ": " + ibv_wc_status_str(status), p.cqa, w.wr_id, status);
	expect_state(name, p.a, IBV_QPS_ERR);
	expect_no_wc(name + ": nothing received", p.cqb, 100);
	check_memory(name);
	pair_destroy(p, name);
}

void send_cases()
{
	const uint64_t top = UINT64_MAX;

	send_case("SQ: unknown opcode 0x7f", IBV_WC_LOC_QP_OP_ERR,
		  [](auto &w, auto &) { w.opcode = 0x7f; });
	send_case("SQ: opcode 0xff", IBV_WC_LOC_QP_OP_ERR,
		  [](auto &w, auto &) { w.opcode = 0xff; });
	send_case("SQ: kernel-only opcode IB_WR_REG_MR (0x20)", IBV_WC_LOC_QP_OP_ERR,
		  [](auto &w, auto &) { w.opcode = 0x20; });
	send_case("SQ: num_sge 255", IBV_WC_LOC_LEN_ERR,
		  [](auto &w, auto &) { w.num_sge = 255; });
	send_case("SQ: num_sge 33 (past SROCE_MAX_SGE)", IBV_WC_LOC_LEN_ERR,
		  [](auto &w, auto &) { w.num_sge = 33; });
	send_case("SQ: SGE in the canary page before the MR", IBV_WC_LOC_PROT_ERR,
		  [](auto &, auto &s) { s[0] = ssge(region + 64, 64, mr->lkey); });
	send_case("SQ: SGE across the MR's end", IBV_WC_LOC_PROT_ERR,
		  [](auto &, auto &s) { s[0] = ssge(recvbuf + pg - 32, 64, mr->lkey); });
	send_case("SQ: unknown lkey", IBV_WC_LOC_PROT_ERR,
		  [](auto &, auto &s) { s[0].lkey = 0xdead0042; });
	send_case("SQ: lkey 0", IBV_WC_LOC_PROT_ERR,
		  [](auto &, auto &s) { s[0].lkey = 0; });
	send_case("SQ: addr + length wraps 2^64", IBV_WC_LOC_PROT_ERR,
		  [top](auto &, auto &s) { s[0] = ssge(reinterpret_cast<void *>(top - 31), 64, mr->lkey); });
	send_case("SQ: SGE lengths summing to 2^32", IBV_WC_LOC_LEN_ERR, [](auto &w, auto &s) {
		w.num_sge = 2;
		s = { ssge(sendbuf, 0x80000000u, mr->lkey), ssge(sendbuf, 0x80000000u, mr->lkey) };
	});
	send_case("SQ: SGE of another PD's MR", IBV_WC_LOC_PROT_ERR,
		  [](auto &, auto &s) { s[0] = ssge(otherbuf, 64, mr_pd2->lkey); });
	send_case("SQ: READ into an MR without local write", IBV_WC_LOC_PROT_ERR,
		  [](auto &w, auto &s) {
			  w.opcode = IB_UVERBS_WR_RDMA_READ;
			  w.wr.rdma.remote_addr = reinterpret_cast<uintptr_t>(sendbuf);
			  w.wr.rdma.rkey = mr->rkey;
			  s[0] = ssge(sendbuf, 64, mr_ro->lkey);
		  });
	send_case("SQ: fetch-and-add with a 4-byte SGE", IBV_WC_LOC_LEN_ERR, [](auto &w, auto &s) {
		w.opcode = IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
		w.wr.atomic.remote_addr = reinterpret_cast<uintptr_t>(recvbuf);
		w.wr.atomic.rkey = mr->rkey;
		s[0] = ssge(sendbuf, 4, mr->lkey);
	});
	send_case("SQ: inline_len 0xffffffff", IBV_WC_LOC_LEN_ERR, [](auto &w, auto &) {
		w.flags |= SROCE_SEND_INLINE;
		w.inline_len = 0xffffffff;
	});
}

/* The slot-size inline case needs the QP's ring: done by hand. */
void inline_past_slot_case()
{
	const std::string name = "SQ: inline_len one past the slot's room";
	Pair p;

	if (!pair_make(p, name))
		return;
	uint32_t room = sq_ring(p.a).entry_size() - sizeof(sroce_send_wqe);
	uint32_t max = room < 512 ? room : 512;
	sroce_send_wqe w = default_send(4242);

	w.flags |= SROCE_SEND_INLINE;
	w.inline_len = max + 1;
	post_recv_ok(p.b, 1, recvbuf, pg);
	sq_publish(p.a, w, sendbuf, room);
	raw_post_send(p.a->handle);
	expect_wc(fmt("%s (%u bytes): local length error", name.c_str(), max + 1), p.cqa, 4242,
		  IBV_WC_LOC_LEN_ERR);
	expect_no_wc(name + ": nothing received", p.cqb, 100);
	check_memory(name);
	pair_destroy(p, name);
}

/* Every SQ slot an unknown opcode (wr_id 666): a WQE fetched from it fails. */
void fill_sq_unknown_opcodes(sroce::RingView &r)
{
	for (uint32_t i = 0; i < r.size(); i++) {
		sroce_send_wqe w = default_send(666);

		w.opcode = 0x7f;
		std::memcpy(r.slot(i), &w, sizeof(w));
	}
}

/*
 * A producer index the kernel cannot believe: it must not fetch anything
 * (no completion, QP stays in RTS), and once the index is sane again the
 * QP works.
 */
void sq_index_case(const std::string &name, const std::function<uint32_t(uint32_t)> &offset)
{
	Pair p;

	if (!pair_make(p, name))
		return;
	auto &r = sq_ring(p.a);
	uint32_t prod = r.header()->producer;
	uint32_t bogus = prod + offset(r.size());

	fill_sq_unknown_opcodes(r);
	store_release(&r.header()->producer, bogus);
	int db = raw_post_send(p.a->handle);
	result(!db, fmt("%s (%#x, consumer %#x): doorbell accepted", name.c_str(), bogus, prod),
	       err_str(db));
	expect_no_wc(name + ": nothing fetched", p.cqa, 200);
	expect_state(name, p.a, IBV_QPS_RTS);
	store_release(&r.header()->producer, prod);
	expect_send_works(name, p);
	check_memory(name);
	pair_destroy(p, name);
}

/*
 * A producer index moved back behind a WQE the kernel already fetched
 * (between the consumer index and the requester's head): a provider cannot
 * take a WQE back, so the kernel must fetch nothing, rather than fetch
 * again into the shadow copies of WQEs in flight.  The peer's QP is in
 * ERR, so the SEND in flight stays unacknowledged until the requester runs
 * out of retries: it completes exactly once, with IBV_WC_RETRY_EXC_ERR, and
 * no slot behind it (each an unknown opcode) is ever fetched.
 */
void sq_index_behind_head_case()
{
	const std::string name = "SQ: producer index moved back behind a fetched WQE";
	Pair p;

	if (!pair_make(p, name))
		return;
	auto &r = sq_ring(p.a);
	uint32_t prod = r.header()->producer;
	ibv_qp_attr attr = {};

	attr.qp_state = IBV_QPS_ERR;
	int err = ibv_modify_qp(p.b, &attr, IBV_QP_STATE);
	fill_sq_unknown_opcodes(r);
	sroce_send_wqe w = default_send(4343);
	sroce_sge sge = ssge(sendbuf, 64, mr->lkey);

	sq_publish(p.a, w, &sge, sizeof(sge));
	int db = raw_post_send(p.a->handle);
	store_release(&r.header()->producer, prod);
	int db_back = raw_post_send(p.a->handle);
	store_release(&r.header()->producer, prod + 1);
	result(!err && !db && !db_back, name + ": peer QP in ERR, both doorbells accepted",
	       "modify " + err_str(err) + ", doorbell " + err_str(db) + ", doorbell after " +
	       err_str(db_back));
	expect_wc(name + ": the SEND in flight completes once, retries exhausted", p.cqa, 4343,
		  IBV_WC_RETRY_EXC_ERR, 30000);
	expect_no_wc(name + ": nothing else completes", p.cqa, 200);
	expect_state(name, p.a, IBV_QPS_ERR);
	check_memory(name);
	pair_destroy(p, name);
}

/* Every slot garbage and published at once: one error, the rest flushed. */
void sq_full_of_garbage()
{
	const std::string name = "SQ: a full ring of unknown opcodes";
	Pair p;

	if (!pair_make(p, name))
		return;
	auto &r = sq_ring(p.a);
	uint32_t prod = r.header()->producer, n = r.size();

	for (uint32_t i = 0; i < n; i++) {
		sroce_send_wqe w = default_send(5000 + i);

		w.opcode = 0x80 + i;
		std::memcpy(r.slot(prod + i), &w, sizeof(w));
	}
	store_release(&r.header()->producer, prod + n);
	raw_post_send(p.a->handle);
	uint32_t got = 0, bad = 0;
	ibv_wc wc;
	std::string d;
	while (got < n + 1 && poll1(p.cqa, wc, got < n ? 3000 : 200)) {
		ibv_wc_status want = got ? IBV_WC_WR_FLUSH_ERR : IBV_WC_LOC_QP_OP_ERR;

		if (wc.wr_id != 5000 + got || wc.status != want) {
			if (!bad++)
				d = fmt("completion %u: %s", got, wc_str(wc).c_str());
		}
		got++;
	}
	result(got == n && !bad, fmt("%s (%u): LOC_QP_OP_ERR then %u WR_FLUSH_ERR in order", name.c_str(),
				     n, n - 1), d.empty() ? fmt("%u completions", got) : d);
	expect_state(name, p.a, IBV_QPS_ERR);
	check_memory(name);
	pair_destroy(p, name);
}

/*
 * A second thread rewrites a posted WQE while the kernel consumes it.  The
 * slot holds a good WRITE (64 bytes of the send buffer to the receive
 * buffer) and the thread keeps storing hostile versions of single fields
 * into it and the good values back: an SGE in the canary page, another
 * PD's lkey, a 2^31-byte SGE, num_sge 33, opcode 0x7f, a remote address
 * across the MR's end, another PD's rkey.  Whatever mix of the two the
 * kernel sees, it must see one: it copies the slot once and validates the
 * copy.  So each WQE completes either as the good WRITE (exactly its 64
 * bytes placed) or with an error status one of the hostile fields earns,
 * and no canary, the other PD's MR or the rest of the receive buffer
 * changes.  A QP that failed is replaced by a fresh pair.
 */
void concurrent_rewrite_case()
{
	const std::string name = "SQ: WQE rewritten by another thread while consumed";
	/* at least ROUNDS, more until the race went both ways */
	constexpr int ROUNDS = 200, MAX_ROUNDS = 2000;
	constexpr uint32_t LEN = 64;
	const uint64_t good_raddr = reinterpret_cast<uintptr_t>(recvbuf);
	int n_ok = 0, n_err = 0, rounds = 0;
	std::string bad;
	Pair p;

	/*
	 * The rewriter runs for the whole case, rewriting the slot @target
	 * points at; @m is held for each pass, so once @target is cleared
	 * and @m taken, it no longer touches the slot.
	 */
	std::atomic<sroce_send_wqe *> target{nullptr};
	std::atomic<unsigned long> passes{0};
	std::atomic<bool> quit{false};
	std::mutex m;
	auto st = [](auto *f, auto v) { __atomic_store_n(f, v, __ATOMIC_RELAXED); };
	std::thread rewriter([&] {
		for (unsigned int i = 0; !quit.load(std::memory_order_relaxed); i++) {
			std::lock_guard<std::mutex> g(m);
			sroce_send_wqe *sw = target.load(std::memory_order_relaxed);

			if (!sw)
				continue;
			auto *ss = reinterpret_cast<sroce_sge *>(sw + 1);
			switch (i % 7) {
			case 0: st(&ss->addr, uint64_t(reinterpret_cast<uintptr_t>(region + 64))); break;
			case 1: st(&ss->lkey, mr_pd2->lkey); break;
			case 2: st(&ss->length, 0x80000000u); break;
			case 3: st(&sw->num_sge, uint8_t(33)); break;
			case 4: st(&sw->opcode, uint8_t(0x7f)); break;
			case 5: st(&sw->wr.rdma.remote_addr, good_raddr + pg - LEN / 2); break;
			case 6: st(&sw->wr.rdma.rkey, mr_pd2->rkey); break;
			}
			st(&ss->addr, uint64_t(reinterpret_cast<uintptr_t>(sendbuf)));
			st(&ss->lkey, mr->lkey);
			st(&ss->length, LEN);
			st(&sw->num_sge, uint8_t(1));
			st(&sw->opcode, uint8_t(IB_UVERBS_WR_RDMA_WRITE));
			st(&sw->wr.rdma.remote_addr, good_raddr);
			st(&sw->wr.rdma.rkey, mr->rkey);
			passes.fetch_add(1, std::memory_order_relaxed);
		}
	});

	for (; bad.empty() && rounds < MAX_ROUNDS &&
	       (rounds < ROUNDS || !n_ok || !n_err); rounds++) {
		if (!p.a && !pair_make(p, name))
			break;
		sroce_send_wqe w = default_send(0x7000 + rounds);
		w.opcode = IB_UVERBS_WR_RDMA_WRITE;
		w.wr.rdma.remote_addr = good_raddr;
		w.wr.rdma.rkey = mr->rkey;
		sroce_sge sge = ssge(sendbuf, LEN, mr->lkey);
		auto &r = sq_ring(p.a);
		auto *slot = static_cast<sroce_send_wqe *>(r.slot(r.header()->producer));

		sq_publish(p.a, w, &sge, sizeof(sge));
		/* the doorbell rings while the rewriter is busy with the slot */
		unsigned long p0 = passes.load();
		target.store(slot);
		while (passes.load() < p0 + 3)
			;
		int db = raw_post_send(p.a->handle);
		ibv_wc wc = {};
		bool got = !db && poll1(p.cqa, wc, 3000);

		target.store(nullptr);
		{
			std::lock_guard<std::mutex> g(m);
		}
		if (db) {
			bad = "doorbell " + err_str(db);
			break;
		}
		if (!got) {
			bad = fmt("round %d: no completion", rounds);
			break;
		}
		if (wc.wr_id != w.wr_id) {
			bad = fmt("round %d: %s, want wr_id %" PRIu64, rounds, wc_str(wc).c_str(),
				  static_cast<uint64_t>(w.wr_id));
			break;
		}
		switch (wc.status) {
		case IBV_WC_SUCCESS:
			n_ok++;
			if (std::memcmp(recvbuf, sendbuf, LEN))
				bad = fmt("round %d: WRITE completed, the 64 bytes differ", rounds);
			/* the rest of the receive buffer is checked below */
			std::memset(recvbuf, RECV_FILL, LEN);
			break;
		case IBV_WC_LOC_PROT_ERR:
		case IBV_WC_LOC_LEN_ERR:
		case IBV_WC_LOC_QP_OP_ERR:
		case IBV_WC_REM_ACCESS_ERR:
			n_err++;
			/* the QP is in ERR: a fresh pair for the next round */
			pair_destroy(p, name);
			break;
		default:
			bad = fmt("round %d: status %s, which no version of the WQE earns", rounds,
				  ibv_wc_status_str(wc.status));
			break;
		}
		if (bad.empty() && !memory_damage().empty())
			bad = fmt("round %d: %s", rounds, memory_damage().c_str());
	}
	quit = true;
	rewriter.join();
	result(bad.empty(), name + fmt(": %d rounds, %d good WRITEs, %d errors", rounds, n_ok, n_err), bad);
	/*
	 * With a second CPU the race goes both ways, but the host decides
	 * whether the two vCPUs ever run at once (one CPU never interleaves):
	 * not seeing it is no failure of the kernel, only of the check.
	 */
	if (n_ok > 0 && n_err > 0)
		result(true, name + ": both outcomes seen", fmt("%d good, %d errors", n_ok, n_err));
	else if (bad.empty())
		ktap::skip(name + ": both outcomes seen",
			   fmt("the rewrite never overlapped the kernel's copy in %d rounds on %ld CPUs (%d good, %d errors)",
			       rounds, sysconf(_SC_NPROCESSORS_ONLN), n_ok, n_err));
	if (p.a)
		pair_destroy(p, name);
	check_memory(name);
}

/* ---- receive queue garbage --------------------------------------------- */

/*
 * A garbage receive WQE at b, then a valid SEND from a: the receiver
 * completes @rstatus (or nothing when @rstatus is -1), the sender sees the
 * NAK as REM_OP_ERR, no byte of the receive buffer or elsewhere changes.
 */
void recv_case(const std::string &name, int rstatus,
	       const std::function<void(Pair &, sroce_recv_wqe &, std::vector<sroce_sge> &)> &build)
{
	Pair p;

	if (!pair_make(p, name))
		return;
	sroce_recv_wqe w = { static_cast<uint64_t>(0x2000 + n_tests), 1, 0 };
	std::vector<sroce_sge> sges = { ssge(recvbuf, 64, mr->lkey) };

	build(p, w, sges);
	if (w.num_sge || !sges.empty())
		rq_publish(p.b, w, sges);
	int err = post_send_ok(p.a, 3, IBV_WR_SEND, sendbuf, 64);
	result(!err, name + ": SEND posted", err_str(err));
	expect_wc(name + ": sender REM_OP_ERR", p.cqa, 3, IBV_WC_REM_OP_ERR);
	if (rstatus >= 0)
		expect_wc(fmt("%s: receiver %s", name.c_str(),
			      ibv_wc_status_str(static_cast<ibv_wc_status>(rstatus))),
			  p.cqb, w.wr_id, static_cast<ibv_wc_status>(rstatus));
	else
		expect_no_wc(name + ": no receive completion", p.cqb, 200);
	expect_state(name + " (receiver)", p.b, IBV_QPS_ERR);
	check_memory(name);
	pair_destroy(p, name);
}

void recv_cases()
{
	recv_case("RQ: num_sge 0xffffffff", IBV_WC_LOC_QP_OP_ERR,
		  [](Pair &, auto &w, auto &) { w.num_sge = 0xffffffff; });
	recv_case("RQ: num_sge 33", IBV_WC_LOC_QP_OP_ERR,
		  [](Pair &, auto &w, auto &) { w.num_sge = 33; });
	recv_case("RQ: unknown lkey", IBV_WC_LOC_PROT_ERR,
		  [](Pair &, auto &, auto &s) { s[0].lkey = 0xdead0042; });
	recv_case("RQ: SGE in the canary page after the MR", IBV_WC_LOC_PROT_ERR,
		  [](Pair &, auto &, auto &s) { s[0] = ssge(region + 3 * pg, 64, mr->lkey); });
	recv_case("RQ: SGE wraps 2^64", IBV_WC_LOC_PROT_ERR, [](Pair &, auto &, auto &s) {
		s[0] = ssge(reinterpret_cast<void *>(UINT64_MAX - 31), 64, mr->lkey);
	});
	recv_case("RQ: SGE of another PD's MR", IBV_WC_LOC_PROT_ERR,
		  [](Pair &, auto &, auto &s) { s[0] = ssge(otherbuf, 64, mr_pd2->lkey); });
	recv_case("RQ: SGE into an MR without local write", IBV_WC_LOC_PROT_ERR,
		  [](Pair &, auto &, auto &s) { s[0] = ssge(sendbuf, 64, mr_ro->lkey); });
	recv_case("RQ: SGE lengths summing past 2^31", IBV_WC_LOC_QP_OP_ERR,
		  [](Pair &, auto &w, auto &s) {
			  w.num_sge = 2;
			  s = { ssge(recvbuf, 0x80000000u, mr->lkey), ssge(recvbuf, 1, mr->lkey) };
		  });
	recv_case("RQ: producer index a ring and 5 ahead", -1, [](Pair &p, auto &w, auto &s) {
		auto &r = rq_ring(p.b);

		store_release(&r.header()->producer, r.header()->producer + r.size() + 5);
		w.num_sge = 0;
		s.clear();
	});
}

/* ---- completion ring garbage ------------------------------------------- */

void cq_consumer_case()
{
	const std::string name = "CQ: consumer index 1000 ahead of the producer";
	Pair p;

	if (!pair_make(p, name))
		return;
	auto &r = cq_ring(p.cqa);
	uint32_t cons = r.header()->consumer;

	store_release(&r.header()->consumer, cons + 1000);
	post_recv_ok(p.b, 1, recvbuf, 64);
	post_send_ok(p.a, 2, IBV_WR_SEND, sendbuf, 64);
	/* The receiver is unaffected. */
	expect_wc(name + ": receiver completes normally", p.cqb, 1, IBV_WC_SUCCESS);
	/* The kernel treats the ring as full: CQ error event, no slot written. */
	int fl = fcntl(ctx->async_fd, F_GETFL);
	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	pollfd pfd = { ctx->async_fd, POLLIN, 0 };
	ibv_async_event ev = {};
	bool got = poll(&pfd, 1, 3000) == 1 && !ibv_get_async_event(ctx, &ev);
	if (got)
		ibv_ack_async_event(&ev);
	fcntl(ctx->async_fd, F_SETFL, fl);
	result(got && ev.event_type == IBV_EVENT_CQ_ERR && ev.element.cq == p.cqa,
	       name + ": IBV_EVENT_CQ_ERR for that CQ",
	       got ? fmt("event %s", ibv_event_type_str(ev.event_type)) : "no async event");
	uint32_t prod = r.header()->producer;
	result(prod == cons, name + ": the kernel wrote no CQE",
	       fmt("producer %#x, consumer was %#x", prod, cons));
	store_release(&r.header()->consumer, cons);
	memset(recvbuf, RECV_FILL, 64);
	check_memory(name);
	pair_destroy(p, name);
}

/* ---- uverbs commands --------------------------------------------------- */

void command_cases()
{
	Pair p;
	int e;

	if (!pair_make(p, "commands"))
		return;

	/* Unknown handles: the RDMA core's object lookup answers ENOENT. */
	e = raw_post_send(0xdead);
	result(e == ENOENT, "POST_SEND (doorbell) with an unknown QP handle: ENOENT", err_str(e));
	e = raw_post_send(p.cqa->handle);
	result(e == EINVAL || e == ENOENT, "POST_SEND with a CQ's handle as QP handle: refused",
	       err_str(e));
	uint32_t bad_wr = 0;
	e = raw_post_send(p.a->handle, 1, &bad_wr);
	result(e == EINVAL && bad_wr == 1,
	       "POST_SEND with a work request on a user QP: the driver refuses it, EINVAL",
	       fmt("%s, bad_wr %u", err_str(e).c_str(), bad_wr));
	expect_no_wc("POST_SEND with a work request: nothing sent", p.cqa, 100);
	e = raw_post_recv(p.b->handle);
	/* sroce enables only the POST_SEND and REQ_NOTIFY_CQ data commands. */
	result(e == EOPNOTSUPP, "POST_RECV command (not enabled for sroce): EOPNOTSUPP",
	       err_str(e));
	e = raw_destroy(IB_USER_VERBS_CMD_DESTROY_CQ, 0xdead);
	result(e == ENOENT, "DESTROY_CQ with an unknown handle: ENOENT", err_str(e));
	e = raw_destroy(IB_USER_VERBS_CMD_DESTROY_QP, p.cqa->handle + 1000);
	result(e == ENOENT, "DESTROY_QP with an unknown handle: ENOENT", err_str(e));
	e = raw_dealloc_pd(0xffffffff);
	result(e == ENOENT, "DEALLOC_PD with handle 0xffffffff: ENOENT", err_str(e));

	e = ibv_destroy_cq(p.cqa) ? errno : 0;
	result(e == EBUSY, "destroy a CQ a QP uses: EBUSY", err_str(e));
	e = ibv_dealloc_pd(pd) ? errno : 0;
	result(e == EBUSY, "dealloc a PD with QPs and MRs: EBUSY", err_str(e));

	ibv_mr *m = ibv_reg_mr(pd, sendbuf, pg, IBV_ACCESS_LOCAL_WRITE | 1 << 15);
	e = m ? 0 : errno;
	result(!m && e == EINVAL, "reg_mr with unknown access bit 1<<15: EINVAL", err_str(e));
	if (m)
		ibv_dereg_mr(m);
	/* On-demand paging (odp.c): a range, yes; the whole address space, no. */
	m = ibv_reg_mr(pd, sendbuf, pg, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	e = m ? 0 : errno;
	result(m != nullptr, "reg_mr on demand: registered", err_str(e));
	if (m)
		ibv_dereg_mr(m);
	m = ibv_reg_mr(pd, nullptr, SIZE_MAX, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND);
	e = m ? 0 : errno;
	result(!m && (e == EINVAL || e == EOPNOTSUPP),
	       "reg_mr on demand of the whole address space (implicit ODP): EOPNOTSUPP or EINVAL",
	       err_str(e));
	if (m)
		ibv_dereg_mr(m);
	/* Bits 20-29 are IB_ACCESS_OPTIONAL: a device may ignore them. */
	m = ibv_reg_mr(pd, sendbuf, pg, IBV_ACCESS_LOCAL_WRITE | 1 << 28);
	e = m ? 0 : errno;
	result(m && (m->lkey >> 8) != (mr->lkey >> 8),
	       "reg_mr with optional access bit 1<<28: registered, bit ignored", err_str(e));
	if (m)
		ibv_dereg_mr(m);
	m = ibv_reg_mr(pd, sendbuf, pg, IBV_ACCESS_REMOTE_WRITE);
	e = m ? 0 : errno;
	result(!m && e == EINVAL, "reg_mr remote write without local write: EINVAL", err_str(e));
	if (m)
		ibv_dereg_mr(m);
	m = ibv_reg_mr(pd, region + 6 * pg, pg, IBV_ACCESS_LOCAL_WRITE);
	e = m ? 0 : errno;
	result(!m && e == EFAULT, "reg_mr of unmapped memory: EFAULT", err_str(e));
	if (m)
		ibv_dereg_mr(m);

	/* QP attributes and transitions, each refused and the QP unchanged. */
	struct {
		const char *what;
		int mask;
		std::function<void(ibv_qp_attr &)> set;
	} bad[] = {
		{ "RTS -> RTR", IBV_QP_STATE, [](auto &a) { a.qp_state = IBV_QPS_RTR; } },
		{ "RTS -> INIT", IBV_QP_STATE, [](auto &a) { a.qp_state = IBV_QPS_INIT; } },
		{ "state 42", IBV_QP_STATE, [](auto &a) { a.qp_state = static_cast<ibv_qp_state>(42); } },
		{ "RTS with path MTU 9", IBV_QP_STATE | IBV_QP_PATH_MTU, [](auto &a) {
			  a.qp_state = IBV_QPS_RTS;
			  a.path_mtu = static_cast<ibv_mtu>(9);
		  } },
		{ "RTS with timeout and access flags 1<<20", IBV_QP_STATE | IBV_QP_ACCESS_FLAGS,
		  [](auto &a) {
			  a.qp_state = IBV_QPS_RTS;
			  a.qp_access_flags = 1 << 20;
		  } },
		{ "RTS with max_rd_atomic 255", IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC, [](auto &a) {
			  a.qp_state = IBV_QPS_RTS;
			  a.max_rd_atomic = 255;
		  } },
		{ "RTS with rnr_retry 8", IBV_QP_STATE | IBV_QP_RNR_RETRY, [](auto &a) {
			  a.qp_state = IBV_QPS_RTS;
			  a.rnr_retry = 8;
		  } },
		{ "RTS with min_rnr_timer 32", IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER, [](auto &a) {
			  a.qp_state = IBV_QPS_RTS;
			  a.min_rnr_timer = 32;
		  } },
		{ "RTS with port 2", IBV_QP_STATE | IBV_QP_PORT, [](auto &a) {
			  a.qp_state = IBV_QPS_RTS;
			  a.port_num = 2;
		  } },
		{ "RTS with alternate path", IBV_QP_STATE | IBV_QP_ALT_PATH, [](auto &a) {
			  a.qp_state = IBV_QPS_RTS;
			  a.alt_port_num = 1;
		  } },
	};
	for (auto &b : bad) {
		ibv_qp_attr a = {};

		b.set(a);
		e = ibv_modify_qp(p.a, &a, b.mask) ? errno : 0;
		result(e == EINVAL, fmt("modify_qp %s: EINVAL", b.what), err_str(e));
	}
	/* Fresh QP: RESET -> RTS and an RTR with a bad sgid index / dest QPN. */
	ibv_qp *q = make_qp(p.cqa, 4);
	if (q) {
		ibv_qp_attr a = {};

		a.qp_state = IBV_QPS_RTS;
		e = ibv_modify_qp(q, &a, IBV_QP_STATE) ? errno : 0;
		result(e == EINVAL, "modify_qp RESET -> RTS: EINVAL", err_str(e));
		a = {};
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE;
		ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS);
		a = {};
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = port.active_mtu;
		a.dest_qp_num = p.b->qp_num;
		a.max_dest_rd_atomic = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = gid;
		a.ah_attr.grh.sgid_index = 250;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		e = ibv_modify_qp(q, &a, mask) ? errno : 0;
		/* The core's GID table lookup: no GID at that index. */
		result(e == ENODATA, "modify_qp INIT -> RTR with sgid_index 250: ENODATA",
		       err_str(e));
		a.ah_attr.grh.sgid_index = gidx;
		a.dest_qp_num = 1u << 24;
		e = ibv_modify_qp(q, &a, mask) ? errno : 0;
		result(e == EINVAL, "modify_qp INIT -> RTR with dest QPN 2^24: EINVAL", err_str(e));
		a.dest_qp_num = p.b->qp_num;
		a.max_dest_rd_atomic = 255;
		e = ibv_modify_qp(q, &a, mask) ? errno : 0;
		result(e == EINVAL, "modify_qp INIT -> RTR with max_dest_rd_atomic 255: EINVAL",
		       err_str(e));
		expect_state("after the refused modifies", q, IBV_QPS_INIT);
		ibv_destroy_qp(q);
	}
	expect_state("after the refused modifies (connected QP)", p.a, IBV_QPS_RTS);
	expect_send_works("commands", p);
	check_memory("commands");
	pair_destroy(p, "commands");
}

/* The mmap offset of the mapping at @addr, from /proc/self/maps. */
bool map_offset(const void *addr, uint64_t &off)
{
	FILE *f = std::fopen("/proc/self/maps", "r");
	char line[512];
	bool found = false;

	while (f && std::fgets(line, sizeof(line), f)) {
		unsigned long start;
		unsigned long long o;

		if (std::sscanf(line, "%lx-%*x %*s %llx", &start, &o) == 2 &&
		    start == reinterpret_cast<uintptr_t>(addr)) {
			off = o;
			found = true;
			break;
		}
	}
	if (f)
		std::fclose(f);
	return found;
}

void mmap_cases()
{
	const std::string name = "mmap";
	Pair p;
	int e;

	if (!pair_make(p, name))
		return;
	sroce::Queue &sq = sroce::from_qp(p.a)->sq;
	uint64_t off = 0;
	size_t sz = sq.map_size;

	result(map_offset(sq.map, off), "mmap: the SQ ring's offset is in /proc/self/maps",
	       fmt("offset %#" PRIx64 ", %zu bytes", off, sz));

	void *alias = mmap(nullptr, sz, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd, off);
	bool same = alias != MAP_FAILED &&
		    !std::memcmp(alias, sq.map, sizeof(sroce_ring_hdr));
	result(same, "mmap: the SQ ring mapped a second time aliases the first",
	       alias == MAP_FAILED ? err_str(errno) : "");

	void *m = mmap(nullptr, sz + pg, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd, off);
	e = m == MAP_FAILED ? errno : 0;
	result(e == EINVAL, "mmap: one page more than the ring: EINVAL", err_str(e));
	if (m != MAP_FAILED)
		munmap(m, sz + pg);
	m = mmap(nullptr, sz - pg, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd, off);
	e = m == MAP_FAILED ? errno : 0;
	result(sz <= static_cast<size_t>(pg) || e == EINVAL,
	       "mmap: one page less than the ring: EINVAL", err_str(e));
	if (m != MAP_FAILED)
		munmap(m, sz - pg);
	m = mmap(nullptr, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE, ctx->cmd_fd, off);
	e = m == MAP_FAILED ? errno : 0;
	result(e == EINVAL, "mmap: MAP_PRIVATE: EINVAL", err_str(e));
	if (m != MAP_FAILED)
		munmap(m, sz);
	m = mmap(nullptr, pg, PROT_READ | PROT_WRITE, MAP_SHARED, ctx->cmd_fd, 1ull << 40);
	e = m == MAP_FAILED ? errno : 0;
	result(e == EINVAL, "mmap: an offset never handed out: EINVAL", err_str(e));
	if (m != MAP_FAILED)
		munmap(m, pg);
	/* The CQ ring is more than a page: its second page alone is no entry. */
	sroce::Queue &cq = sroce::from_cq(p.cqa)->q;
	uint64_t cq_off = 0;
	if (map_offset(cq.map, cq_off) && cq.map_size > static_cast<size_t>(pg)) {
		m = mmap(nullptr, cq.map_size - pg, PROT_READ | PROT_WRITE, MAP_SHARED,
			 ctx->cmd_fd, cq_off + pg);
		e = m == MAP_FAILED ? errno : 0;
		result(e == EINVAL,
		       fmt("mmap: the second page of a %zu-byte CQ ring: EINVAL", cq.map_size),
		       err_str(e));
		if (m != MAP_FAILED)
			munmap(m, cq.map_size - pg);
	} else {
		result(false, "mmap: the CQ ring is in /proc/self/maps and larger than a page",
		       fmt("%zu bytes", cq.map_size));
	}

	if (alias != MAP_FAILED) {
		void *big = mremap(alias, sz, sz + pg, MREMAP_MAYMOVE);
		e = big == MAP_FAILED ? errno : 0;
		result(e == EFAULT, "mremap: grow a ring mapping: EFAULT", err_str(e));
		if (big != MAP_FAILED)
			alias = big;
		void *dst = mmap(nullptr, sz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		void *moved = mremap(alias, sz, sz, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
		e = moved == MAP_FAILED ? errno : 0;
		if (moved != MAP_FAILED)
			alias = moved;
		result(!e && !std::memcmp(alias, sq.map, sizeof(sroce_ring_hdr)),
		       "mremap: a moved ring mapping still aliases the ring", err_str(e));
		munmap(alias, sz);
	}

	/* Unmap the live SQ ring, ring the doorbell, map it back in place. */
	e = munmap(sq.map, sz) ? errno : 0;
	result(!e, "munmap of a live QP's SQ ring", err_str(e));
	e = raw_post_send(p.a->handle);
	result(!e, "doorbell with the SQ ring unmapped: accepted", err_str(e));
	expect_no_wc("doorbell with the SQ ring unmapped: nothing sent", p.cqa, 100);
	m = mmap(sq.map, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, ctx->cmd_fd, off);
	result(m == sq.map, "the SQ ring mapped back at its address",
	       m == MAP_FAILED ? err_str(errno) : "");
	if (m != sq.map)
		return; /* the provider would fault on its next post */
	expect_send_works("mmap", p);
	check_memory(name);
	pair_destroy(p, name);
}

/*
 * A fork child inherits the shared ring mappings and the command fd.  The
 * RDMA core refuses its commands (EACCES: not the credentials that opened
 * the file), but what it writes into the ring is there: the parent's next
 * doorbell makes the kernel fetch it, just another hostile WQE.
 */
void fork_case()
{
	const std::string name = "fork child writes a garbage WQE into the parent's SQ";
	Pair p;

	if (!pair_make(p, name))
		return;
	sroce_send_wqe w = default_send(7777);

	w.opcode = 0x7e;
	std::fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		sq_publish(p.a, w, nullptr, 0);
		_exit(raw_post_send(p.a->handle));
	}
	int st = 0;
	waitpid(pid, &st, 0);
	result(WIFEXITED(st) && WEXITSTATUS(st) == EACCES, name + ": child's doorbell: EACCES",
	       fmt("wait status %#x", st));
	expect_no_wc(name + ": nothing fetched before the parent's doorbell", p.cqa, 100);
	int db = raw_post_send(p.a->handle);
	result(!db, name + ": parent's doorbell", err_str(db));
	expect_wc(name + ": parent sees LOC_QP_OP_ERR", p.cqa, 7777, IBV_WC_LOC_QP_OP_ERR);
	expect_state(name, p.a, IBV_QPS_ERR);
	check_memory(name);
	pair_destroy(p, name);
}

/* ---- importing: the driver parts of QUERY_CONTEXT and PD_QUERY ----------- */

/*
 * One uverbs method call with @n attributes, laid out by the provider's
 * own uverbs_ioctl(): 0 or the errno.
 */
int raw_method(uint16_t object, uint16_t method, ib_uverbs_attr *attrs, unsigned int n)
{
	return sroce::uverbs_ioctl(ctx->cmd_fd, object, method, attrs, n) ? errno : 0;
}

ib_uverbs_attr out_attr(uint16_t id, void *p, uint16_t len)
{
	ib_uverbs_attr a = {};

	a.attr_id = id;
	a.flags = UVERBS_ATTR_F_MANDATORY;
	a.len = len;
	a.data = reinterpret_cast<uintptr_t>(p);
	return a;
}

/*
 * The kernel calls a process importing a context makes
 * (Documentation/abi.rst, "Sharing a context"), with every lie: a response
 * buffer too short (refused, and not one byte written past what was
 * given), unwritable, or longer (the tail zeroed); a PD check with no
 * handle, a CQ's handle, a handle of no object.
 */
void import_cases()
{
	const std::string name = "import";
	uint8_t buf[64];
	ib_uverbs_attr a;
	int e;

	std::memset(buf, 0xa5, sizeof(buf));
	a = out_attr(SROCE_ATTR_QUERY_CONTEXT_RESP, buf, 8);
	e = raw_method(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT, &a, 1);
	bool untouched = true;
	for (uint8_t b : buf)
		untouched = untouched && b == 0xa5;
	result(e == EINVAL && untouched,
	       name + ": QUERY_CONTEXT into 8 bytes: EINVAL, nothing written",
	       err_str(e) + (untouched ? "" : ", buffer written"));

	void *none = mmap(nullptr, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a = out_attr(SROCE_ATTR_QUERY_CONTEXT_RESP, none, sizeof(sroce_alloc_ucontext_resp));
	e = none == MAP_FAILED ? errno :
	    raw_method(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT, &a, 1);
	result(e == EFAULT, name + ": QUERY_CONTEXT into a PROT_NONE page: EFAULT", err_str(e));
	if (none != MAP_FAILED)
		munmap(none, pg);

	std::memset(buf, 0xa5, sizeof(buf));
	a = out_attr(SROCE_ATTR_QUERY_CONTEXT_RESP, buf, 32);
	e = raw_method(UVERBS_OBJECT_DEVICE, UVERBS_METHOD_QUERY_CONTEXT, &a, 1);
	sroce_alloc_ucontext_resp r;
	std::memcpy(&r, buf, sizeof(r));
	bool tail_zero = true, beyond = true;
	for (size_t i = sizeof(r); i < 32; i++)
		tail_zero = tail_zero && !buf[i];
	for (size_t i = 32; i < sizeof(buf); i++)
		beyond = beyond && buf[i] == 0xa5;
	result(!e && r.abi_version == SROCE_ABI_VERSION && tail_zero && beyond,
	       name + ": QUERY_CONTEXT into 32 bytes: the response, then zeros, nothing past 32",
	       fmt("%s, abi %u, tail %s, past %s", err_str(e).c_str(), r.abi_version,
		   tail_zero ? "zero" : "not zero", beyond ? "untouched" : "written"));

	e = raw_method(UVERBS_OBJECT_PD, SROCE_METHOD_PD_QUERY, nullptr, 0);
	result(e == EINVAL, name + ": PD_QUERY without the handle: EINVAL", err_str(e));
	a = {};
	a.attr_id = SROCE_ATTR_QUERY_PD_HANDLE;
	a.flags = UVERBS_ATTR_F_MANDATORY;
	a.data = pd->handle;
	e = raw_method(UVERBS_OBJECT_PD, SROCE_METHOD_PD_QUERY, &a, 1);
	result(e == 0, name + ": PD_QUERY of this context's PD: accepted", err_str(e));
	ibv_cq *cq = ibv_create_cq(ctx, 4, nullptr, nullptr, 0);
	a.data = cq ? cq->handle : 0;
	e = cq ? raw_method(UVERBS_OBJECT_PD, SROCE_METHOD_PD_QUERY, &a, 1) : errno;
	result(e == EINVAL || e == ENOENT, name + ": PD_QUERY of a CQ's handle: refused", err_str(e));
	if (cq)
		ibv_destroy_cq(cq);
	a.data = 0x7fffff00;
	e = raw_method(UVERBS_OBJECT_PD, SROCE_METHOD_PD_QUERY, &a, 1);
	result(e == ENOENT || e == EINVAL, name + ": PD_QUERY of a handle of no object: refused",
	       err_str(e));
}

/* ---- the doorbell file -------------------------------------------------- */

/* What write() of @len bytes at @buf into @fd answered: 0 when all taken. */
int fd_write(int fd, const void *buf, size_t len)
{
	ssize_t r = write(fd, buf, len);

	if (r == static_cast<ssize_t>(len))
		return 0;
	return r < 0 ? errno : EIO;
}

std::string fd_target(int fd)
{
	char path[64], target[256];
	ssize_t n;

	std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return err_str(errno);
	target[n] = 0;
	return target;
}

/*
 * The provider's doorbell file (sroce-abi.h): every lie a write() into it
 * can tell, each with its errno; a QP of another context of the same
 * process is not this file's; a fork child is refused as uverbs refuses
 * it; once the context is closed the file (still open) answers EIO.
 */
void doorbell_file_cases()
{
	const std::string name = "doorbell file";
	Pair p;
	int e;

	if (!pair_make(p, name))
		return;
	int fd = sroce::from_ctx(ctx)->doorbell_fd;
	std::string target = fd >= 0 ? fd_target(fd) : "none";
	result(target == "anon_inode:[sroce_doorbell]",
	       name + ": the context rings doorbells through anon_inode:[sroce_doorbell]", target);
	if (fd < 0) {
		pair_destroy(p, name);
		return;
	}

	uint32_t qpn = p.a->qp_num;
	uint8_t eight[8] = {};
	std::memcpy(eight, &qpn, sizeof(qpn));
	e = fd_write(fd, &qpn, 3);
	result(e == EINVAL, name + ": 3 bytes: EINVAL", err_str(e));
	e = fd_write(fd, eight, 8);
	result(e == EINVAL, name + ": 8 bytes: EINVAL", err_str(e));
	void *none = mmap(nullptr, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	e = none == MAP_FAILED ? errno : fd_write(fd, none, 4);
	result(e == EFAULT, name + ": QPN from a PROT_NONE page: EFAULT", err_str(e));
	if (none != MAP_FAILED)
		munmap(none, pg);
	uint32_t bad = 0xffffff;
	e = fd_write(fd, &bad, 4);
	result(e == EINVAL, name + ": QPN 0xffffff (no such QP): EINVAL", err_str(e));
	bad = 1;
	e = fd_write(fd, &bad, 4);
	result(e == EINVAL, name + ": QPN 1 (the GSI QP, the kernel's): EINVAL", err_str(e));
	ibv_qp *fresh = make_qp(p.cqa, 4);
	if (fresh) {
		e = fd_write(fd, &fresh->qp_num, 4);
		result(e == EINVAL, name + ": a QP in RESET: EINVAL", err_str(e));
		ibv_destroy_qp(fresh);
	}
	char c;
	e = read(fd, &c, 1) < 0 ? errno : 0;
	result(e == EBADF, name + ": read(): EBADF (opened write-only)", err_str(e));
	e = fd_write(fd, &qpn, 4);
	result(e == 0, name + ": the QPN of a connected QP: accepted", err_str(e));

	std::fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fd_write(fd, &qpn, 4));
	int st = 0;
	waitpid(pid, &st, 0);
	result(WIFEXITED(st) && WEXITSTATUS(st) == EACCES,
	       name + ": a fork child's write(): EACCES, as uverbs answers it",
	       fmt("wait status %#x", st));

	/* A second context of this process: its QPs are not the first's. */
	ibv_context *ctx2 = ibv_open_device(ctx->device);
	ibv_pd *pd_2 = ctx2 ? ibv_alloc_pd(ctx2) : nullptr;
	ibv_cq *cq2 = pd_2 ? ibv_create_cq(ctx2, 8, nullptr, nullptr, 0) : nullptr;
	ibv_qp *q2 = nullptr;
	if (cq2) {
		ibv_qp_init_attr ia = {};

		ia.send_cq = cq2;
		ia.recv_cq = cq2;
		ia.qp_type = IBV_QPT_RC;
		ia.cap.max_send_wr = 4;
		ia.cap.max_recv_wr = 4;
		ia.cap.max_send_sge = 1;
		ia.cap.max_recv_sge = 1;
		q2 = ibv_create_qp(pd_2, &ia);
	}
	e = q2 ? connect_qp(q2, p.b->qp_num) : errno;
	int fd2 = ctx2 ? sroce::from_ctx(ctx2)->doorbell_fd : -1;
	result(!e && fd2 >= 0 && fd2 != fd, name + ": a second context, its own file and an RTS QP",
	       fmt("%s, fd %d", err_str(e).c_str(), fd2));
	if (!e && fd2 >= 0) {
		e = fd_write(fd, &q2->qp_num, 4);
		result(e == EINVAL, name + ": the other context's QP through this file: EINVAL",
		       err_str(e));
		e = fd_write(fd2, &q2->qp_num, 4);
		result(e == 0, name + ": ... through its own file: accepted", err_str(e));
		e = fd_write(fd2, &qpn, 4);
		result(e == EINVAL, name + ": this context's QP through the other's file: EINVAL",
		       err_str(e));
	}
	/* Close the second context, keeping its file open. */
	int kept = fd2 >= 0 ? dup(fd2) : -1;
	uint32_t qpn2 = q2 ? q2->qp_num : 0;
	if (q2)
		ibv_destroy_qp(q2);
	if (cq2)
		ibv_destroy_cq(cq2);
	if (pd_2)
		ibv_dealloc_pd(pd_2);
	if (ctx2)
		ibv_close_device(ctx2);
	if (kept >= 0) {
		e = fd_write(kept, &qpn2, 4);
		result(e == EIO, name + ": after its context was closed: EIO", err_str(e));
		e = fd_write(kept, &qpn, 4);
		result(e == EIO, name + ": ... also for a live QP of another context: EIO",
		       err_str(e));
		close(kept);
	}

	expect_send_works(name, p);
	check_memory(name);
	pair_destroy(p, name);
}

/* ---- the device still works --------------------------------------------- */

void final_traffic()
{
	const std::string name = "afterwards";
	Pair p;
	ibv_wc wc;

	if (!pair_make(p, name))
		return;
	expect_send_works(name, p);
	/* WRITE 256 bytes into the receive buffer, READ them back to page 1's end. */
	post_send_ok(p.a, 11, IBV_WR_RDMA_WRITE, sendbuf, 256,
		     reinterpret_cast<uintptr_t>(recvbuf));
	bool ok = poll1(p.cqa, wc, 3000) && wc.status == IBV_WC_SUCCESS;
	result(ok && !std::memcmp(recvbuf, sendbuf, 256), "afterwards: WRITE places verified data");
	std::vector<uint8_t> save(sendbuf + pg - 256, sendbuf + pg);
	post_send_ok(p.a, 12, IBV_WR_RDMA_READ, sendbuf + pg - 256, 256,
		     reinterpret_cast<uintptr_t>(recvbuf));
	ok = poll1(p.cqa, wc, 3000) && wc.status == IBV_WC_SUCCESS;
	result(ok && !std::memcmp(sendbuf + pg - 256, recvbuf, 256),
	       "afterwards: READ returns verified data");
	std::memcpy(sendbuf + pg - 256, save.data(), 256);
	uint64_t *word = reinterpret_cast<uint64_t *>(recvbuf + 1024);
	*word = 1000;
	post_send_ok(p.a, 13, IBV_WR_ATOMIC_FETCH_AND_ADD, recvbuf + 2048, 8,
		     reinterpret_cast<uintptr_t>(word), 5);
	ok = poll1(p.cqa, wc, 3000) && wc.status == IBV_WC_SUCCESS;
	result(ok && *word == 1005 && *reinterpret_cast<uint64_t *>(recvbuf + 2048) == 1000,
	       "afterwards: fetch-and-add", fmt("word %" PRIu64, *word));
	std::memset(recvbuf, RECV_FILL, pg);
	check_memory(name);
	pair_destroy(p, name);
}

bool setup(const char *devname)
{
	int n;
	ibv_device **list = ibv_get_device_list(&n);

	for (int i = 0; list && i < n; i++) {
		if (!std::strcmp(ibv_get_device_name(list[i]), devname))
			ctx = ibv_open_device(list[i]);
	}
	if (list)
		ibv_free_device_list(list);
	if (!ctx || ibv_query_port(ctx, 1, &port) || ibv_query_gid(ctx, 1, gidx, &gid))
		return false;
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	pg = sysconf(_SC_PAGESIZE);
	void *r = mmap(nullptr, 6 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!pd || !pd2 || r == MAP_FAILED)
		return false;
	region = static_cast<uint8_t *>(r);
	sendbuf = region + pg;
	recvbuf = region + 2 * pg;
	otherbuf = region + 4 * pg;
	fill_memory();
	int all = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
		  IBV_ACCESS_REMOTE_ATOMIC;
	mr = ibv_reg_mr(pd, sendbuf, 2 * pg, all);
	mr_ro = ibv_reg_mr(pd, sendbuf, pg, 0);
	mr_pd2 = ibv_reg_mr(pd2, otherbuf, pg, all);
	return mr && mr_ro && mr_pd2;
}

} // namespace

int main(int argc, char **argv)
{
	const char *dev = nullptr;
	int c;

	while ((c = getopt(argc, argv, "d:g:")) != -1) {
		if (c == 'd')
			dev = optarg;
		else if (c == 'g')
			gidx = std::atoi(optarg);
		else
			break;
	}
	if (!dev || gidx < 0) {
		std::fprintf(stderr, "usage: hostile -d DEV -g GID_INDEX\n");
		return 2;
	}
	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	if (!setup(dev)) {
		std::fprintf(stderr, "hostile: cannot set up %s (gid %d): %s\n", dev, gidx,
			     std::strerror(errno));
		return 1;
	}
	send_cases();
	inline_past_slot_case();
	sq_index_case("SQ: producer index a ring + 1 ahead", [](uint32_t n) { return n + 1; });
	sq_index_case("SQ: producer index 2^31 ahead", [](uint32_t) { return 0x80000000u; });
	sq_index_case("SQ: producer index 1 behind the consumer", [](uint32_t) { return ~0u; });
	sq_index_behind_head_case();
	sq_full_of_garbage();
	concurrent_rewrite_case();
	recv_cases();
	cq_consumer_case();
	command_cases();
	create_qp_cmd_cases();
	mmap_cases();
	fork_case();
	import_cases();
	doorbell_file_cases();
	final_traffic();

	int err = ibv_dereg_mr(mr) | ibv_dereg_mr(mr_ro) | ibv_dereg_mr(mr_pd2) |
		  ibv_dealloc_pd(pd) | ibv_dealloc_pd(pd2) | ibv_close_device(ctx);
	result(!err, "every object released");
	std::printf("# hostile: %d checks, %d failed\n", n_tests, n_failed);
	return n_failed ? 1 : 0;
}
