// SPDX-License-Identifier: GPL-2.0-only
/*
 * qp.c - queue pairs: create/destroy, the modify_qp state machine, kernel
 * post_send/post_recv, the receive queue consumer and the flush on error.
 * See qp.h for lifetime and locking.
 */
#include <linux/log2.h>

#include "ah.h"
#include "cq.h"
#include "qp.h"
#include "sq_poll.h"
#include "srq.h"
#include "trace.h"

/* modify_qp attributes sroce implements (no APM, no rate limit). */
#define SROCE_QP_ATTR_MASK (IB_QP_STATE | IB_QP_CUR_STATE |		\
	IB_QP_EN_SQD_ASYNC_NOTIFY | IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | \
	IB_QP_PORT | IB_QP_QKEY | IB_QP_AV | IB_QP_PATH_MTU |		\
	IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_RQ_PSN | \
	IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN |	\
	IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_DEST_QPN)

#define SROCE_QP_ACCESS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

#define SROCE_PSN_BITS	0xffffff

/* ---- lookup -------------------------------------------------------------- */

struct sroce_qp *sroce_qp_get(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp *qp;

	xa_lock_bh(&sdev->qp_xa);
	qp = xa_load(&sdev->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_bh(&sdev->qp_xa);
	return qp;
}

void sroce_qp_put(struct sroce_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

int sroce_qp_packet_mtu(const struct sroce_qp *qp)
{
	if (sroce_qp_is_ud(qp))
		return ib_mtu_enum_to_int(sroce_active_mtu(READ_ONCE(qp->sdev->ndev->mtu)));
	return ib_mtu_enum_to_int(qp->attr.path_mtu);
}

struct ib_qp *sroce_qp_ibqp(struct sroce_dev *sdev, u32 qpn)
{
	struct sroce_qp *qp = xa_load(&sdev->qp_xa, qpn);

	return qp ? &qp->ibqp : NULL;
}

/* An affiliated asynchronous event of the QP, to its consumer. */
void sroce_qp_event(struct sroce_qp *qp, enum ib_event_type type)
{
	struct ib_event event = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&event, qp->ibqp.qp_context);
}

/* ---- receive queue ------------------------------------------------------- */

/*
 * A QP's receives come from its own RQ ring or from its SRQ.  The RQ is
 * consumed only when the WQE completes (fetch peeks); an SRQ WQE is taken
 * at fetch, because other QPs consume the same ring, and then belongs to
 * this QP (srq_held) until it completes or is flushed.  An XRC target QP
 * takes it from the XRC SRQ of the request (resp.xsrq) and completes it
 * on that SRQ's CQ (xrc_srq remembers which).
 */

static struct sroce_srq *sroce_rq_srq(struct sroce_qp *qp)
{
	if (qp->ibqp.srq)
		return to_ssrq(qp->ibqp.srq);
	if (qp->resp.xsrq)
		return to_ssrq(qp->resp.xsrq);
	return NULL;
}

/* Where receive completions go; NULL: an XRC target QP holding no WQE. */
static struct sroce_cq *sroce_rq_cq(struct sroce_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_XRC_TGT)
		return qp->xrc_srq ? to_scq(qp->xrc_srq->ibsrq.ext.cq) : NULL;
	return to_scq(qp->ibqp.recv_cq);
}

static void sroce_rq_consume_locked(struct sroce_qp *qp)
{
	qp->rq_tail++;
	sroce_ring_set_consumer(&qp->rq, qp->rq_tail);
}

/*
 * Complete the SRQ WQE this QP took for a message not yet whole with a
 * flush: it has left the SRQ, and without a completion its buffer would
 * be lost to the consumer.  WQEs still in the SRQ stay there for the
 * other QPs.
 */
static void sroce_rq_flush_held_locked(struct sroce_qp *qp)
{
	struct sroce_cq *cq = sroce_rq_cq(qp);
	struct ib_uverbs_wc wc = {
		.wr_id = qp->srq_wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};

	if (!qp->srq_held)
		return;
	qp->srq_held = false;
	qp->xrc_srq = NULL;
	if (cq)
		sroce_cq_post(cq, &wc, false);
}

static void sroce_rq_flush_locked(struct sroce_qp *qp)
{
	struct sroce_cq *cq = sroce_rq_cq(qp);
	struct ib_uverbs_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp_num = qp->ibqp.qp_num,
	};
	bool first;
	u32 n;

	/* The first flush since the QP entered the error state? */
	first = !qp->rq_flushing;
	qp->rq_flushing = true;
	sroce_rq_flush_held_locked(qp);
	/*
	 * This QP takes nothing more from its SRQ: the IB spec's Last WQE
	 * Reached event, once per entry into the error state, after the
	 * flush completion of the WQE it held.  ib_drain_qp() waits for it
	 * (since Linux 6.11; 60 s without it), as do ULPs that recycle an
	 * SRQ's QPs.
	 */
	if (first && (qp->ibqp.srq || qp->ibqp.qp_type == IB_QPT_XRC_TGT))
		set_bit(SROCE_RQ_LAST_WQE, &qp->rq_pending);
	if (!sroce_ring_present(&qp->rq))
		return;
	n = sroce_ring_published(&qp->rq, qp->rq_tail);
	if (n == U32_MAX)
		return;		/* corrupt producer: nothing is believable */
	while (n--) {
		const struct sroce_recv_wqe *slot =
			sroce_ring_slot(&qp->rq, qp->rq_tail);

		wc.wr_id = READ_ONCE(slot->wr_id);
		sroce_rq_consume_locked(qp);
		sroce_cq_post(cq, &wc, false);
	}
}

/*
 * Flush with the same "kick" scheme as the requester: a completion handler
 * called from inside the flush may post receives (and ask for another
 * flush) without deadlocking on rq_lock.
 */
static void sroce_rq_run_flush(struct sroce_qp *qp)
{
	while (test_bit(SROCE_RQ_FLUSH, &qp->rq_pending)) {
		if (!spin_trylock_bh(&qp->rq_lock))
			return;
		clear_bit(SROCE_RQ_FLUSH, &qp->rq_pending);
		/* Void if a RESET came first (sroce_qp_error()). */
		if (sroce_qp_state(qp) == IB_QPS_ERR)
			sroce_rq_flush_locked(qp);
		spin_unlock_bh(&qp->rq_lock);
		/* The consumer's handler runs without our lock. */
		if (test_and_clear_bit(SROCE_RQ_LAST_WQE, &qp->rq_pending))
			sroce_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
		/* Unlock before looking at the bit again, as sroce_req_run(). */
		smp_mb();
	}
}

static void sroce_rq_unlock(struct sroce_qp *qp)
{
	spin_unlock_bh(&qp->rq_lock);
	/* Order the unlock before the flag test (see sroce_rq_run_flush()). */
	smp_mb();
	sroce_rq_run_flush(qp);
}

static void sroce_rq_flush(struct sroce_qp *qp)
{
	set_bit(SROCE_RQ_FLUSH, &qp->rq_pending);
	/* The bit is visible before our trylock can fail. */
	smp_mb__after_atomic();
	/* Interrupts off (as sroce_requester_kick()): the work item flushes. */
	if (irqs_disabled())
		queue_work(system_highpri_wq, &qp->rq_flush_work);
	else
		sroce_rq_run_flush(qp);
}

static void sroce_rq_flush_work(struct work_struct *work)
{
	sroce_rq_run_flush(container_of(work, struct sroce_qp, rq_flush_work));
}

static int sroce_rq_fetch_locked(struct sroce_qp *qp, struct sroce_rwqe *rwqe)
{
	struct sroce_srq *srq = sroce_rq_srq(qp);
	u32 n;
	int err;

	if (qp->rq_flushing)
		return -ESHUTDOWN;

	if (srq) {
		if (WARN_ON_ONCE(qp->srq_held))
			return -EIO;
		err = sroce_srq_take(srq, rwqe);
		if (!err || err == -EINVAL) {
			qp->srq_held = true;
			qp->srq_wr_id = rwqe->wr_id;
			if (!qp->ibqp.srq)
				qp->xrc_srq = srq;
		}
		return err;
	}
	if (!sroce_ring_present(&qp->rq))
		return -EIO;	/* an XRC target QP outside a request */

	n = sroce_ring_published(&qp->rq, qp->rq_tail);
	if (n == U32_MAX)
		return -EIO;
	if (!n)
		return -ENOENT;
	return sroce_recv_slot_copy(&qp->rq, qp->rq_tail,
				    sroce_recv_slot_max_sge(&qp->rq), rwqe);
}

int sroce_rq_fetch(struct sroce_qp *qp, struct sroce_rwqe *rwqe)
{
	int err;

	spin_lock_bh(&qp->rq_lock);
	err = sroce_rq_fetch_locked(qp, rwqe);
	sroce_rq_unlock(qp);
	return err;
}

void sroce_rq_complete(struct sroce_qp *qp, const struct ib_uverbs_wc *wc,
		       bool solicited)
{
	struct sroce_cq *cq;
	u32 n;

	spin_lock_bh(&qp->rq_lock);
	cq = sroce_rq_cq(qp);
	/* A flush (or the XRC SRQ's destroy) may have completed it already. */
	if (qp->ibqp.srq || qp->ibqp.qp_type == IB_QPT_XRC_TGT) {
		if (qp->srq_held) {
			qp->srq_held = false;
			qp->xrc_srq = NULL;
			if (cq)
				sroce_cq_post(cq, wc, solicited);
		}
	} else if (!qp->rq_flushing) {
		n = sroce_ring_published(&qp->rq, qp->rq_tail);
		if (n && n != U32_MAX) {
			/* Slot first: see sroce_comp_retire(). */
			sroce_rq_consume_locked(qp);
			sroce_cq_post(cq, wc, solicited);
		}
	}
	sroce_rq_unlock(qp);
}

/* ---- state --------------------------------------------------------------- */

static void sroce_rq_set_flags(struct sroce_qp *qp, u32 flags)
{
	if (sroce_ring_present(&qp->rq))
		sroce_ring_set_flags(&qp->rq, flags);
}

/*
 * The one place the state changes: to @to if it is one of @from (a set of
 * BIT(state)), under state_lock, traced.  Each caller says which states it
 * may leave, so a modify does not cover an ERR or SQE a role set meanwhile,
 * and a role does not move a QP the modify reset.  True if it moved.
 */
static bool sroce_qp_change_state(struct sroce_qp *qp, u32 from,
				  enum ib_qp_state to)
{
	enum ib_qp_state old;
	unsigned long flags;
	bool changed;

	spin_lock_irqsave(&qp->state_lock, flags);
	old = qp->state;
	changed = from & BIT(old);
	if (changed)
		WRITE_ONCE(qp->state, to);
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (changed && old != to)
		trace_sroce_qp_state(&qp->ibqp, old, to);
	return changed;
}

#define SROCE_QPS_ANY	GENMASK(IB_QPS_ERR, IB_QPS_RESET)

void sroce_qp_error(struct sroce_qp *qp)
{
	bool flush = sroce_qp_change_state(qp, SROCE_QPS_ANY &
					   ~(BIT(IB_QPS_RESET) | BIT(IB_QPS_ERR)),
					   IB_QPS_ERR);

	/*
	 * The CQEs of the flush may reach a consumer that moves the QP to
	 * RESET, and on to RTS, before the last step below runs: each step
	 * therefore flushes under its role's lock only if the QP is still in
	 * ERR, and the reset sets the state before it takes those locks.
	 */
	if (flush) {
		sroce_requester_flush(qp);
		/* The responder stops consuming before the RQ is flushed. */
		sroce_responder_flush(qp);
		/*
		 * Receives the provider posts from now on ring the doorbell.
		 * Flag store before the flush reads the producer index: pairs
		 * with the provider's fence between its producer store and its
		 * flag load, so every receive is flushed by one side or the
		 * other (SROCE_RQ_FLAG_FLUSH).
		 */
		sroce_rq_set_flags(qp, SROCE_RQ_FLAG_FLUSH);
		smp_mb(); /* flag store before producer load, see above */
		sroce_rq_flush(qp);
	}
}

void sroce_qp_sq_error(struct sroce_qp *qp)
{
	sroce_qp_change_state(qp, BIT(IB_QPS_RTS) | BIT(IB_QPS_SQD),
			      IB_QPS_SQE);
}

void sroce_qp_sq_drained(struct sroce_qp *qp)
{
	if (sroce_qp_state(qp) == IB_QPS_SQD)
		sroce_qp_event(qp, IB_EVENT_SQ_DRAINED);
}

/*
 * Make @av the QP's path; the QP takes over its namespace reference.  A
 * packet on its way with a copy of the old AV holds RCU, which the old
 * namespace outlives (sroce_av_release()).  BH off: a receive on this CPU
 * reads the AV, and would spin on a write it interrupted.
 *
 * @live: packets may be on their way (SQD -> SQD).  They cache their
 * route within the RCU section of their copy, so after a grace period
 * none can put the old path's route in the cache behind the reset, and
 * once modify_qp returns every packet goes on the new path.
 */
static void sroce_qp_set_av(struct sroce_qp *qp, const struct sroce_av *av,
			    bool live)
{
	struct sroce_av old;

	write_seqlock_bh(&qp->av_lock);
	old = qp->av;
	qp->av = *av;
	write_sequnlock_bh(&qp->av_lock);
	if (live)
		synchronize_rcu();
	sroce_av_release(&old);
	dst_cache_reset(&qp->dst_cache);
}

/*
 * To RESET: forget every posted WQE without completing it (IBA 10.3.1)
 * and all attributes.  The receive path may still be delivering a packet
 * to the QP (it is in qp_xa), so the roles reset their state under their
 * own locks instead of being rebuilt.
 */
static void sroce_qp_reset(struct sroce_qp *qp)
{
	static const struct sroce_av no_path;
	unsigned long flags;

	sroce_qp_change_state(qp, SROCE_QPS_ANY, IB_QPS_RESET);

	/* Kernel posting fails in RESET; restart the indices at 0. */
	if (!qp->user) {
		spin_lock_irqsave(&qp->sq_post_lock, flags);
		qp->sq_producer = 0;
		sroce_ring_set_producer(&qp->sq, 0);
		spin_unlock_irqrestore(&qp->sq_post_lock, flags);

		spin_lock_irqsave(&qp->rq_post_lock, flags);
		qp->rq_producer = 0;
		if (sroce_ring_present(&qp->rq))
			sroce_ring_set_producer(&qp->rq, 0);
		spin_unlock_irqrestore(&qp->rq_post_lock, flags);
	}

	/*
	 * The provider owns a user QP's producers: skip what it posted (the
	 * requester moves the SQ's consumer, under its lock).
	 */
	sroce_requester_reset(qp);
	sroce_cc_qp_reset(qp);
	sroce_responder_reset(qp);

	spin_lock_bh(&qp->rq_lock);
	if (sroce_ring_present(&qp->rq)) {
		qp->rq_tail = sroce_ring_producer(&qp->rq);
		sroce_ring_set_consumer(&qp->rq, qp->rq_tail);
	}
	qp->rq_flushing = false;
	/*
	 * RESET forgets the QP's own receives without completing them (IBA
	 * 10.3.1): they are still the consumer's.  An SRQ WQE it took is
	 * not: completed with a flush, as in ERR.
	 */
	sroce_rq_flush_held_locked(qp);
	clear_bit(SROCE_RQ_LAST_WQE, &qp->rq_pending);
	qp->xrc_srq = NULL;
	sroce_rq_set_flags(qp, 0);
	spin_unlock_bh(&qp->rq_lock);

	memset(&qp->attr, 0, sizeof(qp->attr));
	sroce_qp_set_av(qp, &no_path, false);
}

static int sroce_qp_check_attr(struct sroce_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	/* Slot 0 holds the only P_Key; the others are empty. */
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SROCE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SROCE_MAX_QP_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	/*
	 * Local write and on demand mean nothing for a QP, but consumers
	 * pass their MR's flags (rdma-core's test_odp): accepted, ignored.
	 */
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~(SROCE_QP_ACCESS | IB_ACCESS_LOCAL_WRITE |
				       IB_ACCESS_ON_DEMAND)))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SROCE_MCAST_QPN)
		return -EINVAL;
	return 0;
}

/* Store what @mask sets; the caller validated it. */
static void sroce_qp_store_attr(struct sroce_qp *qp,
				const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		a->ah_attr = attr->ah_attr;
		/* The core owns the GID attribute reference; keep no pointer. */
		a->ah_attr.grh.sgid_attr = NULL;
	}
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & SROCE_PSN_BITS;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & SROCE_PSN_BITS;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
}

int sroce_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_udata *udata)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, next;
	struct sroce_av av = {};
	int err;

	if (mask & ~SROCE_QP_ATTR_MASK)
		return -EOPNOTSUPP;

	mutex_lock(&qp->modify_mutex);
	cur = qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	err = -EINVAL;
	/*
	 * IB_QP_CUR_STATE is what the consumer believes (IBA 11.2.5.2):
	 * a QP that went to ERR is not taken out of it by a modify that
	 * names SQE (the MAD layer's recovery).  That would report RTS over
	 * stopped roles.  Only RESET and ERR may be entered from any state.
	 */
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur &&
	    next != IB_QPS_RESET && next != IB_QPS_ERR) {
		ibdev_dbg(&qp->sdev->ibdev,
			  "QP %u: current state %d given, it is %d\n",
			  ibqp->qp_num, attr->cur_qp_state, cur);
		goto out;
	}
	if (!ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask)) {
		ibdev_dbg(&qp->sdev->ibdev,
			  "QP %u: invalid transition %d -> %d, mask %#x\n",
			  ibqp->qp_num, cur, next, mask);
		goto out;
	}
	/*
	 * SQD -> SQD changes attributes the requester reads while it
	 * works: only once the drain is over (IBA 10.3.1.4).
	 */
	if (cur == IB_QPS_SQD && next == IB_QPS_SQD &&
	    sroce_requester_draining(qp)) {
		err = -EBUSY;
		goto out;
	}
	err = sroce_qp_check_attr(qp, attr, mask);
	if (err)
		goto out;
	if (mask & IB_QP_AV) {
		/* The core resolved the GID attribute and the MAC for us. */
		err = sroce_av_set(&av, &attr->ah_attr);
		if (err) {
			ibdev_dbg(&qp->sdev->ibdev,
				  "QP %u: unusable path (RoCEv2 GRH required)\n",
				  ibqp->qp_num);
			goto out;
		}
	}

	/* The allocations a modify may need: before changing anything. */
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) && next != IB_QPS_RESET) {
		err = sroce_responder_reserve(qp, attr->max_dest_rd_atomic);
		if (err)
			goto out;
	}
	if (next != IB_QPS_RESET && next != IB_QPS_INIT) {
		err = sroce_requester_reserve(qp);
		if (err)
			goto out;
	}

	if (next == IB_QPS_RESET) {
		sroce_qp_reset(qp);
		err = 0;
		goto out;
	}

	sroce_qp_store_attr(qp, attr, mask);
	if (mask & IB_QP_AV) {
		sroce_qp_set_av(qp, &av, cur == IB_QPS_SQD);
		av.net = NULL;
	}

	if (next == IB_QPS_ERR) {
		sroce_qp_error(qp);
		goto out;
	}
	/*
	 * RTS -> SQD: what was posted before starts before the drain, as its
	 * doorbell would have made it.  Under the SQ poller (sq_poll.c) the
	 * provider rang none, and the poller may not have looked yet.
	 */
	if (cur == IB_QPS_RTS && next == IB_QPS_SQD)
		sroce_requester_kick(qp);
	/*
	 * Unless the QP left @cur meanwhile: the roles move it to ERR or SQE
	 * without the modify mutex.
	 */
	if (!sroce_qp_change_state(qp, BIT(cur), next)) {
		ibdev_dbg(&qp->sdev->ibdev,
			  "QP %u: went to state %d during a modify from %d\n",
			  ibqp->qp_num, sroce_qp_state(qp), cur);
		err = -EINVAL;
		goto out;
	}
	/* The responder keeps working in SQD; it re-reads its attributes. */
	if (next == IB_QPS_RTR || next == IB_QPS_RTS || next == IB_QPS_SQD)
		sroce_responder_start(qp);
	if (next == IB_QPS_RTS)
		sroce_requester_start(qp, cur == IB_QPS_SQE);
	if (next == IB_QPS_SQD && cur == IB_QPS_RTS)
		sroce_requester_drain(qp, (mask & IB_QP_EN_SQD_ASYNC_NOTIFY) &&
				      attr->en_sqd_async_notify);
	err = 0;
out:
	mutex_unlock(&qp->modify_mutex);
	sroce_av_release(&av);		/* unless the QP took it */
	return err;
}

int sroce_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_qp_init_attr *init)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	mutex_lock(&qp->modify_mutex);
	*attr = qp->attr;
	attr->qp_state = sroce_qp_state(qp);
	attr->cur_qp_state = attr->qp_state;
	attr->cap = qp->cap;
	attr->sq_draining = attr->qp_state == IB_QPS_SQD &&
			    sroce_requester_draining(qp);
	mutex_unlock(&qp->modify_mutex);

	memset(init, 0, sizeof(*init));
	init->event_handler = ibqp->event_handler;
	init->qp_context = ibqp->qp_context;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->xrcd = ibqp->xrcd;
	init->cap = qp->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->qp_type = ibqp->qp_type;
	init->port_num = 1;
	return 0;
}

/* ---- create / destroy ---------------------------------------------------- */

static int sroce_qp_check_cap(const struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	if (cap->max_send_wr > SROCE_MAX_QP_WR ||
	    cap->max_recv_wr > SROCE_MAX_QP_WR ||
	    cap->max_send_sge > SROCE_MAX_SGE ||
	    cap->max_recv_sge > SROCE_MAX_SGE ||
	    cap->max_inline_data > SROCE_MAX_INLINE_DATA)
		return -EINVAL;
	return 0;
}

static u32 sroce_slot_size(size_t fixed, size_t payload)
{
	return roundup_pow_of_two(max_t(size_t, fixed + payload, 64));
}

static int sroce_qp_alloc_rings(struct sroce_qp *qp,
				struct ib_qp_init_attr *init,
				struct ib_ucontext *uctx)
{
	struct ib_qp_cap *cap = &init->cap;
	bool has_rq;
	u32 sq_slot, rq_slot;
	int err;

	sq_slot = sroce_slot_size(sizeof(struct sroce_send_wqe),
				  max_t(size_t, max(cap->max_send_sge, 1U) *
					sizeof(struct sroce_sge),
					cap->max_inline_data));
	rq_slot = sroce_slot_size(sizeof(struct sroce_recv_wqe),
				  cap->max_recv_sge * sizeof(struct sroce_sge));
	/*
	 * Both rings in one allocation and one mapping (uapi/sroce-abi.h).
	 * With an SRQ there is no RQ, nor on either half of XRC (the
	 * initiator receives nothing, the target uses XRC SRQs): rq stays
	 * absent, its info zero.
	 */
	has_rq = !init->srq && init->qp_type != IB_QPT_XRC_INI &&
		 init->qp_type != IB_QPT_XRC_TGT;
	err = sroce_ring_alloc_pair(&qp->sq, cap->max_send_wr, sq_slot,
				    has_rq ? &qp->rq : NULL,
				    cap->max_recv_wr, rq_slot, uctx);
	if (err)
		return err;
	if (has_rq) {
		qp->cap.max_recv_wr = sroce_ring_size(&qp->rq);
		qp->cap.max_recv_sge = sroce_recv_slot_max_sge(&qp->rq);
	}

	/*
	 * The send caps are what was asked (one SGE at least), not what the
	 * power-of-two slot happens to hold: the requester's shadow of each
	 * WQE is sized by them (requester.c), and the provider and
	 * sroce_build_send_wqe() refuse more.
	 */
	qp->cap.max_send_wr = sroce_ring_size(&qp->sq);
	qp->cap.max_send_sge = max(cap->max_send_sge, 1U);
	qp->cap.max_inline_data = cap->max_inline_data;
	return 0;
}

/*
 * The QP types the datapath implements: RC, UC, UD, GSI (QP1, a UD QP
 * with the fixed number 1 that the RDMA core's MAD layer creates) and
 * the two halves of XRC.
 */
static bool sroce_qp_type_supported(enum ib_qp_type type)
{
	return type == IB_QPT_RC || type == IB_QPT_UC || type == IB_QPT_UD ||
	       type == IB_QPT_GSI || type == IB_QPT_XRC_INI ||
	       type == IB_QPT_XRC_TGT;
}

/*
 * XRC: the core creates target QPs itself (no udata: no rings to map)
 * and checks their domain.  A kernel initiator could not name the remote
 * SRQ (ib_send_wr has no field for it), so only userspace gets one.
 */
static int sroce_qp_check_xrc(const struct ib_qp_init_attr *init,
			      struct ib_udata *udata)
{
	if (init->qp_type == IB_QPT_XRC_TGT)
		return init->xrcd ? 0 : -EINVAL;
	if (init->qp_type == IB_QPT_XRC_INI)
		return udata ? 0 : -EOPNOTSUPP;
	return 0;
}

void sroce_qp_xrc_srq_gone(struct sroce_dev *sdev, struct sroce_srq *srq)
{
	struct ib_uverbs_wc wc = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
	};
	struct sroce_qp *qp;

	/*
	 * Not qp_xa: a target QP being destroyed has left it, but its
	 * responder work item may still run and flush, until its destroy
	 * takes it off this list.
	 */
	spin_lock_bh(&sdev->xrc_tgt_lock);
	list_for_each_entry(qp, &sdev->xrc_tgt_list, xrc_tgt_node) {
		spin_lock_bh(&qp->rq_lock);
		if (qp->xrc_srq == srq) {
			qp->xrc_srq = NULL;
			if (qp->srq_held) {
				qp->srq_held = false;
				wc.wr_id = qp->srq_wr_id;
				wc.qp_num = qp->ibqp.qp_num;
				sroce_cq_post(to_scq(srq->ibsrq.ext.cq), &wc,
					      false);
			}
		}
		sroce_rq_unlock(qp);
	}
	spin_unlock_bh(&sdev->xrc_tgt_lock);
}

/* GSI is QP1 of the port (one per device); others come from the xarray. */
static int sroce_qpn_reserve(struct sroce_dev *sdev, enum ib_qp_type type,
			     u32 *qpn)
{
	int err;

	if (type == IB_QPT_GSI) {
		*qpn = 1;
		err = xa_insert_bh(&sdev->qp_xa, 1, NULL, GFP_KERNEL);
		return err == -EBUSY ? -EEXIST : err;
	}
	err = xa_alloc_cyclic_bh(&sdev->qp_xa, qpn, NULL,
				 XA_LIMIT(SROCE_FIRST_QPN, SROCE_LAST_QPN),
				 &sdev->qp_next, GFP_KERNEL);
	return err < 0 ? err : 0;
}

/*
 * create_qp's command data (uapi: struct sroce_create_qp_cmd): none from an
 * older provider, and nothing we do not know from a newer one.
 */
static int sroce_qp_read_cmd(struct ib_udata *udata,
			     struct sroce_create_qp_cmd *cmd)
{
	size_t len;
	int err;

	memset(cmd, 0, sizeof(*cmd));
	if (!udata || !udata->inlen)
		return 0;
	len = min(udata->inlen, sizeof(*cmd));
	err = ib_copy_from_udata(cmd, udata, len);
	if (err)
		return err;
	if (cmd->reserved ||
	    (udata->inlen > sizeof(*cmd) &&
	     !ib_is_udata_cleared(udata, sizeof(*cmd),
				  udata->inlen - sizeof(*cmd))))
		return -EOPNOTSUPP;
	return 0;
}

int sroce_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct ib_ucontext *uctx = NULL;
	struct sroce_create_qp_cmd cmd;
	u32 qpn;
	int err;

	if (!sroce_qp_type_supported(init->qp_type)) {
		ibdev_dbg(&sdev->ibdev, "QP type %d not supported\n",
			  init->qp_type);
		return -EOPNOTSUPP;
	}
	if (init->qp_type == IB_QPT_GSI && (udata || init->port_num != 1))
		return -EINVAL;
	if (init->create_flags)
		return -EOPNOTSUPP;
	err = sroce_qp_check_xrc(init, udata);
	if (err)
		return err;
	err = sroce_qp_check_cap(init);
	if (err)
		return err;
	/*
	 * An XRC target QP sends only responses, never a WQE: its send
	 * queue (and the requester's shadow of it, allocated at RTR) would
	 * be up to a GiB of kernel memory sized by the caller for nothing.
	 */
	if (init->qp_type == IB_QPT_XRC_TGT) {
		init->cap.max_send_wr = 0;
		init->cap.max_send_sge = 0;
		init->cap.max_inline_data = 0;
	}
	err = sroce_qp_read_cmd(udata, &cmd);
	if (err)
		return err;
	if (!sroce_res_get(&sdev->num_qp, sdev->attr.max_qp))
		return -ENOMEM;

	if (udata)
		uctx = &rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						  ibuc)->ibuc;

	qp->sdev = sdev;
	RCU_INIT_POINTER(qp->stats, &sdev->stats);
	qp->user = udata;
	qp->ucontext = uctx;
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	mutex_init(&qp->modify_mutex);
	seqlock_init(&qp->av_lock);
	spin_lock_init(&qp->state_lock);
	spin_lock_init(&qp->sq_post_lock);
	spin_lock_init(&qp->rq_post_lock);
	spin_lock_init(&qp->rq_lock);
	INIT_WORK(&qp->rq_flush_work, sroce_rq_flush_work);

	err = sroce_qp_alloc_rings(qp, init, uctx);
	if (err)
		goto err_count;

	/* Reserve the number; the QP becomes visible at the end. */
	err = sroce_qpn_reserve(sdev, init->qp_type, &qpn);
	if (err)
		goto err_rings;
	ibqp->qp_num = qpn;

	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err)
		goto err_qpn;
	sroce_cc_qp_init(qp);
	err = sroce_requester_init(qp);
	if (err)
		goto err_dst_cache;
	sroce_sq_poll_set(qp, cmd.sq_poll_us);
	err = sroce_responder_init(qp);
	if (err)
		goto err_requester;

	if (udata) {
		struct sroce_create_qp_resp resp;

		err = -EINVAL;
		if (udata->outlen < sizeof(resp))
			goto err_responder;
		sroce_ring_get_info(&qp->sq, &resp.sq);
		sroce_ring_get_info(&qp->rq, &resp.rq);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_responder;
	}

	init->cap = qp->cap;
	if (init->qp_type == IB_QPT_XRC_TGT) {
		spin_lock_bh(&sdev->xrc_tgt_lock);
		list_add(&qp->xrc_tgt_node, &sdev->xrc_tgt_list);
		spin_unlock_bh(&sdev->xrc_tgt_lock);
	}
	xa_store_bh(&sdev->qp_xa, qpn, qp, GFP_KERNEL);
	return 0;

err_responder:
	sroce_responder_cleanup(qp);
err_requester:
	sroce_requester_cleanup(qp);
err_dst_cache:
	dst_cache_destroy(&qp->dst_cache);
err_qpn:
	xa_erase_bh(&sdev->qp_xa, qpn);
err_rings:
	sroce_ring_free(&qp->rq);
	sroce_ring_free(&qp->sq);
err_count:
	atomic_dec(&sdev->num_qp);
	return err;
}

int sroce_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);

	/* No new packets find the QP; wait for those that did. */
	xa_erase_bh(&sdev->qp_xa, ibqp->qp_num);
	sroce_qp_put(qp);
	wait_for_completion(&qp->released);

	sroce_requester_cleanup(qp);
	sroce_cc_qp_cleanup(qp);
	sroce_responder_cleanup(qp);
	cancel_work_sync(&qp->rq_flush_work);
	/* Nothing uses qp->xrc_srq any more. */
	if (ibqp->qp_type == IB_QPT_XRC_TGT) {
		spin_lock_bh(&sdev->xrc_tgt_lock);
		list_del(&qp->xrc_tgt_node);
		spin_unlock_bh(&sdev->xrc_tgt_lock);
	}
	dst_cache_destroy(&qp->dst_cache);	/* nothing sends any more */
	sroce_av_release(&qp->av);
	sroce_ring_free(&qp->rq);
	sroce_ring_free(&qp->sq);
	mutex_destroy(&qp->modify_mutex);
	atomic_dec(&sdev->num_qp);
	return 0;
}

/* ---- kernel posting ------------------------------------------------------ */

#if SROCE_KERNEL_ATOMIC_WRITE
static_assert(SROCE_WR_ATOMIC_WRITE == IB_WR_ATOMIC_WRITE);
static_assert(SROCE_WC_ATOMIC_WRITE == IB_WC_ATOMIC_WRITE);
#endif

/* ib_send_wr -> SQ slot; sq_post_lock held, room checked. */
static int sroce_build_send_wqe(struct sroce_qp *qp,
				const struct ib_send_wr *wr,
				struct sroce_send_wqe *wqe)
{
	struct sroce_sge *sge = (struct sroce_sge *)(wqe + 1);
	u32 i, len = 0;

	memset(wqe, 0, sizeof(*wqe));
	switch (wr->opcode) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_LOCAL_INV:
	case IB_WR_REG_MR:
		break;
#if SROCE_KERNEL_ATOMIC_WRITE
	case IB_WR_ATOMIC_WRITE:
		break;
#endif
	default:
		return -EINVAL;
	}
	/*
	 * IB_WR_* and IB_UVERBS_WR_* share their values for these, except
	 * IB_WR_REG_MR (SROCE_WR_REG_MR), which only kernel QPs carry.
	 */
	wqe->opcode = wr->opcode;
	wqe->wr_id = wr->wr_id;
	wqe->flags = wr->send_flags & (SROCE_SEND_FENCE | SROCE_SEND_SIGNALED |
				       SROCE_SEND_SOLICITED | SROCE_SEND_INLINE);
	if (wr->opcode == IB_WR_SEND_WITH_INV || wr->opcode == IB_WR_LOCAL_INV)
		wqe->ex.invalidate_rkey = wr->ex.invalidate_rkey;
	else
		wqe->ex.imm_data = wr->ex.imm_data;

	switch (wr->opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->wr.rdma.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		wqe->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		wqe->wr.atomic.swap = atomic_wr(wr)->swap;
		wqe->wr.atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		if (sroce_qp_is_ud(qp)) {
			wqe->wr.ud.ah_num = to_sah(ud_wr(wr)->ah)->ah_num;
			wqe->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
			wqe->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
		}
		break;
	case IB_WR_REG_MR:
		/* See SROCE_WR_REG_MR in qp.h. */
		wqe->wr.bind_mw.addr = reg_wr(wr)->mr->iova;
		wqe->wr.bind_mw.length = reg_wr(wr)->mr->length;
		wqe->wr.bind_mw.mr_lkey = reg_wr(wr)->mr->lkey;
		wqe->wr.bind_mw.mw_rkey = reg_wr(wr)->key;
		wqe->wr.bind_mw.access = reg_wr(wr)->access;
		return 0;
	case IB_WR_LOCAL_INV:
		return 0;
#if SROCE_KERNEL_ATOMIC_WRITE
	case IB_WR_ATOMIC_WRITE:
		/* Its 8 bytes are at the one SGE's (virtual) address. */
		if (wr->num_sge != 1 ||
		    wr->sg_list[0].length != sizeof(wqe->wr.atomic_write.data))
			return -EINVAL;
		wqe->wr.atomic_write.remote_addr = rdma_wr(wr)->remote_addr;
		wqe->wr.atomic_write.rkey = rdma_wr(wr)->rkey;
		memcpy(wqe->wr.atomic_write.data,
		       (void *)(uintptr_t)wr->sg_list[0].addr,
		       sizeof(wqe->wr.atomic_write.data));
		return 0;
#endif
	default:
		break;
	}

	if (wr->send_flags & IB_SEND_INLINE) {
		u8 *data = (u8 *)(wqe + 1);

		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length > qp->cap.max_inline_data - len)
				return -EINVAL;
			/* Kernel "DMA" addresses are virtual (no DMA device). */
			memcpy(data + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			len += wr->sg_list[i].length;
		}
		wqe->inline_len = len;
		return 0;
	}

	if (wr->num_sge > qp->cap.max_send_sge)
		return -EINVAL;
	wqe->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/* An XRC target QP has nothing to send (IBA 10.2.5). */
static bool sroce_qp_can_send(const struct sroce_qp *qp,
			      enum ib_qp_state state)
{
	return state != IB_QPS_RESET && state != IB_QPS_INIT &&
	       state != IB_QPS_RTR && qp->ibqp.qp_type != IB_QPT_XRC_TGT;
}

static void sroce_qp_send_ready(struct sroce_qp *qp, enum ib_qp_state state)
{
	/* Or a poller on another CPU runs the requester (sq_poll.c). */
	if (state == IB_QPS_RTS && sroce_sq_poll_doorbell(qp))
		return;
	sroce_requester_kick(qp);
}

/*
 * A user QP's doorbell: its process published WQEs in the send ring.  Rung
 * by a POST_SEND command without work requests (sroce_post_send()) or by
 * a write() to the doorbell file (doorbell.c).
 */
int sroce_qp_doorbell(struct sroce_qp *qp)
{
	enum ib_qp_state state = sroce_qp_state(qp);

	if (!sroce_qp_can_send(qp, state))
		return -EINVAL;
	/*
	 * In the error state it also flushes receives posted since the QP
	 * entered it (see SROCE_RQ_FLAG_FLUSH).
	 */
	if (state == IB_QPS_ERR)
		sroce_rq_flush(qp);
	sroce_qp_send_ready(qp, state);
	return 0;
}

/*
 * For a user QP this is the doorbell (the provider wrote the WQEs into the
 * mapped ring and passes no work request); for a kernel QP it copies the
 * work requests into the ring first.  Either way the requester runs.
 */
int sroce_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		    const struct ib_send_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	enum ib_qp_state state;
	unsigned long flags;
	int err = 0;

	if (qp->user) {
		/*
		 * A user QP's WQEs are in its ring; work requests passed
		 * through uverbs would be dropped without a trace, so they
		 * are refused.
		 */
		err = wr ? -EINVAL : sroce_qp_doorbell(qp);
		if (err && bad_wr)
			*bad_wr = wr;
		return err;
	}

	state = sroce_qp_state(qp);
	if (!sroce_qp_can_send(qp, state)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq_post_lock, flags);
	for (; wr; wr = wr->next) {
		if (!sroce_ring_has_room(&qp->sq, qp->sq_producer)) {
			err = -ENOMEM;
			break;
		}
		err = sroce_build_send_wqe(qp, wr,
					   sroce_ring_slot(&qp->sq,
							   qp->sq_producer));
		if (err)
			break;
		sroce_ring_set_producer(&qp->sq, ++qp->sq_producer);
	}
	spin_unlock_irqrestore(&qp->sq_post_lock, flags);
	if (err)
		*bad_wr = wr;
	sroce_qp_send_ready(qp, state);
	return err;
}

int sroce_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		    const struct ib_recv_wr **bad_wr)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	unsigned long flags;
	int err = 0;

	if (qp->user || !sroce_ring_present(&qp->rq) ||
	    sroce_qp_state(qp) == IB_QPS_RESET) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&qp->rq_post_lock, flags);
	for (; wr; wr = wr->next) {
		if (!sroce_ring_has_room(&qp->rq, qp->rq_producer)) {
			err = -ENOMEM;
			break;
		}
		err = sroce_recv_slot_fill(&qp->rq, qp->rq_producer,
					   qp->cap.max_recv_sge, wr);
		if (err)
			break;
		sroce_ring_set_producer(&qp->rq, ++qp->rq_producer);
	}
	spin_unlock_irqrestore(&qp->rq_post_lock, flags);
	if (err)
		*bad_wr = wr;

	/* Receives posted to a QP in error complete right away. */
	if (sroce_qp_state(qp) == IB_QPS_ERR)
		sroce_rq_flush(qp);
	return err;
}
