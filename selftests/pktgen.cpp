// SPDX-License-Identifier: GPL-2.0-only
/*
 * pktgen: malformed RoCEv2 packets at live RC QPs.
 *
 *   pktgen -d DEV_A -g GIDX_A -D DEV_B -G GIDX_B [-N NETNS] [-s SEED] [-n COUNT]
 *   pktgen -d DEV_A -g GIDX_A -D DEV_B -G GIDX_B -T MIB
 *
 * -T sends no forged packet: it moves MIB MiB of verified SEND, WRITE and
 * READ data (and fetch-and-adds) over one pair, for lossy links (netem.sh).
 *
 * Its raw socket must live in the network namespace of DEV_B's netdev:
 * -N /run/netns/NAME enters it for the socket only, so that sysfs (the
 * counters) stays the initial namespace's view.  It opens both devices, connects RC QP pairs between them (one QP
 * on A, its peer on B), and then forges packets that claim to come from the
 * B side and sends them to A's address through a raw IPv4 socket: IP, UDP,
 * BTH, extension headers, payload, pad and ICRC are all ours, built from
 * the kernel's own wire definitions (kernel/wire.h, opcode.h, icrc.h).
 *
 *  - hand-picked cases, one packet at a time: after each, every watched
 *    counter of DEV_A (rdma statistic / hw_counters) must have moved by
 *    exactly what the case expects and the targeted QP must be in the state
 *    the IBA requires (still RTS, or ERR for a fatal responder error), its
 *    memory untouched where the request was refused;
 *  - COUNT randomised packets (seeded; the seed is printed, -s repeats a
 *    run) at a dedicated QP and at unknown QPNs: every one must reach the
 *    device and rx_dropped must equal the sum of its reasons;
 *  - afterwards a pair that was never targeted (own PD, own MRs) and the
 *    pair that only got packets that must be dropped move verified data:
 *    SEND, RDMA WRITE, RDMA READ and an atomic, byte for byte;
 *  - a peer that opens gaps in the PSNs and never fills them (held_bounds()):
 *    what a QP holds past its gap stops at the span, what the device holds
 *    at its memory budget, the rest is dropped and counted, and destroyed
 *    QPs give their share back.
 *
 * Output is KTAP.  Exit 0 if every check passed, 1 otherwise, 4 if the
 * setup is not there (skip).
 */
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ktap.hpp"

#include "../kernel/icrc.h"
#include "../kernel/opcode.h"
#include "../kernel/wire.h"

namespace {

using Bytes = std::vector<std::uint8_t>;

/* Our own copies of the IPv4 and UDP headers, checked against the RFCs. */
struct ip4 {
	std::uint8_t ver_ihl, tos;
	__be16 tot_len, id, frag;
	std::uint8_t ttl, proto;
	__be16 check;
	__be32 saddr, daddr;
} __attribute__((packed));
static_assert(sizeof(ip4) == SROCE_IPV4_MIN_HLEN);

struct udp {
	__be16 sport, dport, len, check;
} __attribute__((packed));
static_assert(sizeof(udp) == SROCE_UDP_HDR_LEN);

constexpr unsigned int BUF_SZ = 64 * 1024;
/* How long a completion may take: -T on a lossy link allows more. */
unsigned int WAIT_MS = 5000;
/*
 * SELFTEST_TIMEOUT_SCALE (selftests/lib.sh: 8 on the debug kernel, where
 * everything runs 5 to 15 times slower) multiplies every wait.
 */
unsigned int time_scale = 1;

/* ---- KTAP ------------------------------------------------------------------ */

void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void diag(const char *fmt, ...)
{
	va_list ap;

	std::printf("# ");
	va_start(ap, fmt);
	std::vprintf(fmt, ap);
	va_end(ap);
	std::printf("\n");
}

using ktap::n_failed;
using ktap::n_tests;
using ktap::result;

std::uint64_t now_ms()
{
	using namespace std::chrono;
	return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

void sleep_ms(unsigned int ms)
{
	std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

/* ---- counters ------------------------------------------------------------ */

using Counters = std::map<std::string, std::int64_t>;

/* The counters every case accounts for exactly (0 unless it expects one). */
const char *const watched[] = {
	"rx_dropped", "rx_bad_header", "rx_bad_opcode", "rx_bad_icrc", "rx_no_qp",
	"rx_bad_qp_type", "rx_bad_state", "rx_bad_addr", "rx_bad_pkey", "rx_no_mem", "rx_cnp",
	"resp_seq_naks", "resp_fatal_naks", "resp_duplicates", "resp_bad_key",
	"resp_dropped", "resp_no_recv", "comp_ghosts", "comp_dropped", "cc_rate_cuts",
};
/* The reasons rx_dropped is the sum of (a CNP is not a drop: cc.c takes it). */
const char *const rx_reasons[] = {
	"rx_bad_header", "rx_bad_opcode", "rx_bad_icrc", "rx_no_qp", "rx_bad_qp_type",
	"rx_bad_state", "rx_bad_addr", "rx_bad_pkey", "rx_no_mem",
};

std::string hw_dir;

std::int64_t counter(const char *name)
{
	std::ifstream f(hw_dir + name);
	std::int64_t v = -1;

	f >> v;
	return v;
}

Counters counters()
{
	Counters c;

	for (const char *n : watched)
		c[n] = counter(n);
	c["rx_packets"] = counter("rx_packets");
	return c;
}

/*
 * Wait until DEV_A has received @want more packets than @before, then a
 * little longer for the packet's work to end (the counters are cached for
 * 10 ms by the RDMA core; the responder may answer from a work item).
 */
bool wait_rx(const Counters &before, std::int64_t want)
{
	std::uint64_t end = now_ms() + WAIT_MS;
	std::int64_t target = before.at("rx_packets") + want;

	while (counter("rx_packets") < target) {
		if (now_ms() > end)
			return false;
		sleep_ms(2);
	}
	sleep_ms(30 * time_scale);
	return true;
}

/* ---- verbs side ------------------------------------------------------------ */

struct side {
	const char *name;
	int gidx;
	ibv_context *ctx;
	ibv_pd *pd;
	ibv_port_attr port;
	union ibv_gid gid;
};

struct half {
	side *s;
	ibv_pd *pd;
	ibv_cq *cq;
	ibv_qp *qp;
	std::uint8_t *buf;
	ibv_mr *mr;
};

/* A QP on A and its peer on B; A's receive side is what gets attacked. */
struct pair {
	const char *label;
	half a, b;
	std::uint32_t a_epsn;	/* what A's responder expects next */
	std::uint32_t b_sq_psn;	/* B's next request PSN (real traffic) */
};

constexpr std::uint32_t START_PSN = 0x100;
unsigned int path_mtu = 1024;
/* The UD and UC targets: UC WRITEs land in their buffer. */
constexpr int UDUC_ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
constexpr int ALL_ACCESS = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

bool side_open(side &s)
{
	ibv_device **list = ibv_get_device_list(nullptr);

	for (int i = 0; list && list[i]; i++)
		if (!std::strcmp(ibv_get_device_name(list[i]), s.name))
			s.ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!s.ctx) {
		diag("cannot open %s: %s", s.name, std::strerror(errno));
		return false;
	}
	if (ibv_query_port(s.ctx, 1, &s.port) || ibv_query_gid(s.ctx, 1, s.gidx, &s.gid)) {
		diag("%s: query port/GID %d failed", s.name, s.gidx);
		return false;
	}
	s.pd = ibv_alloc_pd(s.ctx);
	return s.pd;
}

/*
 * A QP of @type on @s with its own buffer, MR (@access) and CQ: RC for the
 * pairs (the buffer filled with a pattern, every send signaled), UD or UC
 * for the targets of the UD/UC/GSI cases (the buffer zeroed, small queues).
 */
bool half_open(half &h, side *s, ibv_pd *pd, int access, ibv_qp_type type = IBV_QPT_RC)
{
	const bool rc = type == IBV_QPT_RC;
	ibv_qp_init_attr ia = {};

	h.s = s;
	h.pd = pd;
	h.buf = static_cast<std::uint8_t *>(aligned_alloc(4096, BUF_SZ));
	if (!h.buf)
		return false;
	for (unsigned int i = 0; i < BUF_SZ; i++)
		h.buf[i] = rc ? static_cast<std::uint8_t>(i * 7 + 3) : 0;
	h.mr = ibv_reg_mr(pd, h.buf, BUF_SZ, access);
	h.cq = ibv_create_cq(s->ctx, rc ? 256 : 64, nullptr, nullptr, 0);
	if (!h.mr || !h.cq) {
		diag("%s: reg_mr/create_cq: %s", s->name, std::strerror(errno));
		return false;
	}
	ia.send_cq = h.cq;
	ia.recv_cq = h.cq;
	ia.qp_type = type;
	ia.sq_sig_all = rc;
	ia.cap = rc ? ibv_qp_cap{ 64, 64, 1, 1, 0 } : ibv_qp_cap{ 4, 16, 1, 1, 0 };
	h.qp = ibv_create_qp(pd, &ia);
	if (!h.qp)
		diag("%s: create %s QP: %s", s->name, rc ? "RC" : type == IBV_QPT_UD ? "UD" : "UC",
		     std::strerror(errno));
	return h.qp;
}

int to_rts(half &h, std::uint32_t dqpn, const union ibv_gid &dgid, enum ibv_mtu mtu)
{
	ibv_qp_attr a = {};
	int err;

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = ALL_ACCESS;
	err = ibv_modify_qp(h.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			    IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = START_PSN;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = dgid;
	a.ah_attr.grh.sgid_index = h.s->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(h.qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 12;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = START_PSN;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(h.qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

bool pair_open(pair &p, const char *label, side &a, side &b, ibv_pd *a_pd)
{
	enum ibv_mtu mtu = std::min(a.port.active_mtu, b.port.active_mtu);

	p.label = label;
	if (!half_open(p.a, &a, a_pd, ALL_ACCESS) || !half_open(p.b, &b, b.pd, ALL_ACCESS))
		return false;
	if (to_rts(p.a, p.b.qp->qp_num, b.gid, mtu) || to_rts(p.b, p.a.qp->qp_num, a.gid, mtu)) {
		diag("%s: connect: %s", label, std::strerror(errno));
		return false;
	}
	p.a_epsn = START_PSN;
	p.b_sq_psn = START_PSN;
	return true;
}

int ud_to_rts(half &h, std::uint32_t qkey)
{
	ibv_qp_attr a = {};

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = qkey;
	if (ibv_modify_qp(h.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		return errno;
	a = {};
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(h.qp, &a, IBV_QP_STATE))
		return errno;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = START_PSN;
	return ibv_modify_qp(h.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? errno : 0;
}

/* UC to RTR (the receive side is all the cases need), expecting START_PSN. */
int uc_to_rtr(half &h, std::uint32_t dqpn, const union ibv_gid &dgid, enum ibv_mtu mtu)
{
	ibv_qp_attr a = {};

	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	if (ibv_modify_qp(h.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			  IBV_QP_ACCESS_FLAGS))
		return errno;
	a = {};
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = START_PSN;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = dgid;
	a.ah_attr.grh.sgid_index = h.s->gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(h.qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		return errno;
	a = {};
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = START_PSN;
	return ibv_modify_qp(h.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? errno : 0;
}

bool post_recv_at(half &h, std::size_t off, std::uint32_t len)
{
	ibv_sge sg = { reinterpret_cast<std::uintptr_t>(h.buf + off), len, h.mr->lkey };
	ibv_recv_wr wr = {}, *bad;

	wr.wr_id = off;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	return !ibv_post_recv(h.qp, &wr, &bad);
}

enum ibv_qp_state qp_state(ibv_qp *qp)
{
	ibv_qp_attr a;
	ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return static_cast<enum ibv_qp_state>(-1);
	return a.qp_state;
}

enum ibv_qp_state qp_state_settled(ibv_qp *qp, enum ibv_qp_state want)
{
	std::uint64_t end = now_ms() + 2000 * time_scale;
	enum ibv_qp_state st;

	while ((st = qp_state(qp)) != want && now_ms() < end)
		sleep_ms(2);
	return st;
}

const char *state_str(enum ibv_qp_state s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return static_cast<unsigned int>(s) < 7 ? n[s] : "?";
}

/* One completion of @cq for @qp within WAIT_MS. */
bool poll_one(ibv_cq *cq, ibv_wc &wc)
{
	std::uint64_t end = now_ms() + WAIT_MS;

	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n)
			return n == 1;
		if (now_ms() > end)
			return false;
		usleep(100);
	}
}

/* Real traffic on @p, B -> A (the attacked direction): all verified. */
bool traffic(pair &p, unsigned int seed)
{
	half &a = p.a, &b = p.b;
	std::uint8_t *src = b.buf, *dst = a.buf;
	const unsigned int len = 20000;
	ibv_sge sg = {};
	ibv_send_wr wr = {}, *bad;
	ibv_recv_wr rwr = {}, *rbad;
	ibv_wc wc;
	bool ok = true;

	for (unsigned int i = 0; i < len; i++)
		src[i] = static_cast<std::uint8_t>(seed + i * 131 + (i >> 8));
	auto wait2 = [&](ibv_wc_opcode want) {
		/* one completion on each of the two CQs (A's receive for SEND) */
		if (!poll_one(b.cq, wc) || wc.status != IBV_WC_SUCCESS || wc.opcode != want) {
			diag("%s: requester completion: %s", p.label,
			     wc.status ? ibv_wc_status_str(wc.status) : "none/other opcode");
			return false;
		}
		return true;
	};
	/* a refused post says why (errno-style return of ibv_post_*) */
	auto posted = [&](int err, const char *what) {
		if (err)
			diag("%s: %s: %s", p.label, what, std::strerror(err));
		return !err;
	};

	/* SEND of len bytes into A's buffer at 32 KiB */
	sg = { reinterpret_cast<std::uintptr_t>(dst + 32768), len, a.mr->lkey };
	rwr.wr_id = 1;
	rwr.sg_list = &sg;
	rwr.num_sge = 1;
	if (!posted(ibv_post_recv(a.qp, &rwr, &rbad), "post_recv"))
		return false;
	sg = { reinterpret_cast<std::uintptr_t>(src), len, b.mr->lkey };
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	if (!posted(ibv_post_send(b.qp, &wr, &bad), "post_send") || !wait2(IBV_WC_SEND))
		return false;
	if (!poll_one(a.cq, wc) || wc.status != IBV_WC_SUCCESS || wc.byte_len != len) {
		diag("%s: receive completion %s len %u", p.label, ibv_wc_status_str(wc.status),
		     wc.byte_len);
		return false;
	}
	ok &= !std::memcmp(dst + 32768, src, len);

	/* WRITE the same bytes to A's buffer at 0 */
	for (unsigned int i = 0; i < len; i++)
		src[i] ^= 0x5a;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = reinterpret_cast<std::uintptr_t>(dst);
	wr.wr.rdma.rkey = a.mr->rkey;
	if (!posted(ibv_post_send(b.qp, &wr, &bad), "post_send") || !wait2(IBV_WC_RDMA_WRITE))
		return false;
	ok &= !std::memcmp(dst, src, len);

	/* READ it back into B's buffer at 32 KiB */
	sg = { reinterpret_cast<std::uintptr_t>(src + 32768), len, b.mr->lkey };
	wr.opcode = IBV_WR_RDMA_READ;
	if (!posted(ibv_post_send(b.qp, &wr, &bad), "post_send") || !wait2(IBV_WC_RDMA_READ))
		return false;
	ok &= !std::memcmp(src + 32768, dst, len);

	/* fetch&add on A's first word */
	std::uint64_t before;
	std::memcpy(&before, dst + 24576, 8);
	sg = { reinterpret_cast<std::uintptr_t>(src + 24576), 8, b.mr->lkey };
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	wr.wr.atomic.remote_addr = reinterpret_cast<std::uintptr_t>(dst + 24576);
	wr.wr.atomic.rkey = a.mr->rkey;
	wr.wr.atomic.compare_add = 5;
	if (!posted(ibv_post_send(b.qp, &wr, &bad), "post_send") || !wait2(IBV_WC_FETCH_ADD))
		return false;
	std::uint64_t orig, after;
	std::memcpy(&orig, src + 24576, 8);
	std::memcpy(&after, dst + 24576, 8);
	ok &= orig == before && after == before + 5;
	if (!ok)
		diag("%s: data differs after verified traffic", p.label);
	/* what A's responder expects next: three messages and an atomic */
	p.a_epsn = (p.a_epsn + 3 * ((len + path_mtu - 1) / path_mtu) + 1) & SROCE_QPN_MASK;
	return ok;
}

/* ---- packets ----------------------------------------------------------------- */

struct addrs {
	std::uint32_t a, b;	/* IPv4, network order: A (target), B (claimed sender) */
};

struct pkt {
	std::uint8_t opcode = SROCE_OP_RC_SEND_ONLY;
	std::uint32_t qpn = 0;
	std::uint32_t psn = 0;
	bool ackreq = true;
	std::uint16_t pkey = SROCE_DEFAULT_PKEY;
	unsigned int pad = 0;
	unsigned int tver = 0;
	Bytes ext;		/* everything between BTH and payload */
	Bytes payload;
	bool bad_icrc = false;
	int keep = -1;		/* >= 0: UDP payload truncated to this many bytes */
	std::uint32_t saddr = 0;	/* 0: B's address */
	std::uint32_t fecn_etc = 0;	/* top byte of the DestQP word */
};

void put_be(Bytes &b, std::uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

Bytes reth(std::uint64_t va, std::uint32_t rkey, std::uint32_t len)
{
	Bytes b;

	put_be(b, va, 8);
	put_be(b, rkey, 4);
	put_be(b, len, 4);
	return b;
}

Bytes atmeth(std::uint64_t va, std::uint32_t rkey, std::uint64_t swap_add, std::uint64_t cmp)
{
	Bytes b;

	put_be(b, va, 8);
	put_be(b, rkey, 4);
	put_be(b, swap_add, 8);
	put_be(b, cmp, 8);
	return b;
}

Bytes aeth(std::uint8_t syndrome, std::uint32_t msn)
{
	Bytes b;

	put_be(b, static_cast<std::uint32_t>(syndrome) << 24 | (msn & SROCE_QPN_MASK), 4);
	return b;
}

Bytes cat(Bytes a, const Bytes &b)
{
	a.insert(a.end(), b.begin(), b.end());
	return a;
}

/* The datagram as it leaves: IPv4 | UDP | BTH | ext | payload | pad | ICRC. */
Bytes build(const pkt &p, const addrs &ad, std::uint16_t ip_id)
{
	Bytes d(sizeof(ip4) + sizeof(udp) + SROCE_BTH_LEN);
	sroce_bth bth = {};
	std::uint32_t icrc = 0;

	bth.opcode = p.opcode;
	bth.flags = sroce_bth_flags(false, false, p.pad) | (p.tver & SROCE_BTH_TVER_MASK);
	bth.pkey = sroce_cpu_to_be16(p.pkey);
	sroce_bth_set_qpn(&bth, p.qpn);
	bth.qpn |= sroce_cpu_to_be32(p.fecn_etc & SROCE_BTH_RESV8A_MASK);
	sroce_bth_set_psn(&bth, p.psn, p.ackreq);
	std::memcpy(&d[sizeof(ip4) + sizeof(udp)], &bth, sizeof(bth));
	d.insert(d.end(), p.ext.begin(), p.ext.end());
	d.insert(d.end(), p.payload.begin(), p.payload.end());
	d.insert(d.end(), p.pad, 0);
	d.insert(d.end(), SROCE_ICRC_LEN, 0);

	auto fix_lengths = [&]() {
		ip4 ip = {};
		udp u = {};

		ip.ver_ihl = 0x45;
		ip.tot_len = htons(static_cast<std::uint16_t>(d.size()));
		ip.id = htons(ip_id);
		ip.frag = htons(0x4000);	/* DF */
		ip.ttl = 64;
		ip.proto = IPPROTO_UDP;
		ip.saddr = p.saddr ? p.saddr : ad.b;
		ip.daddr = ad.a;
		u.sport = htons(static_cast<std::uint16_t>(0xc000 | (ip_id & 0x3fff)));
		u.dport = htons(SROCE_UDP_PORT);
		u.len = htons(static_cast<std::uint16_t>(d.size() - sizeof(ip4)));
		std::memcpy(&d[0], &ip, sizeof(ip));
		std::memcpy(&d[sizeof(ip)], &u, sizeof(u));
	};
	fix_lengths();
	sroce_icrc_calc(d.data(), d.size() - SROCE_ICRC_LEN, nullptr, 0, &icrc);
	if (p.bad_icrc)
		icrc ^= 0x00010000;
	sroce_icrc_put(&d[d.size() - SROCE_ICRC_LEN], icrc);
	if (p.keep >= 0 && sizeof(ip4) + sizeof(udp) + p.keep < d.size()) {
		d.resize(sizeof(ip4) + sizeof(udp) + p.keep);
		fix_lengths();
	}
	return d;
}

int raw_fd;
addrs ad;
std::uint16_t ip_id = 1;

bool send_pkt(const pkt &p)
{
	Bytes d = build(p, ad, ip_id++);
	sockaddr_in to = {};

	if (!ip_id)
		ip_id = 1;
	to.sin_family = AF_INET;
	to.sin_addr.s_addr = ad.a;
	if (sendto(raw_fd, d.data(), d.size(), 0, reinterpret_cast<sockaddr *>(&to),
		   sizeof(to)) != static_cast<ssize_t>(d.size())) {
		diag("sendto: %s", std::strerror(errno));
		return false;
	}
	return true;
}

/* ---- hand-picked cases --------------------------------------------------------- */

struct expect {
	Counters delta;		/* watched counters that must move (all others: 0) */
	bool to_error = false;	/* the target QP must end in ERR (else RTS) */
	bool mem_untouched = true;
};

/*
 * Send @p, wait for DEV_A to receive it, and check every watched counter,
 * the target QP's state and (unless the case writes) its memory.
 */
void run_case(const std::string &name, const pkt &p, pair *target, const expect &e)
{
	Bytes snapshot;
	Counters before = counters(), after;
	bool ok = true;

	if (target)
		snapshot.assign(target->a.buf, target->a.buf + BUF_SZ);
	if (!send_pkt(p) || !wait_rx(before, 1)) {
		result(false, name);
		diag("the packet did not reach %s (rx_packets %" PRId64 " -> %" PRId64 ")",
		     hw_dir.c_str(), before["rx_packets"], counter("rx_packets"));
		return;
	}
	if (target && e.to_error)
		qp_state_settled(target->a.qp, IBV_QPS_ERR);
	after = counters();
	std::string moved;
	for (const char *n : watched) {
		std::int64_t d = after[n] - before[n];
		std::int64_t want = e.delta.count(n) ? e.delta.at(n) : 0;

		if (d)
			moved += std::string(" ") + n + "+" + std::to_string(d);
		if (d != want) {
			ok = false;
			diag("%s: %s moved by %" PRId64 ", expected %" PRId64, name.c_str(), n, d, want);
		}
	}
	if (target) {
		enum ibv_qp_state want = e.to_error ? IBV_QPS_ERR : IBV_QPS_RTS;
		enum ibv_qp_state st = qp_state(target->a.qp);

		if (st != want) {
			ok = false;
			diag("%s: QP %s is %s, expected %s", name.c_str(), target->label,
			     state_str(st), state_str(want));
		}
		if (e.mem_untouched && std::memcmp(snapshot.data(), target->a.buf, BUF_SZ)) {
			ok = false;
			diag("%s: memory of %s changed by a refused request", name.c_str(),
			     target->label);
		}
	}
	result(ok, name);
	diag("%s:%s", name.c_str(), moved.empty() ? " nothing counted" : moved.c_str());
}

Counters one(const char *a, std::int64_t n = 1)
{
	return { { a, n } };
}

Counters rx(const char *reason)
{
	return { { reason, 1 }, { "rx_dropped", 1 } };
}

/* ---- randomised packets ---------------------------------------------------------- */

struct fuzzer {
	std::mt19937_64 rng;
	pair *target;
	std::vector<std::uint32_t> rkeys;
	std::vector<std::uint64_t> vas;
	unsigned int mtu;

	std::uint64_t r(std::uint64_t n) { return n ? rng() % n : 0; }
	bool chance(unsigned int percent) { return r(100) < percent; }

	std::uint64_t va()
	{
		std::uint64_t base = vas[r(vas.size())];

		switch (r(4)) {
		case 0: return rng();
		case 1: return base + r(BUF_SZ + 64) - 32;
		default: return base + (r(BUF_SZ / 8) * 8);
		}
	}
	std::uint32_t rkey() { return chance(80) ? rkeys[r(rkeys.size())] : static_cast<std::uint32_t>(rng()); }
	std::uint32_t len()
	{
		static const std::uint32_t edge[] = { 0, 1, 8, 1023, 1024, 1025, 4096, BUF_SZ - 1,
						      BUF_SZ, BUF_SZ + 1, 0x7fffffff, 0x80000000,
						      0x80000001, 0xffffffff };
		return chance(50) ? edge[r(sizeof(edge) / sizeof(edge[0]))] : static_cast<std::uint32_t>(r(3 * mtu));
	}

	pkt next()
	{
		pkt p;
		std::uint8_t op;

		/* Mostly opcodes sroce knows (deeper code), sometimes any byte. */
		op = static_cast<std::uint8_t>(rng());
		if (!chance(10))
			while (!sroce_opcode_valid(op))
				op = static_cast<std::uint8_t>(rng());
		p.opcode = op;
		p.qpn = chance(90) ? target->a.qp->qp_num : static_cast<std::uint32_t>(r(SROCE_QPN_MASK + 1));
		std::int64_t off = chance(70) ? static_cast<std::int64_t>(r(8)) - 2 : static_cast<std::int64_t>(rng());
		p.psn = (target->a_epsn + static_cast<std::uint32_t>(off)) & SROCE_QPN_MASK;
		p.ackreq = chance(50);
		p.pkey = chance(95) ? SROCE_DEFAULT_PKEY : static_cast<std::uint16_t>(rng());
		p.pad = chance(80) ? 0 : r(4);
		p.tver = chance(97) ? 0 : r(16);
		p.bad_icrc = chance(5);
		p.fecn_etc = chance(90) ? 0 : static_cast<std::uint32_t>(rng());

		const struct sroce_opcode_info *info = sroce_opcode_info(op);
		if (info->name && chance(92)) {
			/* the right headers, with interesting contents */
			for (unsigned int h = 0; h < SROCE_HDR_COUNT; h++) {
				if (!(info->hdrs & SROCE_HDRM(h)))
					continue;
				switch (h) {
				case SROCE_HDR_RETH:
					p.ext = cat(p.ext, reth(va(), rkey(), len()));
					break;
				case SROCE_HDR_ATMETH:
					p.ext = cat(p.ext, atmeth(va(), rkey(), rng(), rng()));
					break;
				case SROCE_HDR_AETH:
					p.ext = cat(p.ext, aeth(static_cast<std::uint8_t>(rng()),
								static_cast<std::uint32_t>(rng())));
					break;
				case SROCE_HDR_ATMACK:
					put_be(p.ext, rng(), 8);
					break;
				case SROCE_HDR_DETH:
					put_be(p.ext, rng(), 8);
					break;
				case SROCE_HDR_CNP:
					p.ext.insert(p.ext.end(), 16, 0);
					break;
				default:
					put_be(p.ext, rng(), 4);
					break;
				}
			}
		} else {
			p.ext.resize(r(48));
			for (auto &b : p.ext)
				b = static_cast<std::uint8_t>(rng());
		}
		std::uint32_t plen = chance(60) ? mtu : static_cast<std::uint32_t>(r(mtu + 200));
		if (info->name && !(info->flags & SROCE_OPF_PAYLOAD) && chance(80))
			plen = 0;
		p.payload.resize(plen);
		for (auto &b : p.payload)
			b = static_cast<std::uint8_t>(rng());
		if (chance(8))
			p.keep = static_cast<int>(r(SROCE_BTH_LEN + p.ext.size() + plen + 8));
		return p;
	}
};

void usage(const char *prog)
{
	std::fprintf(stderr,
		     "usage: %s -d DEV_A -g GIDX_A -D DEV_B -G GIDX_B [-N NETNS] [-s SEED] [-n COUNT] [-T MIB]\n"
		     "  packets go from DEV_B's address to DEV_A's through a raw socket in\n"
		     "  NETNS (a /run/netns/ file; default: the current namespace)\n",
		     prog);
	std::exit(2);
}

std::uint32_t gid_ipv4(const union ibv_gid &g)
{
	std::uint32_t v;

	std::memcpy(&v, &g.raw[12], 4);
	return v;
}

bool gid_is_ipv4(const union ibv_gid &g)
{
	static const std::uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !std::memcmp(g.raw, prefix, sizeof(prefix));
}

/* Destroy what half_open() made; true if every verb succeeded. */
bool half_close(half &h)
{
	bool ok = true;

	if (h.qp)
		ok &= !ibv_destroy_qp(h.qp);
	if (h.mr)
		ok &= !ibv_dereg_mr(h.mr);
	if (h.cq)
		ok &= !ibv_destroy_cq(h.cq);
	std::free(h.buf);
	h = {};
	return ok;
}

/* Wait until DEV_A's rx_packets stopped moving; its value then. */
std::int64_t rx_settled()
{
	std::int64_t last = counter("rx_packets"), now;

	for (;;) {
		sleep_ms(200 * time_scale);
		now = counter("rx_packets");
		if (now == last)
			return now;
		last = now;
	}
}

/*
 * A peer that opens gaps and never fills them (responder.h): a QP holds
 * the requests past its gap up to HELD_SPAN PSNs ahead, the QPs of a
 * device together at most HELD_DEV_BYTES of skb truesize; a request past
 * either bound is dropped and counted (resp_dropped), never fatal, and a
 * destroyed QP gives back what it held.  SENDs of @len bytes (truesize
 * more than 2 KiB each at 1 KiB) on @n fresh pairs, 300 PSNs past the
 * gap on the first (44 past the span), HELD_SPAN on the others: more
 * than the device may hold.
 */
void held_bounds(side &a, side &b, unsigned int len)
{
	constexpr unsigned int HELD_SPAN = 256;			/* responder.h */
	constexpr std::int64_t HELD_DEV_BYTES = 32 << 20;	/* responder.h */
	constexpr unsigned int n = 80;
	std::vector<pair> gap(n);
	pair probe = {};
	bool ok = pair_open(probe, "probe", a, b, a.pd);

	for (unsigned int i = 0; ok && i < n; i++)
		ok = pair_open(gap[i], "gap", a, b, a.pd);
	if (!result(ok, "held past a gap: " + std::to_string(n + 1) + " more RC QP pairs"))
		return;

	auto past_gap = [&](pair &p, unsigned int ahead) {
		pkt k;

		k.qpn = p.a.qp->qp_num;
		k.psn = (p.a_epsn + ahead) & SROCE_QPN_MASK;
		k.payload.assign(len, 0x5a);
		return send_pkt(k);
	};
	auto delta = [](const Counters &before, const char *name) {
		return counter(name) - before.at(name);
	};
	auto snap = []() {
		Counters c;

		for (const char *name : { "resp_held", "resp_dropped", "resp_seq_naks", "rx_packets" })
			c[name] = counter(name);
		return c;
	};

	/* One QP: the span. */
	Counters before = snap();
	unsigned int sent = 0;
	for (unsigned int i = 1; i <= 300; i++)
		sent += past_gap(gap[0], i);
	std::int64_t arrived = rx_settled() - before.at("rx_packets");
	std::int64_t held = delta(before, "resp_held"), dropped = delta(before, "resp_dropped");
	result(arrived == 300 && held == HELD_SPAN && dropped == 300 - HELD_SPAN &&
	       delta(before, "resp_seq_naks") == 1,
	       "300 requests past one gap: one NAK, " + std::to_string(HELD_SPAN) +
	       " held, the 44 past the span dropped");
	diag("sent %u, arrived %" PRId64 ", held %" PRId64 ", dropped %" PRId64, sent, arrived,
	     held, dropped);

	/* All the others: the device's budget. */
	before = snap();
	sent = 0;
	for (unsigned int q = 1; q < n; q++)
		for (unsigned int i = 1; i <= HELD_SPAN; i++)
			sent += past_gap(gap[q], i);
	arrived = rx_settled() - before.at("rx_packets");
	held = delta(before, "resp_held");
	dropped = delta(before, "resp_dropped");
	std::int64_t naks = delta(before, "resp_seq_naks");
	std::int64_t all = held + HELD_SPAN;
	/* Each held skb's truesize is at least its datagram's length. */
	std::int64_t at_least = all * static_cast<std::int64_t>(len + 44);
	/*
	 * Each packet is held or dropped, but a gap's first one that finds
	 * no room: only NAKed.
	 */
	result(naks == n - 1 && held + dropped <= arrived && arrived <= held + dropped + naks &&
	       dropped > 0 && at_least <= HELD_DEV_BYTES,
	       "requests past gaps on " + std::to_string(n - 1) +
	       " more QPs: one NAK each, held until the device's budget, the rest dropped and counted");
	diag("sent %u, arrived %" PRId64 ", NAKs %" PRId64 ", held %" PRId64 " (device: %" PRId64
	     ", at least %" PRId64 " KiB), dropped %" PRId64,
	     sent, arrived, naks, held, all, at_least >> 10, dropped);
	unsigned int rts = 0;
	for (pair &p : gap)
		rts += qp_state(p.a.qp) == IBV_QPS_RTS;
	result(rts == n, "the QPs with gaps are all still RTS (" + std::to_string(rts) + "/" +
	       std::to_string(n) + ")");

	/* A QP that holds nothing finds no room either: the budget is the device's. */
	before = snap();
	past_gap(probe, 1);
	rx_settled();
	result(delta(before, "resp_seq_naks") == 1 && delta(before, "resp_held") == 0 &&
	       delta(before, "resp_dropped") == 0,
	       "a fresh QP's request past a gap: NAKed, not held (no room on the device)");

	/* Destroyed QPs give back what they held. */
	ok = true;
	for (unsigned int q = 0; q < 8; q++)
		ok &= half_close(gap[q].a) && half_close(gap[q].b);
	before = snap();
	past_gap(probe, 2);
	rx_settled();
	result(ok && delta(before, "resp_held") == 1 && delta(before, "resp_dropped") == 0,
	       "after 8 of those QPs were destroyed, the next one past the gap is held");

	ok = half_close(probe.a) && half_close(probe.b);
	for (pair &p : gap)
		ok &= half_close(p.a) && half_close(p.b);
	result(ok, "the QPs with gaps destroyed cleanly");
}

} // namespace

int main(int argc, char **argv)
{
	side a = {}, b = {};
	std::uint64_t seed = 0;
	unsigned long count = 2000;
	unsigned long bulk_mib = 0;
	const char *netns = nullptr;
	int opt;

	setvbuf(stdout, nullptr, _IOLBF, 0);
	a.gidx = b.gidx = -1;
	while ((opt = getopt(argc, argv, "d:g:D:G:N:s:n:T:h")) != -1) {
		switch (opt) {
		case 'd': a.name = optarg; break;
		case 'g': a.gidx = std::atoi(optarg); break;
		case 'D': b.name = optarg; break;
		case 'G': b.gidx = std::atoi(optarg); break;
		case 's': seed = std::strtoull(optarg, nullptr, 0); break;
		case 'n': count = std::strtoul(optarg, nullptr, 0); break;
		case 'N': netns = optarg; break;
		case 'T': bulk_mib = std::strtoul(optarg, nullptr, 0); break;
		default: usage(argv[0]);
		}
	}
	if (!a.name || !b.name || a.gidx < 0 || b.gidx < 0)
		usage(argv[0]);
	if (!seed)
		seed = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());

	if (const char *ts = std::getenv("SELFTEST_TIMEOUT_SCALE"); ts && std::atoi(ts) > 0)
		time_scale = static_cast<unsigned int>(std::atoi(ts));
	std::printf("TAP version 13\n");
	if (!bulk_mib)
		diag("seed %" PRIu64 " (repeat with -s %" PRIu64 "), %lu random packets", seed, seed, count);
	else
		WAIT_MS = 60000;
	WAIT_MS *= time_scale;
	if (netns) {
		int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		int fd = open(netns, O_RDONLY | O_CLOEXEC);

		if (self < 0 || fd < 0 || setns(fd, CLONE_NEWNET)) {
			std::fprintf(stderr, "pktgen: cannot enter %s: %s\n", netns, std::strerror(errno));
			return 2;
		}
		raw_fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
		if (setns(self, CLONE_NEWNET)) {
			std::fprintf(stderr, "pktgen: cannot return to the initial namespace: %s\n",
				     std::strerror(errno));
			return 2;
		}
		close(fd);
		close(self);
	} else {
		raw_fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	}
	if (raw_fd < 0) {
		std::printf("1..0 # SKIP raw socket: %s\n", std::strerror(errno));
		return 4;
	}
	if (!side_open(a) || !side_open(b)) {
		std::printf("1..0 # SKIP cannot open %s and %s\n", a.name, b.name);
		return 4;
	}
	if (bulk_mib) {
		/*
		 * -T MIB: no forged packets, only real traffic on one pair until
		 * MIB MiB went each way of SEND, WRITE and READ (each 20000-byte
		 * message verified) plus an atomic per round: for lossy links.
		 */
		pair p = {};
		std::uint64_t t0 = now_ms(), done = 0, rounds = 0;
		bool ok = pair_open(p, "bulk", a, b, a.pd);

		path_mtu = 128u << std::min(a.port.active_mtu, b.port.active_mtu);
		while (ok && done < (bulk_mib << 20)) {
			ok = traffic(p, static_cast<unsigned int>(rounds++));
			done += 20000;
		}
		result(ok, "verified SEND/WRITE/READ of " + std::to_string(done >> 20) + " MiB each and " +
			   std::to_string(rounds) + " fetch-and-adds in " + std::to_string(now_ms() - t0) + " ms");
		std::printf("1..%d\n", n_tests);
		return ok ? 0 : 1;
	}
	if (!gid_is_ipv4(a.gid) || !gid_is_ipv4(b.gid)) {
		std::printf("1..0 # SKIP GIDs %d/%d are not IPv4 RoCE v2 GIDs\n", a.gidx, b.gidx);
		return 4;
	}
	ad.a = gid_ipv4(a.gid);
	ad.b = gid_ipv4(b.gid);
	hw_dir = std::string("/sys/class/infiniband/") + a.name + "/ports/1/hw_counters/";
	if (counter("rx_packets") < 0) {
		std::printf("1..0 # SKIP no hw_counters under %s\n", hw_dir.c_str());
		return 4;
	}
	unsigned int mtu = 128u << std::min(a.port.active_mtu, b.port.active_mtu);

	path_mtu = mtu;

	/*
	 * Pairs: "live" gets only packets that must be dropped and keeps
	 * working; "bystander" (own PD) is never targeted; "valid" takes
	 * forged but correct requests; "random" the randomised storm; the
	 * rest one fatal case each.
	 */
	ibv_pd *pd2 = ibv_alloc_pd(a.ctx);
	static const char *const fatal_names[] = {
		"send middle without first", "write past MR end", "write bad rkey",
		"write rkey of another PD", "read past MR end", "read length > 2 GiB",
		"misaligned atomic", "write payload > MTU", "write shorter than RETH",
		"send first not one MTU", "atomic to read-only MR", "read with payload",
		"atomic write of 4 bytes", "atomic write with RETH length 16",
		"misaligned atomic write", "atomic write to read-only MR",
	};
	constexpr unsigned int n_fatal = sizeof(fatal_names) / sizeof(fatal_names[0]);
	constexpr unsigned int n_rnd = 4;
	pair live = {}, bystander = {}, valid = {}, fatal[n_fatal] = {}, rnds[n_rnd] = {};
	pair &rnd = rnds[0];
	bool setup = pd2 && pair_open(live, "live", a, b, a.pd) &&
		     pair_open(bystander, "bystander", a, b, pd2) &&
		     pair_open(valid, "valid", a, b, a.pd);
	for (unsigned int i = 0; setup && i < n_rnd; i++)
		setup = pair_open(rnds[i], "random", a, b, a.pd);
	for (unsigned int i = 0; setup && i < n_fatal; i++)
		setup = pair_open(fatal[i], fatal_names[i], a, b, a.pd);
	/* An MR on A without remote write/atomic rights, and a QP left in INIT. */
	ibv_mr *ro_mr = setup ? ibv_reg_mr(a.pd, valid.a.buf, BUF_SZ, IBV_ACCESS_REMOTE_READ) : nullptr;
	ibv_qp_init_attr ia = {};
	ia.send_cq = live.a.cq;
	ia.recv_cq = live.a.cq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap = { 4, 4, 1, 1, 0 };
	ibv_qp *init_qp = setup ? ibv_create_qp(a.pd, &ia) : nullptr;
	ibv_qp_attr ia2 = {};
	ia2.qp_state = IBV_QPS_INIT;
	ia2.port_num = 1;
	ia2.qp_access_flags = ALL_ACCESS;
	if (!result(setup && ro_mr && init_qp &&
		    !ibv_modify_qp(init_qp, &ia2, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS),
		    "set up " + std::to_string(3 + n_rnd + n_fatal) + " RC QP pairs between " +
			    std::string(a.name) + " and " + b.name)) {
		std::printf("1..%d\n", n_tests);
		return 1;
	}
	diag("A %s, B %s, MTU %u, live QP %u, bystander QP %u", a.name, b.name, mtu,
	     live.a.qp->qp_num, bystander.a.qp->qp_num);

	result(traffic(live, 1) && traffic(bystander, 2), "verified traffic on live and bystander pairs before");

	/* ---- drops before any QP is looked at -------------------------------------- */
	auto base = [&](pair &p, std::uint8_t op = SROCE_OP_RC_SEND_ONLY) {
		pkt k;

		k.opcode = op;
		k.qpn = p.a.qp->qp_num;
		k.psn = p.a_epsn;
		k.payload.assign(16, 0xab);
		return k;
	};
	pkt k;

	k = base(live);
	k.bad_icrc = true;
	run_case("bad ICRC: dropped, rx_bad_icrc", k, &live, { rx("rx_bad_icrc") });
	k = base(live);
	k.keep = 7;
	run_case("7 bytes after UDP (no room for a BTH)", k, &live, { rx("rx_bad_header") });
	k = base(live);
	k.keep = SROCE_BTH_LEN + 2;
	run_case("BTH, no room for the ICRC", k, &live, { rx("rx_bad_header") });
	k = base(live, SROCE_OP_RC_RDMA_WRITE_ONLY);
	k.ext = reth(reinterpret_cast<std::uintptr_t>(live.a.buf), live.a.mr->rkey, 16);
	k.keep = SROCE_BTH_LEN + 6;
	run_case("WRITE ONLY truncated inside its RETH", k, &live, { rx("rx_bad_header") });
	k = base(live, SROCE_OP_RC_RDMA_READ_REQUEST);
	k.ext = Bytes(10, 0);
	k.payload.clear();
	run_case("READ REQUEST with a 10-byte RETH", k, &live, { rx("rx_bad_header") });
	k = base(live, SROCE_OP_RC_COMPARE_SWAP);
	k.ext = Bytes(20, 0);
	k.payload.clear();
	run_case("COMPARE SWAP with a 20-byte AtomicETH", k, &live, { rx("rx_bad_header") });
	k = base(live);
	k.tver = 1;
	run_case("transport version 1", k, &live, { rx("rx_bad_header") });
	k = base(live, SROCE_OP_RC_ACKNOWLEDGE);
	k.ext = aeth(0, 0);
	k.payload.clear();
	k.pad = 3;
	run_case("ACK with pad 3 and no payload", k, &live, { rx("rx_bad_header") });
	k = base(live, SROCE_OP_RC_ACKNOWLEDGE);
	k.ext = aeth(0, 0);
	k.payload.assign(8, 1);
	run_case("ACK with a payload", k, &live, { rx("rx_bad_header") });
	k = base(live, SROCE_OP_RC_RDMA_READ_REQUEST);
	k.ext = reth(reinterpret_cast<std::uintptr_t>(live.a.buf), live.a.mr->rkey, 16);
	k.payload.assign(4, 1);
	run_case("READ REQUEST with a payload", k, &live, { rx("rx_bad_header") });
	for (std::uint8_t op : { 0x15, 0x1c, 0x1f, 0x40, 0x60, 0xb5, 0xbc, 0xc0, 0xff }) {
		char name[64];

		k = base(live, op);
		std::snprintf(name, sizeof(name), "unknown opcode 0x%02x", op);
		run_case(name, k, &live, { rx("rx_bad_opcode") });
	}

	/* ---- drops at the QP --------------------------------------------------------- */
	k = base(live);
	k.qpn = 0xabcdef;
	run_case("unknown QPN 0xabcdef", k, nullptr, { rx("rx_no_qp") });
	k = base(live);
	k.qpn = 0;
	run_case("QPN 0 (no SMI on RoCE)", k, nullptr, { rx("rx_no_qp") });
	k = base(live, SROCE_OP_UD_SEND_ONLY);
	k.ext = Bytes(SROCE_DETH_LEN, 0);
	run_case("UD SEND ONLY at an RC QP", k, &live, { rx("rx_bad_qp_type") });
	k = base(live, SROCE_OP_UC_SEND_ONLY);
	run_case("UC SEND ONLY at an RC QP", k, &live, { rx("rx_bad_qp_type") });
	k = base(live, SROCE_OP_XRC_SEND_ONLY);
	k.ext = Bytes(SROCE_XRCETH_LEN, 0);
	run_case("XRC SEND ONLY at an RC QP", k, &live, { rx("rx_bad_qp_type") });
	k = base(live, SROCE_OP_XRC_ACKNOWLEDGE);
	k.ext = aeth(0, 0);
	k.payload.clear();
	run_case("XRC ACK at an RC QP", k, &live, { rx("rx_bad_qp_type") });
	k = base(live);
	k.qpn = init_qp->qp_num;
	run_case("SEND at a QP in INIT", k, nullptr, { rx("rx_bad_state") });
	k = base(live);
	k.saddr = ad.b ^ htonl(0x40);
	run_case("SEND from another address than the QP's peer", k, &live, { rx("rx_bad_addr") });
	k = base(live);
	k.pkey = 0x1234;
	run_case("P_Key 0x1234", k, &live, { rx("rx_bad_pkey") });
	k = base(live);
	k.pkey = 0x7fff;
	k.payload.clear();
	k.psn = (live.a_epsn - 1) & SROCE_QPN_MASK;
	/* limited member of the default partition talking to a full member: fine */
	run_case("P_Key 0x7fff (limited member) accepted: duplicate ACKed", k, &live,
		 { one("resp_duplicates") });
	k = base(live, SROCE_OP_CNP);
	k.ext = Bytes(SROCE_CNP_LEN, 0);
	k.payload.clear();
	k.fecn_etc = SROCE_BTH_BECN;
	run_case("CNP to a live QP: counted, its rate cut", k, &live,
		 { Counters{ { "rx_cnp", 1 }, { "cc_rate_cuts", 1 } } });

	/* ---- at the responder, not fatal ----------------------------------------------- */
	k = base(live);
	k.psn = (live.a_epsn + 0x400000) & SROCE_QPN_MASK;
	run_case("PSN 2^22 ahead: one sequence NAK", k, &live, { one("resp_seq_naks") });
	k.psn = (live.a_epsn + 0x7fffff) & SROCE_QPN_MASK;
	run_case("PSN 2^23-1 ahead: no second NAK for the same gap, dropped", k, &live,
		 { one("resp_dropped") });
	k.psn = (live.a_epsn - 0x400000) & SROCE_QPN_MASK;
	run_case("PSN 2^22 behind: a duplicate", k, &live, { one("resp_duplicates") });
	k = base(live, SROCE_OP_RC_RDMA_READ_REQUEST);
	k.payload.clear();
	k.ext = reth(reinterpret_cast<std::uintptr_t>(live.a.buf), live.a.mr->rkey, 64);
	k.psn = (live.a_epsn - 0x1000) & SROCE_QPN_MASK;
	run_case("duplicate READ never executed: dropped", k, &live,
		 { { { "resp_duplicates", 1 }, { "resp_dropped", 1 } } });

	/* ---- at the completer: responses nobody asked for ------------------------------ */
	k = base(live, SROCE_OP_RC_ACKNOWLEDGE);
	k.payload.clear();
	k.ext = aeth(0x1f, 3);
	k.psn = 0x777;
	run_case("ACK for a PSN never sent", k, &live, { one("comp_ghosts") });
	k.ext = aeth(SROCE_AETH_NAK | SROCE_NAK_REM_ACCESS_ERR, 3);
	k.psn = START_PSN;
	run_case("remote access NAK with nothing outstanding", k, &live, { one("comp_ghosts") });
	k = base(live, SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY);
	k.ext = aeth(0, 0);
	k.payload.assign(64, 0xee);
	k.psn = START_PSN;
	run_case("READ RESPONSE nobody asked for", k, &live, { one("comp_ghosts") });
	k = base(live, SROCE_OP_RC_ATOMIC_ACKNOWLEDGE);
	k.ext = cat(aeth(0, 0), Bytes(8, 0xee));
	k.payload.clear();
	k.psn = START_PSN;
	run_case("ATOMIC ACK nobody asked for", k, &live, { one("comp_ghosts") });

	result(traffic(live, 3), "live pair: verified SEND/WRITE/READ/atomic after everything above");
	result(qp_state(live.b.qp) == IBV_QPS_RTS, "live pair: B's QP still RTS");

	/* ---- correct forged requests are executed (the generator is right) ------------ */
	{
		ibv_sge sg = { reinterpret_cast<std::uintptr_t>(valid.a.buf + 40000), 100, valid.a.mr->lkey };
		ibv_recv_wr rwr = {}, *rbad;
		ibv_wc wc;

		rwr.wr_id = 9;
		rwr.sg_list = &sg;
		rwr.num_sge = 1;
		ibv_post_recv(valid.a.qp, &rwr, &rbad);
		k = base(valid);
		k.payload.assign(61, 0x3c);
		k.pad = 3;
		expect e;
		e.mem_untouched = false;
		run_case("forged SEND ONLY (61 bytes, pad 3) executed", k, &valid, e);
		bool got = poll_one(valid.a.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.byte_len == 61 &&
			   wc.wr_id == 9 && valid.a.buf[40000] == 0x3c && valid.a.buf[40060] == 0x3c;
		result(got, "forged SEND delivered with the right length and bytes");
		valid.a_epsn++;
		k = base(valid, SROCE_OP_RC_RDMA_WRITE_ONLY);
		k.ext = reth(reinterpret_cast<std::uintptr_t>(valid.a.buf + 100), valid.a.mr->rkey, 32);
		k.payload.assign(32, 0x11);
		run_case("forged WRITE ONLY executed", k, &valid, e);
		result(valid.a.buf[100] == 0x11 && valid.a.buf[131] == 0x11 && valid.a.buf[132] != 0x11,
		       "forged WRITE placed exactly 32 bytes");
		valid.a_epsn++;
		k = base(valid, SROCE_OP_RC_ATOMIC_WRITE);
		k.ext = reth(reinterpret_cast<std::uintptr_t>(valid.a.buf + 304), valid.a.mr->rkey, 8);
		k.payload = { 1, 2, 3, 4, 5, 6, 7, 8 };
		valid.a.buf[303] = valid.a.buf[312] = 0;
		run_case("forged ATOMIC WRITE executed", k, &valid, e);
		result(!std::memcmp(valid.a.buf + 304, k.payload.data(), 8) && !valid.a.buf[303] &&
		       !valid.a.buf[312], "forged ATOMIC WRITE placed exactly its 8 bytes");
		valid.a_epsn++;
		k = base(valid, SROCE_OP_RC_RDMA_WRITE_ONLY);
		k.ext = reth(reinterpret_cast<std::uintptr_t>(valid.a.buf + 200), ro_mr->rkey, 8);
		k.payload.assign(8, 0x22);
		expect ro;
		ro.delta = { { "resp_fatal_naks", 1 }, { "resp_bad_key", 1 } };
		ro.to_error = true;
		run_case("WRITE to an MR without remote write: NAK, QP to ERR", k, &valid, ro);
	}


	/* ---- fatal responder errors: NAK, QP to ERR, nothing touched ------------------- */
	expect fatal_access, fatal_inv;
	fatal_access.delta = { { "resp_fatal_naks", 1 }, { "resp_bad_key", 1 } };
	fatal_access.to_error = true;
	fatal_inv.delta = { { "resp_fatal_naks", 1 } };
	fatal_inv.to_error = true;
	for (unsigned int i = 0; i < n_fatal; i++) {
		pair &p = fatal[i];
		std::uintptr_t va = reinterpret_cast<std::uintptr_t>(p.a.buf);
		const expect *e = &fatal_access;

		switch (i) {
		case 0:
			k = base(p, SROCE_OP_RC_SEND_MIDDLE);
			k.payload.assign(mtu, 1);
			e = &fatal_inv;
			break;
		case 1:
			k = base(p, SROCE_OP_RC_RDMA_WRITE_ONLY);
			k.ext = reth(va + BUF_SZ - 16, p.a.mr->rkey, 32);
			k.payload.assign(32, 0x66);
			break;
		case 2:
			k = base(p, SROCE_OP_RC_RDMA_WRITE_ONLY);
			k.ext = reth(va, p.a.mr->rkey ^ 0x100, 32);
			k.payload.assign(32, 0x66);
			break;
		case 3:
			k = base(p, SROCE_OP_RC_RDMA_WRITE_ONLY);
			k.ext = reth(reinterpret_cast<std::uintptr_t>(bystander.a.buf),
				     bystander.a.mr->rkey, 32);
			k.payload.assign(32, 0x66);
			break;
		case 4:
			k = base(p, SROCE_OP_RC_RDMA_READ_REQUEST);
			k.ext = reth(va + 4096, p.a.mr->rkey, BUF_SZ);
			k.payload.clear();
			break;
		case 5:
			k = base(p, SROCE_OP_RC_RDMA_READ_REQUEST);
			k.ext = reth(va, p.a.mr->rkey, 0x80000001);
			k.payload.clear();
			e = &fatal_inv;
			break;
		case 6:
			k = base(p, SROCE_OP_RC_FETCH_ADD);
			k.ext = atmeth(va + 4, p.a.mr->rkey, 1, 0);
			k.payload.clear();
			e = &fatal_inv;
			break;
		case 7:
			k = base(p, SROCE_OP_RC_RDMA_WRITE_ONLY);
			k.ext = reth(va, p.a.mr->rkey, mtu + 4);
			k.payload.assign(mtu + 4, 0x66);
			e = &fatal_inv;
			break;
		case 8:
			k = base(p, SROCE_OP_RC_RDMA_WRITE_ONLY);
			k.ext = reth(va, p.a.mr->rkey, 100);
			k.payload.assign(50, 0x66);
			e = &fatal_inv;
			break;
		case 9:
			k = base(p, SROCE_OP_RC_SEND_FIRST);
			k.payload.assign(mtu / 2, 0x66);
			e = &fatal_inv;
			break;
		case 10:
			k = base(p, SROCE_OP_RC_FETCH_ADD);
			k.ext = atmeth(reinterpret_cast<std::uintptr_t>(valid.a.buf) + 64, ro_mr->rkey, 1, 0);
			k.payload.clear();
			break;
		case 11:
			/* a READ REQUEST's payload: header drop, QP unaffected */
			k = base(p, SROCE_OP_RC_RDMA_READ_REQUEST);
			k.ext = reth(va, p.a.mr->rkey, 8);
			k.payload.assign(8, 1);
			{
				expect hdr;
				hdr.delta = rx("rx_bad_header");
				run_case(fatal_names[i] + std::string(": header drop"), k, &p, hdr);
			}
			continue;
		case 12:
			k = base(p, SROCE_OP_RC_ATOMIC_WRITE);
			k.ext = reth(va, p.a.mr->rkey, 4);
			k.payload.assign(4, 0x66);
			e = &fatal_inv;
			break;
		case 13:
			k = base(p, SROCE_OP_RC_ATOMIC_WRITE);
			k.ext = reth(va, p.a.mr->rkey, 16);
			k.payload.assign(8, 0x66);
			e = &fatal_inv;
			break;
		case 14:
			k = base(p, SROCE_OP_RC_ATOMIC_WRITE);
			k.ext = reth(va + 4, p.a.mr->rkey, 8);
			k.payload.assign(8, 0x66);
			e = &fatal_inv;
			break;
		case 15:
			k = base(p, SROCE_OP_RC_ATOMIC_WRITE);
			k.ext = reth(reinterpret_cast<std::uintptr_t>(valid.a.buf) + 64, ro_mr->rkey, 8);
			k.payload.assign(8, 0x66);
			break;
		}
		if (i == 9) {
			/* SEND FIRST takes a receive WQE: give it one, it completes in error */
			ibv_sge sg = { reinterpret_cast<std::uintptr_t>(p.a.buf), 8192, p.a.mr->lkey };
			ibv_recv_wr rwr = {}, *rbad;

			rwr.sg_list = &sg;
			rwr.num_sge = 1;
			ibv_post_recv(p.a.qp, &rwr, &rbad);
		}
		run_case(std::string(fatal_names[i]) + ": NAK, QP to ERR, memory untouched", k, &p, *e);
	}

	/* ---- UD, UC and GSI targets ---------------------------------------------------- */
	{
		constexpr std::uint32_t UD_QKEY = 0x11110000, GSI_QKEY = 0x80010000;
		half ud = {}, uc = {};
		bool ok = half_open(ud, &a, a.pd, UDUC_ACCESS, IBV_QPT_UD) &&
			  half_open(uc, &a, a.pd, UDUC_ACCESS, IBV_QPT_UC) && !ud_to_rts(ud, UD_QKEY) &&
			  !uc_to_rtr(uc, 0x123, b.gid, static_cast<ibv_mtu>(a.port.active_mtu));
		for (unsigned int i = 0; ok && i < 16; i++)
			ok = post_recv_at(ud, (i % 4) * 8192, 8192) && post_recv_at(uc, 32768 + (i % 4) * 8192, 8192);
		result(ok, "UD QP and UC QP on A ready, receives posted");
		if (ok) {
			auto deth = [](std::uint32_t qkey, std::uint32_t sqp) {
				Bytes d;

				put_be(d, qkey, 4);
				put_be(d, sqp & SROCE_QPN_MASK, 4);
				return d;
			};
			auto udpkt = [&](std::uint32_t qkey, unsigned int len) {
				pkt k;

				k.opcode = SROCE_OP_UD_SEND_ONLY;
				k.qpn = ud.qp->qp_num;
				k.psn = 0x42;
				k.ackreq = false;
				k.ext = deth(qkey, 0x99);
				for (unsigned int i = 0; i < len; i++)
					k.payload.push_back(static_cast<std::uint8_t>(i * 13 + 1));
				k.pad = (4 - len % 4) % 4;
				return k;
			};
			/* A received UD datagram: 40 bytes of GRH area, then the payload. */
			auto ud_delivered = [&](const std::string &name, unsigned int len) {
				ibv_wc wc = {};
				bool got = poll_one(ud.cq, wc) && wc.status == IBV_WC_SUCCESS &&
					   wc.byte_len == len + 40 && wc.src_qp == 0x99;
				const std::uint8_t *at = ud.buf + wc.wr_id + 40;

				for (unsigned int i = 0; got && i < len; i++)
					got = at[i] == static_cast<std::uint8_t>(i * 13 + 1);
				result(got, name + ": delivered, " + std::to_string(len) + " bytes verified");
				if (!got)
					diag("%s: %s byte_len %u src_qp %u", name.c_str(),
					     ibv_wc_status_str(wc.status), wc.byte_len, wc.src_qp);
			};
			auto no_completion = [&](const std::string &name, ibv_cq *cq) {
				ibv_wc wc;
				bool none = ibv_poll_cq(cq, 1, &wc) == 0;

				result(none, name + ": no completion");
			};
			pkt k = udpkt(UD_QKEY, 100);
			run_case("UD: correct SEND ONLY", k, nullptr, {});
			ud_delivered("UD: correct SEND ONLY", 100);
			run_case("UD: wrong Q_Key", udpkt(UD_QKEY ^ 1, 64), nullptr, { one("resp_dropped") });
			/* Only the QP's own Q_Key is accepted, the GSI one included. */
			run_case("UD: GSI Q_Key 0x80010000 at a UD QP", udpkt(GSI_QKEY, 64), nullptr,
				 { one("resp_dropped") });
			k = udpkt(UD_QKEY, 0);
			k.ext.clear();
			k.pad = 0;
			run_case("UD: SEND ONLY without its DETH", k, nullptr, { rx("rx_bad_header") });
			k = udpkt(UD_QKEY, 64);
			k.opcode = SROCE_OP_RC_SEND_ONLY;
			k.ext.clear();
			run_case("UD: RC SEND ONLY at a UD QP", k, nullptr, { rx("rx_bad_qp_type") });
			k.opcode = SROCE_OP_UC_SEND_ONLY;
			run_case("UD: UC SEND ONLY at a UD QP", k, nullptr, { rx("rx_bad_qp_type") });
			run_case("UD: payload of MTU + 4 bytes", udpkt(UD_QKEY, mtu + 4), nullptr,
				 { one("resp_dropped") });
			k = udpkt(UD_QKEY, 64);
			k.pkey = 0x1234;
			run_case("UD: P_Key 0x1234", k, nullptr, { rx("rx_bad_pkey") });
			no_completion("UD: after the refused datagrams", ud.cq);
			run_case("UD: correct SEND ONLY of exactly the MTU", udpkt(UD_QKEY, mtu), nullptr, {});
			ud_delivered("UD: MTU-sized SEND after the bad ones", mtu);
			result(qp_state(ud.qp) == IBV_QPS_RTS, "UD QP still RTS");

			/* GSI: QP1 only takes the GSI Q_Key (the MAD layer gets the rest). */
			k = udpkt(UD_QKEY, 64);
			k.qpn = 1;
			run_case("GSI: datagram at QP1 with a Q_Key other than 0x80010000", k, nullptr,
				 { one("resp_dropped") });
			k.opcode = SROCE_OP_RC_SEND_ONLY;
			k.ext.clear();
			run_case("GSI: RC SEND ONLY at QP1", k, nullptr, { rx("rx_bad_qp_type") });
			/*
			 * A datagram longer than the MAD layer's receive buffers
			 * (40 + 256 bytes) is dropped and leaves the buffer posted:
			 * the MAD layer reposts none that completes in error, so
			 * 512 of them used to leave QP1 (and rdma_cm) deaf.
			 */
			k = udpkt(GSI_QKEY, 300);
			k.qpn = 1;
			run_case("GSI: datagram at QP1 larger than a MAD", k, nullptr, { one("resp_dropped") });
			{
				constexpr unsigned int n = 600;
				Counters before = counters();
				bool sent = true;

				for (unsigned int i = 0; sent && i < n; i++)
					sent = send_pkt(k);
				sent = sent && wait_rx(before, n);
				std::int64_t dropped = counter("resp_dropped") - before["resp_dropped"];
				std::int64_t no_recv = counter("resp_no_recv") - before["resp_no_recv"];

				result(sent && dropped == n && no_recv == 0,
				       "GSI: 600 datagrams larger than a MAD leave QP1's receives posted");
				diag("GSI: %u oversized datagrams: resp_dropped +%" PRId64 ", resp_no_recv +%" PRId64,
				     n, dropped, no_recv);
			}

			/* UC: sequence errors lose the message, nothing is answered. */
			auto ucpkt = [&](std::uint8_t op, std::uint32_t psn, unsigned int len) {
				pkt u;

				u.opcode = op;
				u.qpn = uc.qp->qp_num;
				u.psn = psn;
				u.ackreq = false;
				u.payload.assign(len, 0x77);
				return u;
			};
			std::uint32_t upsn = START_PSN;
			run_case("UC: correct SEND ONLY", ucpkt(SROCE_OP_UC_SEND_ONLY, upsn++, 64), nullptr, {});
			ibv_wc wc = {};
			result(poll_one(uc.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.byte_len == 64 &&
			       uc.buf[wc.wr_id] == 0x77 && uc.buf[wc.wr_id + 63] == 0x77,
			       "UC: correct SEND ONLY delivered, bytes verified");
			run_case("UC: SEND MIDDLE without FIRST", ucpkt(SROCE_OP_UC_SEND_MIDDLE, upsn++, mtu),
				 nullptr, { one("resp_dropped") });
			run_case("UC: SEND LAST after it (message already lost)",
				 ucpkt(SROCE_OP_UC_SEND_LAST, upsn++, 16), nullptr, { one("resp_dropped") });
			run_case("UC: SEND FIRST", ucpkt(SROCE_OP_UC_SEND_FIRST, upsn++, mtu), nullptr, {});
			run_case("UC: SEND ONLY inside a message (invalid sequence)",
				 ucpkt(SROCE_OP_UC_SEND_ONLY, upsn++, 16), nullptr, {});
			/* the ONLY resynchronised: it is delivered, the broken message is not */
			wc = {};
			result(poll_one(uc.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.byte_len == 16,
			       "UC: the SEND ONLY that broke the sequence starts a new message");
			k = ucpkt(SROCE_OP_RC_SEND_ONLY, upsn, 16);
			run_case("UC: RC SEND ONLY at a UC QP", k, nullptr, { rx("rx_bad_qp_type") });
			k = ucpkt(SROCE_OP_UD_SEND_ONLY, upsn, 16);
			k.ext = deth(UD_QKEY, 0x99);
			run_case("UC: UD SEND ONLY (DETH) at a UC QP", k, nullptr, { rx("rx_bad_qp_type") });
			k = ucpkt(SROCE_OP_UC_RDMA_WRITE_ONLY, upsn++, 16);
			k.ext = reth(reinterpret_cast<std::uintptr_t>(uc.buf), uc.mr->rkey ^ 0x100, 16);
			Bytes uc_snap(uc.buf, uc.buf + BUF_SZ);
			run_case("UC: WRITE with a bad rkey: dropped, no NAK", k, nullptr, { one("resp_bad_key") });
			result(!std::memcmp(uc_snap.data(), uc.buf, BUF_SZ), "UC: refused WRITE touched no byte");
			k = ucpkt(SROCE_OP_UC_RDMA_WRITE_ONLY, upsn++, 32);
			k.ext = reth(reinterpret_cast<std::uintptr_t>(uc.buf), uc.mr->rkey, 16);
			run_case("UC: WRITE ONLY of 32 bytes, RETH length 16: dropped and counted, no NAK", k,
				 nullptr, { one("resp_dropped") });
			result(!std::memcmp(uc_snap.data(), uc.buf, BUF_SZ),
			       "UC: WRITE longer than its RETH touched no byte");
			k = ucpkt(SROCE_OP_UC_SEND_ONLY, upsn++, 64);
			k.pkey = 0x1234;
			run_case("UC: P_Key 0x1234", k, nullptr, { rx("rx_bad_pkey") });
			run_case("UC: correct SEND ONLY afterwards", ucpkt(SROCE_OP_UC_SEND_ONLY, upsn++, 32),
				 nullptr, {});
			wc = {};
			result(poll_one(uc.cq, wc) && wc.status == IBV_WC_SUCCESS && wc.byte_len == 32,
			       "UC: still delivers after the bad packets");
			result(qp_state(uc.qp) == IBV_QPS_RTS, "UC QP still RTS");
			no_completion("UC: nothing else completed", uc.cq);
		}
		if (ud.qp)
			ibv_destroy_qp(ud.qp);
		if (uc.qp)
			ibv_destroy_qp(uc.qp);
		for (half *h : { &ud, &uc }) {
			if (h->mr)
				ibv_dereg_mr(h->mr);
			if (h->cq)
				ibv_destroy_cq(h->cq);
			free(h->buf);
		}
	}

	/* ---- the random storm ------------------------------------------------------------ */
	fuzzer fz{ std::mt19937_64(seed), &rnd, {}, {}, mtu };
	fz.rkeys = { rnd.a.mr->rkey, bystander.a.mr->rkey, ro_mr->rkey, live.a.mr->rkey };
	fz.vas = { reinterpret_cast<std::uintptr_t>(rnd.a.buf), reinterpret_cast<std::uintptr_t>(bystander.a.buf),
		   reinterpret_cast<std::uintptr_t>(live.a.buf) };
	/*
	 * The random QPs are re-armed (ERR -> RESET -> RTS, receives posted)
	 * whenever the storm has put them in ERR, so that it keeps reaching
	 * the responder and completer rather than the state check.
	 */
	unsigned int rearmed = 0;
	auto arm = [&](pair &p, bool reset) {
		ibv_sge sg = { reinterpret_cast<std::uintptr_t>(p.a.buf), BUF_SZ, p.a.mr->lkey };
		ibv_recv_wr rwr = {}, *rbad;
		ibv_qp_attr at = {};
		ibv_wc wc[16];

		if (reset) {
			at.qp_state = IBV_QPS_RESET;
			if (ibv_modify_qp(p.a.qp, &at, IBV_QP_STATE) ||
			    to_rts(p.a, p.b.qp->qp_num, b.gid, std::min(a.port.active_mtu, b.port.active_mtu)))
				return false;
			while (ibv_poll_cq(p.a.cq, 16, wc) > 0)
				;
			p.a_epsn = START_PSN;
			rearmed++;
		}
		rwr.sg_list = &sg;
		rwr.num_sge = 1;
		for (int i = 0; i < 32; i++)
			if (ibv_post_recv(p.a.qp, &rwr, &rbad))
				return false;
		return true;
	};
	bool armed = true;
	for (pair &p : rnds)
		armed &= arm(p, false);
	/*
	 * Every fourth packet goes to a UD QP, a UC QP or QP1 (the kernel's
	 * GSI QP) instead; half of those at the UD QP are UD SENDs with a
	 * DETH (the right Q_Key half of the time), so that they get past the
	 * opcode check into the datagram path.  Their receives are reposted
	 * as they complete.
	 */
	constexpr std::uint32_t STORM_QKEY = 0x22220000;
	half sud = {}, suc = {};
	bool others = half_open(sud, &a, a.pd, UDUC_ACCESS, IBV_QPT_UD) &&
		      half_open(suc, &a, a.pd, UDUC_ACCESS, IBV_QPT_UC) && !ud_to_rts(sud, STORM_QKEY) &&
		      !uc_to_rtr(suc, 0x124, b.gid, static_cast<ibv_mtu>(a.port.active_mtu));
	for (unsigned int i = 0; others && i < 16; i++)
		others = post_recv_at(sud, (i % 4) * 8192, 8192) && post_recv_at(suc, 32768 + (i % 4) * 8192, 8192);
	result(others, "random storm: UD and UC target QPs ready, receives posted");
	unsigned long reposted = 0;
	auto repost = [&](half &h) {
		ibv_wc wc[16];
		int n;

		while ((n = ibv_poll_cq(h.cq, 16, wc)) > 0)
			for (int j = 0; j < n; j++, reposted++)
				others &= post_recv_at(h, wc[j].wr_id, 8192);
	};
	Bytes by_snap(bystander.a.buf, bystander.a.buf + BUF_SZ);
	Bytes valid_snap(valid.a.buf, valid.a.buf + BUF_SZ);
	Counters before = counters();
	std::uint64_t t0 = now_ms();
	bool arrived = true;
	for (unsigned long i = 0; i < count && arrived; i++) {
		pkt p;

		fz.target = &rnds[i % n_rnd];
		p = fz.next();
		if (p.qpn == bystander.a.qp->qp_num || p.qpn == live.a.qp->qp_num)
			p.qpn = fz.target->a.qp->qp_num;
		if (others && i % 4 == 3) {
			switch (fz.r(3)) {
			case 0:
				p.qpn = sud.qp->qp_num;
				if (fz.chance(50)) {
					p.opcode = SROCE_OP_UD_SEND_ONLY;
					p.ext.clear();
					put_be(p.ext, fz.chance(50) ? STORM_QKEY : fz.rng(), 4);
					put_be(p.ext, fz.r(SROCE_QPN_MASK + 1), 4);
				}
				break;
			case 1:
				p.qpn = suc.qp->qp_num;
				break;
			default:
				p.qpn = 1;
				break;
			}
		}
		if (!send_pkt(p)) {
			arrived = false;
			break;
		}
		/* the veth backlog holds 1000: let the receiver keep up */
		if (i % 64 == 63) {
			arrived = wait_rx(before, static_cast<std::int64_t>(i + 1));
			for (pair &r : rnds)
				if (qp_state(r.a.qp) == IBV_QPS_ERR)
					armed &= arm(r, true);
			if (others) {
				repost(sud);
				repost(suc);
			}
		}
	}
	arrived = arrived && wait_rx(before, static_cast<std::int64_t>(count));
	Counters after = counters();
	result(arrived, "random storm: all " + std::to_string(count) + " packets reached " + a.name);
	result(armed, "random storm: targets re-armed " + std::to_string(rearmed) +
		      " times (ERR -> RESET -> RTS) while under fire");
	diag("random storm: %lu packets in %" PRIu64 " ms, rx_packets +%" PRId64, count,
	     now_ms() - t0, after["rx_packets"] - before["rx_packets"]);
	std::int64_t sum = 0;
	std::string moved;
	for (const char *n : rx_reasons)
		sum += after[n] - before[n];
	for (const char *n : watched)
		if (after[n] != before[n])
			moved += std::string(" ") + n + "+" + std::to_string(after[n] - before[n]);
	diag("random storm counters:%s", moved.c_str());
	result(after["rx_dropped"] - before["rx_dropped"] == sum,
	       "random storm: rx_dropped = sum of its reasons (" + std::to_string(sum) + ")");
	result(!std::memcmp(by_snap.data(), bystander.a.buf, BUF_SZ) &&
	       !std::memcmp(valid_snap.data(), valid.a.buf, BUF_SZ),
	       "random storm: another PD's MR and a read-only MR untouched");
	for (pair &r : rnds) {
		enum ibv_qp_state st = qp_state(r.a.qp);

		result(st == IBV_QPS_RTS || st == IBV_QPS_ERR,
		       "random storm: target QP " + std::to_string(r.a.qp->qp_num) +
		       " is RTS or ERR (" + state_str(st) + ")");
	}

	if (others) {
		repost(sud);
		repost(suc);
	}
	result(others && qp_state(sud.qp) == IBV_QPS_RTS && qp_state(suc.qp) == IBV_QPS_RTS,
	       "random storm: the UD and UC targets are still RTS (" + std::to_string(reposted) +
	       " receives completed and reposted)");
	if (others) {
		/* The UD target still takes a correct datagram, byte for byte. */
		pkt k;
		ibv_wc wc = {};

		k.opcode = SROCE_OP_UD_SEND_ONLY;
		k.qpn = sud.qp->qp_num;
		k.psn = 0x42;
		k.ackreq = false;
		put_be(k.ext, STORM_QKEY, 4);
		put_be(k.ext, 0x77, 4);
		for (unsigned int i = 0; i < 200; i++)
			k.payload.push_back(static_cast<std::uint8_t>(i * 7 + 3));
		bool got = send_pkt(k);
		std::uint64_t end = now_ms() + WAIT_MS;

		/* skip completions of storm datagrams still in the CQ */
		while (got && (got = poll_one(sud.cq, wc)) && wc.src_qp != 0x77 && now_ms() < end)
			others &= post_recv_at(sud, wc.wr_id, 8192);
		got = got && wc.status == IBV_WC_SUCCESS && wc.byte_len == 240 && wc.src_qp == 0x77;
		for (unsigned int i = 0; got && i < 200; i++)
			got = sud.buf[wc.wr_id + 40 + i] == static_cast<std::uint8_t>(i * 7 + 3);
		result(got, "random storm: the UD target then delivers a correct datagram, 200 bytes verified");
	}

	/* ---- afterwards ------------------------------------------------------------------ */
	result(qp_state(bystander.a.qp) == IBV_QPS_RTS && qp_state(bystander.b.qp) == IBV_QPS_RTS,
	       "bystander pair still RTS");
	result(traffic(bystander, 4), "bystander pair: verified SEND/WRITE/READ/atomic after the storm");
	result(traffic(live, 5), "live pair: verified SEND/WRITE/READ/atomic after the storm");

	/* ---- a peer that never fills its gaps -------------------------------------------- */
	held_bounds(a, b, std::min(mtu, 1024u));
	result(traffic(live, 6), "live pair: verified SEND/WRITE/READ/atomic after the gaps");

	/* ---- clean teardown of everything, errored QPs included ------------------------- */
	bool down = true;
	auto close_half = [&](half &h) { down &= half_close(h); };
	down &= !ibv_destroy_qp(init_qp) && !ibv_dereg_mr(ro_mr);
	for (pair *p : { &live, &bystander, &valid, &rnds[0], &rnds[1], &rnds[2], &rnds[3] }) {
		close_half(p->a);
		close_half(p->b);
	}
	for (pair &p : fatal) {
		close_half(p.a);
		close_half(p.b);
	}
	close_half(sud);
	close_half(suc);
	down &= !ibv_dealloc_pd(pd2);
	for (side *s : { &a, &b })
		down &= !ibv_dealloc_pd(s->pd) && !ibv_close_device(s->ctx);
	result(down, "every object destroyed cleanly");
	close(raw_fd);

	std::printf("1..%d\n", n_tests);
	if (n_failed)
		diag("%d of %d checks failed (seed %" PRIu64 ")", n_failed, n_tests, seed);
	return n_failed ? 1 : 0;
}
