// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Queue pairs: creation maps the region of the send queue and (unless an
// SRQ is used) receive queue rings the kernel allocated, with one mmap();
// state changes and queries are kernel commands.  Posting lives in post.cpp
// and wr_ex.cpp.
//
// XRC: a send QP (XRC initiator) has a send queue only; a receive QP (XRC
// target) has no queues at all: the kernel creates it in an XRC domain,
// without rings, and other processes of the domain open it (open_qp).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sroce.h"
#include "wqe.h"

namespace sroce {
namespace {

constexpr uint32_t supported_qp_comp_mask = IBV_QP_INIT_ATTR_PD |
					    IBV_QP_INIT_ATTR_XRCD |
					    IBV_QP_INIT_ATTR_CREATE_FLAGS |
					    IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;

int check_create_attr(const ibv_qp_init_attr_ex *attr)
{
	if (attr->comp_mask & ~supported_qp_comp_mask)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	switch (attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
	case IBV_QPT_XRC_SEND:
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
			return EINVAL;
		break;
	case IBV_QPT_XRC_RECV:
		// In a domain, without PD, CQs or queues.
		if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd)
			return EINVAL;
		if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
		    attr->send_ops_flags)
			return EOPNOTSUPP;
		break;
	default:
		return EOPNOTSUPP;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~supported_send_ops(attr->qp_type)))
		return EOPNOTSUPP;
	return 0;
}

Qp *qp_alloc()
{
	auto *qp = static_cast<Qp *>(calloc(1, sizeof(Qp)));

	if (qp) {
		qp->sq.lock.init();
		qp->rq.lock.init();
	}
	return qp;
}

void qp_free(Qp *qp)
{
	qp->sq.lock.destroy();
	qp->rq.lock.destroy();
	free(qp);
}

// What the rings can actually carry bounds what we advertise: the caps the
// kernel returned are clamped to the slot geometry and the u8 SGE count,
// and written back so the caller sees the limits post_send enforces.
void set_limits(Qp *qp, ibv_qp_init_attr_ex *attr)
{
	uint32_t sq_slot = qp->sq.ring.entry_size(); // 0 without an SQ

	qp->send.qp_type = attr->qp_type;
	qp->send.sig_all = attr->sq_sig_all != 0;
	qp->send.max_sge = std::min({ attr->cap.max_send_sge,
				      send_slot_max_sge(sq_slot),
				      static_cast<uint32_t>(UINT8_MAX) });
	qp->send.max_inline = std::min(attr->cap.max_inline_data,
				       send_slot_max_inline(sq_slot));
	attr->cap.max_send_sge = qp->send.max_sge;
	attr->cap.max_inline_data = qp->send.max_inline;
	attr->cap.max_send_wr = std::min(attr->cap.max_send_wr,
					 qp->sq.ring.size());
	if (!attr->srq && qp->rq.ring.attached()) {
		qp->max_recv_sge = std::min(
			attr->cap.max_recv_sge,
			recv_slot_max_sge(qp->rq.ring.entry_size()));
		attr->cap.max_recv_sge = qp->max_recv_sge;
		attr->cap.max_recv_wr = std::min(attr->cap.max_recv_wr,
						 qp->rq.ring.size());
	}
}

// The kernel's SQ poller for this process's QPs (kernel/sq_poll.c): the
// environment asks, the kernel bounds (its parameter sq_poll_max_us).  A
// bad value fails create_qp, and says why, rather than run unpolled.
int sq_poll_request(sroce_create_qp_cmd *drv)
{
	const char *text = getenv("SROCE_SQ_POLL_US");

	memset(drv, 0, sizeof(*drv));
	if (parse_sq_poll_us(text, &drv->sq_poll_us))
		return 0;
	fprintf(stderr,
		"libsroce: SROCE_SQ_POLL_US='%s' is not a number of microseconds (0 to 4294967295)\n",
		text);
	return EINVAL;
}

} // namespace

bool parse_sq_poll_us(const char *text, uint32_t *us)
{
	uint64_t v = 0;

	*us = 0;
	if (!text)
		return true;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9')
			return false;
		v = v * 10 + static_cast<uint64_t>(*p - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*us = static_cast<uint32_t>(v);
	return true;
}

ibv_qp *create_qp_ex(ibv_context *ctx, ibv_qp_init_attr_ex *attr)
{
	DrvCmd<sroce_cmd_ex_create_qp, sroce_create_qp_cmd> cmd;
	DrvResp<ib_uverbs_ex_create_qp_resp, sroce_create_qp_resp> resp;
	sroce_create_qp_cmd req;
	sroce_create_qp_resp drv;
	Qp *qp;
	int ret = check_create_attr(attr);

	if (!ret)
		ret = sq_poll_request(&req);
	if (ret) {
		errno = ret;
		return nullptr;
	}
	qp = qp_alloc();
	if (!qp)
		return nullptr;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_PD) &&
	    pd_single_thread(attr->pd)) {
		qp->sq.lock.set_single_thread(true);
		qp->rq.lock.set_single_thread(true);
	}

	memset(&cmd, 0, sizeof(cmd));
	cmd.set_drv(req);
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_qp_ex2(ctx, &qp->vqp, attr, cmd.cmd(), sizeof(cmd),
				    resp.core(), sizeof(resp));
	if (ret)
		goto err_free;

	drv = resp.drv();
	ret = queue_map(&qp->sq, ctx, drv.sq, sizeof(sroce_send_wqe), true);
	if (ret)
		goto err_destroy;
	if (attr->srq) {
		qp->srq = from_srq(attr->srq);
	} else {
		ret = queue_share(&qp->rq, qp->sq, drv.sq, drv.rq,
				  sizeof(sroce_recv_wqe));
		if (ret)
			goto err_unmap;
	}
	set_limits(qp, attr);

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		install_wr_ops(&qp->vqp.qp_ex);
		qp->vqp.comp_mask |= VERBS_QP_EX;
	}
	return &qp->vqp.qp;

err_unmap:
	queue_unmap(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	qp_free(qp);
	errno = ret;
	return nullptr;
}

ibv_qp *open_qp(ibv_context *ctx, ibv_qp_open_attr *attr)
{
	Qp *qp = qp_alloc();
	sroce_cmd_open_qp cmd;
	ib_uverbs_create_qp_resp resp;
	int ret;

	if (!qp)
		return nullptr;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_open_qp(ctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		qp_free(qp);
		errno = ret;
		return nullptr;
	}
	// Another handle on an XRC target QP: no queues to post to.
	qp->send.qp_type = IBV_QPT_XRC_RECV;
	return &qp->vqp.qp;
}

ibv_qp *create_qp(ibv_pd *pd, ibv_qp_init_attr *attr)
{
	ibv_qp_init_attr_ex ex;
	ibv_qp *qp;

	memset(&ex, 0, sizeof(ex));
	ex.qp_context = attr->qp_context;
	ex.send_cq = attr->send_cq;
	ex.recv_cq = attr->recv_cq;
	ex.srq = attr->srq;
	ex.cap = attr->cap;
	ex.qp_type = attr->qp_type;
	ex.sq_sig_all = attr->sq_sig_all;
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;

	qp = create_qp_ex(pd->context, &ex);
	if (qp)
		attr->cap = ex.cap;
	return qp;
}

int modify_qp(ibv_qp *qp, ibv_qp_attr *attr, int mask)
{
	sroce_cmd_modify_qp cmd;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
	if (ret || !(mask & IBV_QP_STATE) || attr->qp_state != IBV_QPS_RESET)
		return ret;
	// The kernel emptied the work queues; drop what they left in the CQs,
	// except the receive completions of a QP on an SRQ (cq_clean()).
	if (qp->recv_cq)
		cq_clean(from_cq(qp->recv_cq), qp->qp_num, qp->srq != nullptr);
	if (qp->send_cq && qp->send_cq != qp->recv_cq)
		cq_clean(from_cq(qp->send_cq), qp->qp_num, false);
	return 0;
}

int query_qp(ibv_qp *ibqp, ibv_qp_attr *attr, int mask,
	     ibv_qp_init_attr *init_attr)
{
	Qp *qp = from_qp(ibqp);
	sroce_cmd_query_qp cmd;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_query_qp(ibqp, attr, mask, init_attr, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	// Report the limits post_send enforces (see set_limits()).
	attr->cap.max_send_sge = std::min(attr->cap.max_send_sge, qp->send.max_sge);
	attr->cap.max_inline_data = std::min(attr->cap.max_inline_data,
					     qp->send.max_inline);
	attr->cap.max_send_wr = std::min(attr->cap.max_send_wr, qp->sq.ring.size());
	if (!qp->srq && qp->rq.ring.attached()) {
		attr->cap.max_recv_sge = std::min(attr->cap.max_recv_sge,
						  qp->max_recv_sge);
		attr->cap.max_recv_wr = std::min(attr->cap.max_recv_wr,
						 qp->rq.ring.size());
	}
	init_attr->cap = attr->cap;
	return 0;
}

int destroy_qp(ibv_qp *ibqp)
{
	Qp *qp = from_qp(ibqp);
	int ret = ibv_cmd_destroy_qp(ibqp);

	// The kernel no longer reads the rings once the QP is destroyed.
	if (ret)
		return ret;
	queue_unmap(&qp->sq);
	queue_unmap(&qp->rq);
	qp_free(qp);
	return 0;
}

} // namespace sroce
