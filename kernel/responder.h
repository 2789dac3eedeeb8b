/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The receive side of a QP: request packets -> memory, receive WQEs, ACKs
 * and NAKs, RDMA READ responses and atomic ACKs (IBA vol 1, 9.7.4 -
 * 9.7.6 and 9.9.3).
 *
 * Sequence.  An RC responder executes requests strictly in PSN order:
 * the packet at the expected PSN (epsn) executes, a packet before it is a
 * duplicate (the requester retransmitted: re-acknowledge, or replay a READ
 * or atomic from the resource cache; never execute anything twice), a
 * packet after it means packets were lost (one PSN sequence error NAK,
 * then silence until the epsn packet arrives).  A UC responder has no
 * acknowledgments: a gap in the PSNs drops the message in progress.
 *
 * Resources.  Each READ or atomic that executed leaves an entry in a
 * small ring (res[]): its PSN range and what is needed to answer it again
 * (the READ's address and key, the atomic's original value).  The ring
 * holds max_dest_rd_atomic entries, the most a correct requester can have
 * outstanding; older entries are reused.  It is allocated by modify_qp
 * when max_dest_rd_atomic is set (sroce_responder_reserve()), never at
 * create: a QP that takes no READ or atomic has none, and one that does
 * pays for the depth it asked for, not for SROCE_MAX_QP_RD_ATOM.
 *
 * Backlog.  A READ response longer than SROCE_RESP_READ_BUDGET packets
 * is finished by a work item, so that one request cannot keep the receive
 * softirq busy for long.  Requests that arrive meanwhile wait, in order,
 * in the backlog: responses and ACKs must leave in PSN order.
 *
 * Locking.  resp.lock (BH) serialises everything above; it nests outside
 * the RQ lock (sroce_rq_fetch/complete) and the CQ lock, and is never
 * held together with req.lock.  sroce_qp_error() is called only after it
 * is dropped (it calls back into sroce_responder_flush()).
 */
#ifndef SROCE_RESPONDER_H
#define SROCE_RESPONDER_H

#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

#include "sroce.h"

struct sroce_qp;
struct sroce_rwqe;

/* READ response packets sent per pass before the work item takes over. */
#define SROCE_RESP_READ_BUDGET		64

/*
 * Immediate retries of a READ response refused by a full transmit queue
 * before the responder waits a tick between tries.
 */
#define SROCE_RESP_BUSY_RETRIES		4
/*
 * READ response packets of one QP that may be on their way out at once:
 * queued in a qdisc or driver, or in the receive backlog of a local
 * receiver (loopback, a veth peer), until the stack lets go of the skb
 * (sroce_resp_read_skb_done()).  At the limit the responder waits until
 * half of them are gone: the receiver's backlog (netdev_max_backlog, 1000
 * by default) never fills with one READ's responses, and a requester that
 * asks again for a response still on its way can be told apart from one
 * that lost it.
 */
#define SROCE_RESP_READ_INFLIGHT	128
/* Requests held while a long READ response is sent; more are dropped. */
#define SROCE_RESP_BACKLOG_MAX		512
/*
 * RC requests that arrive past a gap in the PSNs are kept (sorted, in
 * resp.held) until the gap fills, then executed in order: at most this
 * many PSNs ahead of the one expected (the requester's window,
 * SROCE_REQ_MAX_UNACKED), so at most that many per QP, and at most
 * SROCE_RESP_HELD_DEV_BYTES of skb truesize for all QPs of a device (a
 * peer that never fills its gaps cannot pin more than that: about 8192
 * packets of 4 KiB, or the full span of 16 QPs).  More are dropped, as
 * without holding.
 */
#define SROCE_RESP_HELD_SPAN		256
#define SROCE_RESP_HELD_DEV_BYTES	SZ_32M
/* Acknowledge at least every this many packets, AckReq or not. */
#define SROCE_RESP_ACK_EVERY		64
/*
 * ... and what executed without an ACK at most this many jiffies after
 * the first such packet (the work item, sroce_resp_ack_later()): a
 * requester asks for ACKs only where it needs them soon, and the rest
 * must still be retired without its probe.
 */
#define SROCE_RESP_ACK_DELAY		1

/* One executed READ or atomic, kept to answer duplicates. */
struct sroce_resp_res {
	u8 kind;		/* 0: unused; SROCE_OPK_READ_REQ, _ATOMIC */
	u32 first_psn;		/* the request's PSN */
	u32 last_psn;		/* its last response PSN */
	u64 va;			/* READ */
	u32 rkey;		/* READ */
	u32 len;		/* READ */
	u32 xrc_srqn;		/* READ on an XRC target: the SRQ named */
	u64 orig;		/* atomic: the value before the operation */
};

/* Responder state of one QP, embedded in struct sroce_qp as "resp". */
struct sroce_responder {
	spinlock_t lock;		/* everything below; BH */

	/* Attributes, copied by sroce_responder_start(). */
	u32 mtu;			/* path MTU in bytes */
	u8 min_rnr_timer;		/* IB timer code for RNR NAKs */
	u8 max_dest_rd_atomic;
	int access;			/* IB_ACCESS_REMOTE_* the QP allows */

	bool started;			/* reached RTR: requests execute */
	bool stopped;			/* error or flush: everything drops */
	bool dying;			/* being destroyed: no more work */
	bool want_qp_error;		/* move the QP to ERR after unlocking */
	bool established;		/* took in a request since RESET */
	bool want_comm_est;		/* raise IB_EVENT_COMM_EST after unlocking */

	/* Sequence state. */
	u32 epsn;			/* expected PSN */
	u32 msn;			/* message sequence number, 24 bits */
	u8 last_opcode;			/* last in-sequence request */
	bool seq_nak_sent;		/* NAKed (or RNR NAKed) at epsn */
	bool ack_owed;			/* an ACK waits for held requests */
	bool draining;			/* executing held requests */
	bool dup_acked;			/* answered a duplicate since epsn moved */
	bool uc_drop;			/* UC: drop until the next message */
	u32 unacked;			/* executed since the last ACK */
	bool ack_retry;			/* an ACK met a full queue: resend */
	u32 ack_retry_psn;		/* ... for this PSN */
	u32 ack_busy;			/* ACKs refused in a row */

	/*
	 * XRC target: the XRC SRQ the request being executed named, with a
	 * reference (sroce_xrc_srq_get()); NULL between requests.
	 */
	struct ib_srq *xsrq;

	/* SEND or WRITE with immediate: the receive WQE being filled. */
	struct sroce_rwqe *rwqe;	/* copy of the RQ head, kernel memory */
	bool have_rwqe;
	u32 recv_len;			/* bytes placed so far */
	u32 recv_sge;			/* next SGE to fill ... */
	u32 recv_sge_off;		/* ... from this offset */

	/* RDMA WRITE in progress (from its RETH). */
	u64 write_va;
	u32 write_rkey;
	u32 write_resid;		/* bytes still to come */
	u32 write_len;			/* the whole message */

	/* READ response being sent, and requests waiting behind it. */
	struct sroce_resp_res *read;	/* NULL: none */
	u32 read_psn;			/* next response PSN */
	u32 read_first;			/* PSN the current response began at */
	bool read_replay;		/* it answers a duplicate request */
	u32 read_busy;			/* transmit refused since the last send */
	struct sroce_resp_res *read_last; /* the READ answered last, or NULL */
	atomic_t read_inflight;		/* response skbs not yet let go of */
	unsigned long read_paced;	/* bit 0: waits for read_inflight */
	int read_cpu;			/* the CPU that sent the last response */
	struct sk_buff_head backlog;	/* unlocked variants, under lock */
	struct sk_buff_head held;	/* past a gap, by PSN; under lock */
	struct delayed_work work;

	struct sroce_resp_res *res;	/* num_res entries; NULL: none */
	u32 num_res;			/* >= max_dest_rd_atomic */
	u32 res_next;			/* next entry to reuse */
};

/* Module-wide workqueue; main.c calls these at module init/exit. */
int sroce_responder_module_init(void);
void sroce_responder_module_exit(void);

/*
 * QP lifetime hooks, called by qp.c:
 *   init     at create, before the QP is visible (process context)
 *   reserve  in modify_qp before anything changes, when it sets
 *            max_dest_rd_atomic: room for that many resources (process
 *            context; -ENOMEM fails the modify)
 *   start    on every modify to RTR or RTS (attributes may change)
 *   flush    when the QP enters ERR (any context but hardirq)
 *   reset    on every modify to RESET (process context)
 *   cleanup  at destroy, after the QP left qp_xa and the receive path
 *            dropped its references, before the rings are freed
 */
int sroce_responder_init(struct sroce_qp *qp);
int sroce_responder_reserve(struct sroce_qp *qp, u32 max_dest_rd_atomic);
void sroce_responder_start(struct sroce_qp *qp);
void sroce_responder_flush(struct sroce_qp *qp);
void sroce_responder_reset(struct sroce_qp *qp);
void sroce_responder_cleanup(struct sroce_qp *qp);

/* Receive hook for request opcodes (recv.c); consumes @skb. */
void sroce_responder_rcv(struct sroce_qp *qp, struct sk_buff *skb);

#endif /* SROCE_RESPONDER_H */
