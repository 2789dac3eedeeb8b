// SPDX-License-Identifier: GPL-2.0-only
/*
 * Send queue WQEs -> request packets, and their recovery.
 *
 * One requester pass (sroce_req_pass()) repeats one step until it runs out
 * of work, hits a limit, or has sent SROCE_REQ_BUDGET packets:
 *
 *   fetch   cur == head: copy the next published ring slot into its shadow
 *           slot and validate it (sroce_req_fetch()); wait if a fence or
 *           the max_rd_atomic limit says so; give it its PSN range.
 *   send    build the packet at req.psn of WQE cur from the shadow and
 *           send it (sroce_req_send()); past the last PSN of cur, cur++.
 *
 * Nothing but the position (cur, psn) says what to send next, so the
 * recovery paths only move it: a retransmit timeout or a NAK rewinds it to
 * the oldest unacknowledged PSN (go-back-N, sroce_req_send_from()), an ACK
 * that overtakes it moves it forward.  The completer retires WQEs from the
 * tail; see requester.h for the indices and the locking.
 *
 * Errors.  A WQE that fails validation or a local memory access stops
 * the requester at that WQE, but the older ones are on the wire and still
 * complete normally; it fails once it is the oldest
 * (sroce_req_local_error()).  A WQE the completer fails (remote error,
 * retries exhausted) is the oldest already.  Failing retires it with its
 * status and everything younger with IB_WC_WR_FLUSH_ERR (sroce_req_fail());
 * the requester then asks qp.c to move the QP to ERR, outside its lock
 * (sroce_qp_error() calls back into sroce_requester_flush(), which is
 * idempotent).  An unreliable QP (UC, UD) goes to SQE instead (IBA
 * 10.3.1), at once, before the failed WQE's completion: only its send
 * queue stops, flushing what is posted, while its receives go on; SQE ->
 * RTS resumes it at the next WQE (the MAD layer recovers its QPs that
 * way).
 *
 * Teardown (sroce_requester_cleanup(), from QP destroy, process context):
 * mark the requester dying and take the shadow away under the lock, so a
 * completer or timer that still runs finds nothing to do; shut down both
 * timers (no re-arming after that); cancel the work item (a pass checks
 * "dying" under the lock before it queues it); free the shadow.
 */
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/slab.h>

#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "ah.h"
#include "cc.h"
#include "completer.h"
#include "cq.h"
#include "mr.h"
#include "mw.h"
#include "odp.h"
#include "opcode.h"
#include "pkt.h"
#include "psn.h"
#include "qp.h"
#include "requester.h"
#include "ring.h"
#include "sq_poll.h"
#include "sroce.h"
#include "trace.h"

static struct workqueue_struct *sroce_req_wq;

/*
 * WQ_MEM_RECLAIM: storage ULPs (nvme-rdma, NFS/RDMA) may need a send to
 * complete to free memory.  WQ_HIGHPRI: the work item continues sends
 * that a caller started; it should not queue behind ordinary work.
 * Per-CPU, not unbound: a QP's packets leave from one CPU at a time (see
 * sroce_req_own_cpu()), and its work item runs on that CPU; QPs owned by
 * different CPUs still send in parallel.
 */
int sroce_requester_module_init(void)
{
	sroce_req_wq = alloc_workqueue("sroce_req", WQ_HIGHPRI |
				       WQ_MEM_RECLAIM, 0);
	if (!sroce_req_wq)
		return -ENOMEM;
	if (sroce_sq_poll_module_init()) {
		destroy_workqueue(sroce_req_wq);
		return -ENOMEM;
	}
	return 0;
}

void sroce_requester_module_exit(void)
{
	sroce_sq_poll_module_exit();
	destroy_workqueue(sroce_req_wq);
}

/* ---- the send queue ring -------------------------------------------------- */

/*
 * The number of WQEs published and not yet fetched.  The producer index is
 * the other side's word: anything more than one ring ahead of the tail is
 * a lie, and so is an index behind the head (a provider cannot take back a
 * WQE the requester fetched).  Either way the QP is treated as having
 * nothing new, rather than reading slots the producer still owns or
 * fetching again into the shadows of WQEs still in flight.
 */
static u32 sroce_sq_published(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	u32 published;

	/* A QP created with no send queue has no ring at all. */
	if (!sroce_ring_present(&qp->sq))
		return 0;
	published = sroce_ring_producer(&qp->sq) - req->tail;
	if (published > req->sq_mask + 1 || published < req->head - req->tail)
		return 0;
	return published - (req->head - req->tail);
}

static const struct sroce_send_wqe *sroce_sq_slot(struct sroce_qp *qp,
						  u32 index)
{
	return sroce_ring_slot(&qp->sq, index);
}

/* ---- shadow WQEs -------------------------------------------------------- */

struct sroce_swqe *sroce_req_swqe(struct sroce_qp *qp, u32 index)
{
	struct sroce_requester *req = &qp->req;

	return req->shadow + (size_t)(index & req->sq_mask) * req->stride;
}

/* May a QP of @type carry @opcode (the transports of IBA table 38)? */
static bool sroce_swqe_opcode_ok(enum ib_qp_type type, u8 opcode)
{
	/* An XRC initiator sends what RC sends, to an XRC SRQ. */
	if (type == IB_QPT_XRC_INI)
		type = IB_QPT_RC;
	switch (opcode) {
	case IB_UVERBS_WR_SEND:
	case IB_UVERBS_WR_SEND_WITH_IMM:
		return type == IB_QPT_RC || type == IB_QPT_UC ||
		       type == IB_QPT_UD || type == IB_QPT_GSI;
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_UVERBS_WR_SEND_WITH_INV:
	case IB_UVERBS_WR_RDMA_READ:
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
	case SROCE_WR_ATOMIC_WRITE:
		return type == IB_QPT_RC;
	case IB_UVERBS_WR_LOCAL_INV:
	case IB_UVERBS_WR_BIND_MW:
	case IB_WR_REG_MR:
		/* Local operations: every transport that has memory access. */
		return type == IB_QPT_RC || type == IB_QPT_UC ||
		       type == IB_QPT_UD;
	default:
		return false;
	}
}

/* Only the opcodes that send payload may carry it inline. */
static bool sroce_swqe_may_inline(u8 opcode)
{
	return opcode == IB_UVERBS_WR_SEND ||
	       opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
	       opcode == IB_UVERBS_WR_SEND_WITH_INV ||
	       opcode == IB_UVERBS_WR_RDMA_WRITE ||
	       opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM;
}

/* The fixed part: opcode, flags and the opcode's own fields. */
static enum ib_wc_status sroce_swqe_copy_fixed(struct sroce_qp *qp,
					       const struct sroce_send_wqe *wqe,
					       struct sroce_swqe *swqe)
{
	swqe->wr_id = wqe->wr_id;
	swqe->opcode = wqe->opcode;
	swqe->flags = wqe->flags & (SROCE_SEND_FENCE | SROCE_SEND_SIGNALED |
				    SROCE_SEND_SOLICITED | SROCE_SEND_INLINE);
	swqe->num_sge = 0;
	swqe->length = 0;
	swqe->status = IB_WC_SUCCESS;
	swqe->rd_atomic_held = false;

	/* IB_WR_REG_MR has no userspace value: kernel QPs only. */
	if (swqe->opcode == IB_WR_REG_MR && qp->user)
		return IB_WC_LOC_QP_OP_ERR;
	if (!sroce_swqe_opcode_ok(qp->ibqp.qp_type, swqe->opcode))
		return IB_WC_LOC_QP_OP_ERR;
	if (!sroce_swqe_may_inline(swqe->opcode))
		swqe->flags &= ~SROCE_SEND_INLINE;

	swqe->imm_data = wqe->ex.imm_data;
	swqe->inv_rkey = wqe->ex.invalidate_rkey;
	swqe->ah_num = wqe->wr.ud.ah_num;
	swqe->remote_qpn = wqe->wr.ud.remote_qpn & SROCE_QPN_MASK;
	swqe->remote_qkey = wqe->wr.ud.remote_qkey;
	swqe->xrc_srqn = wqe->xrc_srqn & SROCE_QPN_MASK;
	if (swqe->opcode == IB_WR_REG_MR ||
	    swqe->opcode == IB_UVERBS_WR_BIND_MW) {
		swqe->reg.flags = wqe->wr.bind_mw.bind_flags;
		swqe->reg.addr = wqe->wr.bind_mw.addr;
		swqe->reg.length = wqe->wr.bind_mw.length;
		swqe->reg.key = wqe->wr.bind_mw.mw_rkey;
		swqe->reg.mr_lkey = wqe->wr.bind_mw.mr_lkey;
		swqe->reg.access = wqe->wr.bind_mw.access;
	}
	if (sroce_swqe_is_atomic(swqe)) {
		swqe->remote_addr = wqe->wr.atomic.remote_addr;
		swqe->rkey = wqe->wr.atomic.rkey;
		swqe->compare_add = wqe->wr.atomic.compare_add;
		swqe->swap = wqe->wr.atomic.swap;
	} else if (sroce_swqe_is_atomic_write(swqe)) {
		swqe->remote_addr = wqe->wr.atomic_write.remote_addr;
		swqe->rkey = wqe->wr.atomic_write.rkey;
		memcpy(&swqe->compare_add, wqe->wr.atomic_write.data,
		       sizeof(swqe->compare_add));
	} else {
		swqe->remote_addr = wqe->wr.rdma.remote_addr;
		swqe->rkey = wqe->wr.rdma.rkey;
	}
	return IB_WC_SUCCESS;
}

/* The variable part: inline bytes or the SGE list, and the total length. */
static enum ib_wc_status sroce_swqe_copy_data(struct sroce_qp *qp,
					      const struct sroce_send_wqe *wqe,
					      u32 inline_len, u8 num_sge,
					      struct sroce_swqe *swqe)
{
	struct sroce_requester *req = &qp->req;
	struct sroce_sge *sge = sroce_swqe_sges(swqe);
	u64 total = 0;
	unsigned int i;

	/* Local operations carry no data. */
	if (sroce_swqe_is_local(swqe))
		return IB_WC_SUCCESS;
	/* An ATOMIC WRITE carries its 8 bytes in the fixed part. */
	if (sroce_swqe_is_atomic_write(swqe)) {
		swqe->length = sizeof(u64);
		return IB_WC_SUCCESS;
	}
	if (swqe->flags & SROCE_SEND_INLINE) {
		if (inline_len > req->max_inline)
			return IB_WC_LOC_LEN_ERR;
		memcpy(swqe->data, wqe + 1, inline_len);
		swqe->length = inline_len;
		return IB_WC_SUCCESS;
	}

	if (num_sge > req->max_sge)
		return IB_WC_LOC_LEN_ERR;
	memcpy(sge, wqe + 1, num_sge * sizeof(*sge));
	swqe->num_sge = num_sge;
	/* The sum of 255 u32 lengths cannot overflow a u64. */
	for (i = 0; i < num_sge; i++)
		total += sge[i].length;
	if (total > SROCE_MAX_MSG_SIZE)
		return IB_WC_LOC_LEN_ERR;
	swqe->length = total;

	/* Atomics read and write exactly one 8-byte word. */
	if (sroce_swqe_is_atomic(swqe) && total != sizeof(u64))
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

/*
 * Copy ring slot @index into its shadow slot, once, and validate the copy.
 * Everything read from the slot is read exactly once: the producer may
 * rewrite it while we look.
 */
static enum ib_wc_status sroce_swqe_copy(struct sroce_qp *qp, u32 index,
					 struct sroce_swqe *swqe)
{
	const struct sroce_send_wqe *wqe = sroce_sq_slot(qp, index);
	u32 inline_len = READ_ONCE(wqe->inline_len);
	u8 num_sge = READ_ONCE(wqe->num_sge);
	enum ib_wc_status status;

	status = sroce_swqe_copy_fixed(qp, wqe, swqe);
	if (status != IB_WC_SUCCESS)
		return status;
	return sroce_swqe_copy_data(qp, wqe, inline_len, num_sge, swqe);
}

/*
 * Copy @len bytes between @buf and the message of @swqe at byte @offset:
 * the inline data, or the local memory its SGEs name.  Every SGE is looked
 * up and checked each time: the MR may have been deregistered since the
 * WQE was posted, and holding MR references across round trips would
 * make deregistration wait for the network.
 */
enum ib_wc_status sroce_swqe_copy_sges(struct sroce_qp *qp,
				       struct sroce_swqe *swqe, u64 offset,
				       void *buf, u32 len,
				       enum sroce_copy_dir dir)
{
	int access = dir == SROCE_TO_MR ? IB_ACCESS_LOCAL_WRITE : 0;
	struct sroce_sge *sge = sroce_swqe_sges(swqe);
	unsigned int i;

	if (offset + len > swqe->length)
		return IB_WC_LOC_LEN_ERR;
	if (swqe->flags & SROCE_SEND_INLINE) {
		/* Inline data only ever leaves: may_inline() excludes reads. */
		memcpy(buf, swqe->data + offset, len);
		return IB_WC_SUCCESS;
	}

	for (i = 0; i < swqe->num_sge && len; i++) {
		struct sroce_mr *mr;
		u32 chunk;
		int err;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		chunk = min_t(u64, len, sge[i].length - offset);
		mr = sroce_mr_get(qp->sdev, sge[i].lkey);
		if (!mr)
			return IB_WC_LOC_PROT_ERR;
		if (sroce_mr_check(mr, qp->ibqp.pd, sge[i].addr + offset,
				   chunk, access)) {
			sroce_mr_put(mr);
			return IB_WC_LOC_PROT_ERR;
		}
		err = sroce_mr_copy(mr, sge[i].addr + offset, buf, chunk, dir);
		sroce_mr_put(mr);
		if (err)
			return sroce_swqe_access_status(err);
		buf += chunk;
		len -= chunk;
		offset = 0;
	}
	return len ? IB_WC_LOC_LEN_ERR : IB_WC_SUCCESS;
}

/*
 * Check every SGE of a freshly fetched WQE, so that a bad lkey fails the
 * WQE before any of its packets leaves (later lookups still check); a
 * one-packet send needs no such check (sroce_req_fetch()).
 */
static enum ib_wc_status sroce_swqe_check_sges(struct sroce_qp *qp,
					       struct sroce_swqe *swqe)
{
	int access = sroce_swqe_needs_response(swqe) ? IB_ACCESS_LOCAL_WRITE : 0;
	struct sroce_sge *sge = sroce_swqe_sges(swqe);
	unsigned int i;

	for (i = 0; i < swqe->num_sge; i++) {
		struct sroce_mr *mr;
		int err;

		if (!sge[i].length)
			continue;
		mr = sroce_mr_get(qp->sdev, sge[i].lkey);
		if (!mr)
			return IB_WC_LOC_PROT_ERR;
		err = sroce_mr_check(mr, qp->ibqp.pd, sge[i].addr,
				     sge[i].length, access);
		sroce_mr_put(mr);
		if (err)
			return IB_WC_LOC_PROT_ERR;
	}
	return IB_WC_SUCCESS;
}

/* PSNs the WQE uses: its request packets, or a READ's response packets. */
static u32 sroce_swqe_npkts(const struct sroce_swqe *swqe, u32 mtu)
{
	if (sroce_swqe_is_atomic(swqe))
		return 1;
	return max(1U, DIV_ROUND_UP(swqe->length, mtu));
}

/* ---- packets ------------------------------------------------------------ */

/*
 * The packet opcodes of each WQE opcode by position in the message, as
 * data: RC values; UC and XRC ones differ only in the transport bits.
 */
struct sroce_req_ops {
	u8 first, middle, last, only;
};

#define SROCE_REQ_OPS(f, m, l, o)					\
	{ SROCE_OP_RC_##f, SROCE_OP_RC_##m, SROCE_OP_RC_##l, SROCE_OP_RC_##o }

static const struct sroce_req_ops sroce_req_ops[] = {
	[IB_UVERBS_WR_SEND] =
		SROCE_REQ_OPS(SEND_FIRST, SEND_MIDDLE, SEND_LAST, SEND_ONLY),
	[IB_UVERBS_WR_SEND_WITH_IMM] =
		SROCE_REQ_OPS(SEND_FIRST, SEND_MIDDLE,
			      SEND_LAST_WITH_IMMEDIATE,
			      SEND_ONLY_WITH_IMMEDIATE),
	[IB_UVERBS_WR_SEND_WITH_INV] =
		SROCE_REQ_OPS(SEND_FIRST, SEND_MIDDLE,
			      SEND_LAST_WITH_INVALIDATE,
			      SEND_ONLY_WITH_INVALIDATE),
	[IB_UVERBS_WR_RDMA_WRITE] =
		SROCE_REQ_OPS(RDMA_WRITE_FIRST, RDMA_WRITE_MIDDLE,
			      RDMA_WRITE_LAST, RDMA_WRITE_ONLY),
	[IB_UVERBS_WR_RDMA_WRITE_WITH_IMM] =
		SROCE_REQ_OPS(RDMA_WRITE_FIRST, RDMA_WRITE_MIDDLE,
			      RDMA_WRITE_LAST_WITH_IMMEDIATE,
			      RDMA_WRITE_ONLY_WITH_IMMEDIATE),
	[IB_UVERBS_WR_RDMA_READ] =
		SROCE_REQ_OPS(RDMA_READ_REQUEST, RDMA_READ_REQUEST,
			      RDMA_READ_REQUEST, RDMA_READ_REQUEST),
	[IB_UVERBS_WR_ATOMIC_CMP_AND_SWP] =
		SROCE_REQ_OPS(COMPARE_SWAP, COMPARE_SWAP, COMPARE_SWAP,
			      COMPARE_SWAP),
	[IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD] =
		SROCE_REQ_OPS(FETCH_ADD, FETCH_ADD, FETCH_ADD, FETCH_ADD),
	[SROCE_WR_ATOMIC_WRITE] =
		SROCE_REQ_OPS(ATOMIC_WRITE, ATOMIC_WRITE, ATOMIC_WRITE,
			      ATOMIC_WRITE),
};

static u8 sroce_req_opcode(struct sroce_qp *qp, const struct sroce_swqe *swqe,
			   bool first, bool last)
{
	const struct sroce_req_ops *ops = &sroce_req_ops[swqe->opcode];
	u8 op;

	/* UD: single-packet sends (the length was checked at fetch). */
	if (sroce_qp_is_ud(qp))
		return swqe->opcode == IB_UVERBS_WR_SEND_WITH_IMM ?
		       SROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE :
		       SROCE_OP_UD_SEND_ONLY;

	if (first)
		op = last ? ops->only : ops->first;
	else
		op = last ? ops->last : ops->middle;
	return sroce_qp_opcode(qp, op);
}

/* Where a packet at @psn of @swqe sits, derived from the PSN alone. */
struct sroce_req_pos {
	u64 offset;		/* first message byte it stands for */
	u32 paylen;		/* payload bytes it carries */
	bool first;
	bool last;
};

static void sroce_req_position(struct sroce_requester *req,
			       const struct sroce_swqe *swqe, u32 psn,
			       struct sroce_req_pos *pos)
{
	u32 index = (psn - swqe->first_psn) & SROCE_PSN_MASK;

	pos->offset = (u64)index * req->mtu;
	pos->first = psn == swqe->first_psn;
	pos->last = psn == swqe->last_psn;
	/* READ and atomic requests carry none; an ATOMIC WRITE its 8 bytes. */
	if (sroce_swqe_needs_response(swqe) && !sroce_swqe_is_atomic_write(swqe))
		pos->paylen = 0;
	else if (pos->last)
		pos->paylen = swqe->length - pos->offset;
	else
		pos->paylen = req->mtu;
	/* A READ is one request for everything from @psn on. */
	if (sroce_swqe_is_read(swqe))
		pos->last = true;
}

static unsigned long sroce_req_probe_delay(const struct sroce_requester *req);
static void sroce_req_solicit_ack(struct sroce_qp *qp);

/*
 * A paced QP (congestion control) sends slowly: the packets it has not
 * asked an ACK for must not span more than a quarter of the probe delay
 * at its current rate, or a probe would resend what is merely still
 * being paced out.  At a few Mbit/s that means an AckReq on every packet;
 * near line rate on every few, as unpaced.
 */
static bool sroce_req_paced_ack_due(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	if (!req->timeout)
		return false;
	return sroce_cc_wire_ns(&qp->cc, (u64)req->noack_pkts * req->mtu) >=
	       jiffies_to_nsecs(sroce_req_probe_delay(req)) / 4;
}

/*
 * Does the last packet of @swqe's message ask for an ACK?  Only if a
 * completion waits for it: a signaled WQE (or all of them), the end of
 * an SQ drain, and everything until a first round trip was measured (the
 * probe needs it, sroce_req_probe_in()).  The ACK of an unsignaled
 * message comes with a later one, with the AckReq every few packets, or
 * from the responder's delayed ACK (a sroce peer; others answer the
 * probe): a stream of small unsignaled messages (perftest's bandwidth
 * tests signal every 100th) takes one packet per message instead of two.
 */
static bool sroce_req_ack_wanted(const struct sroce_qp *qp,
				 const struct sroce_swqe *swqe)
{
	return (swqe->flags & SROCE_SEND_SIGNALED) || qp->sq_sig_all ||
	       qp->req.draining || !qp->req.srtt_us;
}

/* AckReq on the last packet of a message that needs it, every few packets. */
static u32 sroce_req_pkt_flags(struct sroce_qp *qp,
			       const struct sroce_swqe *swqe,
			       const struct sroce_req_pos *pos)
{
	struct sroce_requester *req = &qp->req;
	u32 every = clamp_t(u32, req->window / 4, 1, SROCE_REQ_ACKREQ_EVERY);
	u32 flags = 0;

	if ((pos->last && sroce_req_ack_wanted(qp, swqe)) ||
	    ++req->noack_pkts >= every || req->resend_one ||
	    unlikely(sroce_cc_paced(&qp->cc) && sroce_req_paced_ack_due(qp))) {
		flags |= SROCE_PKT_ACKREQ;
		req->noack_pkts = 0;
	}
	/* SE is meaningful on the packet that completes a receive WQE. */
	if (pos->last && (swqe->flags & SROCE_SEND_SOLICITED) &&
	    (swqe->opcode == IB_UVERBS_WR_SEND ||
	     swqe->opcode == IB_UVERBS_WR_SEND_WITH_IMM ||
	     swqe->opcode == IB_UVERBS_WR_SEND_WITH_INV ||
	     swqe->opcode == IB_UVERBS_WR_RDMA_WRITE_WITH_IMM))
		flags |= SROCE_PKT_SE;
	return flags;
}

/*
 * UD: the destination QP goes into the BTH (sroce_pkt_alloc() put the
 * connected one there), our own into the DETH.  A Q_Key with the high bit
 * set means "use the QP's Q_Key", which is also how a
 * consumer keeps the controlled Q_Keys it may not send.
 */
static void sroce_req_fill_deth(struct sroce_qp *qp, struct sk_buff *skb,
				const struct sroce_swqe *swqe)
{
	struct sroce_deth *deth = sroce_pkt_hdr(skb, SROCE_HDR_DETH);
	u32 qkey = swqe->remote_qkey;

	if (qkey & 0x80000000U)
		qkey = qp->attr.qkey;
	deth->qkey = cpu_to_be32(qkey);
	sroce_deth_set_sqp(deth, qp->ibqp.qp_num);
	sroce_bth_set_qpn(sroce_pkt_bth(skb), swqe->remote_qpn);
}

/* Fill the extension headers the opcode table says @skb carries. */
static void sroce_req_fill_hdrs(struct sroce_qp *qp, struct sk_buff *skb,
				u8 opcode, const struct sroce_swqe *swqe,
				const struct sroce_req_pos *pos)
{
	if (sroce_opcode_has(opcode, SROCE_HDR_DETH))
		sroce_req_fill_deth(qp, skb, swqe);
	if (sroce_opcode_has(opcode, SROCE_HDR_XRCETH))
		sroce_xrceth_set_srqn(sroce_pkt_hdr(skb, SROCE_HDR_XRCETH),
				      swqe->xrc_srqn);
	if (sroce_opcode_has(opcode, SROCE_HDR_RETH)) {
		struct sroce_reth *reth = sroce_pkt_hdr(skb, SROCE_HDR_RETH);

		/* A READ restarted at @psn asks for the rest only. */
		reth->va = cpu_to_be64(swqe->remote_addr + pos->offset);
		reth->rkey = cpu_to_be32(swqe->rkey);
		reth->dma_len = cpu_to_be32(swqe->length - pos->offset);
	}
	if (sroce_opcode_has(opcode, SROCE_HDR_ATMETH)) {
		struct sroce_atmeth *ath = sroce_pkt_hdr(skb, SROCE_HDR_ATMETH);
		bool cas = swqe->opcode == IB_UVERBS_WR_ATOMIC_CMP_AND_SWP;

		ath->va = cpu_to_be64(swqe->remote_addr);
		ath->rkey = cpu_to_be32(swqe->rkey);
		ath->swap_add = cpu_to_be64(cas ? swqe->swap : swqe->compare_add);
		ath->compare = cpu_to_be64(cas ? swqe->compare_add : 0);
	}
	if (sroce_opcode_has(opcode, SROCE_HDR_IMMDT)) {
		struct sroce_immdt *immdt = sroce_pkt_hdr(skb, SROCE_HDR_IMMDT);

		immdt->imm = swqe->imm_data;
	}
	if (sroce_opcode_has(opcode, SROCE_HDR_IETH)) {
		struct sroce_ieth *ieth = sroce_pkt_hdr(skb, SROCE_HDR_IETH);

		ieth->rkey = cpu_to_be32(swqe->inv_rkey);
	}
}

/* Results of one requester step. */
enum sroce_req_step {
	SROCE_REQ_SENT,		/* a packet left (or was lost on the way) */
	SROCE_REQ_FETCHED,	/* a WQE started; its first packet is next */
	SROCE_REQ_LOCAL,	/* a local operation was executed and retired */
	SROCE_REQ_IDLE,		/* nothing to send until someone kicks */
	SROCE_REQ_NOMEM,	/* try again a little later */
	SROCE_REQ_BUSY,		/* the way out is full: resend that PSN soon */
	SROCE_REQ_STOPPED,	/* at a failed WQE, or the QP failed */
};

static void sroce_req_local_error(struct sroce_qp *qp, u32 index,
				  enum ib_wc_status status);

/*
 * Attach @len message bytes at @offset of @swqe as fragments of @skb
 * (zero-copy transmit, pkt.h); nonzero: copy the packet instead.
 */
static int sroce_swqe_attach_sges(struct sroce_qp *qp, struct sroce_swqe *swqe,
				  u64 offset, u32 len, struct sk_buff *skb,
				  enum ib_wc_status *status)
{
	struct sroce_sge *sge = sroce_swqe_sges(swqe);
	unsigned int i;
	int err = 0;

	for (i = 0; i < swqe->num_sge && len && !err; i++) {
		struct sroce_mr *mr;
		u64 iova;
		u32 chunk;

		if (offset >= sge[i].length) {
			offset -= sge[i].length;
			continue;
		}
		chunk = min_t(u64, len, sge[i].length - offset);
		iova = sge[i].addr + offset;
		mr = sroce_mr_get(qp->sdev, sge[i].lkey);
		if (!mr) {
			*status = IB_WC_LOC_PROT_ERR;
			return 0;
		}
		if (sroce_mr_check(mr, qp->ibqp.pd, iova, chunk, 0)) {
			sroce_mr_put(mr);
			*status = IB_WC_LOC_PROT_ERR;
			return 0;
		}
		len -= chunk;
		err = sroce_pkt_add_mr(skb, mr, iova, chunk);
		sroce_mr_put(mr);
		offset = 0;
	}
	if (!err && len)
		*status = IB_WC_LOC_LEN_ERR;
	return err;
}

static struct sk_buff *sroce_req_build_zc(struct sroce_qp *qp,
					  struct sroce_swqe *swqe, u8 opcode,
					  u32 psn, u32 flags,
					  const struct sroce_req_pos *pos,
					  enum ib_wc_status *status)
{
	struct sk_buff *skb;

	skb = sroce_pkt_alloc_zc(qp, opcode, psn, pos->paylen, flags);
	if (!skb)
		return NULL;
	sroce_req_fill_hdrs(qp, skb, opcode, swqe, pos);
	if (sroce_swqe_attach_sges(qp, swqe, pos->offset, pos->paylen, skb,
				   status) ||
	    (*status == IB_WC_SUCCESS && sroce_pkt_finish_zc(skb))) {
		kfree_skb(skb);
		return ERR_PTR(-EOPNOTSUPP);	/* copy instead */
	}
	return skb;
}

/*
 * A resend asks the peer for the answer to a packet that went out before.
 * When the packet's bytes cannot be read any more (their MR was
 * invalidated, or registered anew, since), the peer almost surely holds
 * them: a SEND_WITH_INV is how an iSER or NFS/RDMA peer hands back the MR
 * a message was read from once it has the message, and it can overtake
 * our ACK's loss.  So the PSN goes again as an empty SEND MIDDLE asking
 * for the ACK, which a responder sends for a duplicate whatever it
 * carries.  A peer that lacks it must not take it for data: executed, an
 * empty MIDDLE is always an invalid request (IBA 9.7.5.1.3: one path MTU),
 * so a consumer that took back the memory of a message the peer never got
 * sees REM_INV_REQ_ERR instead of LOC_PROT_ERR, never a shortened message.
 */
static struct sk_buff *sroce_req_resend_empty(struct sroce_qp *qp,
					      struct sk_buff *skb,
					      const struct sroce_swqe *swqe,
					      u32 psn, u32 flags,
					      const struct sroce_req_pos *pos,
					      enum ib_wc_status *status)
{
	u8 opcode = sroce_qp_opcode(qp, SROCE_OP_RC_SEND_MIDDLE);

	kfree_skb(skb);
	flags = (flags & ~SROCE_PKT_SE) | SROCE_PKT_ACKREQ;
	skb = sroce_pkt_alloc(qp, opcode, psn, 0, flags);
	if (!skb)
		return NULL;
	sroce_req_fill_hdrs(qp, skb, opcode, swqe, pos);
	*status = IB_WC_SUCCESS;
	sroce_qp_stat_inc(qp, req_empty_resends);
	return skb;
}

/* Build the packet at @psn of @swqe; NULL only without memory. */
static struct sk_buff *sroce_req_build(struct sroce_qp *qp,
				       struct sroce_swqe *swqe, u32 psn,
				       u32 flags, enum ib_wc_status *status)
{
	struct sroce_requester *req = &qp->req;
	struct sroce_req_pos pos;
	struct sk_buff *skb;
	u8 opcode;

	sroce_req_position(req, swqe, psn, &pos);
	opcode = sroce_req_opcode(qp, swqe, pos.first, pos.last);
	flags |= sroce_req_pkt_flags(qp, swqe, &pos);
	/*
	 * Only RC (and XRC) acknowledges.  UC and UD complete a WQE when it
	 * is sent, so their packets must not point into the user's buffer
	 * (pkt.h): they are copied.
	 */
	if (!sroce_qp_is_reliable(qp)) {
		flags &= ~SROCE_PKT_ACKREQ;
	} else if (pos.paylen >= SROCE_PKT_ZC_MIN &&
		 !(swqe->flags & SROCE_SEND_INLINE)) {
		skb = sroce_req_build_zc(qp, swqe, opcode, psn, flags, &pos,
					 status);
		if (!IS_ERR(skb))
			goto built;
	}

	skb = sroce_pkt_alloc(qp, opcode, psn, pos.paylen, flags);
	if (!skb)
		return NULL;

	sroce_req_fill_hdrs(qp, skb, opcode, swqe, &pos);
	if (sroce_swqe_is_atomic_write(swqe)) {
		memcpy(sroce_pkt_payload(skb), &swqe->compare_add, pos.paylen);
		*status = IB_WC_SUCCESS;
		return skb;
	}
	*status = sroce_swqe_copy_sges(qp, swqe, pos.offset,
				       sroce_pkt_payload(skb), pos.paylen,
				       SROCE_FROM_MR);
built:
	if (*status == IB_WC_LOC_PROT_ERR && sroce_qp_is_reliable(qp) &&
	    sroce_psn_before(psn, req->psn_max))
		skb = sroce_req_resend_empty(qp, skb, swqe, psn, flags, &pos,
					     status);
	return skb;
}

/*
 * The retransmit timer runs in two stages.  After a short silence (an
 * eighth of the local ACK timeout, or longer if the path's round trip
 * is, see below) it sends a probe: the oldest unacknowledged packet
 * again, with AckReq.  That recovers the common tail losses (the last
 * packets of a burst, an ACK, a NAK, or the one resend after a NAK,
 * which the responder does not NAK twice) in a fraction of the timeout,
 * and costs one duplicate packet when nothing was lost.  Its answer moves
 * comp.psn; whatever is still outstanding after that was dropped in the
 * silence and is resent at once (sroce_req_acked()).  Only the full
 * timeout counts against retry_cnt.
 *
 * A probe sent before the ACKs of a full window could come back is
 * answered by those ACKs as they arrive, and what they do not cover yet
 * looks lost: a whole window is resent for nothing.  On a veth the ACKs
 * queue behind the window's own packets in the CPU's backlog, so under
 * load (a TCG guest: 256 packets take longer than the 8 ms floor) that
 * happened every few windows.  So the probe waits at least the
 * retransmission timeout that RFC 6298 computes from measured round
 * trips (srtt + 4 rttvar); the full timeout stays the consumer's.
 *
 * The eighth is capped at what it is for timeout 14 (67 ms: 8.4 ms),
 * perftest's default: rdma_cm gives RoCE QPs 19 (a packet lifetime of
 * 18: 2.1 s), whose eighth, 268 ms per lost tail, made nvme-rdma's 64 MiB
 * fio write and read at 2% loss take 20 s against 6.
 */
#define SROCE_REQ_PROBE_FLOOR_NS	((4096ULL << 14) / 8)

static unsigned long sroce_req_probe_delay(const struct sroce_requester *req)
{
	unsigned long delay = min(req->timeout / 8,
				  nsecs_to_jiffies(SROCE_REQ_PROBE_FLOOR_NS));

	delay = max(delay, 2UL);
	if (req->srtt_us)
		delay = max(delay, usecs_to_jiffies(req->srtt_us +
						    4 * req->rttvar_us) + 1);
	return delay;
}

/*
 * A probe that gets no answer is followed by another after twice the
 * delay, and so on while the next one comes before the full timeout:
 * the probe or the answer it asked for (a READ's last response) lost
 * again would otherwise cost the rest of the timeout, and rdma_cm gives
 * RoCE QPs 2.1 s (SRP at 2% loss: two such waits in one 32 MiB write,
 * three quarters of its time).  Probe number @n of a silence goes out
 * this many jiffies after the timer was armed.
 */
#define SROCE_REQ_MAX_PROBES	16

static unsigned long sroce_req_probe_at(unsigned long delay, unsigned int n)
{
	return delay * ((2UL << n) - 1);
}

/*
 * Jiffies until the next probe if the next expiry is a probe, 0 if it is
 * the full timeout.  No probe before a round trip was measured: the first
 * window of a QP would otherwise be probed on a path slower than the
 * floor, and a tail loss that early costs one full timeout.
 */
static unsigned long sroce_req_probe_in(const struct sroce_requester *req)
{
	unsigned long delay;

	if (req->probes >= SROCE_REQ_MAX_PROBES || !req->srtt_us)
		return 0;
	delay = sroce_req_probe_delay(req);
	if (sroce_req_probe_at(delay, req->probes) >= req->timeout)
		return 0;
	return delay << req->probes;
}

/* After a probe went out: jiffies until the next one or the full timeout. */
static unsigned long sroce_req_after_probe(const struct sroce_requester *req)
{
	unsigned long next = sroce_req_probe_in(req);
	unsigned long spent;

	if (next)
		return next;
	spent = sroce_req_probe_at(sroce_req_probe_delay(req), req->probes - 1);
	return spent < req->timeout ? req->timeout - spent : 1;
}

/*
 * Fit the window to the local ACK timeout, from a round-trip sample.
 *
 * The timeout is the consumer's and fixed; the round trip is partly our
 * own doing: what the window puts in flight queues somewhere (a slow
 * link's qdisc, the receiving CPU's backlog) and the ACKs queue behind
 * it.  If a full window takes longer than the timeout to come back, every
 * window ends in a timeout and a go-back-N of packets that were only
 * waiting, and after retry_cnt of them in a row in IB_WC_RETRY_EXC_ERR
 * with nothing lost (seen: rc_verbs at path MTU 256 in loopback on the
 * debug kernel, a 36 ms round trip against a 16.8 ms timeout, 1,100
 * timeouts and 40 % of all packets resent per run).
 *
 * The part of a sample the window makes is the queue: the sample less the
 * shortest one seen (min_rtt_us, the path's own delay).  A sample above
 * half the timeout whose queue is above a quarter halves window_cap, once
 * per round trip (only a PSN sent after the last cut counts); a sample
 * below a quarter of the timeout, or with a queue below an eighth, raises
 * it by a quarter.  While a queue remains the link stays busy, so the cut
 * costs no throughput; a path whose own delay is long (netem.sh's delay
 * case) is left alone, since a smaller window would only slow it down.
 * A timeout alone does not lower the cap (on a lossy path it is mostly
 * loss).  On a path fast against the timeout the cap stays at
 * SROCE_REQ_MAX_UNACKED and nothing changes.
 */
static void sroce_req_fit_window(struct sroce_requester *req, u32 rtt_us)
{
	u32 timeout_us, queue_us;

	if (!req->timeout)
		return;
	timeout_us = jiffies_to_usecs(req->timeout);
	queue_us = rtt_us - req->min_rtt_us;
	if (rtt_us > timeout_us / 2 && queue_us > timeout_us / 4) {
		if (sroce_psn_before(req->rtt_psn, req->cap_psn))
			return;
		req->window_cap = max_t(u32, min(req->window_cap,
						 req->window) / 2, 1);
		req->window = min(req->window, req->window_cap);
		req->cap_psn = req->psn_max;
	} else if (rtt_us < timeout_us / 4 || queue_us < timeout_us / 8) {
		req->window_cap = min_t(u32, req->window_cap +
					req->window_cap / 4 + 1,
					SROCE_REQ_MAX_UNACKED);
	}
}

/* Time @psn, a first transmission, unless a PSN is being timed already. */
static void sroce_req_rtt_start(struct sroce_requester *req, u32 psn)
{
	if (req->rtt_timing)
		return;
	req->rtt_timing = true;
	req->rtt_psn = psn;
	req->rtt_sent_ns = ktime_get_ns();
}

/*
 * comp.psn moved: if it passed the timed PSN, fold the sample into the
 * estimate (RFC 6298 2.2 and 2.3, gains 1/8 and 1/4).
 */
static void sroce_req_rtt_sample(struct sroce_requester *req, u32 comp_psn)
{
	u32 rtt, delta;

	if (!req->rtt_timing || !sroce_psn_after(comp_psn, req->rtt_psn))
		return;
	req->rtt_timing = false;
	/* Bounded so that srtt + 4 rttvar stays far from overflowing. */
	rtt = clamp_t(u64, div_u64(ktime_get_ns() - req->rtt_sent_ns,
				   NSEC_PER_USEC), 1, SROCE_REQ_RTT_MAX_US);
	if (!req->srtt_us || rtt < req->min_rtt_us)
		req->min_rtt_us = rtt;
	if (!req->srtt_us) {
		req->srtt_us = rtt;
		req->rttvar_us = rtt / 2;
		return;
	}
	delta = req->srtt_us > rtt ? req->srtt_us - rtt : rtt - req->srtt_us;
	req->rttvar_us = req->rttvar_us - req->rttvar_us / 4 + delta / 4;
	req->srtt_us = req->srtt_us - req->srtt_us / 8 + rtt / 8;
	sroce_req_fit_window(req, rtt);
}

static void sroce_req_mod_retrans(struct sroce_requester *req)
{
	unsigned long probe = sroce_req_probe_in(req);

	mod_timer(&req->retrans_timer, jiffies + (probe ?: req->timeout));
}

static void sroce_req_arm_retrans(struct sroce_requester *req)
{
	if (req->timeout && !timer_pending(&req->retrans_timer))
		sroce_req_mod_retrans(req);
}

/* Move (cur, psn) past the packet just sent. */
static void sroce_req_advance(struct sroce_qp *qp, struct sroce_swqe *swqe)
{
	struct sroce_requester *req = &qp->req;

	if (sroce_psn_before(req->psn, req->psn_max))
		sroce_qp_stat_inc(qp, req_retransmits);
	req->psn = sroce_swqe_is_read(swqe) ? sroce_psn_next(swqe->last_psn) :
					      sroce_psn_next(req->psn);
	if (sroce_psn_after(req->psn, req->psn_max))
		req->psn_max = req->psn;
	if (req->psn != sroce_psn_next(swqe->last_psn))
		return;

	req->cur++;
	/* UC and UD have no ACKs: sent is done, nothing older is pending. */
	if (!sroce_qp_is_reliable(qp)) {
		qp->comp.psn = req->psn;
		sroce_comp_retire(qp, IB_WC_SUCCESS);
	}
}

/*
 * A full queue refused the packets of @batch from its lost_psn on (pkt.h).
 * RC and XRC send them again; on UC they are lost, as on the wire (its
 * WQEs retired when they were sent): only the packet being sent, which
 * never joined, is built again.
 */
static void sroce_req_batch_refused(struct sroce_qp *qp,
				    const struct sroce_tx_batch *batch)
{
	struct sroce_requester *req = &qp->req;

	if (batch && batch->lost_psn != req->psn && sroce_qp_is_reliable(qp))
		sroce_req_send_from(qp, batch->lost_psn);
}

/*
 * Before the first packet of a WQE (not again for its resends): fault in
 * whatever on-demand paged memory (odp.c) it reads, or a READ or atomic
 * writes, so that neither its packets nor its responses meet a missing
 * page.  Costs nothing while the device has no ODP MR.
 */
static enum ib_wc_status sroce_swqe_prefault(struct sroce_qp *qp,
					     struct sroce_swqe *swqe)
{
	bool write = sroce_swqe_needs_response(swqe);
	struct sroce_sge *sge = sroce_swqe_sges(swqe);
	unsigned int i;

	if (likely(!atomic_read(&qp->sdev->num_odp_mr)) ||
	    (swqe->flags & SROCE_SEND_INLINE))
		return IB_WC_SUCCESS;
	for (i = 0; i < swqe->num_sge; i++) {
		int err = sroce_odp_prefault(qp->sdev, qp->ibqp.pd,
					     sge[i].lkey, sge[i].addr,
					     sge[i].length, write);

		if (err)
			return sroce_swqe_access_status(err);
	}
	return IB_WC_SUCCESS;
}

static enum sroce_req_step sroce_req_send(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	struct sroce_swqe *swqe = sroce_req_swqe(qp, req->cur);
	enum ib_wc_status status = IB_WC_SUCCESS;
	struct sroce_av av;
	struct sk_buff *skb;
	int err;

	/* UD: the address handle may have been destroyed since posting. */
	if (sroce_qp_is_ud(qp) &&
	    sroce_ah_lookup(qp->sdev, swqe->ah_num, qp->ibqp.pd, &av)) {
		sroce_req_local_error(qp, req->cur, IB_WC_LOC_QP_OP_ERR);
		return SROCE_REQ_STOPPED;
	}

	if (req->psn == swqe->first_psn && req->psn == req->psn_max)
		status = sroce_swqe_prefault(qp, swqe);
	if (status == IB_WC_SUCCESS) {
		skb = sroce_req_build(qp, swqe, req->psn, 0, &status);
		if (!skb)
			return SROCE_REQ_NOMEM;
		if (status != IB_WC_SUCCESS)
			kfree_skb(skb);
	}
	if (status == SROCE_WC_PAGE_FAULT)
		return SROCE_REQ_NOMEM;		/* odp.c: faulting pages in */
	if (status != IB_WC_SUCCESS) {
		sroce_req_local_error(qp, req->cur, status);
		return SROCE_REQ_STOPPED;
	}

	/*
	 * A full queue on the way out (the netdev's, or the backlog of the
	 * local receiver behind a veth) is backpressure, not loss: the same
	 * PSN is built and sent again shortly (sroce_req_pass()), instead of
	 * waiting for the retransmit timer and a go-back-N.  Any other
	 * failure is a lost packet that the timer recovers, as it would a
	 * drop on the wire.
	 */
	if (sroce_qp_is_ud(qp))
		err = sroce_pkt_send_av(qp, &av, swqe->remote_qpn, skb);
	else if (req->tx_batch)
		err = sroce_pkt_send_batch(qp, req->tx_batch, skb);
	else
		err = sroce_pkt_send(qp, skb);
	if (err == -ENOBUFS) {
		sroce_req_batch_refused(qp, req->tx_batch);
		return SROCE_REQ_BUSY;
	}
	req->busy_retries = 0;
	/*
	 * Time a first transmission that asked for an ACK (the build reset
	 * noack_pkts): the peer answers it at once, so the sample is the
	 * path's, not the peer's delayed ACK for a quiet QP.
	 */
	if (sroce_qp_is_reliable(qp) && req->psn == req->psn_max &&
	    !req->noack_pkts)
		sroce_req_rtt_start(req, req->psn);
	sroce_req_advance(qp, swqe);
	if (sroce_qp_is_reliable(qp))
		sroce_req_arm_retrans(req);
	return SROCE_REQ_SENT;
}

/*
 * Bytes the packet at @psn of @swqe takes on the wire, for pacing:
 * payload and RoCEv2 headers, UDP, IP and Ethernet.  qp->av is read
 * without its lock: the requester sends nothing while the path can
 * change (SQD -> SQD waits for the drain, sroce_modify_qp()).
 */
static u32 sroce_req_wire_bytes(struct sroce_qp *qp,
				const struct sroce_swqe *swqe, u32 psn)
{
	struct sroce_requester *req = &qp->req;
	struct sroce_req_pos pos;
	u8 opcode;

	sroce_req_position(req, swqe, psn, &pos);
	opcode = sroce_req_opcode(qp, swqe, pos.first, pos.last);
	return ALIGN(pos.paylen, 4) + sroce_hdr_len(opcode) + SROCE_ICRC_LEN +
	       SROCE_UDP_HDR_LEN +
	       (qp->av.family == AF_INET6 ? sizeof(struct ipv6hdr) :
					    sizeof(struct iphdr)) + ETH_HLEN;
}

/* ---- fetching WQEs and the limits on starting them ---------------------- */

/*
 * Would the packet at req.psn exceed the bound on unacknowledged PSNs?
 * New packets always count; resends only in a go-back-N inferred from
 * silence, which proceeds as ACKs open the window instead of as one burst
 * into a queue that may be what delayed the ACKs (requester.h).  After a
 * sequence NAK only the PSN it named may go until its ACK comes back.
 */
static bool sroce_req_window_full(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	s32 outstanding;

	if (!sroce_qp_is_reliable(qp))
		return false;
	if (req->resend_one)
		return req->psn != qp->comp.psn;
	if (req->psn != req->psn_max && !req->resend_paced)
		return false;
	outstanding = sroce_psn_diff(qp->comp.psn, req->psn);
	/*
	 * Negative: an ACK went past req.psn and sroce_req_reposition() has
	 * not moved it forward yet; send nothing the peer already has.
	 */
	return outstanding < 0 || outstanding >= (s32)req->window;
}

/*
 * May @swqe start now?  A READ, atomic or ATOMIC WRITE needs a free slot
 * of the responder's max_rd_atomic resources; a fenced WQE waits until
 * every earlier one of them completed.
 */
static bool sroce_req_may_start(struct sroce_requester *req,
				const struct sroce_swqe *swqe)
{
	/*
	 * A local operation runs once everything before it completed: an
	 * invalidation must not pull memory from under a request that may
	 * still be retransmitted or answered, and it completes in SQ order.
	 */
	if (sroce_swqe_is_local(swqe))
		return req->tail == req->head;
	if (sroce_swqe_needs_response(swqe) &&
	    req->rd_atomic >= req->max_rd_atomic)
		return false;
	if ((swqe->flags & SROCE_SEND_FENCE) && req->rd_atomic)
		return false;
	return true;
}

/*
 * Execute local operation @swqe (everything older has retired), with the
 * IB-defined statuses (IBA 11.6.2): a fast registration or window bind
 * that is not allowed is a Memory Window Bind Error, an invalidation of a
 * key that cannot be invalidated a Local Protection Error.
 */
static enum ib_wc_status sroce_req_local_op(struct sroce_qp *qp,
					    struct sroce_swqe *swqe)
{
	struct sroce_dev *sdev = qp->sdev;
	struct ib_pd *pd = qp->ibqp.pd;

	switch (swqe->opcode) {
	case IB_WR_REG_MR:
		if (sroce_mr_fast_reg(sdev, pd, swqe->reg.mr_lkey,
				      swqe->reg.key, swqe->reg.access))
			return IB_WC_MW_BIND_ERR;
		return IB_WC_SUCCESS;
	case IB_UVERBS_WR_LOCAL_INV:
		if (sroce_key_invalidate(qp, swqe->inv_rkey, false))
			return IB_WC_LOC_PROT_ERR;
		return IB_WC_SUCCESS;
	case IB_UVERBS_WR_BIND_MW:
		return sroce_mw_bind(qp, swqe->reg.key, swqe->reg.mr_lkey,
				     swqe->reg.addr, swqe->reg.length,
				     swqe->reg.access,
				     swqe->reg.flags & SROCE_BIND_VERB);
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

/*
 * A local operation at the head: its turn came (may_start), so it is the
 * only fetched WQE.  It takes no PSN; it is retired right here, or fails
 * as the oldest WQE.
 */
static enum sroce_req_step sroce_req_fetch_local(struct sroce_qp *qp,
						 struct sroce_swqe *swqe)
{
	struct sroce_requester *req = &qp->req;
	enum ib_wc_status status = sroce_req_local_op(qp, swqe);

	swqe->first_psn = req->psn;
	swqe->last_psn = sroce_psn_add(req->psn, -1U);
	req->head++;
	if (status != IB_WC_SUCCESS) {
		sroce_req_local_error(qp, req->head - 1, status);
		return SROCE_REQ_STOPPED;
	}
	req->cur = req->head;
	sroce_comp_retire(qp, IB_WC_SUCCESS);
	return SROCE_REQ_LOCAL;
}

/*
 * Start the next published WQE: copy, validate, check the limits, assign
 * its PSNs.  A WQE that has to wait is copied again when it is retried;
 * only the copy it starts with counts.
 */
static enum sroce_req_step sroce_req_fetch(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	struct sroce_swqe *swqe;
	enum ib_wc_status status;
	u32 npkts;

	if (!sroce_sq_published(qp))
		return SROCE_REQ_IDLE;

	swqe = sroce_req_swqe(qp, req->head);
	status = sroce_swqe_copy(qp, req->head, swqe);
	if (status == IB_WC_SUCCESS && !sroce_req_may_start(req, swqe)) {
		if (sroce_swqe_is_local(swqe))
			sroce_req_solicit_ack(qp);
		return SROCE_REQ_IDLE;
	}
	if (status == IB_WC_SUCCESS && sroce_swqe_is_local(swqe))
		return sroce_req_fetch_local(qp, swqe);
	/* UD follows the netdev's MTU as it is now, not as it was at RTS. */
	if (sroce_qp_is_ud(qp))
		req->mtu = sroce_qp_packet_mtu(qp);
	npkts = sroce_swqe_npkts(swqe, req->mtu);
	/*
	 * A one-packet WQE that writes nothing back has its SGEs checked by
	 * the build of that packet, before anything leaves: checking them
	 * here as well would look each lkey up twice per small message.
	 */
	if (status == IB_WC_SUCCESS &&
	    (npkts > 1 || sroce_swqe_needs_response(swqe)))
		status = sroce_swqe_check_sges(qp, swqe);
	if (status == IB_WC_SUCCESS && npkts > SROCE_REQ_MAX_MSG_PKTS)
		status = IB_WC_LOC_LEN_ERR;
	/* A UD message is one packet: at most the MTU. */
	if (status == IB_WC_SUCCESS && sroce_qp_is_ud(qp) && npkts > 1)
		status = IB_WC_LOC_LEN_ERR;

	/* A failed WQE gets an empty PSN range: it never reaches the wire. */
	swqe->first_psn = req->psn;
	swqe->last_psn = sroce_psn_add(req->psn, status ? -1U : npkts - 1);
	req->head++;
	if (status != IB_WC_SUCCESS) {
		sroce_req_local_error(qp, req->head - 1, status);
		return SROCE_REQ_STOPPED;
	}
	if (sroce_swqe_needs_response(swqe)) {
		swqe->rd_atomic_held = true;
		req->rd_atomic++;
	}
	return SROCE_REQ_FETCHED;
}

/* ---- one pass ----------------------------------------------------------- */

static enum sroce_req_step sroce_req_step(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	enum sroce_req_step step;

	if (sroce_req_window_full(qp))
		return SROCE_REQ_IDLE;
	/*
	 * SQD: finish what was started, start nothing new.  What was sent
	 * last may have asked for no ACK: ask, or the drain waits for the
	 * probe timer (forever with a local ACK timeout of 0) at a peer that
	 * acknowledges only when asked.
	 */
	if (req->draining && req->cur == req->head) {
		sroce_req_solicit_ack(qp);
		return SROCE_REQ_IDLE;
	}
	/* Nothing at or after a locally failed WQE may leave. */
	if (req->local_error &&
	    req->cur - req->tail >= req->fail_index - req->tail)
		return SROCE_REQ_IDLE;
	if (req->cur == req->head) {
		step = sroce_req_fetch(qp);
		if (step != SROCE_REQ_FETCHED)
			return step;
	}
	/* Congestion control: the pace timer kicks us when it is time. */
	if (unlikely(sroce_cc_paced(&qp->cc)) &&
	    !sroce_cc_tx_budget(qp, sroce_req_wire_bytes(qp,
				sroce_req_swqe(qp, req->cur), req->psn)))
		return SROCE_REQ_IDLE;
	return sroce_req_send(qp);
}

/*
 * Continue later from the work item on the QP's CPU (after @delay
 * jiffies).  An offline CPU's work would run anywhere, so it goes to this
 * one (the next pass takes the QP).  Under req.lock, or with interrupts
 * off (sroce_requester_kick()): there a stale req.cpu only sends the pass
 * to another CPU, which hands it over (sroce_req_own_cpu()).
 */
static void sroce_req_defer(struct sroce_requester *req, unsigned long delay)
{
	int cpu = READ_ONCE(req->cpu);

	if (!cpu_online(cpu))
		cpu = smp_processor_id();
	if (!READ_ONCE(req->dying))
		mod_delayed_work_on(cpu, sroce_req_wq, &req->work, delay);
}

/*
 * May this CPU send the QP's packets?  A local receiver (loopback, a veth
 * peer) takes each packet into the receive backlog of the CPU that sent
 * it, a multiqueue NIC into that CPU's transmit queue: packets of one QP
 * sent from two CPUs can overtake each other.  The responder sees a gap:
 * a sequence NAK and a go-back-N on RC, a lost message on UC.  So a QP
 * sends from the CPU that sent last (req.cpu) for as long as a packet it
 * sent may still be on its way, and a pass kicked elsewhere (doorbell,
 * ACK, timer, pacer) hands over to the work item on req.cpu.
 *
 * The QP moves to the CPU at hand when nothing can be overtaken any more:
 * RC and XRC once everything sent is acknowledged (the responder has
 * taken it), UC and UD, which have no acknowledgments, once they sent
 * nothing for SROCE_REQ_CPU_IDLE jiffies (a heuristic: a backlog holds a
 * packet for far less); and at once if req.cpu went offline.  A process
 * that migrates thus takes its QPs along between bursts, not inside one.
 * Under req.lock (bottom halves off, so no migration under us).
 */
static bool sroce_req_own_cpu(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	int cpu = smp_processor_id();
	bool quiet;

	if (likely(cpu == req->cpu))
		return true;
	if (sroce_qp_is_reliable(qp))
		quiet = qp->comp.psn == req->psn_max;
	else
		quiet = time_after_eq(jiffies,
				      req->sent_at + SROCE_REQ_CPU_IDLE);
	if (quiet || !cpu_online(req->cpu)) {
		req->cpu = cpu;
		return true;
	}
	return false;
}

static void sroce_req_handle_timeout(struct sroce_qp *qp);
static void sroce_req_handle_rnr_done(struct sroce_qp *qp);
static void sroce_req_flush_locked(struct sroce_qp *qp,
				   const struct sroce_swqe *failed);

/* A locally failed WQE fails for real once everything older retired. */
static void sroce_req_check_local_error(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	if (req->local_error && !req->error && req->tail == req->fail_index)
		sroce_req_fail(qp, req->tail,
			       sroce_req_swqe(qp, req->tail)->status);
}

/*
 * SQD: the send queue is drained once every WQE the requester started has
 * retired (IBA 10.3.1.4); the event is raised once per drain, after
 * req.lock is dropped.
 */
static void sroce_req_check_drained(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	if (req->draining && req->drain_notify && !req->error &&
	    req->tail == req->head) {
		req->drain_notify = false;
		req->want_sq_drained = true;
	}
}

static void sroce_req_pass(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	enum sroce_req_step step = SROCE_REQ_SENT;
	struct sroce_tx_batch batch;
	unsigned int budget;

	WRITE_ONCE(req->over_budget, false);
	if (req->dying)
		return;
	/* Another CPU's packets may be on their way: continue there. */
	if (!sroce_req_own_cpu(qp)) {
		sroce_req_defer(req, 0);
		return;
	}
	sroce_req_handle_timeout(qp);
	sroce_req_handle_rnr_done(qp);
	if (test_and_clear_bit(SROCE_REQ_FAULT_RETRY, &req->pending))
		sroce_completer_fault_retry(qp);
	sroce_req_check_local_error(qp);
	if (req->error) {
		/* WQEs posted in the error state are flushed too. */
		sroce_req_flush_locked(qp, NULL);
		return;
	}
	if (!req->started || req->rnr_wait)
		return;

	sroce_tx_batch_init(&batch);
	req->tx_batch = &batch;
	for (budget = SROCE_REQ_BUDGET; budget; budget--) {
		step = sroce_req_step(qp);
		if (step != SROCE_REQ_SENT && step != SROCE_REQ_LOCAL)
			break;
	}
	req->tx_batch = NULL;
	if (sroce_tx_batch_flush(qp, &batch) == -ENOBUFS) {
		sroce_req_batch_refused(qp, &batch);
		step = SROCE_REQ_BUSY;
	}
	if (budget != SROCE_REQ_BUDGET)
		req->sent_at = jiffies;		/* see sroce_req_own_cpu() */
	/* UC retires as it sends: a local error may be the oldest now. */
	sroce_req_check_local_error(qp);
	sroce_req_check_drained(qp);
	/*
	 * Transmit backpressure: the queue drains as soon as bottom halves
	 * run (when req.lock is dropped), so retry at once from the work
	 * item, and back off to a tick only if that keeps failing.
	 */
	if (step == SROCE_REQ_BUSY)
		sroce_req_defer(req, req->busy_retries++ < SROCE_REQ_BUSY_RETRIES ?
				0 : 1);
	else if (step == SROCE_REQ_NOMEM)
		sroce_req_defer(req, 1);
	/* Over budget: a running SQ poller continues (sq_poll.c). */
	else if (!budget && test_bit(SROCE_REQ_POLLING, &req->pending))
		WRITE_ONCE(req->over_budget, true);
	else if (!budget)
		sroce_req_defer(req, 0);
}

/*
 * Run the requester unless someone else is running it.  The bit protocol:
 * a kicker sets SROCE_REQ_KICK and then trylocks; the lock holder clears
 * the bit before its pass and looks at it again after unlocking.  Either
 * the kicker gets the lock, or its trylock failed because the holder had
 * not unlocked yet, and then the holder's second look (ordered after the
 * unlock by the full barrier, the kicker's set ordered before its trylock
 * by smp_mb__after_atomic()) sees the bit and runs another pass.
 */
void sroce_req_run(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	bool qp_error, drained;

	while (test_bit(SROCE_REQ_KICK, &req->pending)) {
		if (!spin_trylock_bh(&req->lock))
			return;
		clear_bit(SROCE_REQ_KICK, &req->pending);
		sroce_req_pass(qp);
		qp_error = req->want_qp_error;
		req->want_qp_error = false;
		drained = req->want_sq_drained;
		req->want_sq_drained = false;
		spin_unlock_bh(&req->lock);

		if (qp_error)
			sroce_qp_error(qp);
		if (drained)
			sroce_qp_sq_drained(qp);
		smp_mb();	/* see above */
	}
}

void sroce_requester_kick(struct sroce_qp *qp)
{
	set_bit(SROCE_REQ_KICK, &qp->req.pending);
	smp_mb__after_atomic();	/* see sroce_req_run() */
	/*
	 * The MAD layer posts on QP1 with interrupts off (ib_send_mad() under
	 * spin_lock_irqsave()), and a kernel ULP may too.  The pass's locks
	 * are BH locks, whose release may run softirqs, which must not happen
	 * with interrupts off: the work item runs it instead.  (A pass already
	 * waiting a tick, NOMEM or busy, then runs at once: harmless.)
	 */
	if (unlikely(irqs_disabled())) {
		sroce_req_defer(&qp->req, 0);
		return;
	}
	sroce_req_run(qp);
}

static void sroce_req_work(struct work_struct *work)
{
	struct sroce_requester *req =
		container_of(to_delayed_work(work), struct sroce_requester, work);

	sroce_requester_kick(container_of(req, struct sroce_qp, req));
}

/* ---- recovery ----------------------------------------------------------- */

/*
 * Continue sending at @psn, which must be in [comp.psn, psn_max]: back for
 * a go-back-N, forward when an ACK overtook the requester.  Packets are
 * rebuilt from the shadow; a READ restarted in the middle asks for the
 * rest of its data only.
 */
void sroce_req_send_from(struct sroce_qp *qp, u32 psn)
{
	struct sroce_requester *req = &qp->req;
	u32 i;

	for (i = req->tail; i != req->head; i++) {
		if (!sroce_psn_before(sroce_req_swqe(qp, i)->last_psn, psn))
			break;
		/* Never past a locally failed WQE (its PSN range may be empty). */
		if (req->local_error && i == req->fail_index)
			break;
	}
	req->cur = i;
	req->psn = i == req->head ? req->psn_max : psn;
	req->noack_pkts = 0;
	/* An ACK of a resent PSN times neither transmission (Karn). */
	if (req->psn != req->psn_max)
		req->rtt_timing = false;
}

/*
 * A go-back-N on the peer's word (a sequence NAK, an out-of-order
 * response) is about to resend what was in flight, at once: narrow the
 * window for new packets.
 */
void sroce_req_lost(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	req->window = min(max_t(u32, req->window / 2, SROCE_REQ_MIN_WINDOW),
			  req->window_cap);
	req->resend_paced = false;
	req->resend_one = false;
}

/* Send @psn again alone and wait for its ACK before anything else. */
static void sroce_req_resend_alone(struct sroce_qp *qp, u32 psn)
{
	qp->req.resend_one = true;
	qp->req.gap_psn = psn;
}

/*
 * A sequence NAK: resend the PSN it names alone and wait for its ACK
 * before anything else (requester.h).  The window narrows as for any
 * go-back-N on the peer's word, in case the peer is one that goes on to
 * need it.
 */
void sroce_req_lost_at_gap(struct sroce_qp *qp)
{
	sroce_req_lost(qp);
	sroce_req_resend_alone(qp, qp->comp.psn);
}

/*
 * comp.psn moved while a PSN resent alone after a sequence NAK waits for
 * its ACK: is this that ACK?  The NAK itself moves comp.psn up to the gap,
 * which is not the answer yet.
 */
static bool sroce_req_gap_answered(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	if (!sroce_psn_after(qp->comp.psn, req->gap_psn))
		return false;
	req->resend_one = false;
	return true;
}

/*
 * A go-back-N after silence (a full local ACK timeout, or a probe whose
 * answer left PSNs outstanding) is about to start.  The silence may have
 * been a queue slower than the timeout rather than a loss, and then the
 * ACKs still on their way make the probe look answered too: resend one
 * packet first and let the ACKs open the window (requester.h).
 */
static void sroce_req_lost_in_silence(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	req->window = SROCE_REQ_RESTART_WINDOW;
	req->resend_paced = true;
	req->resend_one = false;
}

/* Take one retry from retry_cnt; false once they are used up. */
bool sroce_req_use_retry(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	if (!req->retries_left)
		return false;
	req->retries_left--;
	return true;
}

/*
 * The responder had no receive WQE for the request at @psn (everything
 * before it was acknowledged): wait for the NAK's timer, then resend @psn
 * alone and wait for its ACK before anything else, as after a sequence
 * NAK (requester.h): a sroce responder held what followed and
 * acknowledges it all at once (with the SQ poller, 64 B SENDs had 40-55
 * such packets sent again per RNR NAK), any other dropped it and the
 * go-back-N goes on from the next PSN.  rnr_retry 7 means retry forever.
 */
void sroce_req_rnr_wait(struct sroce_qp *qp, u32 psn, unsigned int timer_code)
{
	struct sroce_requester *req = &qp->req;
	unsigned long delay;

	if (!req->rnr_retries_left) {
		sroce_qp_stat_inc(qp, req_rnr_retry_exceeded);
		sroce_req_fail(qp, req->tail, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	if (req->rnr_retry != 7)
		req->rnr_retries_left--;
	/*
	 * An RNR NAK is an answer: the peer is alive and in sequence, so
	 * the transport retry budget (lost packets, silence) starts over.
	 * Otherwise a receiver slow to post receives on a lossy path would
	 * turn RNR waits into IB_WC_RETRY_EXC_ERR.
	 */
	req->retries_left = req->retry_cnt;

	trace_sroce_retransmit(&qp->ibqp, psn, req->psn_max, "rnr_nak");
	sroce_req_send_from(qp, psn);
	sroce_req_resend_alone(qp, psn);
	req->rnr_wait = true;
	timer_delete(&req->retrans_timer);
	delay = usecs_to_jiffies(sroce_rnr_timer_usec(timer_code));
	mod_timer(&req->rnr_timer, jiffies + max(delay, 1UL));
}

/* Where to send from now that comp.psn moved (sroce_req_acked()). */
static void sroce_req_reposition(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	u32 comp_psn = qp->comp.psn;

	/* The NAK's own progress up to the gap: its resend is on its way. */
	if (req->resend_one && !sroce_req_gap_answered(qp))
		return;
	if (sroce_psn_before(req->psn, comp_psn)) {
		sroce_req_send_from(qp, comp_psn);
	} else if (req->probes && !req->rnr_wait && comp_psn != req->psn_max) {
		/*
		 * The probe was answered and more is outstanding: what we
		 * sent after the probed PSN got no answer in all that
		 * silence, so the peer dropped it (it NAKs a gap once, and
		 * that NAK, or the resend it asked for, was lost).  Resend
		 * it now: waiting for the next probe would recover one PSN
		 * per probe delay.
		 */
		trace_sroce_retransmit(&qp->ibqp, comp_psn, req->psn_max,
				       "probe_answered");
		sroce_req_lost_in_silence(qp);
		sroce_req_send_from(qp, comp_psn);
	}
}

/*
 * The completer moved comp.psn forward: the peer is alive, so the retry
 * counters start over (they count consecutive failures) and the
 * retransmit timer measures from now.  Not rnr_retry's when the progress
 * came with an RNR NAK (its implied ACK of what came before): the NAKed
 * request has not been acknowledged, and the NAK took one of its tries.
 */
void sroce_req_acked(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	u32 comp_psn = qp->comp.psn;

	sroce_req_rtt_sample(req, comp_psn);
	req->retries_left = req->retry_cnt;
	if (!req->rnr_wait)
		req->rnr_retries_left = req->rnr_retry;
	req->window = min_t(u32, req->window +
			    sroce_psn_diff(req->acked_psn, comp_psn),
			    req->window_cap);
	req->acked_psn = comp_psn;

	sroce_req_reposition(qp);
	req->probes = 0;
	if (comp_psn == req->psn_max)
		timer_delete(&req->retrans_timer);
	else if (req->timeout && !req->rnr_wait)
		sroce_req_mod_retrans(req);
}

/*
 * The peer shows it is working on what we asked for, without making
 * progress yet (the completer saw a replayed response): the retransmit
 * timer measures from now, the retry counters stay.
 */
void sroce_req_alive(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	req->probes = 0;
	if (req->timeout && !req->rnr_wait && timer_pending(&req->retrans_timer))
		sroce_req_mod_retrans(req);
}

/* What sroce_req_probe() did. */
enum sroce_req_probe_result {
	SROCE_PROBE_SENT,	/* sent (or lost on the way) */
	SROCE_PROBE_NONE,	/* nothing to probe with */
	SROCE_PROBE_PACED,	/* not yet: the pacer kicks us when it may go */
};

/*
 * First stage of the retransmit timer: resend the packet at comp.psn
 * alone, without moving the send position.  Nothing to probe with: the
 * packet belongs to a locally failed WQE.  A paced QP's probe waits for
 * its turn like any packet, so that recovery does not burst into the
 * congested queue the rate was cut for.
 */
static enum sroce_req_probe_result sroce_req_probe(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	enum ib_wc_status status = IB_WC_SUCCESS;
	u32 psn = qp->comp.psn;
	struct sroce_swqe *swqe = NULL;
	struct sk_buff *skb;
	u32 i;

	for (i = req->tail; i != req->head; i++) {
		if (req->local_error && i == req->fail_index)
			return SROCE_PROBE_NONE;
		if (!sroce_psn_before(sroce_req_swqe(qp, i)->last_psn, psn)) {
			swqe = sroce_req_swqe(qp, i);
			break;
		}
	}
	if (!swqe)
		return SROCE_PROBE_NONE;
	/*
	 * A READ whose responses have begun to arrive is probed with a
	 * request for its last response only.  A responder still sending
	 * the rest ignores it (that response is on its way); one that lost
	 * the tail sends the last response again, and the gap before it
	 * then shows as out of order (a go-back-N from comp.psn).  A probe
	 * at comp.psn would instead make a busy responder resend everything
	 * it had already sent us.
	 */
	if (sroce_swqe_is_read(swqe) && psn != swqe->first_psn)
		psn = swqe->last_psn;

	if (unlikely(sroce_cc_paced(&qp->cc)) &&
	    !sroce_cc_tx_budget(qp, sroce_req_wire_bytes(qp, swqe, psn)))
		return SROCE_PROBE_PACED;
	skb = sroce_req_build(qp, swqe, psn, SROCE_PKT_ACKREQ, &status);
	if (!skb)
		return SROCE_PROBE_SENT;	/* the full timeout resends it */
	if (status != IB_WC_SUCCESS) {
		kfree_skb(skb);
		return SROCE_PROBE_NONE;
	}
	trace_sroce_retransmit(&qp->ibqp, psn, sroce_psn_next(psn), "probe");
	req->rtt_timing = false;	/* Karn, as in sroce_req_send_from() */
	sroce_qp_stat_inc(qp, req_retransmits);
	sroce_qp_stat_inc(qp, req_probes);
	sroce_pkt_send(qp, skb);
	return SROCE_PROBE_SENT;
}

/*
 * A local operation, or an SQD drain, waits for everything before it to
 * be acknowledged (sroce_req_may_start()), but the last packets sent may
 * have asked for no ACK (an unsignaled message, sroce_req_ack_wanted()):
 * ask for it now, with a probe, rather than wait a jiffy for a sroce
 * responder's delayed ACK or, from a peer that acknowledges only when
 * asked (rdma_rxe), for the probe timer, which a local ACK timeout of 0
 * never arms.  Once per wait: the probe asked, and noack_pkts counts
 * from it.
 */
static void sroce_req_solicit_ack(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	if (req->noack_pkts && req->tail != req->head &&
	    sroce_req_probe(qp) == SROCE_PROBE_SENT)
		req->noack_pkts = 0;
}

/*
 * The local ACK timeout expired with PSNs outstanding: resend everything
 * from the oldest unacknowledged one, or give up once retry_cnt
 * consecutive timeouts passed without progress.
 */
static void sroce_req_handle_timeout(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	unsigned long probe;

	if (!test_and_clear_bit(SROCE_REQ_TIMEOUT, &req->pending))
		return;
	/* Re-armed after it fired: an ACK made progress meanwhile. */
	if (timer_pending(&req->retrans_timer))
		return;
	if (!req->started || req->error || req->rnr_wait ||
	    qp->comp.psn == req->psn_max)
		return;

	probe = sroce_req_probe_in(req);
	if (probe) {
		/*
		 * Silence: the go-back-N under way, if any, is not coming
		 * through.  A gap the probe's answer shows (a READ's last
		 * response after lost ones) must start a new one.
		 */
		qp->comp.retry_started = false;
		switch (sroce_req_probe(qp)) {
		case SROCE_PROBE_SENT:
			req->probes++;
			mod_timer(&req->retrans_timer,
				  jiffies + sroce_req_after_probe(req));
			return;
		case SROCE_PROBE_PACED:
			/* The pace timer's kick handles the timeout again. */
			set_bit(SROCE_REQ_TIMEOUT, &req->pending);
			return;
		case SROCE_PROBE_NONE:
			break;
		}
	}
	req->probes = 0;
	sroce_qp_stat_inc(qp, req_timeouts);
	trace_sroce_ack_timeout(&qp->ibqp, qp->comp.psn, req->retries_left);
	if (!sroce_req_use_retry(qp)) {
		sroce_qp_stat_inc(qp, req_retry_exceeded);
		sroce_req_fail(qp, req->tail, IB_WC_RETRY_EXC_ERR);
		return;
	}
	/*
	 * Responses to what was in flight may still trickle in out of
	 * order; they belong to this retry, not to a new loss.
	 */
	qp->comp.retry_started = true;
	trace_sroce_retransmit(&qp->ibqp, qp->comp.psn, req->psn_max, "timeout");
	sroce_req_lost_in_silence(qp);
	sroce_req_send_from(qp, qp->comp.psn);
}

static void sroce_req_handle_rnr_done(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	if (!test_and_clear_bit(SROCE_REQ_RNR_DONE, &req->pending))
		return;
	/* Re-armed after it fired: a newer RNR NAK started a new wait. */
	if (!timer_pending(&req->rnr_timer))
		req->rnr_wait = false;
}

/*
 * The completer kept the response at comp.psn: the WQE's pages are
 * faulting in (odp.c).  A pass a tick from now places it, as a WQE whose
 * own pages are faulting in is tried again a tick later (SROCE_REQ_NOMEM).
 */
void sroce_req_fault_retry_later(struct sroce_qp *qp)
{
	set_bit(SROCE_REQ_FAULT_RETRY, &qp->req.pending);
	sroce_req_defer(&qp->req, 1);
}

/* Timer callbacks only flag and kick: the work happens under req.lock. */
static void sroce_req_retrans_expired(struct timer_list *t)
{
	struct sroce_requester *req = from_timer(req, t, retrans_timer);

	set_bit(SROCE_REQ_TIMEOUT, &req->pending);
	sroce_requester_kick(container_of(req, struct sroce_qp, req));
}

static void sroce_req_rnr_expired(struct timer_list *t)
{
	struct sroce_requester *req = from_timer(req, t, rnr_timer);

	set_bit(SROCE_REQ_RNR_DONE, &req->pending);
	sroce_requester_kick(container_of(req, struct sroce_qp, req));
}

/* ---- errors and flushing ------------------------------------------------ */

/*
 * Retire every started WQE, then every WQE published but never started:
 * @failed (if any) with the status it failed with, every other one with
 * IB_WC_WR_FLUSH_ERR.  A younger WQE that had failed validation when it
 * was fetched (sroce_req_local_error()) is flushed like the rest when an
 * older one fails first: the QP is in error before its turn came.
 */
static void sroce_req_flush_locked(struct sroce_qp *qp,
				   const struct sroce_swqe *failed)
{
	struct sroce_requester *req = &qp->req;
	u32 unstarted;

	timer_delete(&req->retrans_timer);
	timer_delete(&req->rnr_timer);
	req->rnr_wait = false;
	sroce_completer_drop_held(qp);

	while (req->tail != req->head) {
		struct sroce_swqe *swqe = sroce_req_swqe(qp, req->tail);

		sroce_comp_retire(qp, swqe == failed ? swqe->status :
				  IB_WC_WR_FLUSH_ERR);
	}

	/*
	 * Never-started WQEs are not validated: a flush completion carries
	 * only wr_id, which is all that is taken from the slot.
	 */
	for (unstarted = sroce_sq_published(qp); unstarted; unstarted--) {
		struct sroce_swqe *swqe = sroce_req_swqe(qp, req->head);

		swqe->wr_id = READ_ONCE(sroce_sq_slot(qp, req->head)->wr_id);
		swqe->opcode = IB_UVERBS_WR_SEND;
		swqe->flags = 0;
		swqe->length = 0;
		swqe->rd_atomic_held = false;
		req->head++;
		sroce_comp_retire(qp, IB_WC_WR_FLUSH_ERR);
	}
	req->cur = req->head;
}

/*
 * WQE @index, the oldest, failed with @status: retire it, flush the rest,
 * and have the QP moved to ERR once req.lock is dropped.  (Called for a
 * younger WQE only when the QP fails as a whole: then every older one
 * completes with IB_WC_WR_FLUSH_ERR.)
 */
void sroce_req_fail(struct sroce_qp *qp, u32 index, enum ib_wc_status status)
{
	struct sroce_requester *req = &qp->req;
	struct sroce_swqe *swqe = sroce_req_swqe(qp, index);

	swqe->status = status;
	req->error = true;
	/*
	 * UC, UD: in SQE before the error completion can be seen, for a
	 * consumer that answers it with SQE -> RTS naming the current state
	 * (the MAD layer does, from its completion handler).
	 */
	if (sroce_qp_is_reliable(qp))
		req->want_qp_error = true;
	else
		sroce_qp_sq_error(qp);
	sroce_req_flush_locked(qp, swqe);
}

/*
 * qp.c moved the QP to ERR (modify_qp, or sroce_qp_error() on our behalf):
 * complete everything with IB_WC_WR_FLUSH_ERR.  Process or softirq context.
 */
void sroce_requester_flush(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;

	spin_lock_bh(&req->lock);
	/* Not after a RESET that overtook the error (sroce_qp_error()). */
	if (!req->dying && sroce_qp_state(qp) == IB_QPS_ERR) {
		req->error = true;
		sroce_req_flush_locked(qp, NULL);
	}
	spin_unlock_bh(&req->lock);
	/* A completion handler may have posted (and kicked) meanwhile. */
	sroce_req_run(qp);
}

/*
 * WQE @index failed before reaching (all of) the wire: stop sending at it,
 * let the older WQEs complete, fail it when it is the oldest.
 */
static void sroce_req_local_error(struct sroce_qp *qp, u32 index,
				  enum ib_wc_status status)
{
	struct sroce_requester *req = &qp->req;

	sroce_req_swqe(qp, index)->status = status;
	req->local_error = true;
	req->fail_index = index;
}

/* ---- QP lifetime -------------------------------------------------------- */

/*
 * Everything but the lock, timers, work and shadow, as after creation; the
 * next WQE is the one at ring index @start.
 */
static void sroce_req_reset_state(struct sroce_qp *qp, u32 start)
{
	struct sroce_requester *req = &qp->req;

	req->tail = start;
	req->head = start;
	req->cur = start;
	req->psn = 0;
	req->psn_max = 0;
	req->noack_pkts = 0;
	req->busy_retries = 0;
	req->rd_atomic = 0;
	req->fail_index = 0;
	req->probes = 0;
	req->rtt_timing = false;
	req->srtt_us = 0;
	req->min_rtt_us = 0;
	req->rttvar_us = 0;
	req->started = false;
	req->error = false;
	req->local_error = false;
	req->rnr_wait = false;
	req->want_qp_error = false;
	req->draining = false;
	req->drain_notify = false;
	req->want_sq_drained = false;
	sroce_completer_reset(qp);
}

/*
 * At QP creation, with qp->sq and qp->cap set up.  The shadow is sized by
 * the QP's send caps (what was asked, not what a ring slot could hold: a
 * WQE beyond them fails with IB_WC_LOC_LEN_ERR when it is fetched), and
 * allocated later, by sroce_requester_reserve().
 */
int sroce_requester_init(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	u32 sq_size = sroce_ring_size(&qp->sq);

	spin_lock_init(&req->lock);
	req->cpu = raw_smp_processor_id();
	req->sent_at = jiffies - SROCE_REQ_CPU_IDLE;
	/* Pinned, as the pace timer: they fire where they were armed. */
	timer_setup(&req->retrans_timer, sroce_req_retrans_expired,
		    TIMER_PINNED);
	timer_setup(&req->rnr_timer, sroce_req_rnr_expired, TIMER_PINNED);
	INIT_DELAYED_WORK(&req->work, sroce_req_work);
	sroce_sq_poll_init(qp);

	req->max_sge = min_t(u32, qp->cap.max_send_sge, SROCE_MAX_SGE);
	req->max_inline = min_t(u32, qp->cap.max_inline_data,
				SROCE_MAX_INLINE_DATA);
	req->stride = ALIGN(sizeof(struct sroce_swqe) +
			    max_t(u32, req->max_sge * sizeof(struct sroce_sge),
				  req->max_inline), 8);
	req->sq_mask = sq_size - 1;

	sroce_completer_init(qp);
	/* Not mapped into the process yet: its consumer index is ours. */
	sroce_req_reset_state(qp, sroce_ring_present(&qp->sq) ?
			      sroce_ring_consumer(&qp->sq) : 0);
	return 0;
}

/*
 * Allocate the shadow (for 128 WQEs of one SGE, 16 KiB) when the QP first
 * moves past INIT, not at creation: a QP that is never connected never
 * pays for it, and creation is that much faster.  From RTR on the QP can
 * flush (the responder may fail it) and from RTS send, both of which go
 * through the shadow; in RESET and INIT the requester does nothing.
 * modify_qp calls this before it changes anything, under its mutex, so a
 * failure leaves the QP as it was; the shadow then stays until destroy.
 */
int sroce_requester_reserve(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	void *shadow;

	if (req->shadow)
		return 0;
	shadow = kvcalloc(req->sq_mask + 1, req->stride, SROCE_GFP_SIZED);
	if (!shadow)
		return -ENOMEM;
	/* A completer looks at it under the lock (and finds !started). */
	spin_lock_bh(&req->lock);
	req->shadow = shadow;
	spin_unlock_bh(&req->lock);
	return 0;
}

/*
 * On the transition to RESET, instead of cleanup + init: the posted WQEs
 * are forgotten without completions (the ring's consumer moves past them:
 * for a user QP to the provider's producer index, for a kernel QP to the 0
 * qp.c set its producer to), the sequence state starts over for the next
 * RTS.  Both indices move under req.lock, where a completer retiring a WQE
 * writes the consumer, and the requester keeps the index it wrote rather
 * than reading it back from memory the process can write.  The lock, the
 * timers and the shadow stay: a completer may still be on its way in from
 * the receive path, and it must find a valid lock and a requester that has
 * not started.  Process context.
 */
void sroce_requester_reset(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	u32 start = 0;

	spin_lock_bh(&req->lock);
	if (sroce_ring_present(&qp->sq)) {
		start = sroce_ring_producer(&qp->sq);
		sroce_ring_set_consumer(&qp->sq, start);
	}
	sroce_req_reset_state(qp, start);
	spin_unlock_bh(&req->lock);

	/* Not started any more: nothing re-arms them from now on. */
	timer_delete_sync(&req->retrans_timer);
	timer_delete_sync(&req->rnr_timer);
	cancel_delayed_work_sync(&req->work);
	clear_bit(SROCE_REQ_TIMEOUT, &req->pending);
	clear_bit(SROCE_REQ_RNR_DONE, &req->pending);
}

/*
 * On every transition into RTS.  The first one takes the send PSN and
 * fills the retry budgets; all of them take the attributes that SQD -> SQD
 * may have changed (timeout, retry counts).  Then kick: WQEs may have
 * been posted before.
 */
void sroce_requester_start(struct sroce_qp *qp, bool recover)
{
	struct sroce_requester *req = &qp->req;
	const struct ib_qp_attr *attr = &qp->attr;
	u64 timeout_ns;
	int mtu;

	spin_lock_bh(&req->lock);
	/*
	 * SQE -> RTS: WQEs posted in SQE that no pass has flushed yet are
	 * flushed now, as the state they were posted in wants; the next
	 * WQE posted is sent.
	 */
	if (recover && req->error) {
		sroce_req_flush_locked(qp, NULL);
		req->error = false;
		req->local_error = false;
	}
	if (!req->started) {
		/* The budgets start full (sroce_req_acked() refills them). */
		req->retries_left = attr->retry_cnt & 7;
		req->rnr_retries_left = attr->rnr_retry & 7;
		req->psn = attr->sq_psn & SROCE_PSN_MASK;
		req->psn_max = req->psn;
		req->acked_psn = req->psn;
		req->window = SROCE_REQ_INITIAL_WINDOW;
		req->window_cap = SROCE_REQ_MAX_UNACKED;
		req->cap_psn = req->psn;
		req->resend_paced = false;
		req->resend_one = false;
		qp->comp.psn = req->psn;
		req->started = true;
	}
	req->draining = false;		/* SQD -> RTS */
	req->drain_notify = false;
	mtu = sroce_qp_packet_mtu(qp);
	req->mtu = mtu > 0 ? mtu : 256;	/* qp.c validates; be safe */
	/*
	 * With 0 no READ or atomic could ever start and the QP would hang;
	 * with 1 such a WQE goes out and the responder, if it takes none,
	 * NAKs it: an error completion instead of a hang.
	 */
	req->max_rd_atomic = max_t(u32, attr->max_rd_atomic, 1);
	/*
	 * Later transitions (RTS -> RTS, SQD -> RTS) leave what is left of
	 * the budgets: they count consecutive failures, and a modify in the
	 * middle of a recovery is not an answer from the peer.  A smaller
	 * count (SQD -> SQD may change it) caps what is left.
	 */
	req->retry_cnt = attr->retry_cnt & 7;
	req->rnr_retry = attr->rnr_retry & 7;
	req->retries_left = min(req->retries_left, req->retry_cnt);
	req->rnr_retries_left = min(req->rnr_retries_left, req->rnr_retry);
	/*
	 * 4.096 us * 2^timeout, 0 = infinite.  At least two jiffies: one
	 * may expire at the very next tick.
	 */
	req->timeout = 0;
	if (attr->timeout) {
		timeout_ns = 4096ULL << (attr->timeout & 31);
		req->timeout = max(nsecs_to_jiffies(timeout_ns), 2UL);
	}
	spin_unlock_bh(&req->lock);

	sroce_requester_kick(qp);
}

void sroce_requester_drain(struct sroce_qp *qp, bool notify)
{
	struct sroce_requester *req = &qp->req;

	spin_lock_bh(&req->lock);
	req->draining = true;
	req->drain_notify = notify;
	spin_unlock_bh(&req->lock);
	/* Maybe drained already: the pass looks. */
	sroce_requester_kick(qp);
}

/* In SQD and not drained yet (query_qp's sq_draining). */
bool sroce_requester_draining(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	bool draining;

	spin_lock_bh(&req->lock);
	draining = req->draining && !req->error && req->tail != req->head;
	spin_unlock_bh(&req->lock);
	/* A kick whose trylock met our lock is ours to run. */
	sroce_req_run(qp);
	return draining;
}

void sroce_requester_cleanup(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	void *shadow;

	spin_lock_bh(&req->lock);
	req->dying = true;
	shadow = req->shadow;
	req->shadow = NULL;
	sroce_completer_drop_held(qp);
	spin_unlock_bh(&req->lock);

	/* The poller kicks the requester: it stops first. */
	sroce_sq_poll_stop(qp);
	timer_shutdown_sync(&req->retrans_timer);
	timer_shutdown_sync(&req->rnr_timer);
	cancel_delayed_work_sync(&req->work);
	kvfree(shadow);
}
