// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Shared receive queues: one mapped receive ring, posted to like a QP's RQ
// (post.cpp).  Changing max_wr would need a new ring, which the ABI has no
// response for, so only the limit (srq_limit) can be modified.  XRC SRQs
// (create_srq_ex) are the same ring with a CQ and an XRC domain; remote
// XRC initiators name them by the number get_srq_num() returns.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sroce.h"
#include "wqe.h"

namespace sroce {

namespace {

using SrqResp = DrvResp<ib_uverbs_create_srq_resp, sroce_create_srq_resp>;

Srq *srq_alloc()
{
	auto *srq = static_cast<Srq *>(calloc(1, sizeof(Srq)));

	if (srq)
		srq->rq.lock.init();
	return srq;
}

void srq_free(Srq *srq)
{
	srq->rq.lock.destroy();
	free(srq);
}

// After the create command: map the ring, clamp the caps to its slots.
int srq_finish(Srq *srq, ibv_context *ctx, const SrqResp &resp,
	       ibv_srq_attr *attr)
{
	sroce_create_srq_resp drv = resp.drv();
	int ret = queue_map(&srq->rq, ctx, drv.rq, sizeof(sroce_recv_wqe));

	if (ret)
		return ret;
	srq->vsrq.srq_num = drv.srq_num;
	srq->max_sge = std::min(attr->max_sge,
				recv_slot_max_sge(srq->rq.ring.entry_size()));
	attr->max_sge = srq->max_sge;
	attr->max_wr = std::min(attr->max_wr, srq->rq.ring.size());
	return 0;
}

// The tail of both create verbs, given the create command's result @ret:
// the SRQ, or NULL with errno set and nothing left behind.
ibv_srq *srq_created(Srq *srq, int ret, ibv_context *ctx, const SrqResp &resp,
		     ibv_srq_attr *attr)
{
	if (!ret) {
		ret = srq_finish(srq, ctx, resp, attr);
		if (!ret)
			return &srq->vsrq.srq;
		ibv_cmd_destroy_srq(&srq->vsrq.srq);
	}
	srq_free(srq);
	errno = ret;
	return nullptr;
}

} // namespace

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr)
{
	Srq *srq = srq_alloc();
	sroce_cmd_create_srq cmd;
	SrqResp resp;
	int ret;

	if (!srq)
		return nullptr;
	srq->rq.lock.set_single_thread(pd_single_thread(pd));
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 resp.core(), sizeof(resp));
	return srq_created(srq, ret, pd->context, resp, &attr->attr);
}

// Basic SRQs through the extended verb too; XRC SRQs need their domain
// and CQ.  Tag matching SRQs do not exist in sroce.
ibv_srq *create_srq_ex(ibv_context *ctx, ibv_srq_init_attr_ex *attr)
{
	constexpr uint32_t supported = IBV_SRQ_INIT_ATTR_TYPE |
				       IBV_SRQ_INIT_ATTR_PD |
				       IBV_SRQ_INIT_ATTR_XRCD |
				       IBV_SRQ_INIT_ATTR_CQ;
	ibv_srq_type type = (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) ?
			    attr->srq_type : IBV_SRQT_BASIC;
	sroce_cmd_create_xsrq cmd;
	SrqResp resp;
	Srq *srq;
	int ret;

	if ((attr->comp_mask & ~supported) ||
	    (type != IBV_SRQT_BASIC && type != IBV_SRQT_XRC)) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd ||
	    (type == IBV_SRQT_XRC &&
	     (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || !attr->xrcd ||
	      !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || !attr->cq))) {
		errno = EINVAL;
		return nullptr;
	}
	srq = srq_alloc();
	if (!srq)
		return nullptr;
	srq->rq.lock.set_single_thread(pd_single_thread(attr->pd));
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_srq_ex(ctx, &srq->vsrq, attr, &cmd, sizeof(cmd),
				    resp.core(), sizeof(resp));
	return srq_created(srq, ret, ctx, resp, &attr->attr);
}

int get_srq_num(ibv_srq *ibsrq, uint32_t *srq_num)
{
	Srq *srq = from_srq(ibsrq);

	if (srq->vsrq.srq_type != IBV_SRQT_XRC)
		return EINVAL;
	*srq_num = srq->vsrq.srq_num;
	return 0;
}

int modify_srq(ibv_srq *srq, ibv_srq_attr *attr, int mask)
{
	sroce_cmd_modify_srq cmd;

	if (mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP;
	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_modify_srq(srq, attr, mask, &cmd, sizeof(cmd));
}

int query_srq(ibv_srq *ibsrq, ibv_srq_attr *attr)
{
	Srq *srq = from_srq(ibsrq);
	sroce_cmd_query_srq cmd;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	ret = ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
	if (!ret)
		attr->max_sge = std::min(attr->max_sge, srq->max_sge);
	return ret;
}

int destroy_srq(ibv_srq *ibsrq)
{
	Srq *srq = from_srq(ibsrq);
	int ret = ibv_cmd_destroy_srq(ibsrq);

	if (ret)
		return ret;
	queue_unmap(&srq->rq);
	srq_free(srq);
	return 0;
}

} // namespace sroce
