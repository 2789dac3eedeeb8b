/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The send side of a QP: send queue WQEs -> request packets,
 * PSN assignment, the limits on what may be outstanding, and recovery
 * (retransmit timer, RNR timer, go-back-N).  The completer (completer.h)
 * consumes the responses and retires the WQEs the requester started.
 *
 * The send queue ring is shared with userspace for user QPs, so its slots
 * are hostile: each WQE is copied exactly once, when the requester starts
 * it, into a kernel-private shadow slot (struct sroce_swqe) and validated
 * there.  From then on the requester, the completer and the retransmit
 * path only read the shadow.  The ring slot is handed back to the
 * producer (the ring's consumer index advances) only when the WQE is
 * retired, so the shadow slot of ring index i is (i & sq_mask) and stays
 * valid exactly as long as the ring slot is ours.
 *
 * Sequence space.  Every WQE gets its PSN range [first_psn, last_psn] when
 * it is fetched: one PSN per request packet, or, for an RDMA READ, one per
 * expected response packet (the request itself carries first_psn).  WQEs
 * are fetched in order and their ranges are contiguous, so "which WQE and
 * which byte does PSN p stand for" is a search over the fetched WQEs and a
 * multiplication by the path MTU.  That is what makes go-back-N a matter
 * of moving (cur, psn) backwards: packets are rebuilt from the shadow.
 *
 * Locking.  One spinlock per QP, req.lock, taken with _bh, serialises the
 * requester and the completer (completer.c runs under it too): they share
 * the shadow, the indices and the sequence state, and an ACK both retires
 * WQEs and opens the window for new packets.  Whoever wants the requester
 * to run sets SROCE_REQ_KICK and calls sroce_req_run(), which only
 * trylocks: if the lock is busy, its holder sees the bit when it unlocks
 * and runs the requester itself.  So the doorbell never spins on a busy
 * QP, and a completion handler that posts to the same QP from inside
 * sroce_cq_post() (under our lock) cannot deadlock.
 *
 * Execution contexts: the doorbell caller (post_send), the receive softirq
 * after the completer (an ACK opened room), the two timers (softirq), the
 * congestion control pace timer and a work item that continues a pass
 * that hit its packet budget.  Whatever the context, a QP's packets leave
 * from one CPU while any of them may be on their way (req.cpu); a pass
 * kicked on another CPU continues in the work item on that one.
 */
#ifndef SROCE_REQUESTER_H
#define SROCE_REQUESTER_H

#include <linux/bits.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "mr.h"
#include "uapi/sroce-abi.h"

struct sroce_qp;

/*
 * Packets one requester pass may send before it hands the rest of its
 * work to the work item, so that a large message does not keep bottom
 * halves disabled for long in a system call or a softirq.
 */
#define SROCE_REQ_BUDGET		64

/*
 * Unacknowledged PSNs beyond which no new request packet is started (a
 * READ counts with all of its response PSNs, but one is always allowed
 * when nothing is outstanding).  This bounds the work of a go-back-N and
 * keeps the window far below the 2^23 PSNs the sequence arithmetic allows.
 *
 * Within that bound the window adapts: every go-back-N on a sequence NAK
 * or an out-of-order response halves it (down to SROCE_REQ_MIN_WINDOW),
 * every acknowledged PSN widens it by one.  Such a go-back-N resends
 * everything in flight after the lost packet at once: the peer has told
 * us where the gap is, and under heavy reordering resending eagerly is
 * what gets the packets to it in order (robustness.rst).  So on a lossy
 * path a window near the distance between losses wastes far less than a
 * full one; on a clean path it is back at the maximum after a few round
 * trips.
 *
 * A sequence NAK names the first PSN the responder misses; only that PSN
 * is resent at first (req.resend_one), with AckReq, and nothing else is
 * sent until its ACK comes back.  A sroce responder kept what followed the
 * gap and acknowledges all of it at once; any other responder (rdma_rxe, a
 * RoCE NIC) dropped it and acknowledges that PSN alone, and the go-back-N
 * then continues from the next one: one round trip later than resending
 * everything at once, and a loss costs one packet instead of a window.
 * What that ACK leaves unacknowledged was sent before the resent PSN and
 * did not arrive before it (a sroce responder NAKs the next gap instead of
 * acknowledging when it holds packets past it), so it is resent at once.
 *
 * A go-back-N inferred from silence (a full local ACK timeout, or a probe
 * whose answer left PSNs outstanding) closes the window to
 * SROCE_REQ_RESTART_WINDOW, and its resends, too, wait for the window
 * (req.resend_paced).  Silence is also what a path slower than the
 * timeout looks like: a queue that takes longer than the local ACK timeout
 * to drain (e.g. two TCG guests on one host), whose queued ACKs then
 * arrive after the probe as if they answered it.  Resending the window
 * into that queue only lengthens it, every probe and timeout adds another
 * copy, and the QP ends in IB_WC_RETRY_EXC_ERR with nothing lost (seen:
 * 23,831 resends for 91,056 packets).  One packet answers the question,
 * and the ACKs open the window again (as TCP after a retransmission
 * timeout, RFC 5681 3.1).
 *
 * And the window never grows past what the local ACK timeout can wait for
 * (window_cap): on a path where the queue we fill ourselves is what makes
 * the round trip long (a slow link, a debug kernel, a loaded host), a
 * full window's ACKs would come back after the timeout, every time
 * (requester.c, sroce_req_fit_window()).
 */
#define SROCE_REQ_MAX_UNACKED		256
#define SROCE_REQ_MIN_WINDOW		32
#define SROCE_REQ_RESTART_WINDOW	1

/*
 * A QP's first window, before any round trip was measured.  It asks for
 * an ACK every 4 packets (a quarter of the window), so even on a 1 MB/s
 * path at RoCE MTU 1024 the first ACKs come back within about 4 ms, well
 * inside any local ACK timeout a consumer sets; a first window of 256
 * would take a quarter of a second there.  The ACKs widen the window by
 * what they acknowledge (doubling it per round trip, as TCP's slow start)
 * up to window_cap.
 */
#define SROCE_REQ_INITIAL_WINDOW	16

/*
 * Request AckReq at least every this many packets inside long messages
 * (and at least four times per window), so that the responder
 * acknowledges, and we retire state and widen the window, before the
 * window is used up.
 */
#define SROCE_REQ_ACKREQ_EVERY		32

/*
 * UC and UD QPs (no acknowledgments) move to another CPU only after
 * sending nothing for this many jiffies; see sroce_req_own_cpu().
 */
#define SROCE_REQ_CPU_IDLE	2

/*
 * Immediate retries of a packet refused by a full transmit queue before
 * the requester waits a tick between tries.
 */
#define SROCE_REQ_BUSY_RETRIES		4

/* Longest round trip a sample may count, in microseconds (10 s). */
#define SROCE_REQ_RTT_MAX_US		10000000

/* Longest message in packets: keeps one READ well inside the PSN window. */
#define SROCE_REQ_MAX_MSG_PKTS		BIT(21)

/* One send WQE as the requester and completer see it. */
struct sroce_swqe {
	/* Copied from the ring slot and validated (sroce_swqe_fetch()). */
	u64 wr_id;
	u64 remote_addr;	/* RDMA and atomic */
	/* atomic: compare (CMP_SWP) or addend (FADD); ATOMIC WRITE: its bytes */
	u64 compare_add;
	u64 swap;		/* atomic: CMP_SWP swap value */
	u32 length;		/* message bytes: SGE sum, inline_len, 8 */
	u32 rkey;		/* RDMA and atomic */
	u32 inv_rkey;		/* SEND_WITH_INV */
	u32 ah_num;		/* UD: destination address handle */
	u32 remote_qpn;		/* UD */
	u32 remote_qkey;	/* UD */
	u32 xrc_srqn;		/* XRC: the remote XRC SRQ (XRCETH) */
	__be32 imm_data;	/* *_WITH_IMM */
	struct {		/* REG_MR (kernel only, see qp.h), BIND_MW */
		u64 addr;
		u64 length;
		u32 key;	/* the key to register or bind under */
		u32 mr_lkey;	/* the MR (REG_MR: when posted) */
		u32 access;	/* IB_ACCESS_* */
		u32 flags;	/* BIND_MW: SROCE_BIND_* */
	} reg;
	u8 opcode;		/* enum ib_uverbs_wr_opcode, or IB_WR_REG_MR */
	u8 num_sge;		/* 0 when the data is inline */
	u16 flags;		/* SROCE_SEND_* */

	/* Requester bookkeeping. */
	u32 first_psn;
	u32 last_psn;
	u8 status;		/* enum ib_wc_status to retire it with */
	bool rd_atomic_held;	/* counted in req.rd_atomic until retired */
	u8 reserved[2];

	/* struct sroce_sge[num_sge] or the inline bytes. */
	u8 data[] __aligned(8);
};

static inline struct sroce_sge *sroce_swqe_sges(struct sroce_swqe *swqe)
{
	return (struct sroce_sge *)swqe->data;
}

static inline bool sroce_swqe_is_read(const struct sroce_swqe *swqe)
{
	return swqe->opcode == IB_UVERBS_WR_RDMA_READ;
}

static inline bool sroce_swqe_is_atomic(const struct sroce_swqe *swqe)
{
	return swqe->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP ||
	       swqe->opcode == IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD;
}

/* IBTA 1.5 ATOMIC WRITE: one 64-bit word, carried in the WQE itself. */
static inline bool sroce_swqe_is_atomic_write(const struct sroce_swqe *swqe)
{
	return swqe->opcode == SROCE_WR_ATOMIC_WRITE;
}

/*
 * Executed by the requester itself, without a packet: fast registration,
 * local invalidation, window binding (sroce_req_local_op()).
 */
static inline bool sroce_swqe_is_local(const struct sroce_swqe *swqe)
{
	return swqe->opcode == IB_WR_REG_MR ||
	       swqe->opcode == IB_UVERBS_WR_LOCAL_INV ||
	       swqe->opcode == IB_UVERBS_WR_BIND_MW;
}

/*
 * Its completion comes from a response, not from an ACK, and it takes one
 * of the responder's max_rd_atomic resources until then: READ, atomics,
 * and ATOMIC WRITE (answered by an empty READ RESPONSE ONLY, IBA 1.5).
 */
static inline bool sroce_swqe_needs_response(const struct sroce_swqe *swqe)
{
	return sroce_swqe_is_read(swqe) || sroce_swqe_is_atomic(swqe) ||
	       sroce_swqe_is_atomic_write(swqe);
}

/* Answered by READ responses: a READ, or an ATOMIC WRITE's empty one. */
static inline bool sroce_swqe_wants_read_resp(const struct sroce_swqe *swqe)
{
	return sroce_swqe_is_read(swqe) || sroce_swqe_is_atomic_write(swqe);
}

/* Bits of sroce_requester.pending, set from any context. */
enum {
	SROCE_REQ_KICK,		/* run a requester pass */
	SROCE_REQ_TIMEOUT,	/* the retransmit timer expired */
	SROCE_REQ_RNR_DONE,	/* the RNR wait is over */
	SROCE_REQ_FAULT_RETRY,	/* place a response kept for its pages */
	SROCE_REQ_POLLING,	/* the SQ poller runs, sq_poll.c */
};

/*
 * Requester state of one QP, embedded in struct sroce_qp as "req".  All
 * fields below lock are protected by it; indices are free-running u32 SQ
 * ring indices: tail <= cur <= head (mod 2^32).
 */
struct sroce_requester {
	unsigned long pending;		/* SROCE_REQ_* bits, atomic */
	spinlock_t lock;

	void *shadow;			/* sq_size x stride bytes; see reserve */
	u32 stride;
	u32 sq_mask;			/* sq_size - 1 */
	u32 max_sge;
	u32 max_inline;

	u32 tail;			/* oldest WQE not retired; = consumer */
	u32 head;			/* next WQE to fetch from the ring */
	u32 cur;			/* WQE whose packets are being sent */
	u32 psn;			/* next PSN to send (inside cur) */
	u32 psn_max;			/* one past the highest PSN sent */
	u32 noack_pkts;			/* sent since the last AckReq */
	u32 rd_atomic;			/* READ/atomic WQEs fetched, not retired */
	u32 window;			/* PSNs that may be unacknowledged */
	u32 window_cap;			/* what the round trip allows, see requester.c */
	u32 cap_psn;			/* psn_max when window_cap last fell */
	u32 acked_psn;			/* comp.psn when the window last grew */
	u32 fail_index;			/* with local_error */
	u32 busy_retries;		/* transmit refused since the last send */
	int cpu;			/* sends from this CPU, see requester.c */
	unsigned long sent_at;		/* jiffies of the last pass that sent */

	/* Attributes, copied at RTS by sroce_requester_start(). */
	u32 mtu;			/* path MTU in bytes */
	u32 max_rd_atomic;
	unsigned long timeout;		/* local ACK timeout, 0: none */
	u8 retry_cnt;			/* IB retry_cnt */
	u8 rnr_retry;			/* IB rnr_retry, 7: infinite */
	u8 retries_left;
	u8 probes;			/* sent in this silence, see requester.c */
	u8 rnr_retries_left;

	bool started;			/* reached RTS: may send */
	bool error;			/* flushing: everything completes in error */
	bool local_error;		/* WQE fail_index failed, see requester.c */
	bool rnr_wait;			/* stopped until the RNR timer fires */
	bool resend_paced;		/* resends wait for the window, too */
	bool resend_one;		/* after a sequence NAK: its PSN only */
	u32 gap_psn;			/* the PSN the last sequence NAK named */

	/*
	 * Round-trip estimate for the probe delay (requester.c,
	 * sroce_req_rtt_sample()): one first transmission at a time is
	 * timed until an ACK covers it; a resend cancels the timing (Karn).
	 */
	bool rtt_timing;		/* rtt_psn is being timed */
	u32 rtt_psn;
	u64 rtt_sent_ns;		/* ktime_get_ns() when rtt_psn left */
	u32 srtt_us;			/* smoothed RTT, 0: no sample yet */
	u32 rttvar_us;			/* its mean deviation */
	u32 min_rtt_us;			/* the shortest sample since RESET */
	bool dying;			/* being destroyed: do nothing */
	bool want_qp_error;		/* ask qp.c to move the QP to ERR */
	bool draining;			/* SQD: start no new WQE */
	bool drain_notify;		/* ... and report when drained */
	bool want_sq_drained;		/* raise IB_EVENT_SQ_DRAINED, unlocked */
	bool over_budget;		/* the last pass left work to do */
	struct sroce_tx_batch *tx_batch; /* the running pass's, see pass */
	unsigned long poll_backoff;	/* jiffies: no SQ poller before */
	u32 poll_us;			/* create_qp's sq_poll_us, 0: none */

	struct timer_list retrans_timer;
	struct timer_list rnr_timer;
	struct delayed_work work;	/* continues a pass over budget */
	struct work_struct poll_work;	/* the SQ poller, sq_poll.c */
};

/* Module-wide workqueue; main.c calls these at module init/exit. */
int sroce_requester_module_init(void);
void sroce_requester_module_exit(void);

/*
 * QP lifetime hooks, called by qp.c:
 *   init     at create, with qp->sq allocated (process context); also
 *            initialises the completer
 *   reserve  in modify_qp to any state past INIT, before anything
 *            changes (process context): allocates the shadow once
 *   start    on every modify to RTS (the first takes sq_psn; timeout and
 *            retry counts may change later); @recover on SQE -> RTS:
 *            what was posted in SQE is flushed, the next WQE is sent
 *   flush    when the QP enters ERR (any context but hardirq, without
 *            req.lock); completes every WQE, IB_WC_WR_FLUSH_ERR
 *   drain    on RTS -> SQD: start no new WQE; once every started WQE
 *            retired, raise IB_EVENT_SQ_DRAINED if @notify.  The next
 *            start (SQD -> RTS) ends the drain.
 *   reset    on the transition to RESET, after qp.c moved the SQ ring's
 *            consumer past the posted WQEs (process context)
 *   cleanup  at destroy, after the QP left qp_xa (process context): stops
 *            the timers and the work item and frees the shadow; a completer
 *            that still runs finds nothing to do
 */
int sroce_requester_init(struct sroce_qp *qp);
int sroce_requester_reserve(struct sroce_qp *qp);
void sroce_requester_start(struct sroce_qp *qp, bool recover);
void sroce_requester_flush(struct sroce_qp *qp);
void sroce_requester_drain(struct sroce_qp *qp, bool notify);
bool sroce_requester_draining(struct sroce_qp *qp);
void sroce_requester_reset(struct sroce_qp *qp);
void sroce_requester_cleanup(struct sroce_qp *qp);

/*
 * Doorbell: post_send after publishing WQEs.  Any context but hardirq;
 * with interrupts off the pass runs from the work item.
 */
void sroce_requester_kick(struct sroce_qp *qp);

/* ---- shared with the completer (called under req.lock) ------------------ */

struct sroce_swqe *sroce_req_swqe(struct sroce_qp *qp, u32 index);
/*
 * Not a completion status: sroce_swqe_copy_sges() met on-demand paged
 * memory not present yet (odp.c).  Its fault is under way; the requester
 * builds the packet again a tick later, the completer drops the response
 * it could not place (the requester asks for it again).
 */
#define SROCE_WC_PAGE_FAULT	((enum ib_wc_status)0x100)

/* What a failed access of a WQE's local memory (@err from mr.h) completes. */
static inline enum ib_wc_status sroce_swqe_access_status(int err)
{
	return err == -EAGAIN ? SROCE_WC_PAGE_FAULT : IB_WC_LOC_PROT_ERR;
}

enum ib_wc_status sroce_swqe_copy_sges(struct sroce_qp *qp,
				       struct sroce_swqe *swqe, u64 offset,
				       void *buf, u32 len,
				       enum sroce_copy_dir dir);
void sroce_req_send_from(struct sroce_qp *qp, u32 psn);
bool sroce_req_use_retry(struct sroce_qp *qp);
void sroce_req_lost(struct sroce_qp *qp);
void sroce_req_lost_at_gap(struct sroce_qp *qp);
void sroce_req_rnr_wait(struct sroce_qp *qp, u32 psn, unsigned int timer_code);
void sroce_req_fault_retry_later(struct sroce_qp *qp);
void sroce_req_acked(struct sroce_qp *qp);
void sroce_req_alive(struct sroce_qp *qp);
void sroce_req_fail(struct sroce_qp *qp, u32 index, enum ib_wc_status status);
void sroce_req_run(struct sroce_qp *qp);

#endif /* SROCE_REQUESTER_H */
