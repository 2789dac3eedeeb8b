// SPDX-License-Identifier: GPL-2.0-only
/*
 * Responses to our requests -> retired send WQEs.
 *
 * sroce_completer_rcv() takes one response packet through these states:
 *
 *   accept     the QP is an RC QP that sends, and the PSN is one we sent
 *              and is not yet acknowledged: [comp.psn, psn_max).  Anything
 *              else is a duplicate or a ghost and is dropped.
 *   ack before every response acknowledges the request PSNs before its
 *              own: retire the SEND/WRITE WQEs that ends there.  A READ or
 *              atomic among them lost its response: go back to it.
 *   dispatch   by kind: ACK (acknowledge through its PSN), NAK (go back,
 *              wait for RNR, or fail the WQE), READ response (scatter the
 *              payload at the offset its PSN names), atomic ACK (store
 *              the original value).
 *   finish     if comp.psn moved, the requester's retry counters and timer
 *              start over; kick the requester (the window moved, a fence
 *              or the max_rd_atomic limit may have lifted).
 *
 * Only correct, in-order responses make progress.  A READ response past
 * a gap is held until the gap fills (sroce_comp_hold()); anything else
 * surprising is dropped and left to the go-back-N it triggers or to the
 * retransmit timer, which either recovers or fails the oldest WQE with
 * IB_WC_RETRY_EXC_ERR.
 */
#include <linux/skbuff.h>

#include "completer.h"
#include "cq.h"
#include "opcode.h"
#include "pkt.h"
#include "psn.h"
#include "qp.h"
#include "requester.h"
#include "ring.h"
#include "sroce.h"
#include "trace.h"

/* Completions: the send CQ, in SQ order ---------------------------------- */

static u8 sroce_comp_wc_opcode(u8 wr_opcode)
{
	switch (wr_opcode) {
	case IB_UVERBS_WR_RDMA_WRITE:
	case IB_UVERBS_WR_RDMA_WRITE_WITH_IMM:
		return IB_UVERBS_WC_RDMA_WRITE;
	case IB_UVERBS_WR_RDMA_READ:
		return IB_UVERBS_WC_RDMA_READ;
	case IB_UVERBS_WR_ATOMIC_CMP_AND_SWP:
		return IB_UVERBS_WC_COMP_SWAP;
	case IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD:
		return IB_UVERBS_WC_FETCH_ADD;
	case SROCE_WR_ATOMIC_WRITE:
		return SROCE_WC_ATOMIC_WRITE;
	case IB_UVERBS_WR_LOCAL_INV:
		return IB_UVERBS_WC_LOCAL_INV;
	case IB_UVERBS_WR_BIND_MW:
		return IB_UVERBS_WC_BIND_MW;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;	/* kernel CQs only */
	default:
		return IB_UVERBS_WC_SEND;
	}
}

static void sroce_comp_post_cqe(struct sroce_qp *qp, struct sroce_swqe *swqe,
				enum ib_wc_status status)
{
	struct ib_uverbs_wc wc = {
		.wr_id = swqe->wr_id,
		.status = status,
		.qp_num = qp->ibqp.qp_num,
	};

	/* Only wr_id, status and qp_num are defined for an error. */
	if (status == IB_WC_SUCCESS) {
		wc.opcode = sroce_comp_wc_opcode(swqe->opcode);
		wc.byte_len = swqe->length;
	}
	sroce_cq_post(to_scq(qp->ibqp.send_cq), &wc, false);
}

/*
 * Retire the WQE at the tail: hand the ring slot back, then post a CQE if it
 * was signaled (or the QP signals all) or failed (errors always complete).
 *
 * The slot goes back first: an application that posts one WQE for each
 * completion it polls, with the queue full (perftest does), must find room
 * once it has seen the CQE.  The CQE is built from the kernel's shadow copy,
 * which the requester only overwrites under req.lock, held here.
 */
void sroce_comp_retire(struct sroce_qp *qp, enum ib_wc_status status)
{
	struct sroce_requester *req = &qp->req;
	struct sroce_swqe *swqe = sroce_req_swqe(qp, req->tail);

	if (swqe->rd_atomic_held) {
		swqe->rd_atomic_held = false;
		req->rd_atomic--;
	}
	req->tail++;
	sroce_ring_set_consumer(&qp->sq, req->tail);
	if (status != IB_WC_SUCCESS || qp->sq_sig_all ||
	    (swqe->flags & SROCE_SEND_SIGNALED))
		sroce_comp_post_cqe(qp, swqe, status);
}

/* Acknowledgment state ---------------------------------------------------- */

/* Result of looking at one response. */
struct sroce_comp_ctx {
	bool progress;		/* comp.psn moved */
	bool held;		/* the response was kept in comp.held */
	bool fault;		/* ... because its pages are faulting in */
};

static void sroce_comp_advance(struct sroce_qp *qp, struct sroce_comp_ctx *ctx,
			       u32 psn)
{
	qp->comp.psn = psn;
	qp->comp.retry_started = false;
	ctx->progress = true;
}

/*
 * Is the response at comp.psn held, its pages faulting in
 * (sroce_comp_fault())?
 */
static bool sroce_comp_fault_waits(struct sroce_qp *qp)
{
	struct sk_buff *skb = skb_peek(&qp->comp.held);

	return skb && SROCE_PKT(skb)->psn == qp->comp.psn;
}

/*
 * Responses were lost (a gap in the PSNs, or an ACK past a READ or atomic
 * whose response never came): resend from comp.psn.  Once per burst: the
 * rest of the out-of-order responses of the same burst are dropped
 * quietly until comp.psn moves again.  Not while the response at
 * comp.psn is kept for its pages: what follows it is no loss.
 */
static void sroce_comp_missing(struct sroce_qp *qp)
{
	struct sroce_completer *comp = &qp->comp;

	if (sroce_comp_fault_waits(qp))
		return;
	sroce_qp_stat_inc(qp, comp_out_of_order);
	if (comp->retry_started)
		return;
	comp->retry_started = true;
	if (!sroce_req_use_retry(qp)) {
		sroce_qp_stat_inc(qp, req_retry_exceeded);
		sroce_req_fail(qp, qp->req.tail, IB_WC_RETRY_EXC_ERR);
		return;
	}
	trace_sroce_retransmit(&qp->ibqp, comp->psn, qp->req.psn_max,
			       "out_of_order");
	sroce_req_lost(qp);
	sroce_req_send_from(qp, comp->psn);
}

/*
 * The responder received every request PSN before @end.  Retire the SEND
 * and WRITE WQEs that end before it; stop at the WQE @end falls in.
 * Returns false if a READ or atomic ends before @end: responses come in
 * order, so its response was lost.
 */
static bool sroce_comp_ack_before(struct sroce_qp *qp,
				  struct sroce_comp_ctx *ctx, u32 end)
{
	struct sroce_requester *req = &qp->req;

	while (req->tail != req->head) {
		struct sroce_swqe *swqe = sroce_req_swqe(qp, req->tail);

		if (!sroce_psn_before(swqe->first_psn, end))
			break;			/* nothing of it is covered */
		if (!sroce_psn_before(swqe->last_psn, end)) {
			/* Partly covered: a SEND/WRITE moves on. */
			if (!sroce_swqe_needs_response(swqe) &&
			    sroce_psn_before(qp->comp.psn, end))
				sroce_comp_advance(qp, ctx, end);
			break;
		}
		if (sroce_swqe_needs_response(swqe))
			return false;
		sroce_comp_advance(qp, ctx, sroce_psn_next(swqe->last_psn));
		sroce_comp_retire(qp, IB_WC_SUCCESS);
	}
	return true;
}

/* Dispatch by response kind ----------------------------------------------- */

static u8 sroce_comp_syndrome(struct sk_buff *skb)
{
	return sroce_aeth_syndrome(sroce_pkt_hdr(skb, SROCE_HDR_AETH));
}

/* ACK: everything up to and including its PSN arrived. */
static void sroce_comp_ack(struct sroce_qp *qp, struct sroce_comp_ctx *ctx,
			   u32 psn)
{
	if (!sroce_comp_ack_before(qp, ctx, sroce_psn_next(psn)))
		sroce_comp_missing(qp);
}

static enum ib_wc_status sroce_comp_nak_status(unsigned int code)
{
	switch (code) {
	case SROCE_NAK_INVALID_REQ:
		return IB_WC_REM_INV_REQ_ERR;
	case SROCE_NAK_REM_ACCESS_ERR:
		return IB_WC_REM_ACCESS_ERR;
	case SROCE_NAK_INVALID_RD_REQ:
		return IB_WC_REM_INV_RD_REQ_ERR;
	case SROCE_NAK_REM_OP_ERR:
	default:
		/* Reserved codes: the responder failed in a way we cannot name. */
		return IB_WC_REM_OP_ERR;
	}
}

/*
 * NAK at @psn: everything before it arrived, the request at @psn did not
 * execute.  A sequence error means packets were lost on the way: resend
 * from @psn (the responder NAKs once per lost sequence).  The other codes
 * are fatal: the WQE at @psn fails, the QP goes to ERR.
 */
static void sroce_comp_nak(struct sroce_qp *qp, struct sroce_comp_ctx *ctx,
			   u32 psn, unsigned int code)
{
	if (!sroce_comp_ack_before(qp, ctx, psn)) {
		sroce_comp_missing(qp);
		return;
	}
	if (code != SROCE_NAK_PSN_SEQ_ERR) {
		sroce_qp_stat_inc(qp, comp_naks_fatal);
		sroce_req_fail(qp, qp->req.tail, sroce_comp_nak_status(code));
		return;
	}

	sroce_qp_stat_inc(qp, comp_naks_seq);
	/*
	 * After an RNR NAK the responder sees the packets we had pipelined
	 * behind the refused one as out of sequence: this NAK is its echo,
	 * and the resend is already scheduled.
	 */
	if (qp->req.rnr_wait && psn == qp->comp.psn)
		return;
	if (!sroce_req_use_retry(qp)) {
		sroce_qp_stat_inc(qp, req_retry_exceeded);
		sroce_req_fail(qp, qp->req.tail, IB_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry_started = true;
	trace_sroce_retransmit(&qp->ibqp, qp->comp.psn, qp->req.psn_max,
			       "seq_nak");
	sroce_req_lost_at_gap(qp);
	sroce_req_send_from(qp, qp->comp.psn);
}

/* RNR NAK at @psn: no receive WQE was ready; wait, then resend from it. */
static void sroce_comp_rnr(struct sroce_qp *qp, struct sroce_comp_ctx *ctx,
			   u32 psn, unsigned int timer_code)
{
	if (!sroce_comp_ack_before(qp, ctx, psn)) {
		sroce_comp_missing(qp);
		return;
	}
	sroce_qp_stat_inc(qp, comp_rnr_naks);
	sroce_req_rnr_wait(qp, qp->comp.psn, timer_code);
}

static void sroce_comp_ack_or_nak(struct sroce_qp *qp,
				  struct sroce_comp_ctx *ctx,
				  struct sk_buff *skb, u32 psn)
{
	u8 syndrome = sroce_comp_syndrome(skb);
	unsigned int value = syndrome & SROCE_AETH_VALUE_MASK;

	trace_sroce_nak_rcvd(&qp->ibqp, psn, syndrome);
	switch (syndrome & SROCE_AETH_TYPE_MASK) {
	case SROCE_AETH_ACK:
		sroce_comp_ack(qp, ctx, psn);
		break;
	case SROCE_AETH_RNR_NAK:
		sroce_comp_rnr(qp, ctx, psn, value);
		break;
	case SROCE_AETH_NAK:
		sroce_comp_nak(qp, ctx, psn, value);
		break;
	default:
		/* Reserved syndrome types. */
		sroce_qp_stat_inc(qp, comp_dropped);
		break;
	}
}

/* READ responses past a gap --------------------------------------------- */

/*
 * A READ response ahead of comp.psn (after the requests before it were
 * acknowledged): the responses before it are missing, lost or overtaken.
 * Keep it (sorted by PSN, sroce_held_add()) instead of going back
 * at once: the responder would replay everything from the gap to the end
 * of the READ, this response included, and under reordering every late
 * packet would start another replay.  Once comp.patience responses wait
 * (completer.h), a READ's last one came, or a retransmit probe went out,
 * the gap is taken as a loss (one go-back-N per gap,
 * sroce_comp_missing()); the replay then fills it and what is held is
 * used, the rest of the replay being duplicates.  False if it cannot be
 * held (too far ahead, no room): the caller goes back at once.
 */
static bool sroce_comp_hold(struct sroce_qp *qp, struct sroce_comp_ctx *ctx,
			    struct sk_buff *skb, u32 psn)
{
	struct sroce_completer *comp = &qp->comp;

	if (sroce_opcodes[SROCE_PKT(skb)->opcode].kind != SROCE_OPK_READ_RESP ||
	    sroce_psn_diff(comp->psn, psn) > SROCE_COMP_HELD_SPAN)
		return false;
	switch (sroce_held_add(&comp->held, &qp->sdev->comp_held_bytes,
			       SROCE_COMP_HELD_DEV_BYTES, skb)) {
	case SROCE_HELD_ADDED:
		ctx->held = true;
		sroce_qp_stat_inc(qp, comp_held);
		break;
	case SROCE_HELD_DUPLICATE:
		/* This copy is dropped. */
		sroce_qp_stat_inc(qp, comp_duplicates);
		break;
	case SROCE_HELD_NO_ROOM:
		return false;
	}

	/*
	 * A READ's last response: no more of it can come to show the gap
	 * is a loss, and waiting would cost a probe delay, while going back
	 * near the end of a READ replays little.  After a probe the gap has
	 * lasted a whole probe delay: it is a loss (the probe asked for the
	 * READ's last response, requester.c, and this may be its answer).
	 */
	if ((sroce_opcodes[SROCE_PKT(skb)->opcode].flags & SROCE_OPF_LAST) ||
	    qp->req.probes || skb_queue_len(&comp->held) >= comp->patience)
		sroce_comp_missing(qp);
	return true;
}

/*
 * @skb, at comp.psn, filled the gap before the held responses (it was
 * checked and used, and the held ones are not run yet).  If it is the
 * original response, not a replay we asked for, the path reordered
 * (rather than lost) by as many packets as overtook it: be that patient
 * from now on.  A replay starts with READ_RESPONSE_FIRST (or is an ONLY,
 * the answer to a probe), so a MIDDLE or LAST can only be the original;
 * a FIRST may be either and teaches nothing.
 */
static void sroce_comp_learn(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_completer *comp = &qp->comp;
	u32 depth = skb_queue_len(&comp->held);
	u8 opcode = SROCE_PKT(skb)->opcode;

	if (depth < comp->patience ||
	    comp->patience >= SROCE_COMP_PATIENCE_MAX ||
	    sroce_opcodes[opcode].kind != SROCE_OPK_READ_RESP ||
	    (sroce_opcodes[opcode].flags & SROCE_OPF_FIRST))
		return;
	/* WRITE_ONCE: restrack reads it without the lock. */
	WRITE_ONCE(comp->patience, min_t(u32, depth + 1,
					 SROCE_COMP_PATIENCE_MAX));
	sroce_qp_stat_inc(qp, comp_patience_raised);
}

/*
 * Before a READ response or atomic ACK at @psn is used: acknowledge what
 * precedes it, and check that it is the response we wait for, for a WQE
 * of the right kind.  Returns that WQE, or NULL (dropped or missing).
 */
static struct sroce_swqe *sroce_comp_expect(struct sroce_qp *qp,
					    struct sroce_comp_ctx *ctx,
					    struct sk_buff *skb, u32 psn,
					    bool (*kind)(const struct sroce_swqe *))
{
	struct sroce_swqe *swqe;

	if (!sroce_comp_ack_before(qp, ctx, psn) ||
	    sroce_psn_before(qp->comp.psn, psn)) {
		if (!sroce_comp_hold(qp, ctx, skb, psn))
			sroce_comp_missing(qp);
		return NULL;
	}
	swqe = sroce_req_swqe(qp, qp->req.tail);
	if (!kind(swqe) ||
	    (sroce_opcode_has(SROCE_PKT(skb)->opcode, SROCE_HDR_AETH) &&
	     (sroce_comp_syndrome(skb) & SROCE_AETH_TYPE_MASK) != SROCE_AETH_ACK)) {
		/* A response that matches no request of ours. */
		sroce_qp_stat_inc(qp, comp_dropped);
		return NULL;
	}
	return swqe;
}

/* Copy target of a READ response: the WQE's SGEs from @offset on. */
struct sroce_comp_to_swqe {
	struct sroce_qp *qp;
	struct sroce_swqe *swqe;
	u64 offset;
	enum ib_wc_status status;
};

static int sroce_comp_copy_to_swqe(void *ctx, const void *buf, u32 len)
{
	struct sroce_comp_to_swqe *t = ctx;

	/* sroce_swqe_copy_sges() only reads @buf in this direction. */
	t->status = sroce_swqe_copy_sges(t->qp, t->swqe, t->offset, (void *)buf,
					 len, SROCE_TO_MR);
	t->offset += len;
	return t->status != IB_WC_SUCCESS;
}

/*
 * The payload of a READ response, wherever it lies: a zero-copy
 * response from a local or veth peer arrives as the responder's page
 * fragments, and is copied once, from there into the WQE's memory.
 */
static enum ib_wc_status sroce_comp_copy_payload(struct sroce_qp *qp,
						 struct sroce_swqe *swqe,
						 u64 offset,
						 struct sk_buff *skb, u32 len)
{
	struct sroce_comp_to_swqe t = {
		.qp = qp, .swqe = swqe, .offset = offset,
		.status = IB_WC_SUCCESS,
	};

	sroce_pkt_copy_payload(skb, 0, len, sroce_comp_copy_to_swqe, &t);
	return t.status;
}

/*
 * The response at comp.psn found the WQE's pages faulting in (odp.c).
 * Keep it, as one past a gap, and place it a tick later, from the
 * requester's pass (sroce_completer_fault_retry()): nothing is lost, so
 * nothing is asked for again and no retry is used up; the responses
 * behind it are held and follow it.  The peer did answer: the retransmit
 * timer starts over.  Without room to keep it, it is dropped, and the
 * requester's go-back-N asks for it again.
 */
static void sroce_comp_fault(struct sroce_qp *qp, struct sroce_comp_ctx *ctx,
			     struct sk_buff *skb)
{
	sroce_qp_stat_inc(qp, comp_fault_waits);
	switch (sroce_held_add(&qp->comp.held, &qp->sdev->comp_held_bytes,
			       SROCE_COMP_HELD_DEV_BYTES, skb)) {
	case SROCE_HELD_ADDED:
		ctx->held = true;
		ctx->fault = true;
		break;
	case SROCE_HELD_DUPLICATE:
		break;		/* another copy waits already */
	case SROCE_HELD_NO_ROOM:
		sroce_qp_stat_inc(qp, comp_dropped);
		return;
	}
	sroce_req_alive(qp);
	sroce_req_fault_retry_later(qp);
}

/*
 * READ response at @psn: its payload is the message bytes from offset
 * (psn - first_psn) * MTU.  Every packet but the last carries exactly one
 * MTU, the last one the rest; FIRST and MIDDLE may not be last, LAST and
 * ONLY must be.  The opcode is not checked against the start of the
 * request: after a READ was restarted in the middle, the new response
 * begins with FIRST at a PSN an old MIDDLE may also arrive with, and both
 * carry the same bytes.
 */
static void sroce_comp_read_resp(struct sroce_qp *qp,
				 struct sroce_comp_ctx *ctx,
				 struct sk_buff *skb, u32 psn)
{
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	struct sroce_swqe *swqe;
	enum ib_wc_status status;
	bool last, ends;
	u64 offset;
	u32 len;

	swqe = sroce_comp_expect(qp, ctx, skb, psn, sroce_swqe_wants_read_resp);
	if (!swqe)
		return;
	if (sroce_swqe_is_atomic_write(swqe)) {
		/* Its answer: a READ RESPONSE ONLY without payload. */
		if (sroce_opcode_rc(pkt->opcode) !=
		    SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY || pkt->paylen) {
			sroce_qp_stat_inc(qp, comp_dropped);
			return;
		}
		sroce_comp_advance(qp, ctx, sroce_psn_next(psn));
		sroce_comp_retire(qp, IB_WC_SUCCESS);
		return;
	}

	offset = (u64)((psn - swqe->first_psn) & SROCE_PSN_MASK) * qp->req.mtu;
	last = psn == swqe->last_psn;
	ends = sroce_opcodes[pkt->opcode].flags & SROCE_OPF_LAST;
	len = last ? swqe->length - offset : qp->req.mtu;
	if (last != ends || pkt->paylen != len) {
		sroce_qp_stat_inc(qp, comp_dropped);
		return;
	}

	status = sroce_comp_copy_payload(qp, swqe, offset, skb, len);
	if (status == SROCE_WC_PAGE_FAULT) {
		sroce_comp_fault(qp, ctx, skb);
		return;
	}
	if (status != IB_WC_SUCCESS) {
		sroce_req_fail(qp, qp->req.tail, status);
		return;
	}
	sroce_comp_advance(qp, ctx, sroce_psn_next(psn));
	if (last)
		sroce_comp_retire(qp, IB_WC_SUCCESS);
}

/* Atomic ACK: the original value goes to the WQE's 8-byte local buffer. */
static void sroce_comp_atomic_ack(struct sroce_qp *qp,
				  struct sroce_comp_ctx *ctx,
				  struct sk_buff *skb, u32 psn)
{
	struct sroce_atmack *atmack = sroce_pkt_hdr(skb, SROCE_HDR_ATMACK);
	struct sroce_swqe *swqe;
	enum ib_wc_status status;
	u64 orig;

	swqe = sroce_comp_expect(qp, ctx, skb, psn, sroce_swqe_is_atomic);
	if (!swqe)
		return;

	/* The verbs return it in host order, like any local 64-bit value. */
	orig = be64_to_cpu(atmack->orig);
	status = sroce_swqe_copy_sges(qp, swqe, 0, &orig, sizeof(orig),
				      SROCE_TO_MR);
	if (status == SROCE_WC_PAGE_FAULT) {
		sroce_comp_fault(qp, ctx, skb);
		return;
	}
	if (status != IB_WC_SUCCESS) {
		sroce_req_fail(qp, qp->req.tail, status);
		return;
	}
	sroce_comp_advance(qp, ctx, sroce_psn_next(psn));
	sroce_comp_retire(qp, IB_WC_SUCCESS);
}

/*
 * Is @psn one we sent and that is not acknowledged yet?  Responses to
 * retransmitted requests that were already answered land before comp.psn
 * (duplicates); PSNs at or past psn_max were never sent (ghosts, e.g.
 * from a previous QP with the same number).
 */
static void sroce_comp_replay_seen(struct sroce_qp *qp, struct sk_buff *skb,
				   u32 psn);

static bool sroce_comp_accept(struct sroce_qp *qp, struct sk_buff *skb,
			      u32 psn)
{
	struct sroce_requester *req = &qp->req;

	if (req->dying || !req->shadow || !req->started || req->error) {
		/* Nothing to complete: not connected, in error or going. */
		sroce_qp_stat_inc(qp, comp_dropped);
		return false;
	}
	if (sroce_psn_in_range(psn, qp->comp.psn,
			       (req->psn_max - qp->comp.psn) & SROCE_PSN_MASK))
		return true;
	if (sroce_psn_before(psn, qp->comp.psn)) {
		sroce_qp_stat_inc(qp, comp_duplicates);
		sroce_comp_replay_seen(qp, skb, psn);
	} else {
		sroce_qp_stat_inc(qp, comp_ghosts);
	}
	return false;
}

/*
 * A READ response before comp.psn for the READ we wait on: the responder
 * replays it because we asked again while its responses were on their
 * way (a probe or a timeout that crossed them).  It is alive and works
 * through the replay towards comp.psn, which takes as long as the
 * responses we already had: the retransmit timer starts over (the retry
 * count does not), or a long replay would time out and be asked again.
 */
static void sroce_comp_replay_seen(struct sroce_qp *qp, struct sk_buff *skb,
				   u32 psn)
{
	struct sroce_requester *req = &qp->req;
	struct sroce_swqe *swqe;

	if (req->tail == req->head ||
	    sroce_opcodes[SROCE_PKT(skb)->opcode].kind != SROCE_OPK_READ_RESP)
		return;
	swqe = sroce_req_swqe(qp, req->tail);
	if (sroce_swqe_is_read(swqe) &&
	    !sroce_psn_before(psn, swqe->first_psn))
		sroce_req_alive(qp);
}

static void sroce_comp_dispatch(struct sroce_qp *qp,
				struct sroce_comp_ctx *ctx,
				struct sk_buff *skb, u32 psn)
{
	switch (sroce_opcodes[SROCE_PKT(skb)->opcode].kind) {
	case SROCE_OPK_ACK:
		sroce_comp_ack_or_nak(qp, ctx, skb, psn);
		break;
	case SROCE_OPK_READ_RESP:
		sroce_comp_read_resp(qp, ctx, skb, psn);
		break;
	case SROCE_OPK_ATOMIC_ACK:
		sroce_comp_atomic_ack(qp, ctx, skb, psn);
		break;
	default:
		/* recv.c sends only response opcodes here. */
		sroce_qp_stat_inc(qp, comp_dropped);
		break;
	}
}

/* Held READ responses, once the gap fills -------------------------------- */

/*
 * comp.psn moved: use the held responses it reached, in order.  Those it
 * went past (a replay answered them first) are duplicates.  Stops when
 * one fails the QP: the flush frees the rest.
 */
static void sroce_comp_held_run(struct sroce_qp *qp,
				struct sroce_comp_ctx *ctx)
{
	struct sk_buff *skb;

	while (!qp->req.error && (skb = skb_peek(&qp->comp.held))) {
		struct sroce_comp_ctx one = { };
		u32 psn = SROCE_PKT(skb)->psn;
		s32 diff = sroce_psn_diff(qp->comp.psn, psn);

		if (diff > 0)
			break;
		sroce_held_unlink(&qp->comp.held, &qp->sdev->comp_held_bytes,
				  skb);
		if (diff)
			sroce_qp_stat_inc(qp, comp_duplicates);
		else
			sroce_comp_dispatch(qp, &one, skb, psn);
		ctx->progress |= one.progress;
		if (one.fault)
			break;		/* kept again: its pages are not in yet */
		if (!one.held)
			sroce_pkt_consume(skb);
	}
}

void sroce_completer_fault_retry(struct sroce_qp *qp)
{
	struct sroce_comp_ctx ctx = { };

	sroce_comp_held_run(qp, &ctx);
	if (ctx.progress && !qp->req.error)
		sroce_req_acked(qp);
}

/*
 * Receive hook for response opcodes, from the receive softirq.  recv.c
 * has checked the headers, the ICRC, the opcode (a valid RC response
 * opcode) and the lengths; the PSN and its meaning are checked here.
 */
void sroce_completer_rcv(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_requester *req = &qp->req;
	struct sroce_comp_ctx ctx = { };
	u32 psn = SROCE_PKT(skb)->psn;

	spin_lock_bh(&req->lock);
	if (sroce_qp_is_reliable(qp) && sroce_comp_accept(qp, skb, psn)) {
		bool expected = psn == qp->comp.psn;

		sroce_comp_dispatch(qp, &ctx, skb, psn);
		if (ctx.progress) {
			/* Only from a response that was checked and used. */
			if (expected)
				sroce_comp_learn(qp, skb);
			sroce_comp_held_run(qp, &ctx);
		}
	}
	if (ctx.progress && !req->error)
		sroce_req_acked(qp);
	/* Have the requester look: the window may be open, the QP failed. */
	set_bit(SROCE_REQ_KICK, &req->pending);
	spin_unlock_bh(&req->lock);

	sroce_req_run(qp);
	if (!ctx.held)
		sroce_pkt_consume(skb);
}

void sroce_completer_init(struct sroce_qp *qp)
{
	skb_queue_head_init(&qp->comp.held);
}

void sroce_completer_drop_held(struct sroce_qp *qp)
{
	sroce_held_purge(&qp->comp.held, &qp->sdev->comp_held_bytes);
}

void sroce_completer_reset(struct sroce_qp *qp)
{
	sroce_completer_drop_held(qp);
	qp->comp.psn = 0;
	qp->comp.retry_started = false;
	WRITE_ONCE(qp->comp.patience, SROCE_COMP_PATIENCE_MIN);
}
