/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * qp.h - queue pairs: creation, the state machine, the send and receive
 * queues as the verbs see them, and the lookup the receive path uses.
 *
 * Lifetime.  The core allocates and frees struct sroce_qp.  From creation
 * to destroy the QP is in sdev->qp_xa; the receive path finds it with
 * sroce_qp_get() and drops it with sroce_qp_put().  Destroy removes it from
 * the xarray, waits for those references, stops the requester (timers and
 * work), congestion control, the responder and the RQ's flush work, drops
 * the cached route (nothing sends any more) and then frees the rings.  The CQs, PD and SRQ
 * outlive the QP (the core counts their users).
 *
 * XRC (IBA 9.3.5, 10.2.5).  An XRC initiator QP (IB_QPT_XRC_INI) is the
 * requester half of an RC QP: a send queue, no receive queue, and every
 * request names the XRC SRQ it is for (sroce_send_wqe.xrc_srqn, sent in
 * the XRCETH).  An XRC target QP (IB_QPT_XRC_TGT) is the responder half:
 * the core creates it without udata, in an XRC domain and without PD,
 * CQs or queues; each request takes its receive WQE from the SRQ its
 * XRCETH names, which must be an XRC SRQ of the same domain, and the
 * SRQ's PD governs the request's memory accesses (sroce_qp_pd()).
 *
 * Locks, outermost first:
 *   modify_mutex  modify_qp, query_qp, destroy against each other
 *   state_lock    qp->state (and qp->attr when the datapath reads a
 *                 consistent set); any context, irqsave; nothing is
 *                 taken inside it, and the requester takes it inside
 *                 req.lock (sroce_qp_sq_error())
 *   av_lock       qp->av: modify_qp and reset write it (BH off), the
 *                 datapath reads a copy (sroce_qp_av_read()); nothing is
 *                 taken inside it
 *   req.lock      requester + completer (requester.h)
 *   rq_lock       RQ consumer: responder and flush (BH)
 *   sq_post_lock / rq_post_lock   kernel post_send / post_recv producers
 *   cq->lock      innermost (cq.h)
 */
#ifndef SROCE_QP_H
#define SROCE_QP_H

#include <linux/completion.h>
#include <linux/in6.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "cc.h"
#include "completer.h"
#include "opcode.h"
#include "requester.h"
#include "responder.h"
#include "ring.h"
#include "sroce.h"
#include "transmit.h"

/*
 * Send queue slots of kernel QPs may also carry IB_WR_REG_MR, which has no
 * userspace value (the requester must refuse it on user QPs).  Its
 * operands travel in sroce_send_wqe.wr.bind_mw: addr/length are the MR's
 * iova and length, mr_lkey the MR's key when posted, mw_rkey the key to
 * register it under, access the IB_ACCESS_* flags.  The requester executes
 * it with sroce_mr_fast_reg(); IB_WR_LOCAL_INV (ex.invalidate_rkey) with
 * sroce_mr_invalidate().
 */
#define SROCE_WR_REG_MR		IB_WR_REG_MR

struct sroce_srq;

/* One receive WQE, copied out of the RQ ring and validated. */
struct sroce_rwqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;			/* sum of the SGE lengths */
	struct sroce_sge sge[SROCE_MAX_SGE];
};

/* Bits of sroce_qp.rq_pending. */
enum {
	SROCE_RQ_FLUSH,			/* complete all posted WQEs in error */
	SROCE_RQ_LAST_WQE,		/* raise IB_EVENT_QP_LAST_WQE_REACHED */
};

struct sroce_qp {
	struct ib_qp ibqp;
	struct sroce_dev *sdev;
	refcount_t ref;			/* 1 + receive path users */
	struct completion released;	/* ref reached zero */

	struct mutex modify_mutex;	/* see "Locks" above */
	spinlock_t state_lock;		/* see "Locks" above */
	enum ib_qp_state state;		/* written under state_lock */
	struct ib_qp_attr attr;		/* as set by modify_qp; no sgid_attr */
	/*
	 * The path, set with IB_QP_AV (transmit.h).  SQD -> SQD may change
	 * it while the responder answers on it and the receive path checks
	 * packets against it: read through sroce_qp_av_read() (only the
	 * requester, idle during such a change, reads it directly).
	 */
	seqlock_t av_lock;
	struct sroce_av av;
	struct dst_cache dst_cache;	/* the route of av, transmit.c */
	struct ib_qp_cap cap;		/* what the QP really supports */
	bool sq_sig_all;
	bool user;
	struct ib_ucontext *ucontext;	/* a user QP's, for doorbell.c */
	/*
	 * Where the QP's own events are counted (sroce_qp_stat_add()): the
	 * device's counters, or those of the rdma counter it is bound to
	 * (counter.c), freed only after an RCU grace period once unbound.
	 */
	struct sroce_stats __rcu *stats;

	struct sroce_ring sq;		/* producer: provider or post_send */
	struct sroce_ring rq;		/* producer: provider or post_recv;
					 * absent with an SRQ
					 */

	spinlock_t sq_post_lock;	/* kernel QPs */
	u32 sq_producer;
	spinlock_t rq_post_lock;	/* kernel QPs */
	u32 rq_producer;

	spinlock_t rq_lock;		/* see "Locks" above */
	u32 rq_tail;			/* our RQ consumer index */
	bool rq_flushing;		/* in error: no more receives */
	bool srq_held;			/* took an SRQ WQE, not completed */
	u64 srq_wr_id;			/* ... its wr_id, for the flush */
	struct sroce_srq *xrc_srq;	/* XRC target: ... and its SRQ */
	struct list_head xrc_tgt_node;	/* XRC target: sdev->xrc_tgt_list */
	unsigned long rq_pending;	/* SROCE_RQ_* bits */
	struct work_struct rq_flush_work; /* a flush asked with IRQs off */

	struct sroce_cc_qp cc;		/* congestion control (cc.h) */
	struct sroce_requester req;
	struct sroce_completer comp;
	struct sroce_responder resp;
};

static inline struct sroce_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct sroce_qp, ibqp);
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata);
int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init);
int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr);
int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr);
/* A user QP's doorbell (post_send without work requests, doorbell.c). */
int sroce_qp_doorbell(struct sroce_qp *qp);

/* Find the QP a packet or a doorbell is for; NULL if there is none. */
struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn);
void sroce_qp_put(struct sroce_qp *qp);

/*
 * Payload bytes per packet, for the requester and the responder alike: UD
 * has no path, so the port's MTU; connected QPs their path MTU.
 */
int sroce_qp_packet_mtu(const struct sroce_qp *qp);

/*
 * A consistent copy of qp->av.  Its namespace pointer may be used only in
 * the RCU read-side section the copy was made in (transmit.h).
 */
static inline void sroce_qp_av_read(struct sroce_qp *qp, struct sroce_av *av)
{
	unsigned int seq;

	do {
		seq = read_seqbegin(&qp->av_lock);
		*av = qp->av;
	} while (read_seqretry(&qp->av_lock, seq));
}

/* RC, and the two halves of it that XRC QPs are: acknowledged, in order. */
/*
 * Count @n in the QP's counter @field (a field of struct sroce_stats):
 * the device's, or its bound rdma counter's, so that `rdma statistic qp`
 * can tell one QP's retransmissions, NAKs and drops from the others'.
 */
static inline void sroce_qp_stat_add_at(struct sroce_qp *qp, size_t offset,
					s64 n)
{
	rcu_read_lock();
	atomic64_add(n, (atomic64_t *)((char *)rcu_dereference(qp->stats) +
				       offset));
	rcu_read_unlock();
}

#define sroce_qp_stat_add(qp, field, n) \
	sroce_qp_stat_add_at(qp, offsetof(struct sroce_stats, field), n)
#define sroce_qp_stat_inc(qp, field)	sroce_qp_stat_add(qp, field, 1)

static inline bool sroce_qp_is_reliable(const struct sroce_qp *qp)
{
	enum ib_qp_type type = qp->ibqp.qp_type;

	return type == IB_QPT_RC || type == IB_QPT_XRC_INI ||
	       type == IB_QPT_XRC_TGT;
}

/* The opcode of this QP's transport for the RC opcode @rc_opcode. */
static inline u8 sroce_qp_opcode(const struct sroce_qp *qp, u8 rc_opcode)
{
	switch (qp->ibqp.qp_type) {
	case IB_QPT_UC:
		return rc_opcode | SROCE_OP_TRANSPORT_UC;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return rc_opcode | SROCE_OP_TRANSPORT_XRC;
	default:
		return rc_opcode;
	}
}

/*
 * The PD that memory accesses of the QP's requests are checked against:
 * the QP's own, except on an XRC target QP, which has none: there it is
 * the PD of the XRC SRQ the request being executed named (the responder
 * sets resp.xsrq for that time), and none (NULL: no access) otherwise.
 */
static inline struct ib_pd *sroce_qp_pd(const struct sroce_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return qp->resp.xsrq ? qp->resp.xsrq->pd : NULL;
	return qp->ibqp.pd;
}

/*
 * XRC SRQ @srq is being destroyed and the receive path no longer finds
 * it: complete the WQEs of it that target QPs hold, with a flush error.
 */
void sroce_qp_xrc_srq_gone(struct sroce_dev *sdev, struct sroce_srq *srq);

/* Kernel CQ polling: the ib_qp of a QP number, no reference taken. */
struct ib_qp *sroce_qp_ibqp(struct sroce_dev *sdev, u32 qpn);

static inline enum ib_qp_state sroce_qp_state(const struct sroce_qp *qp)
{
	return READ_ONCE(qp->state);
}

/* Datagram QPs: UD and GSI (QP1, a UD QP with a fixed number). */
static inline bool sroce_qp_is_ud(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/*
 * Move the QP to ERR from any context (not hardirq) and flush both
 * queues; does nothing in RESET or ERR.  The requester calls it after a
 * fatal error, outside its lock.
 */
void sroce_qp_error(struct sroce_qp *qp);

/*
 * A send of an unreliable QP (UC, UD) failed: move the QP from RTS or SQD
 * to SQE (IBA 10.3.1), where its receives go on; nothing else changes
 * (the requester flushes its queue).  The requester calls it under
 * req.lock, before the failed WQE's completion.
 */
void sroce_qp_sq_error(struct sroce_qp *qp);

/* Raise an affiliated asynchronous event; no role lock held. */
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type);

/*
 * The requester finished draining the send queue in SQD and the consumer
 * asked to be told (IB_QP_EN_SQD_ASYNC_NOTIFY): raise IB_EVENT_SQ_DRAINED
 * if the QP is still in SQD.  No role lock held.
 */
void sroce_qp_sq_drained(struct sroce_qp *qp);

/*
 * The receive queue, for the responder (softirq or process context).
 * sroce_rq_fetch() copies the oldest posted WQE (of the RQ or the SRQ)
 * into @rwqe: 0, -ENOENT if there is none, -ESHUTDOWN once the QP's
 * receives are being flushed, -EIO if the ring indices are corrupt,
 * -EINVAL if the WQE itself is invalid (rwqe->wr_id is set: complete it in
 * error).  After 0 or -EINVAL the QP owns that WQE until
 * sroce_rq_complete() posts @wc for it to the receive CQ (or a flush
 * completes it): call fetch again only after complete.
 */
int sroce_rq_fetch(struct sroce_qp *qp, struct sroce_rwqe *rwqe);
void sroce_rq_complete(struct sroce_qp *qp, const struct ib_uverbs_wc *wc,
		       bool solicited);

#endif /* SROCE_QP_H */
