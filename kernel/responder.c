// SPDX-License-Identifier: GPL-2.0-only
/*
 * Request packets -> memory, receive WQEs, ACKs and responses.
 *
 * sroce_resp_packet() takes one request through these states (IBA vol 1
 * 9.7.5.1 gives the order of the checks):
 *
 *   sequence   RC: PSN == epsn executes; before it is a duplicate
 *              (sroce_resp_duplicate()); after it a sequence error
 *              (one NAK), and the packet is held until the gap fills
 *              (sroce_resp_hold()).  UC: a gap drops the message in
 *              progress.
 *   opcode     the opcode may follow the previous one (opcode table),
 *              the QP allows its kind of remote access, its payload
 *              length fits its place in the message and the path MTU
 *   execute    by kind: SEND (receive WQE, scatter), RDMA WRITE (rkey,
 *              copy; with immediate also a receive WQE), READ (resource,
 *              responses), atomic (resource, one module-wide lock)
 *   answer     ACK when asked for, every SROCE_RESP_ACK_EVERY packets,
 *              and SROCE_RESP_ACK_DELAY after one that did not ask;
 *              READ and atomic answer with their responses
 *
 * Errors (IBA 9.9.3, responder classes): no receive WQE is an RNR NAK
 * carrying min_rnr_timer (the requester retries); everything else is
 * fatal on RC: a NAK (invalid request, remote access, remote operational
 * error), the receive WQE in use completes with the matching status, and
 * the QP goes to ERR, which flushes the other receive WQEs.  On UC the
 * message is dropped silently.
 *
 * Teardown (sroce_responder_cleanup(), QP destroy or reset, process
 * context): mark the responder dying and drop the backlog and the held
 * requests under the lock, so the work item finds nothing to do and does
 * not requeue itself; then cancel it; then free the receive WQE copy.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/minmax.h>
#include <linux/slab.h>

#include "cq.h"
#include "mr.h"
#include "mw.h"
#include "opcode.h"
#include "pkt.h"
#include "psn.h"
#include "qp.h"
#include "responder.h"
#include "sroce.h"
#include "srq.h"
#include "trace.h"

/* Between messages: no opcode, so only a FIRST or ONLY may follow. */
#define SROCE_RESP_NO_OPCODE	0xff

static struct workqueue_struct *sroce_resp_wq;

/* Atomics are atomic with respect to every QP of every sroce device. */
static DEFINE_SPINLOCK(sroce_atomic_lock);

/*
 * WQ_MEM_RECLAIM: storage ULPs may wait on READ responses to free memory.
 * Per-CPU, not unbound: see sroce_resp_schedule().
 */
int sroce_responder_module_init(void)
{
	sroce_resp_wq = alloc_workqueue("sroce_resp", WQ_HIGHPRI |
					WQ_MEM_RECLAIM, 0);
	return sroce_resp_wq ? 0 : -ENOMEM;
}

void sroce_responder_module_exit(void)
{
	destroy_workqueue(sroce_resp_wq);
}

/* What executing one packet came to. */
enum sroce_resp_result {
	SROCE_RESP_DONE,	/* executed: acknowledge per policy */
	SROCE_RESP_ANSWERED,	/* executed, and a response went out */
	SROCE_RESP_DROP,	/* ignore the packet (QP going down) */
	SROCE_RESP_RNR,		/* no receive WQE: RNR NAK, retry later */
	SROCE_RESP_RNR_FAULT,	/* ODP pages faulting in (odp.c): the same */
	/* Fatal on RC; see sroce_resp_errors[]. */
	SROCE_RESP_E_INV_REQ,	/* bad opcode sequence, length, operation */
	SROCE_RESP_E_MSG_LEN,	/* message longer than the receive WQE */
	SROCE_RESP_E_ACCESS,	/* rkey, range or access rights */
	SROCE_RESP_E_LOC_PROT,	/* the receive WQE's lkey */
	SROCE_RESP_E_WQE,	/* malformed receive WQE or receive queue */
	SROCE_RESP_E_INVAL_KEY,	/* SEND with invalidate of a key we cannot */
	SROCE_RESP_NR
};

/* The NAK a fatal error sends, and the status of the receive WQE in use. */
static const struct {
	u8 nak;
	u8 wc_status;
} sroce_resp_errors[SROCE_RESP_NR] = {
	[SROCE_RESP_E_INV_REQ] = { SROCE_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR },
	[SROCE_RESP_E_MSG_LEN] = { SROCE_NAK_INVALID_REQ, IB_WC_LOC_LEN_ERR },
	[SROCE_RESP_E_ACCESS] = { SROCE_NAK_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR },
	[SROCE_RESP_E_LOC_PROT] = { SROCE_NAK_REM_OP_ERR, IB_WC_LOC_PROT_ERR },
	[SROCE_RESP_E_WQE] = { SROCE_NAK_REM_OP_ERR, IB_WC_LOC_QP_OP_ERR },
	[SROCE_RESP_E_INVAL_KEY] = { SROCE_NAK_INVALID_REQ, IB_WC_REM_INV_REQ_ERR },
};

static const struct sroce_opcode_info *sroce_resp_op(struct sk_buff *skb)
{
	return sroce_opcode_info(SROCE_PKT(skb)->opcode);
}

/* RC or an XRC target: acknowledged, executed in PSN order. */
static bool sroce_resp_is_rc(const struct sroce_qp *qp)
{
	return sroce_qp_is_reliable(qp);
}

/*
 * A request dropped without an answer: count it in the QP's counter
 * @field and trace it, naming that counter (a counter's name is its
 * field's, stats.c).
 */
static void sroce_resp_drop_at(struct sroce_qp *qp,
			       const struct sroce_pkt *pkt, size_t offset,
			       const char *name)
{
	sroce_qp_stat_add_at(qp, offset, 1);
	trace_sroce_drop(&qp->sdev->ibdev, qp->ibqp.qp_num, pkt->psn, name);
}

#define sroce_resp_drop(qp, pkt, field) \
	sroce_resp_drop_at(qp, pkt, offsetof(struct sroce_stats, field), #field)

/* ---- acknowledgments -------------------------------------------------------- */

/*
 * End-to-end credits (IBA 9.7.7.2): the receive WQEs posted beyond the one
 * in use, rounded down to what the AETH encoding can say.
 */
static u8 sroce_resp_credits(struct sroce_qp *qp)
{
	u8 code;
	u32 n;

	/* An SRQ's WQEs are not this QP's to promise (IBA 9.7.7.2.6). */
	if (qp->ibqp.srq || !sroce_ring_present(&qp->rq))
		return SROCE_AETH_CREDIT_INVALID;
	n = sroce_ring_published(&qp->rq, READ_ONCE(qp->rq_tail));
	if (n == U32_MAX)
		return SROCE_AETH_CREDIT_INVALID;
	if (qp->resp.have_rwqe && n)
		n--;
	for (code = 0; code < SROCE_AETH_CREDIT_INVALID - 1; code++) {
		if (sroce_aeth_credits(code + 1) > n)
			break;
	}
	return code;
}

/*
 * A response without payload at @psn whose AETH says @syndrome: an ACK or
 * NAK, an atomic ACK (its AtomicAckETH still to fill), an ATOMIC WRITE's
 * empty READ RESPONSE ONLY.  @rc_opcode is the RC one (XRC QPs send XRC).
 */
static struct sk_buff *sroce_resp_answer(struct sroce_qp *qp, u8 rc_opcode,
					 u32 psn, u8 syndrome)
{
	struct sk_buff *skb;

	skb = sroce_pkt_alloc(qp, sroce_qp_opcode(qp, rc_opcode), psn, 0, 0);
	if (skb)
		sroce_aeth_set(sroce_pkt_hdr(skb, SROCE_HDR_AETH), syndrome,
			       qp->resp.msn);
	return skb;
}

/* An ACK, NAK or RNR NAK with @syndrome at @psn; a lost one is retried. */
static int sroce_resp_send_ack(struct sroce_qp *qp, u8 syndrome, u32 psn)
{
	struct sk_buff *skb;

	skb = sroce_resp_answer(qp, SROCE_OP_RC_ACKNOWLEDGE, psn, syndrome);
	if (!skb)
		return -ENOMEM;
	trace_sroce_nak_sent(&qp->ibqp, psn, syndrome);
	return sroce_pkt_send(qp, skb);
}

static void sroce_resp_schedule(struct sroce_qp *qp, unsigned long delay);

/*
 * An ACK refused by a full transmit queue (-ENOBUFS) would leave the
 * requester waiting for its retransmit probe (milliseconds); it is sent
 * again from the work item instead, at once for the first few times in a
 * row, then a tick apart, unless a later ACK went out meanwhile (it
 * acknowledges everything the refused one did).
 */
static void sroce_resp_ack(struct sroce_qp *qp, u32 psn)
{
	struct sroce_responder *resp = &qp->resp;
	int err;

	err = sroce_resp_send_ack(qp, SROCE_AETH_ACK | sroce_resp_credits(qp),
				  psn);
	resp->unacked = 0;
	if (err == -ENOBUFS) {
		resp->ack_retry = true;
		resp->ack_retry_psn = psn;
		sroce_resp_schedule(qp, resp->ack_busy++ < SROCE_RESP_BUSY_RETRIES ?
				    0 : 1);
		return;
	}
	resp->ack_retry = false;
	resp->ack_busy = 0;
}

static void sroce_resp_nak(struct sroce_qp *qp, u8 code, u32 psn)
{
	sroce_resp_send_ack(qp, SROCE_AETH_NAK | code, psn);
}

/* ---- sequence ------------------------------------------------------------------ */

/* The request at @pkt executed and used @npsn PSNs (a READ: its responses). */
static void sroce_resp_advance(struct sroce_responder *resp,
			       const struct sroce_pkt *pkt, u32 npsn)
{
	resp->epsn = sroce_psn_add(pkt->psn, npsn);
	resp->last_opcode = pkt->opcode;
	if (sroce_opcode_info(pkt->opcode)->flags & SROCE_OPF_LAST) {
		resp->msn = sroce_psn_next(resp->msn);
		resp->last_opcode = SROCE_RESP_NO_OPCODE;
	}
}

/*
 * UC (IBA 9.8.3): no retransmission exists, so a PSN gap or a broken
 * opcode sequence loses the message in progress; the receive WQE it used
 * is kept for the next message.  A packet that starts a message resyncs
 * the expected PSN.  Returns whether @pkt may execute.
 */
static void sroce_resp_uc_abandon(struct sroce_responder *resp)
{
	resp->recv_len = 0;
	resp->recv_sge = 0;
	resp->recv_sge_off = 0;
	resp->last_opcode = SROCE_RESP_NO_OPCODE;
}

static bool sroce_resp_uc_accept(struct sroce_responder *resp,
				 const struct sroce_pkt *pkt)
{
	if (pkt->psn == resp->epsn && !resp->uc_drop &&
	    sroce_opcode_may_follow(resp->last_opcode, pkt->opcode))
		return true;

	sroce_resp_uc_abandon(resp);
	resp->uc_drop = !sroce_opcode_starts_message(pkt->opcode);
	resp->epsn = sroce_psn_next(pkt->psn);
	return !resp->uc_drop;
}

/* ---- XRC ------------------------------------------------------------------------ */

/*
 * XRC (IBA 9.3.5): the XRCETH of every request names the XRC SRQ that
 * receives it and whose PD its memory accesses are checked against.  It
 * must exist and be in the target QP's XRC domain, and a message that
 * took a receive WQE must keep naming the SRQ it took it from; anything
 * else is an invalid request (NAK, counted in resp_xrc_bad_srq).  On
 * success resp.xsrq holds the SRQ until sroce_resp_xrc_leave().
 */
static enum sroce_resp_result sroce_resp_xrc_enter(struct sroce_qp *qp,
						   u32 srqn)
{
	struct sroce_responder *resp = &qp->resp;
	struct sroce_srq *srq = sroce_xrc_srq_get(qp->sdev, srqn);

	if (srq && srq->ibsrq.ext.xrc.xrcd == qp->ibqp.xrcd) {
		resp->xsrq = &srq->ibsrq;
		return SROCE_RESP_DONE;
	}
	if (srq)
		sroce_srq_put(srq);
	return SROCE_RESP_E_INV_REQ;
}

static void sroce_resp_xrc_leave(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	if (resp->xsrq) {
		sroce_srq_put(to_ssrq(resp->xsrq));
		resp->xsrq = NULL;
	}
}

static enum sroce_resp_result sroce_resp_xrc_request(struct sroce_qp *qp,
						     struct sk_buff *skb)
{
	const struct sroce_xrceth *xrceth = sroce_pkt_hdr(skb, SROCE_HDR_XRCETH);
	enum sroce_resp_result res;

	res = sroce_resp_xrc_enter(qp, sroce_xrceth_srqn(xrceth));
	if (res == SROCE_RESP_DONE && qp->resp.have_rwqe &&
	    READ_ONCE(qp->xrc_srq) != to_ssrq(qp->resp.xsrq)) {
		sroce_resp_xrc_leave(qp);
		res = SROCE_RESP_E_INV_REQ;
	}
	if (res != SROCE_RESP_DONE)
		sroce_resp_drop(qp, SROCE_PKT(skb), resp_xrc_bad_srq);
	return res;
}

/* ---- receive WQEs ---------------------------------------------------------------- */

/*
 * A SEND or WRITE with immediate starts: take the oldest receive WQE.
 * One still held is reused: a UC message that was dropped part way did
 * not complete it (and an SRQ WQE, once taken, is ours until then).
 */
static enum sroce_resp_result sroce_resp_take_rwqe(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	switch (resp->have_rwqe ? 0 : sroce_rq_fetch(qp, resp->rwqe)) {
	case 0:
		break;
	case -ENOENT:
		return SROCE_RESP_RNR;
	case -ESHUTDOWN:
		return SROCE_RESP_DROP;		/* flushing: QP in error */
	case -EINVAL:
		resp->have_rwqe = true;		/* completes in error */
		return SROCE_RESP_E_WQE;
	default:
		return SROCE_RESP_E_WQE;	/* corrupt ring indices */
	}
	resp->have_rwqe = true;
	resp->recv_len = 0;
	resp->recv_sge = 0;
	resp->recv_sge_off = 0;
	return SROCE_RESP_DONE;
}

/*
 * The fields of a UD receive completion that come from the IP header.
 * RoCE has no LIDs and sroce one P_Key and SL 0.  Kernel consumers (the
 * MAD layer, rdma_cm) build a reply's address from the completion:
 * the network type tells them how to read the GRH area, and a packet
 * that came in on a VLAN netdev names its VLAN (see sroce_cq_post()).
 */
static void sroce_resp_ud_wc(struct sroce_qp *qp, const struct sk_buff *skb,
			     struct ib_uverbs_wc *wc)
{
	wc->sl = 0;
	wc->pkey_index = 0;
	if (qp->user)
		return;
	wc->reserved = ip_hdr(skb)->version == 4 ? RDMA_NETWORK_IPV4 :
						   RDMA_NETWORK_IPV6;
	if (is_vlan_dev(skb->dev)) {
		wc->wc_flags |= SROCE_WC_KERNEL_VLAN;
		wc->slid = vlan_dev_vlan_id(skb->dev);
	}
}

/*
 * Complete the receive WQE in use.  @skb is the packet that ends the
 * message (NULL for an error completion).
 */
static void sroce_resp_complete(struct sroce_qp *qp, struct sk_buff *skb,
				enum ib_wc_status status)
{
	struct sroce_responder *resp = &qp->resp;
	struct ib_uverbs_wc wc = {
		.wr_id = resp->rwqe->wr_id,
		.status = status,
		.qp_num = qp->ibqp.qp_num,
	};
	const struct sroce_opcode_info *op;

	resp->have_rwqe = false;
	if (status != IB_WC_SUCCESS || !skb) {
		/* Only wr_id, status and qp_num are defined for an error. */
		wc.opcode = IB_WC_RECV;
		sroce_rq_complete(qp, &wc, false);
		return;
	}

	op = sroce_resp_op(skb);
	wc.src_qp = qp->attr.dest_qp_num;
	wc.port_num = 1;
	if (op->hdrs & SROCE_HDRM_DETH) {
		const struct sroce_deth *deth = sroce_pkt_hdr(skb, SROCE_HDR_DETH);

		/* UD: the sender is in the packet; a GRH leads the data. */
		wc.src_qp = sroce_deth_sqp(deth);
		wc.wc_flags |= SROCE_WC_GRH;
		sroce_resp_ud_wc(qp, skb, &wc);
	}
	if (op->kind == SROCE_OPK_WRITE) {
		wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
		wc.byte_len = resp->write_len;
	} else {
		wc.opcode = IB_WC_RECV;
		wc.byte_len = resp->recv_len;
	}
	if (op->hdrs & SROCE_HDRM_IMMDT) {
		const struct sroce_immdt *immdt = sroce_pkt_hdr(skb, SROCE_HDR_IMMDT);

		wc.ex.imm_data = immdt->imm;
		wc.wc_flags |= SROCE_WC_WITH_IMM;
	} else if (op->hdrs & SROCE_HDRM_IETH) {
		const struct sroce_ieth *ieth = sroce_pkt_hdr(skb, SROCE_HDR_IETH);

		wc.ex.invalidate_rkey = be32_to_cpu(ieth->rkey);
		wc.wc_flags |= SROCE_WC_WITH_INV;
	}
	sroce_rq_complete(qp, &wc, sroce_pkt_se(skb));
}

/* Scatter state: where the next payload byte goes in the receive WQE. */
struct sroce_resp_scatter {
	struct sroce_qp *qp;
	struct sroce_responder *resp;
};

/*
 * Copy one linear piece of payload to the receive WQE's SGEs.  Each lkey
 * is looked up and checked when used: the WQE may name anything.
 */
static int sroce_resp_scatter(void *ctx, const void *buf, u32 len)
{
	struct sroce_resp_scatter *s = ctx;
	struct sroce_responder *resp = s->resp;
	struct sroce_qp *qp = s->qp;

	while (len) {
		const struct sroce_sge *sge;
		struct sroce_mr *mr;
		u64 addr;
		u32 chunk;
		int err;

		if (resp->recv_sge >= resp->rwqe->num_sge)
			return -ENOSPC;
		sge = &resp->rwqe->sge[resp->recv_sge];
		chunk = min(len, sge->length - resp->recv_sge_off);
		if (!chunk) {
			resp->recv_sge++;
			resp->recv_sge_off = 0;
			continue;
		}
		addr = sge->addr + resp->recv_sge_off;
		mr = sroce_mr_get(qp->sdev, sge->lkey);
		if (!mr)
			return -EACCES;
		if (sroce_mr_check(mr, sroce_qp_pd(qp), addr, chunk,
				   IB_ACCESS_LOCAL_WRITE)) {
			sroce_mr_put(mr);
			return -EACCES;
		}
		/* sroce_mr_copy() only reads @buf in this direction. */
		err = sroce_mr_copy(mr, addr, (void *)buf, chunk, SROCE_TO_MR);
		/*
		 * ODP pages faulting in: fault in the rest of the SGE too
		 * (where it is the MR's), not a packet's worth per RNR NAK.
		 */
		if (err == -EAGAIN)
			sroce_mr_prefault(mr, sroce_qp_pd(qp), addr,
					  sge->length - resp->recv_sge_off,
					  true);
		sroce_mr_put(mr);
		if (err)
			return err;
		resp->recv_sge_off += chunk;
		buf += chunk;
		len -= chunk;
	}
	return 0;
}

/* Copy target of an RDMA WRITE: a checked MR range. */
struct sroce_resp_to_mr {
	struct sroce_mr *mr;
	u64 iova;
};

static int sroce_resp_copy_to_mr(void *ctx, const void *buf, u32 len)
{
	struct sroce_resp_to_mr *t = ctx;
	int err;

	err = sroce_mr_copy(t->mr, t->iova, (void *)buf, len, SROCE_TO_MR);
	t->iova += len;
	return err;
}

/* A copy to or from an MR failed: an ODP MR's pages are on their way. */
static enum sroce_resp_result sroce_resp_copy_failed(int err)
{
	return err == -EAGAIN ? SROCE_RESP_RNR_FAULT : SROCE_RESP_E_ACCESS;
}

/* ---- SEND ---------------------------------------------------------------------- */

/*
 * SEND with invalidate (IBA 10.6.6.3): only memory that can be invalidated
 * (fast-registration MRs, type 2 windows bound through this QP) of the
 * QP's PD may be named; any other key is an invalid request.
 */
static enum sroce_resp_result sroce_resp_invalidate(struct sroce_qp *qp,
						    u32 rkey)
{
	if (sroce_key_invalidate(qp, rkey, true))
		return SROCE_RESP_E_INVAL_KEY;
	return SROCE_RESP_DONE;
}

static enum sroce_resp_result sroce_resp_send(struct sroce_qp *qp,
					      struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_resp_op(skb);
	struct sroce_responder *resp = &qp->resp;
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	struct sroce_resp_scatter s = { .qp = qp, .resp = resp };
	u32 sge_before, sge_off_before;
	enum sroce_resp_result res;
	int err;

	if (op->flags & SROCE_OPF_RECV) {
		res = sroce_resp_take_rwqe(qp);
		if (res != SROCE_RESP_DONE)
			return res;
	}
	if (!resp->have_rwqe)
		return SROCE_RESP_E_INV_REQ;
	if (pkt->paylen > resp->rwqe->length - resp->recv_len)
		return SROCE_RESP_E_MSG_LEN;

	sge_before = resp->recv_sge;
	sge_off_before = resp->recv_sge_off;
	err = sroce_pkt_copy_payload(skb, 0, pkt->paylen, sroce_resp_scatter, &s);
	if (err == -EAGAIN) {
		/* ODP pages faulting in: this packet again after an RNR NAK. */
		resp->recv_sge = sge_before;
		resp->recv_sge_off = sge_off_before;
		return SROCE_RESP_RNR_FAULT;
	}
	if (err)
		return err == -ENOSPC ? SROCE_RESP_E_MSG_LEN : SROCE_RESP_E_LOC_PROT;
	resp->recv_len += pkt->paylen;

	if (op->hdrs & SROCE_HDRM_IETH) {
		const struct sroce_ieth *ieth = sroce_pkt_hdr(skb, SROCE_HDR_IETH);

		res = sroce_resp_invalidate(qp, be32_to_cpu(ieth->rkey));
		if (res != SROCE_RESP_DONE)
			return res;
	}
	sroce_resp_advance(resp, pkt, 1);
	if (op->flags & SROCE_OPF_RECV_CQE)
		sroce_resp_complete(qp, skb, IB_WC_SUCCESS);
	return SROCE_RESP_DONE;
}

/* ---- RDMA WRITE ---------------------------------------------------------------- */

/*
 * Look up @rkey (an MR's or a memory window's, mw.c) for [@va, @va + @len)
 * with @access.  NULL if not allowed (*@res: E_ACCESS; untouched when the
 * MR is returned), or when the range is on-demand paged memory not present
 * yet (*@res: RNR; its fault is queued, odp.c, and the requester resends
 * after the NAK's timer, as to a RoCE NIC's page fault).
 */
static struct sroce_mr *sroce_resp_rkey(struct sroce_qp *qp, u32 rkey, u64 va,
					u64 len, int access,
					enum sroce_resp_result *res)
{
	struct sroce_mr *mr = sroce_rkey_get(qp, rkey, va, len, access);
	int err;

	if (!mr) {
		*res = SROCE_RESP_E_ACCESS;
		return NULL;
	}
	err = sroce_mr_ready(mr, va, len, access & (IB_ACCESS_REMOTE_WRITE |
						    IB_ACCESS_REMOTE_ATOMIC));
	if (likely(!err))
		return mr;
	sroce_mr_put(mr);
	*res = err == -EAGAIN ? SROCE_RESP_RNR_FAULT : SROCE_RESP_E_ACCESS;
	return NULL;
}

/*
 * A WRITE FIRST or ONLY: its RETH names the whole target range, checked
 * here at once.  The MR found is handed back (NULL for a zero-length
 * WRITE, which names no memory and whose key is not checked) for the
 * packet's own payload, which lies within that range: one lookup for a
 * one-packet WRITE, not two.
 */
static enum sroce_resp_result sroce_resp_write_start(struct sroce_qp *qp,
						     struct sk_buff *skb,
						     struct sroce_mr **mrp)
{
	const struct sroce_reth *reth = sroce_pkt_hdr(skb, SROCE_HDR_RETH);
	struct sroce_responder *resp = &qp->resp;
	u32 len = be32_to_cpu(reth->dma_len);
	enum sroce_resp_result res;

	if (len > SROCE_MAX_MSG_SIZE)
		return SROCE_RESP_E_INV_REQ;
	resp->write_va = be64_to_cpu(reth->va);
	resp->write_rkey = be32_to_cpu(reth->rkey);
	resp->write_resid = len;
	resp->write_len = len;
	if (!len)
		return SROCE_RESP_DONE;
	*mrp = sroce_resp_rkey(qp, resp->write_rkey, resp->write_va, len,
			       IB_ACCESS_REMOTE_WRITE, &res);
	return *mrp ? SROCE_RESP_DONE : res;
}

/* Checks before a WRITE packet places anything. */
static enum sroce_resp_result sroce_resp_write_check(struct sroce_qp *qp,
						     struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_resp_op(skb);
	struct sroce_responder *resp = &qp->resp;
	struct sroce_pkt *pkt = SROCE_PKT(skb);

	/* The message must end exactly where the RETH said. */
	if ((op->flags & SROCE_OPF_LAST) ? pkt->paylen != resp->write_resid :
					   pkt->paylen >= resp->write_resid)
		return SROCE_RESP_E_INV_REQ;
	/* With immediate: no receive WQE, no data placed (RNR retries). */
	if (op->flags & SROCE_OPF_RECV)
		return sroce_resp_take_rwqe(qp);
	return SROCE_RESP_DONE;
}

static enum sroce_resp_result sroce_resp_write(struct sroce_qp *qp,
					       struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_resp_op(skb);
	struct sroce_responder *resp = &qp->resp;
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	struct sroce_resp_to_mr t = { .mr = NULL };
	enum sroce_resp_result res = SROCE_RESP_DONE;
	int err;

	if (op->flags & SROCE_OPF_FIRST)
		res = sroce_resp_write_start(qp, skb, &t.mr);
	if (res == SROCE_RESP_DONE)
		res = sroce_resp_write_check(qp, skb);
	if (res != SROCE_RESP_DONE)
		goto out;

	if (pkt->paylen) {
		t.iova = resp->write_va;
		/* A middle or last packet: the key may have gone since. */
		if (!t.mr)
			t.mr = sroce_resp_rkey(qp, resp->write_rkey, t.iova,
					       pkt->paylen,
					       IB_ACCESS_REMOTE_WRITE, &res);
		if (!t.mr)
			return res;
		err = sroce_pkt_copy_payload(skb, 0, pkt->paylen,
					     sroce_resp_copy_to_mr, &t);
		if (err) {
			/* Placed again in full when the packet comes again. */
			res = sroce_resp_copy_failed(err);
			goto out;
		}
		resp->write_va += pkt->paylen;
		resp->write_resid -= pkt->paylen;
	}

	sroce_resp_advance(resp, pkt, 1);
	if (op->flags & SROCE_OPF_RECV_CQE)
		sroce_resp_complete(qp, skb, IB_WC_SUCCESS);
out:
	if (t.mr)
		sroce_mr_put(t.mr);
	return res;
}

/* ---- READ and atomic resources ---------------------------------------------- */

static struct sroce_resp_res *sroce_resp_res_new(struct sroce_responder *resp)
{
	struct sroce_resp_res *res;

	res = &resp->res[resp->res_next++ % resp->num_res];
	memset(res, 0, sizeof(*res));
	return res;
}

/* The READ whose responses cover @psn, or the atomic at @psn. */
static struct sroce_resp_res *sroce_resp_res_find(struct sroce_responder *resp,
						  u8 kind, u32 psn)
{
	unsigned int i;

	for (i = 0; i < resp->num_res; i++) {
		struct sroce_resp_res *res = &resp->res[i];

		if (res->kind == kind &&
		    sroce_psn_in_range(psn, res->first_psn,
				       sroce_psn_diff(res->first_psn,
						      res->last_psn) + 1))
			return res;
	}
	return NULL;
}

/* ---- READ responses ------------------------------------------------------------ */

static u32 sroce_resp_read_pkts(u32 len, u32 mtu)
{
	return max(1U, DIV_ROUND_UP(len, mtu));
}

/* FIRST/MIDDLE/LAST/ONLY of the response packet at @psn. */
static u8 sroce_resp_read_opcode(struct sroce_responder *resp, u32 psn)
{
	bool first = psn == resp->read_first;
	bool last = psn == resp->read->last_psn;

	if (first)
		return last ? SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY :
			      SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST;
	return last ? SROCE_OP_RC_RDMA_READ_RESPONSE_LAST :
		      SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE;
}

/*
 * The stack let go of a READ response skb: a driver or a local receiver
 * took it (ip_rcv() orphans it), or it was dropped.  A responder waiting
 * for room continues on the CPU that sent its last responses (see
 * sroce_resp_schedule()).  The skb held a QP reference, so the QP and its
 * work item are still there.
 */
static void sroce_resp_read_skb_done(struct sk_buff *skb)
{
	struct sroce_qp *qp = skb_shinfo(skb)->destructor_arg;
	struct sroce_responder *resp = &qp->resp;

	/*
	 * Once only: a packet of a transmit batch (pkt.h) is released by
	 * skb_segment_list(), which runs the destructor but leaves it set,
	 * and freed later.
	 */
	skb->destructor = NULL;
	if (atomic_dec_return(&resp->read_inflight) <=
	    SROCE_RESP_READ_INFLIGHT / 2 &&
	    test_and_clear_bit(0, &resp->read_paced) && !READ_ONCE(resp->dying))
		mod_delayed_work_on(READ_ONCE(resp->read_cpu), sroce_resp_wq,
				    &resp->work, 0);
	sroce_qp_put(qp);
}

/*
 * Count @skb in read_inflight until the stack lets go of it.  An
 * MSG_ZEROCOPY skb (SKBFL_ZEROCOPY_ENABLE) keeps its ubuf_info in
 * destructor_arg; a response's fragments are plain page references
 * (sroce_pkt_add_page()), which need neither field, so both are ours.
 * The fragments outlive the destructor (ip_rcv() orphans a packet it
 * still delivers); their page references keep the pages.  False when
 * the QP is being destroyed (its last reference is gone): send nothing
 * more.
 */
static bool sroce_resp_read_track(struct sroce_qp *qp, struct sk_buff *skb)
{
	if (!refcount_inc_not_zero(&qp->ref))
		return false;
	atomic_inc(&qp->resp.read_inflight);
	skb_shinfo(skb)->destructor_arg = qp;
	skb->destructor = sroce_resp_read_skb_done;
	return true;
}

/*
 * Too many responses on their way: wait until the skb destructor says
 * half of them are gone.  The bit is set before the second look, and the
 * destructor decrements before it tests the bit, so one of the two sees
 * the other.
 */
static bool sroce_resp_read_must_wait(struct sroce_responder *resp)
{
	if (atomic_read(&resp->read_inflight) < SROCE_RESP_READ_INFLIGHT)
		return false;
	set_bit(0, &resp->read_paced);
	smp_mb__after_atomic();	/* see above */
	if (atomic_read(&resp->read_inflight) > SROCE_RESP_READ_INFLIGHT / 2)
		return true;
	clear_bit(0, &resp->read_paced);
	return false;
}

/*
 * A response packet with @paylen bytes at @iova of @mr (checked, and
 * held by the caller): the MR's pages as fragments (zero-copy transmit,
 * pkt.h), or a copy for a small payload, a kernel MR, or memory that
 * needs more fragments than an skb has.  NULL without memory, an
 * ERR_PTR() when an ODP MR's pages are not there (odp.c).
 */
static struct sk_buff *sroce_resp_read_build(struct sroce_qp *qp,
					     struct sroce_mr *mr, u64 iova,
					     u8 opcode, u32 psn, u32 paylen)
{
	struct sk_buff *skb;

	if (paylen >= SROCE_PKT_ZC_MIN && mr->type == SROCE_MR_USER) {
		skb = sroce_pkt_alloc_zc(qp, opcode, psn, paylen, 0);
		if (!skb)
			return NULL;
		if (!sroce_pkt_add_mr(skb, mr, iova, paylen) &&
		    !sroce_pkt_finish_zc(skb))
			return skb;
		kfree_skb(skb);		/* copy instead */
	}
	skb = sroce_pkt_alloc(qp, opcode, psn, paylen, 0);
	if (skb && paylen) {
		int err = sroce_mr_copy(mr, iova, sroce_pkt_payload(skb),
					paylen, SROCE_FROM_MR);

		if (err) {
			kfree_skb(skb);
			return ERR_PTR(err);
		}
	}
	return skb;
}

/*
 * Build and send the response at read_psn from @mr (NULL: no payload).
 * A replay (a duplicate READ) comes here too, from the saved resource.
 */
static int sroce_resp_read_one(struct sroce_qp *qp, struct sroce_mr *mr,
			       struct sroce_tx_batch *batch)
{
	struct sroce_responder *resp = &qp->resp;
	struct sroce_resp_res *res = resp->read;
	u32 psn = resp->read_psn;
	u64 offset = (u64)sroce_psn_diff(res->first_psn, psn) * resp->mtu;
	u32 paylen = min_t(u64, resp->mtu, res->len - offset);
	u8 opcode = sroce_qp_opcode(qp, sroce_resp_read_opcode(resp, psn));
	struct sk_buff *skb;

	if (sroce_resp_read_must_wait(resp))
		return -EINPROGRESS;
	skb = sroce_resp_read_build(qp, mr, res->va + offset, opcode, psn,
				    paylen);
	/* Pages faulting in (odp.c) wait like memory; gone is gone. */
	if (IS_ERR(skb))
		return PTR_ERR(skb) == -EAGAIN ? -ENOMEM : -EACCES;
	if (!skb)
		return -ENOMEM;
	if (!sroce_resp_read_track(qp, skb)) {
		kfree_skb(skb);
		return -EINPROGRESS;
	}
	if (sroce_opcode_has(opcode, SROCE_HDR_AETH))
		sroce_aeth_set(sroce_pkt_hdr(skb, SROCE_HDR_AETH),
			       SROCE_AETH_ACK | sroce_resp_credits(qp),
			       resp->msn);
	resp->read_cpu = smp_processor_id();
	/*
	 * A full queue on the way out (the netdev's, or the backlog of a
	 * local receiver) is backpressure: send this PSN again a little
	 * later rather than make the requester time out.  Other failures
	 * (no route) are losses like any other.
	 */
	return sroce_pkt_send_batch(qp, batch, skb) == -ENOBUFS ? -ENOBUFS : 0;
}

/*
 * Send up to @budget responses of the READ in progress.  Returns 0 when
 * it is complete, -EAGAIN when more remain (the work item continues),
 * -EINPROGRESS when enough are on their way (the last skb destructor to
 * make room continues), -ENOMEM or -ENOBUFS when out of memory or queue
 * space (the work item continues after a tick), -EACCES if the memory
 * went away under a replay (fatal).
 */
static int sroce_resp_read_send(struct sroce_qp *qp, unsigned int budget)
{
	struct sroce_responder *resp = &qp->resp;
	struct sroce_resp_res *res = resp->read;
	struct sroce_tx_batch batch;
	enum sroce_resp_result rres;
	struct sroce_mr *mr = NULL;
	bool xrc_own = false;
	int err = -EAGAIN;

	if (res->len) {
		/* Outside the request (work item, replay): its XRC SRQ again. */
		if (qp->ibqp.qp_type == IB_QPT_XRC_TGT && !resp->xsrq) {
			xrc_own = sroce_resp_xrc_enter(qp, res->xrc_srqn) ==
				  SROCE_RESP_DONE;
			if (!xrc_own)
				return -EACCES;
		}
		/* Checked at execution; looked up again as the MR may go. */
		mr = sroce_resp_rkey(qp, res->rkey, res->va, res->len,
				     IB_ACCESS_REMOTE_READ, &rres);
		if (xrc_own)
			sroce_resp_xrc_leave(qp);
		if (!mr)
			return rres == SROCE_RESP_RNR_FAULT ? -ENOMEM : -EACCES;
	}
	sroce_tx_batch_init(&batch);
	while (budget--) {
		err = sroce_resp_read_one(qp, mr, &batch);
		if (err)
			break;
		resp->read_busy = 0;
		resp->read_psn = sroce_psn_next(resp->read_psn);
		if (resp->read_psn == sroce_psn_next(res->last_psn)) {
			resp->read = NULL;
			break;
		}
		err = -EAGAIN;
	}
	/* Refused for a full queue: send from the first refused PSN again. */
	if (sroce_tx_batch_flush(qp, &batch) == -ENOBUFS || err == -ENOBUFS) {
		resp->read = res;
		resp->read_psn = batch.lost_psn;
		err = -ENOBUFS;
	}
	if (mr)
		sroce_mr_put(mr);
	return err;
}

/*
 * The work item continues on the CPU that sent the packets before it
 * (callers hold resp.lock, so this one).  A local receiver (loopback, a
 * veth peer) takes our packets into the receive backlog of the sending
 * CPU; the next ones sent from another CPU would enter another backlog
 * and could overtake them: the requester sees a gap, asks again, and the
 * restarted READ responses race the old ones the same way, until
 * RETRY_EXC_ERR.  A long READ response that met a full backlog (-ENOBUFS,
 * retried at once) almost always did that.
 */
static void sroce_resp_schedule(struct sroce_qp *qp, unsigned long delay)
{
	if (!qp->resp.dying)
		mod_delayed_work_on(smp_processor_id(), sroce_resp_wq,
				    &qp->resp.work, delay);
}

/*
 * Continue a READ response from the work item: at once when it only went
 * over budget, and also at once after a full transmit queue (-ENOBUFS:
 * the queue drains when bottom halves run, which they do before the work
 * item), unless that keeps happening; a tick later without memory.  One
 * that waits for its responses on their way is continued by the skb
 * destructor.
 */
static void sroce_resp_schedule_read(struct sroce_qp *qp, int err)
{
	struct sroce_responder *resp = &qp->resp;
	unsigned long delay = 0;

	if (err == -EINPROGRESS)
		return;		/* sroce_resp_read_skb_done() continues */
	if (err == -ENOBUFS) {
		if (resp->read_busy++ >= SROCE_RESP_BUSY_RETRIES)
			delay = 1;
	} else if (err != -EAGAIN) {
		delay = 1;
	}
	sroce_resp_schedule(qp, delay);
}

static void sroce_resp_stop(struct sroce_qp *qp);

/*
 * The memory of the READ being answered went away under it (-EACCES from
 * sroce_resp_read_send()).  Under the READ itself that is an error the
 * requester must hear of: a NAK, and this QP stops.  A replay answers a
 * request that executed before and passed its checks then: the requester
 * has had its responses, completed the READ and let the memory go (an
 * NVMe or SRP initiator invalidates it with the SEND that follows), and
 * the duplicate is late (a probe the following SEND overtook: packets
 * sent from two CPUs enter two receive backlogs).  A NAK would end this QP
 * for a request that succeeded, so the replay is dropped and counted; a
 * requester that did still wait for it runs out of retries.
 */
static void sroce_resp_read_gone(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	if (resp->read_replay) {
		sroce_qp_stat_inc(qp, resp_dropped);
		trace_sroce_drop(&qp->sdev->ibdev, qp->ibqp.qp_num,
				 resp->read_psn, "resp_dropped");
		resp->read = NULL;
		return;
	}
	sroce_resp_nak(qp, SROCE_NAK_REM_ACCESS_ERR, resp->read_psn);
	sroce_resp_stop(qp);
}

/* Start the responses of @res from @psn, or replay them for a duplicate. */
static void sroce_resp_read_start(struct sroce_qp *qp,
				  struct sroce_resp_res *res, u32 psn,
				  bool replay)
{
	struct sroce_responder *resp = &qp->resp;
	int err;

	resp->read = res;
	resp->read_last = res;
	resp->read_psn = psn;
	resp->read_first = psn;
	resp->read_replay = replay;
	resp->unacked = 0;	/* a response acknowledges everything before */
	err = sroce_resp_read_send(qp, SROCE_RESP_READ_BUDGET);
	if (err == -EACCES)
		sroce_resp_read_gone(qp);
	else if (err)
		sroce_resp_schedule_read(qp, err);
}

static enum sroce_resp_result sroce_resp_read(struct sroce_qp *qp,
					      struct sk_buff *skb)
{
	const struct sroce_reth *reth = sroce_pkt_hdr(skb, SROCE_HDR_RETH);
	struct sroce_responder *resp = &qp->resp;
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	struct sroce_resp_res *res;
	struct sroce_mr *mr;
	u32 len = be32_to_cpu(reth->dma_len);
	u64 va = be64_to_cpu(reth->va);
	u32 rkey = be32_to_cpu(reth->rkey);
	enum sroce_resp_result rres;
	u32 npkts;

	if (len > SROCE_MAX_MSG_SIZE)
		return SROCE_RESP_E_INV_REQ;
	if (len) {
		mr = sroce_resp_rkey(qp, rkey, va, len, IB_ACCESS_REMOTE_READ,
				     &rres);
		if (!mr)
			return rres;
		sroce_mr_put(mr);
	}

	npkts = sroce_resp_read_pkts(len, resp->mtu);
	/*
	 * PSN order is only defined within half the PSN space: a READ whose
	 * responses would need more (2 GiB at a 256-byte MTU) cannot be
	 * answered.
	 */
	if (npkts >= SROCE_PSN_HALF / 2)
		return SROCE_RESP_E_INV_REQ;
	res = sroce_resp_res_new(resp);
	res->kind = SROCE_OPK_READ_REQ;
	res->first_psn = pkt->psn;
	res->last_psn = sroce_psn_add(pkt->psn, npkts - 1);
	res->va = va;
	res->rkey = rkey;
	res->len = len;
	if (resp->xsrq)
		res->xrc_srqn = to_ssrq(resp->xsrq)->srq_num;

	/* The MSN counts the READ now (C9-148): its responses carry it. */
	sroce_resp_advance(resp, pkt, npkts);
	sroce_resp_read_start(qp, res, pkt->psn, false);
	return SROCE_RESP_ANSWERED;
}

/* ---- atomics ------------------------------------------------------------------- */

static void sroce_resp_send_atomic_ack(struct sroce_qp *qp,
				       const struct sroce_resp_res *res)
{
	struct sroce_atmack *atmack;
	struct sk_buff *skb;

	skb = sroce_resp_answer(qp, SROCE_OP_RC_ATOMIC_ACKNOWLEDGE,
				res->first_psn,
				SROCE_AETH_ACK | sroce_resp_credits(qp));
	if (!skb)
		return;		/* the requester retries; we replay */
	atmack = sroce_pkt_hdr(skb, SROCE_HDR_ATMACK);
	atmack->orig = cpu_to_be64(res->orig);
	sroce_pkt_send(qp, skb);
	qp->resp.unacked = 0;
}

/*
 * The 64-bit word is in host order in memory, as the verbs see it.  Its
 * old value goes to *@orig; an ODP MR's page may have gone since the
 * check (odp.c), and then nothing is stored.
 */
static int sroce_resp_atomic_exec(struct sroce_mr *mr, u64 va, u8 opcode,
				  const struct sroce_atmeth *ath, u64 *orig)
{
	u64 val;
	int err;

	spin_lock(&sroce_atomic_lock);
	err = sroce_mr_copy(mr, va, orig, sizeof(*orig), SROCE_FROM_MR);
	if (!err) {
		if (sroce_opcode_rc(opcode) == SROCE_OP_RC_COMPARE_SWAP)
			val = *orig == be64_to_cpu(ath->compare) ?
			      be64_to_cpu(ath->swap_add) : *orig;
		else
			val = *orig + be64_to_cpu(ath->swap_add);
		err = sroce_mr_copy(mr, va, &val, sizeof(val), SROCE_TO_MR);
	}
	spin_unlock(&sroce_atomic_lock);
	return err;
}

static enum sroce_resp_result sroce_resp_atomic(struct sroce_qp *qp,
						struct sk_buff *skb)
{
	const struct sroce_atmeth *ath = sroce_pkt_hdr(skb, SROCE_HDR_ATMETH);
	struct sroce_responder *resp = &qp->resp;
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	struct sroce_resp_res *res;
	u64 va = be64_to_cpu(ath->va);
	enum sroce_resp_result rres;
	struct sroce_mr *mr;
	u64 orig;
	int err;

	if (va & (sizeof(u64) - 1))
		return SROCE_RESP_E_INV_REQ;	/* IBA 9.4.5: misaligned */
	mr = sroce_resp_rkey(qp, be32_to_cpu(ath->rkey), va, sizeof(u64),
			     IB_ACCESS_REMOTE_ATOMIC, &rres);
	if (!mr)
		return rres;
	err = sroce_resp_atomic_exec(mr, va, pkt->opcode, ath, &orig);
	sroce_mr_put(mr);
	if (err)
		return sroce_resp_copy_failed(err);

	res = sroce_resp_res_new(resp);
	res->kind = SROCE_OPK_ATOMIC;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->orig = orig;

	sroce_resp_advance(resp, pkt, 1);
	sroce_resp_send_atomic_ack(qp, res);
	return SROCE_RESP_ANSWERED;
}

/* ---- ATOMIC WRITE (IBTA 1.5) ------------------------------------------------ */

/*
 * Its answer, first or replayed: an RDMA READ RESPONSE ONLY without
 * payload (IBA 1.5; rdma_rxe sends and expects the same), which tells the
 * requester that the word is in place.
 */
static void sroce_resp_send_atomic_write_ack(struct sroce_qp *qp, u32 psn)
{
	struct sk_buff *skb;

	skb = sroce_resp_answer(qp, SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY, psn,
				SROCE_AETH_ACK | sroce_resp_credits(qp));
	if (!skb)
		return;		/* the requester retries; we answer again */
	sroce_pkt_send(qp, skb);
	qp->resp.unacked = 0;
}

/*
 * One aligned 64-bit word, named by the RETH and carried whole, stored in
 * one go.  Like an atomic it takes a resource (so a duplicate ACK of an
 * earlier request stops before it, sroce_resp_dup_ack_psn()), but its
 * replay needs nothing saved: a duplicate is answered, never stored again.
 */
static enum sroce_resp_result sroce_resp_atomic_write(struct sroce_qp *qp,
						      struct sk_buff *skb)
{
	const struct sroce_reth *reth = sroce_pkt_hdr(skb, SROCE_HDR_RETH);
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	u64 va = be64_to_cpu(reth->va);
	enum sroce_resp_result rres;
	struct sroce_resp_res *res;
	struct sroce_mr *mr;
	u64 val;
	int err;

	if (be32_to_cpu(reth->dma_len) != sizeof(val) ||
	    pkt->paylen != sizeof(val) || !IS_ALIGNED(va, sizeof(val)) ||
	    skb_copy_bits(skb, pkt->hdr_len, &val, sizeof(val)))
		return SROCE_RESP_E_INV_REQ;
	mr = sroce_resp_rkey(qp, be32_to_cpu(reth->rkey), va, sizeof(val),
			     IB_ACCESS_REMOTE_WRITE, &rres);
	if (!mr)
		return rres;
	/* Not in the middle of a compare&swap or fetch&add of the word. */
	spin_lock(&sroce_atomic_lock);
	err = sroce_mr_store_u64(mr, va, val);
	spin_unlock(&sroce_atomic_lock);
	sroce_mr_put(mr);
	if (err)
		return sroce_resp_copy_failed(err);

	res = sroce_resp_res_new(&qp->resp);
	res->kind = SROCE_OPK_ATOMIC_WRITE;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;

	sroce_resp_advance(&qp->resp, pkt, 1);
	sroce_resp_send_atomic_write_ack(qp, pkt->psn);
	return SROCE_RESP_ANSWERED;
}

/* ---- checks before execution ----------------------------------------------- */

/* The QP's access flags say which remote operations it accepts. */
static bool sroce_resp_op_allowed(struct sroce_responder *resp,
				  const struct sroce_opcode_info *op)
{
	switch (op->kind) {
	case SROCE_OPK_WRITE:
		return resp->access & IB_ACCESS_REMOTE_WRITE;
	case SROCE_OPK_ATOMIC_WRITE:
		return (resp->access & IB_ACCESS_REMOTE_WRITE) &&
		       resp->max_dest_rd_atomic;
	case SROCE_OPK_READ_REQ:
		return (resp->access & IB_ACCESS_REMOTE_READ) &&
		       resp->max_dest_rd_atomic;
	case SROCE_OPK_ATOMIC:
		return (resp->access & IB_ACCESS_REMOTE_ATOMIC) &&
		       resp->max_dest_rd_atomic;
	default:
		return true;
	}
}

/*
 * IBA 9.7.5.1.3: FIRST and MIDDLE packets carry exactly one path MTU,
 * LAST and ONLY at most one.
 */
static bool sroce_resp_len_ok(struct sroce_responder *resp,
			      const struct sroce_opcode_info *op,
			      const struct sroce_pkt *pkt)
{
	if (!(op->flags & SROCE_OPF_PAYLOAD))
		return true;
	if (op->flags & SROCE_OPF_LAST)
		return pkt->paylen <= resp->mtu;
	return pkt->paylen == resp->mtu;
}

static enum sroce_resp_result sroce_resp_execute(struct sroce_qp *qp,
						 struct sk_buff *skb)
{
	const struct sroce_opcode_info *op = sroce_resp_op(skb);
	struct sroce_responder *resp = &qp->resp;

	if (!sroce_opcode_may_follow(resp->last_opcode, SROCE_PKT(skb)->opcode) ||
	    !sroce_resp_op_allowed(resp, op) ||
	    !sroce_resp_len_ok(resp, op, SROCE_PKT(skb)))
		return SROCE_RESP_E_INV_REQ;
	if (op->hdrs & SROCE_HDRM_XRCETH) {
		enum sroce_resp_result res = sroce_resp_xrc_request(qp, skb);

		if (res != SROCE_RESP_DONE)
			return res;
	}

	switch (op->kind) {
	case SROCE_OPK_SEND:
		return sroce_resp_send(qp, skb);
	case SROCE_OPK_WRITE:
		return sroce_resp_write(qp, skb);
	case SROCE_OPK_READ_REQ:
		return sroce_resp_read(qp, skb);
	case SROCE_OPK_ATOMIC:
		return sroce_resp_atomic(qp, skb);
	case SROCE_OPK_ATOMIC_WRITE:
		return sroce_resp_atomic_write(qp, skb);
	default:
		/* recv.c sends only RC/UC request opcodes here. */
		return SROCE_RESP_E_INV_REQ;
	}
}

/* ---- outcomes ------------------------------------------------------------------ */

/*
 * Stop executing: everything from now on is dropped, and the QP goes to
 * ERR once the lock is dropped.  The RQ flush then completes every posted
 * receive WQE with IB_WC_WR_FLUSH_ERR.
 */
static void sroce_resp_stop(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	resp->stopped = true;
	resp->want_qp_error = true;
	resp->read = NULL;
	__skb_queue_purge(&resp->backlog);
}

/*
 * An RNR NAK for a page fault asks for at least this long a wait (code
 * 10: 0.32 ms), about what faulting pages in from a work item takes: a
 * QP's min_rnr_timer is usually shorter, made for receives posted in a
 * hurry, and a requester would resend every few microseconds meanwhile.
 */
#define SROCE_RESP_FAULT_RNR_TIMER	10

static void sroce_resp_rnr(struct sroce_qp *qp, struct sroce_pkt *pkt,
			   bool fault)
{
	struct sroce_responder *resp = &qp->resp;
	u8 timer = resp->min_rnr_timer;

	if (!sroce_resp_is_rc(qp)) {
		/* UC: the message is lost. */
		sroce_resp_drop(qp, pkt, resp_no_recv);
		sroce_resp_uc_abandon(resp);
		resp->uc_drop = true;
		return;
	}
	if (fault && sroce_rnr_timer_usec(timer) <
		     sroce_rnr_timer_usec(SROCE_RESP_FAULT_RNR_TIMER))
		timer = SROCE_RESP_FAULT_RNR_TIMER;
	sroce_qp_stat_inc(qp, resp_rnr_naks);
	sroce_resp_send_ack(qp, SROCE_AETH_RNR_NAK | timer, pkt->psn);
	/*
	 * The packets behind this one are already on their way; they would
	 * each be a sequence error.  The requester resends from here after
	 * the RNR timer anyway: stay quiet until it does.
	 */
	resp->seq_nak_sent = true;
}

static void sroce_resp_fatal(struct sroce_qp *qp, struct sroce_pkt *pkt,
			     enum sroce_resp_result res)
{
	struct sroce_responder *resp = &qp->resp;
	bool bad_key = res == SROCE_RESP_E_ACCESS ||
		       res == SROCE_RESP_E_LOC_PROT ||
		       res == SROCE_RESP_E_INVAL_KEY;

	if (bad_key)
		sroce_qp_stat_inc(qp, resp_bad_key);
	if (sroce_resp_is_rc(qp)) {
		sroce_qp_stat_inc(qp, resp_fatal_naks);
		sroce_resp_nak(qp, sroce_resp_errors[res].nak, pkt->psn);
	} else if (res != SROCE_RESP_E_WQE) {
		/*
		 * UC: drop the message, keep the receive WQE (class D).  No
		 * NAK tells anyone: count what resp_bad_key does not.
		 */
		if (!bad_key)
			sroce_resp_drop(qp, pkt, resp_dropped);
		sroce_resp_uc_abandon(resp);
		resp->uc_drop = true;
		return;
	}
	if (resp->have_rwqe)
		sroce_resp_complete(qp, NULL, sroce_resp_errors[res].wc_status);
	sroce_resp_stop(qp);
}

static bool sroce_resp_held_ready(struct sroce_responder *resp);

/*
 * The first request since the last ACK that asked for none: have the work
 * item acknowledge it, and whatever follows, SROCE_RESP_ACK_DELAY later
 * unless an ACK goes out before (sroce_resp_ack_delayed()).  A work item
 * already pending for a READ does it sooner.
 */
static void sroce_resp_ack_later(struct sroce_qp *qp)
{
	if (!qp->resp.dying)
		queue_delayed_work_on(smp_processor_id(), sroce_resp_wq,
				      &qp->resp.work, SROCE_RESP_ACK_DELAY);
}

/*
 * From the work item: the ACK sroce_resp_ack_later() promised, if owed.
 * unacked counts RC requests only (sroce_resp_acknowledge()), and a reset
 * clears it under the lock, so it alone says whether one is owed.
 */
static void sroce_resp_ack_delayed(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	if (resp->unacked && !resp->ack_owed)
		sroce_resp_ack(qp, sroce_psn_add(resp->epsn, SROCE_PSN_MASK));
}

/*
 * After a SEND or WRITE packet executed: coalesce ACKs (RC only).
 *
 * An ACK that is due while held requests are ready to follow waits: they
 * execute first, and one ACK then covers the resent PSN that filled a gap
 * and all that was held behind it; if another gap stops them, its NAK
 * (sroce_resp_held_gap()) acknowledges everything before it instead.  An
 * ACK followed by that NAK would make a sroce requester go back N from
 * the gap, resending what is held, before the NAK arrives.
 */
static void sroce_resp_acknowledge(struct sroce_qp *qp, struct sroce_pkt *pkt)
{
	struct sroce_responder *resp = &qp->resp;

	if (!sroce_resp_is_rc(qp))
		return;
	if (!(pkt->flags & SROCE_PKT_ACKREQ) && !resp->ack_owed &&
	    ++resp->unacked < SROCE_RESP_ACK_EVERY) {
		if (resp->unacked == 1)
			sroce_resp_ack_later(qp);
		return;
	}
	resp->ack_owed = sroce_resp_held_ready(resp) ||
			 (resp->draining && !skb_queue_empty(&resp->held));
	if (!resp->ack_owed)
		sroce_resp_ack(qp, pkt->psn);
}

static void sroce_resp_outcome(struct sroce_qp *qp, struct sroce_pkt *pkt,
			       enum sroce_resp_result res)
{
	switch (res) {
	case SROCE_RESP_DONE:
		sroce_resp_acknowledge(qp, pkt);
		break;
	case SROCE_RESP_ANSWERED:
		break;
	case SROCE_RESP_DROP:
		sroce_resp_drop(qp, pkt, resp_dropped);
		break;
	case SROCE_RESP_RNR:
	case SROCE_RESP_RNR_FAULT:
		sroce_resp_rnr(qp, pkt, res == SROCE_RESP_RNR_FAULT);
		break;
	default:
		sroce_resp_fatal(qp, pkt, res);
		break;
	}
}

/* ---- sequence errors and duplicates -------------------------------------- */

/*
 * Keep @skb, @diff PSNs past the one expected, in resp.held (sorted by
 * PSN, sroce_held_add()).  False if it is too far ahead, there is
 * no room, or that PSN is held already: the caller drops it.
 *
 * Why hold at all: a veth or loopback path reorders (each CPU has its own
 * receive backlog), and a go-back-N resends everything after a gap.  A
 * held packet is executed when the gap fills, so a sroce requester, which
 * resends only the PSN a sequence NAK names and waits for its ACK
 * (requester.c, sroce_req_lost_at_gap()), sends nothing twice but that
 * one packet.  A requester that goes back N anyway finds the rest
 * acknowledged as duplicates.
 */
static bool sroce_resp_hold(struct sroce_qp *qp, struct sk_buff *skb, s32 diff)
{
	if (diff > SROCE_RESP_HELD_SPAN ||
	    sroce_held_add(&qp->resp.held, &qp->sdev->resp_held_bytes,
			   SROCE_RESP_HELD_DEV_BYTES, skb) != SROCE_HELD_ADDED)
		return false;
	sroce_qp_stat_inc(qp, resp_held);
	return true;
}

/* Free every held request (reset, ERR, destroy). */
static void sroce_resp_held_purge(struct sroce_qp *qp)
{
	sroce_held_purge(&qp->resp.held, &qp->sdev->resp_held_bytes);
}

/* Is the first held request the one expected now? */
static bool sroce_resp_held_ready(struct sroce_responder *resp)
{
	struct sk_buff *skb = skb_peek(&resp->held);

	return skb && SROCE_PKT(skb)->psn == resp->epsn;
}

/*
 * The held request to execute next, if the gap before it has filled and
 * no READ response is being sent (requests wait behind one).  Held copies
 * of PSNs executed meanwhile (the requester resent them) are duplicates:
 * answered already, so freed quietly.
 */
static struct sk_buff *sroce_resp_held_next(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;
	struct sk_buff *skb;

	while (!resp->read && !resp->stopped &&
	       (skb = skb_peek(&resp->held))) {
		s32 diff = sroce_psn_diff(resp->epsn, SROCE_PKT(skb)->psn);

		if (diff > 0)
			break;
		sroce_held_unlink(&resp->held, &qp->sdev->resp_held_bytes, skb);
		if (!diff)
			return skb;
		sroce_pkt_consume(skb);
	}
	return NULL;
}

/*
 * The one sequence NAK of a gap, at the PSN we expect.  It acknowledges
 * everything before that PSN, as an ACK would.
 */
static void sroce_resp_seq_nak(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	resp->seq_nak_sent = true;
	resp->ack_owed = false;
	resp->unacked = 0;
	sroce_qp_stat_inc(qp, resp_seq_naks);
	sroce_resp_nak(qp, SROCE_NAK_PSN_SEQ_ERR, resp->epsn);
}

/*
 * Packets were lost (or overtaken) before this one: NAK once, at the PSN
 * we expect, and hold it (sroce_resp_hold()).  The packets that follow in
 * the same gap are held too, or, if they cannot be, dropped without a NAK
 * but counted: a drop nobody can see is a drop nobody can debug.  True if
 * @skb was held.
 */
static bool sroce_resp_seq_error(struct sroce_qp *qp, struct sk_buff *skb,
				 s32 diff)
{
	struct sroce_responder *resp = &qp->resp;
	bool held = sroce_resp_hold(qp, skb, diff);

	if (!resp->seq_nak_sent)
		sroce_resp_seq_nak(qp);
	else if (!held)
		sroce_resp_drop(qp, SROCE_PKT(skb), resp_dropped);
	return held;
}

/*
 * The PSN to acknowledge a duplicate SEND or WRITE at @psn with: the last
 * one executed, unless a READ or atomic lies in between.  An ACK past one
 * of those would tell the requester its response was lost, while the
 * duplicate of that request (on its way behind this one) replays it.
 */
static u32 sroce_resp_dup_ack_psn(struct sroce_responder *resp, u32 psn)
{
	u32 ack = sroce_psn_add(resp->epsn, -1U);
	unsigned int i;

	for (i = 0; i < resp->num_res; i++) {
		const struct sroce_resp_res *res = &resp->res[i];

		if (res->kind && sroce_psn_after(res->first_psn, psn) &&
		    !sroce_psn_after(res->first_psn, ack))
			ack = sroce_psn_add(res->first_psn, -1U);
	}
	return ack;
}

/*
 * A request we executed before: our answer was lost.  SEND and WRITE get
 * an ACK of everything so far (C9-105), once per burst of duplicates or
 * when asked; a READ or atomic is answered again from the resource cache
 * and never executed twice.  One that is no longer cached is dropped.  An
 * ATOMIC WRITE's answer holds nothing to save: it is sent again.
 */
static void sroce_resp_duplicate(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_responder *resp = &qp->resp;
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	struct sroce_resp_res *res;

	sroce_qp_stat_inc(qp, resp_duplicates);
	switch (sroce_resp_op(skb)->kind) {
	case SROCE_OPK_READ_REQ:
		res = sroce_resp_res_find(resp, SROCE_OPK_READ_REQ, pkt->psn);
		if (!res)
			break;
		sroce_resp_read_start(qp, res, pkt->psn, true);
		return;
	case SROCE_OPK_ATOMIC:
		res = sroce_resp_res_find(resp, SROCE_OPK_ATOMIC, pkt->psn);
		if (!res || res->first_psn != pkt->psn)
			break;
		sroce_resp_send_atomic_ack(qp, res);
		return;
	case SROCE_OPK_ATOMIC_WRITE:
		sroce_resp_send_atomic_write_ack(qp, pkt->psn);
		return;
	default:
		if ((pkt->flags & SROCE_PKT_ACKREQ) || !resp->dup_acked) {
			resp->dup_acked = true;
			sroce_resp_ack(qp, sroce_resp_dup_ack_psn(resp, pkt->psn));
		}
		return;
	}
	sroce_resp_drop(qp, pkt, resp_dropped);
}

/* ---- UD ------------------------------------------------------------------------ */

/* The bytes in front of every UD message in the receive buffer. */
#define SROCE_UD_GRH_LEN	40

/*
 * The "GRH" of a RoCEv2 UD message (annex A17.4.5.1): the IPv6 header, or
 * 20 zero bytes followed by the IPv4 header (without options).
 */
static void sroce_resp_ud_grh(const struct sk_buff *skb,
			      u8 grh[SROCE_UD_GRH_LEN])
{
	memset(grh, 0, SROCE_UD_GRH_LEN);
	if (ip_hdr(skb)->version == 4)
		memcpy(grh + SROCE_UD_GRH_LEN - sizeof(struct iphdr),
		       ip_hdr(skb), sizeof(struct iphdr));
	else
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
}

/*
 * A UD message: one packet, no sequence, no acknowledgment.  One that
 * cannot be delivered (wrong Q_Key, no receive WQE, no room in it) is
 * dropped; a receive WQE it did not fit stays for the next one.
 */
static void sroce_resp_ud(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_deth *deth = sroce_pkt_hdr(skb, SROCE_HDR_DETH);
	struct sroce_responder *resp = &qp->resp;
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	struct sroce_resp_scatter s = { .qp = qp, .resp = resp };
	u8 grh[SROCE_UD_GRH_LEN];
	int err;

	/* The netdev's MTU as it is now (sroce_req_fetch() too). */
	if (be32_to_cpu(deth->qkey) != qp->attr.qkey ||
	    pkt->paylen > sroce_qp_packet_mtu(qp)) {
		sroce_resp_drop(qp, pkt, resp_dropped);
		return;
	}
	switch (sroce_resp_take_rwqe(qp)) {
	case SROCE_RESP_DONE:
		break;
	case SROCE_RESP_E_WQE:
		if (resp->have_rwqe)
			sroce_resp_complete(qp, NULL, IB_WC_LOC_QP_OP_ERR);
		sroce_resp_stop(qp);
		return;
	case SROCE_RESP_RNR:
		sroce_resp_drop(qp, pkt, resp_no_recv);
		return;
	default:
		sroce_resp_drop(qp, pkt, resp_dropped);
		return;
	}
	/*
	 * No room for the GRH area and the payload: drop the datagram and
	 * keep the WQE for the next one (IBA class D1, as rdma_rxe does).
	 * Completing it in error would let any sender use up QP1's
	 * receives: the MAD layer reposts none that completes in error.
	 */
	if (pkt->paylen > resp->rwqe->length ||
	    resp->rwqe->length - pkt->paylen < SROCE_UD_GRH_LEN) {
		sroce_resp_drop(qp, pkt, resp_dropped);
		return;
	}

	sroce_resp_ud_grh(skb, grh);
	err = sroce_resp_scatter(&s, grh, sizeof(grh));
	if (!err)
		err = sroce_pkt_copy_payload(skb, 0, pkt->paylen,
					     sroce_resp_scatter, &s);
	if (err == -EAGAIN) {
		/* ODP pages faulting in: lost, as a NIC's would be. */
		sroce_resp_drop(qp, pkt, resp_no_recv);
		return;
	}
	if (err) {
		sroce_qp_stat_inc(qp, resp_bad_key);
		sroce_resp_complete(qp, NULL, IB_WC_LOC_PROT_ERR);
		sroce_resp_stop(qp);
		return;
	}
	resp->recv_len = SROCE_UD_GRH_LEN + pkt->paylen;
	sroce_resp_complete(qp, skb, IB_WC_SUCCESS);
}

/* ---- one packet ------------------------------------------------------------------ */

/*
 * IBA 11.6.3.1: the first request a QP takes in while in RTR raises
 * Communication Established.  A connection manager whose RTU was lost
 * learns from it that the peer is up (ULPs pass it on with rdma_notify()
 * or ib_cm_notify()).  Once per connection, raised after resp.lock
 * (sroce_resp_unlock()).
 */
static void sroce_resp_established(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	if (resp->established)
		return;
	resp->established = true;
	resp->want_comm_est = sroce_qp_state(qp) == IB_QPS_RTR;
}

/* Under resp.lock; consumes @skb (or holds it past a gap). */
static void sroce_resp_one(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_responder *resp = &qp->resp;
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	s32 diff;

	if (!resp->started || resp->stopped) {
		sroce_resp_drop(qp, pkt, resp_dropped);
		goto out;
	}

	if (sroce_qp_is_ud(qp)) {
		sroce_resp_ud(qp, skb);
		goto out;
	}
	if (sroce_resp_is_rc(qp)) {
		diff = sroce_psn_diff(resp->epsn, pkt->psn);
		if (diff > 0) {
			if (sroce_resp_seq_error(qp, skb, diff))
				return;
			goto out;
		}
		if (diff < 0) {
			sroce_resp_duplicate(qp, skb);
			goto out;
		}
		resp->seq_nak_sent = false;
		resp->dup_acked = false;
	} else if (!sroce_resp_uc_accept(resp, pkt)) {
		/* UC: a packet of a message already lost (IBA 9.8.3). */
		sroce_resp_drop(qp, pkt, resp_dropped);
		goto out;
	}

	sroce_resp_established(qp);
	sroce_resp_outcome(qp, pkt, sroce_resp_execute(qp, skb));
	sroce_resp_xrc_leave(qp);
out:
	sroce_pkt_consume(skb);
}

/*
 * Held requests were executed up to another gap, before more held ones:
 * NAK it now.  Otherwise only the next out-of-sequence arrival would, and
 * all that is left to arrive may be what is held already.  (A gap reached
 * by requests from the wire, a go-back-N on its way, is not NAKed again.)
 * Called when sroce_resp_held_next() has nothing more: unless a READ
 * response or the QP's failure stopped it, what is held lies past a gap.
 */
static void sroce_resp_held_gap(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	if (skb_queue_empty(&resp->held) || resp->seq_nak_sent ||
	    resp->read || resp->stopped)
		return;
	sroce_resp_seq_nak(qp);
}

/* @skb, then the held requests it lets through.  Under resp.lock. */
static void sroce_resp_packet(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_responder *resp = &qp->resp;

	sroce_resp_one(qp, skb);
	while ((skb = sroce_resp_held_next(qp))) {
		resp->draining = true;
		sroce_resp_one(qp, skb);
	}
	if (resp->draining) {
		resp->draining = false;
		sroce_resp_held_gap(qp);
	}
}

/*
 * Continue a READ response that went over budget, then the requests that
 * queued behind it.  Under resp.lock.
 */
static void sroce_resp_run(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;
	struct sk_buff *skb;
	int err;

	if (resp->ack_retry && !resp->stopped && !resp->dying)
		sroce_resp_ack(qp, resp->ack_retry_psn);
	while (!resp->stopped && !resp->dying) {
		if (resp->read) {
			err = sroce_resp_read_send(qp, SROCE_RESP_READ_BUDGET);
			if (err == -EACCES) {
				sroce_resp_read_gone(qp);
			} else if (err) {
				sroce_resp_schedule_read(qp, err);
				return;
			}
			continue;
		}
		skb = sroce_resp_held_next(qp) ?: __skb_dequeue(&resp->backlog);
		if (!skb) {
			sroce_resp_ack_delayed(qp);
			return;
		}
		sroce_resp_packet(qp, skb);
	}
	__skb_queue_purge(&resp->backlog);
}

/*
 * Raise the event and take the QP to ERR if the responder asked for
 * them, outside resp.lock: a consumer's event handler may call back into
 * the device.
 */
static void sroce_resp_unlock(struct sroce_qp *qp)
{
	bool qp_error = qp->resp.want_qp_error;
	bool comm_est = qp->resp.want_comm_est;

	qp->resp.want_qp_error = false;
	qp->resp.want_comm_est = false;
	spin_unlock_bh(&qp->resp.lock);
	if (comm_est)
		sroce_qp_event(qp, IB_EVENT_COMM_EST);
	if (qp_error)
		sroce_qp_error(qp);
}

static void sroce_resp_work(struct work_struct *work)
{
	struct sroce_responder *resp =
		container_of(to_delayed_work(work), struct sroce_responder, work);
	struct sroce_qp *qp = container_of(resp, struct sroce_qp, resp);

	spin_lock_bh(&resp->lock);
	sroce_resp_run(qp);
	sroce_resp_unlock(qp);
}

/*
 * A READ request that asks again for responses still on their way: at a
 * PSN of the READ answered last, no further back from the next response
 * PSN than the responses not yet let go of (read_inflight, which may
 * include some of an earlier replay: an overestimate only delays a replay
 * until the requester asks again).  The requester asks because it was
 * slow to see them (its probe, or an ACK timeout on a busy host), not
 * because they were lost: they arrive in order behind its request.
 * Replaying them would only send them twice, and a replay of hundreds of
 * responses that are all duplicates takes long enough to make the
 * requester time out and ask again.
 */
static bool sroce_resp_read_in_flight(struct sroce_responder *resp,
				      struct sk_buff *skb)
{
	const struct sroce_resp_res *res = resp->read_last;
	u32 psn = SROCE_PKT(skb)->psn;

	return res && res->kind == SROCE_OPK_READ_REQ &&
	       sroce_resp_op(skb)->kind == SROCE_OPK_READ_REQ &&
	       sroce_psn_in_range(psn, res->first_psn,
				  sroce_psn_diff(res->first_psn,
						 res->last_psn) + 1) &&
	       sroce_psn_diff(psn, resp->read_psn) <=
	       atomic_read(&resp->read_inflight);
}

/*
 * A READ request for the READ in progress, at a PSN it already sent, with
 * nothing queued behind it: see sroce_responder_rcv().
 */
static bool sroce_resp_read_restarted(struct sroce_responder *resp,
				      struct sk_buff *skb)
{
	const struct sroce_resp_res *res = resp->read;
	u32 psn = SROCE_PKT(skb)->psn;

	return res && skb_queue_empty(&resp->backlog) &&
	       sroce_resp_op(skb)->kind == SROCE_OPK_READ_REQ &&
	       sroce_psn_in_range(psn, res->first_psn,
				  sroce_psn_diff(res->first_psn,
						 resp->read_psn) + 1);
}

/*
 * Receive hook for request opcodes (recv.c has checked headers, ICRC,
 * QP type and state).  While a READ response is being sent, requests
 * wait behind it so that answers leave in PSN order.
 */
void sroce_responder_rcv(struct sroce_qp *qp, struct sk_buff *skb)
{
	struct sroce_responder *resp = &qp->resp;

	spin_lock_bh(&resp->lock);
	if (sroce_resp_read_in_flight(resp, skb)) {
		sroce_qp_stat_inc(qp, resp_read_in_flight);
		sroce_pkt_consume(skb);
	} else if (sroce_resp_read_restarted(resp, skb)) {
		/*
		 * The requester asks again for the READ being answered,
		 * from a PSN we sent and it did not get: it lost a
		 * response.  What we would still send after that gap it
		 * drops as out of order, so stop and answer the duplicate
		 * now (it replays from the resource cache, from the PSN
		 * asked for); without this a long READ (4096 responses at
		 * MTU 256) keeps streaming useless packets for longer than
		 * the requester's ACK timeout.
		 */
		resp->read = NULL;
		sroce_resp_packet(qp, skb);
	} else if (!resp->read && skb_queue_empty(&resp->backlog)) {
		sroce_resp_packet(qp, skb);
	} else if (skb_queue_len(&resp->backlog) < SROCE_RESP_BACKLOG_MAX &&
		   !resp->dying) {
		__skb_queue_tail(&resp->backlog, skb);
	} else {
		sroce_resp_drop(qp, SROCE_PKT(skb), resp_dropped);
		kfree_skb(skb);
	}
	sroce_resp_unlock(qp);
}

/* ---- QP lifetime ---------------------------------------------------------------- */

int sroce_responder_init(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	memset(resp, 0, sizeof(*resp));
	spin_lock_init(&resp->lock);
	skb_queue_head_init(&resp->backlog);
	skb_queue_head_init(&resp->held);
	INIT_DELAYED_WORK(&resp->work, sroce_resp_work);
	resp->last_opcode = SROCE_RESP_NO_OPCODE;
	resp->rwqe = kzalloc(sizeof(*resp->rwqe), GFP_KERNEL);
	return resp->rwqe ? 0 : -ENOMEM;
}

/*
 * Room for @max_dest_rd_atomic READ/atomic resources.  The array only
 * grows: the resources it holds move to the front of the new one (a READ
 * response in progress keeps its entry), and the free entries after them
 * are the next to be used.
 */
int sroce_responder_reserve(struct sroce_qp *qp, u32 max_dest_rd_atomic)
{
	struct sroce_responder *resp = &qp->resp;
	struct sroce_resp_res *res, *old;
	u32 n = min_t(u32, max_dest_rd_atomic, SROCE_MAX_QP_RD_ATOM);

	if (n <= READ_ONCE(resp->num_res))
		return 0;
	res = kcalloc(n, sizeof(*res), GFP_KERNEL_ACCOUNT);
	if (!res)
		return -ENOMEM;

	spin_lock_bh(&resp->lock);
	old = resp->res;
	if (n > resp->num_res) {
		if (old)
			memcpy(res, old, resp->num_res * sizeof(*res));
		if (resp->read)
			resp->read = res + (resp->read - old);
		if (resp->read_last)
			resp->read_last = res + (resp->read_last - old);
		resp->res_next = resp->num_res;
		resp->res = res;
		WRITE_ONCE(resp->num_res, n);
	} else {
		old = res;	/* a concurrent modify got there first */
	}
	spin_unlock_bh(&resp->lock);
	kfree(old);
	return 0;
}

/*
 * On every transition to RTR or RTS.  The first one takes the receive
 * PSN; all of them take the attributes that may change later.
 */
void sroce_responder_start(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;
	const struct ib_qp_attr *attr = &qp->attr;
	int mtu;

	/* RC, UC, XRC; a UD message is checked against the MTU of the moment. */
	mtu = sroce_qp_packet_mtu(qp);

	spin_lock_bh(&resp->lock);
	if (!resp->started) {
		resp->epsn = attr->rq_psn & SROCE_PSN_MASK;
		resp->started = true;
	}
	resp->mtu = mtu > 0 ? mtu : 256;	/* qp.c validates; be safe */
	resp->min_rnr_timer = attr->min_rnr_timer & SROCE_AETH_VALUE_MASK;
	/* modify_qp reserved the resources (sroce_responder_reserve()). */
	resp->max_dest_rd_atomic = min_t(u32, attr->max_dest_rd_atomic,
					 resp->num_res);
	resp->access = attr->qp_access_flags;
	spin_unlock_bh(&resp->lock);
}

/*
 * The QP goes back to RESET (process context): forget the connection.
 * Packets that still arrive are dropped until the next start.
 */
void sroce_responder_reset(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	spin_lock_bh(&resp->lock);
	resp->started = false;
	resp->stopped = false;
	resp->want_qp_error = false;
	resp->established = false;
	resp->want_comm_est = false;
	resp->msn = 0;
	resp->last_opcode = SROCE_RESP_NO_OPCODE;
	resp->seq_nak_sent = false;
	resp->ack_owed = false;
	resp->dup_acked = false;
	resp->uc_drop = false;
	resp->unacked = 0;
	resp->ack_retry = false;
	resp->ack_busy = 0;
	resp->read_busy = 0;
	resp->have_rwqe = false;
	resp->read = NULL;
	resp->read_last = NULL;
	if (resp->res)
		memset(resp->res, 0, resp->num_res * sizeof(*resp->res));
	resp->res_next = 0;
	__skb_queue_purge(&resp->backlog);
	sroce_resp_held_purge(qp);
	spin_unlock_bh(&resp->lock);

	cancel_delayed_work_sync(&resp->work);
}

/*
 * The QP entered ERR: stop.  The receive WQEs, the one in use included
 * (it stays in the ring until it completes), are flushed by qp.c.
 */
void sroce_responder_flush(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	spin_lock_bh(&resp->lock);
	/* Not after a RESET that overtook the error (sroce_qp_error()). */
	if (sroce_qp_state(qp) == IB_QPS_ERR) {
		resp->stopped = true;
		resp->have_rwqe = false;
		resp->read = NULL;
		__skb_queue_purge(&resp->backlog);
		sroce_resp_held_purge(qp);
	}
	spin_unlock_bh(&resp->lock);
}

void sroce_responder_cleanup(struct sroce_qp *qp)
{
	struct sroce_responder *resp = &qp->resp;

	spin_lock_bh(&resp->lock);
	resp->dying = true;
	resp->stopped = true;
	resp->read = NULL;
	resp->read_last = NULL;
	__skb_queue_purge(&resp->backlog);
	sroce_resp_held_purge(qp);
	spin_unlock_bh(&resp->lock);

	cancel_delayed_work_sync(&resp->work);
	kfree(resp->rwqe);
	resp->rwqe = NULL;
	kfree(resp->res);
	resp->res = NULL;
	resp->num_res = 0;
}
