// SPDX-License-Identifier: GPL-2.0-only
/*
 * restrack.c - driver details for `rdma resource show {qp,cq,mr} -dd`
 * (ib_device_ops.fill_res_*_entry): the transport state the core cannot
 * see, as a nested RDMA_NLDEV_ATTR_DRIVER table of named values.
 *
 * Lifetime.  The core calls these in process context with a restrack
 * reference on the object; QP and CQ destroy (rdma_restrack_begin_del())
 * and MR deregistration (rdma_restrack_del()) wait for that reference
 * before they call our destroy verb, so the object and its rings are
 * alive here.
 *
 * Consistency.  The values are a snapshot read without the datapath's
 * locks: taking req.lock here could swallow a requester kick (its holder
 * runs the requester on unlock, and we would not), and a diagnostic must
 * not slow the datapath.  Each value is read once (READ_ONCE); a set of
 * them may straddle a packet.  Ring indices written by userspace are
 * reported only when they make sense.
 */
#include <rdma/ib_umem_odp.h>
#include <rdma/restrack.h>

#include "cq.h"
#include "mr.h"
#include "psn.h"
#include "qp.h"
#include "sroce.h"

/* A name/value pair in the driver table; -EMSGSIZE when the skb is full. */
static int sroce_put_u32(struct sk_buff *msg, const char *name, u32 value)
{
	return rdma_nl_put_driver_u32(msg, name, value) ? -EMSGSIZE : 0;
}

static int sroce_put_hex(struct sk_buff *msg, const char *name, u32 value)
{
	return rdma_nl_put_driver_u32_hex(msg, name, value) ? -EMSGSIZE : 0;
}

/*
 * Entries used in a ring we consume: producer - @consumer, or U32_MAX if
 * the producer (userspace's, for a user object) is not believable.
 */
static u32 sroce_ring_used(const struct sroce_ring *ring, u32 consumer)
{
	return sroce_ring_published(ring, consumer);
}

/* ---- QP ------------------------------------------------------------------ */

static int sroce_fill_qp_requester(struct sk_buff *msg, struct sroce_qp *qp)
{
	const struct sroce_requester *req = &qp->req;
	u32 tail = READ_ONCE(req->tail), head = READ_ONCE(req->head);
	u32 psn = READ_ONCE(req->psn), psn_max = READ_ONCE(req->psn_max);
	u32 comp_psn = READ_ONCE(qp->comp.psn);

	if (sroce_put_hex(msg, "next_psn", psn) ||
	    sroce_put_hex(msg, "max_psn", psn_max) ||
	    sroce_put_hex(msg, "unacked_psn", comp_psn) ||
	    sroce_put_u32(msg, "unacked", sroce_psn_diff(comp_psn, psn_max)) ||
	    sroce_put_u32(msg, "window", READ_ONCE(req->window)) ||
	    sroce_put_u32(msg, "window_cap", READ_ONCE(req->window_cap)) ||
	    sroce_put_u32(msg, "sq_size", sroce_ring_size(&qp->sq)) ||
	    sroce_put_u32(msg, "sq_posted",
			  sroce_ring_used(&qp->sq, sroce_ring_consumer(&qp->sq))) ||
	    sroce_put_u32(msg, "sq_inflight", head - tail) ||
	    sroce_put_u32(msg, "rd_atomic", READ_ONCE(req->rd_atomic)) ||
	    sroce_put_u32(msg, "retry_cnt", READ_ONCE(req->retry_cnt)) ||
	    sroce_put_u32(msg, "retries_left", READ_ONCE(req->retries_left)) ||
	    sroce_put_u32(msg, "rnr_retry", READ_ONCE(req->rnr_retry)) ||
	    sroce_put_u32(msg, "rnr_retries_left",
			  READ_ONCE(req->rnr_retries_left)) ||
	    sroce_put_u32(msg, "rnr_wait", READ_ONCE(req->rnr_wait)) ||
	    sroce_put_u32(msg, "timeout_ms",
			  jiffies_to_msecs(READ_ONCE(req->timeout))) ||
	    sroce_put_u32(msg, "srtt_us", READ_ONCE(req->srtt_us)) ||
	    sroce_put_u32(msg, "rttvar_us", READ_ONCE(req->rttvar_us)) ||
	    sroce_put_u32(msg, "min_rtt_us", READ_ONCE(req->min_rtt_us)) ||
	    sroce_put_u32(msg, "read_resp_held",
			  skb_queue_len_lockless(&qp->comp.held)) ||
	    sroce_put_u32(msg, "read_resp_patience",
			  READ_ONCE(qp->comp.patience)))
		return -EMSGSIZE;
	return 0;
}

static int sroce_fill_qp_responder(struct sk_buff *msg, struct sroce_qp *qp)
{
	const struct sroce_responder *resp = &qp->resp;
	u32 rq_used = 0, rq_size = 0;

	if (sroce_ring_present(&qp->rq)) {
		rq_size = sroce_ring_size(&qp->rq);
		rq_used = sroce_ring_used(&qp->rq, READ_ONCE(qp->rq_tail));
	}
	if (sroce_put_hex(msg, "expected_psn", READ_ONCE(resp->epsn)) ||
	    sroce_put_hex(msg, "msn", READ_ONCE(resp->msn)) ||
	    sroce_put_u32(msg, "resp_unacked", READ_ONCE(resp->unacked)) ||
	    sroce_put_u32(msg, "seq_nak_sent", READ_ONCE(resp->seq_nak_sent)) ||
	    sroce_put_u32(msg, "read_in_progress", !!READ_ONCE(resp->read)) ||
	    sroce_put_u32(msg, "backlog", skb_queue_len_lockless(&resp->backlog)) ||
	    sroce_put_u32(msg, "held", skb_queue_len_lockless(&resp->held)))
		return -EMSGSIZE;
	/* With an SRQ the receives are in the SRQ: no RQ to show. */
	if (rq_size &&
	    (sroce_put_u32(msg, "rq_size", rq_size) ||
	     sroce_put_u32(msg, "rq_posted", rq_used)))
		return -EMSGSIZE;
	return 0;
}

int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);
	struct nlattr *table;

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (sroce_put_u32(msg, "user", qp->user) ||
	    sroce_fill_qp_requester(msg, qp) ||
	    sroce_fill_qp_responder(msg, qp)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* ---- CQ ------------------------------------------------------------------ */

int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct nlattr *table;
	unsigned long flags;
	u32 size, used;
	bool overflowed;
	u8 notify;

	/* cq->lock is irqsave and short: a consistent view is cheap. */
	spin_lock_irqsave(&cq->lock, flags);
	size = sroce_ring_size(&cq->ring);
	used = cq->producer - sroce_ring_consumer(&cq->ring);
	overflowed = cq->overflowed;
	notify = cq->notify;
	spin_unlock_irqrestore(&cq->lock, flags);
	if (used > size)
		used = U32_MAX;		/* consumer index not believable */

	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (sroce_put_u32(msg, "user", cq->user) ||
	    sroce_put_u32(msg, "size", size) ||
	    sroce_put_u32(msg, "used", used) ||
	    sroce_put_u32(msg, "overflowed", overflowed) ||
	    sroce_put_u32(msg, "armed", notify)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

/* ---- MR ------------------------------------------------------------------ */

static const char *sroce_mr_type_name(enum sroce_mr_type type)
{
	switch (type) {
	case SROCE_MR_DMA:
		return "dma";
	case SROCE_MR_USER:
		return "user";
	case SROCE_MR_FAST_REG:
		return "fast_reg";
	case SROCE_MR_MW:
		return "mw";	/* never an ib_mr: windows have no restrack */
	case SROCE_MR_ODP:
		return "odp";
	}
	return "unknown";
}

int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	struct sroce_mr *mr = to_smr(ibmr);
	struct nlattr *table;
	u32 pages;

	if (mr->type == SROCE_MR_FAST_REG)
		pages = READ_ONCE(mr->nmapped);
	else if (mr->type == SROCE_MR_ODP)	/* present now */
		pages = READ_ONCE(to_ib_umem_odp(mr->umem)->npages);
	else
		pages = mr->npages;
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	/*
	 * No addresses: the core shows keys to CAP_NET_ADMIN only, and any
	 * user may dump every process's MRs.
	 */
	if (rdma_nl_put_driver_string(msg, "type",
				      sroce_mr_type_name(mr->type)) ||
	    sroce_put_hex(msg, "access", mr->access) ||
	    sroce_put_u32(msg, "valid", READ_ONCE(mr->valid)) ||
	    sroce_put_u32(msg, "windows", READ_ONCE(mr->num_mw)) ||
	    sroce_put_u32(msg, "pages", pages) ||
	    /* The verbs object's reference is not a datapath user. */
	    sroce_put_u32(msg, "users", refcount_read(&mr->ref) - 1)) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}
