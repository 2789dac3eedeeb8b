// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Shared receive queues: one mapped receive ring, posted to like a QP's RQ
// (post.cpp).  Changing max_wr would need a new ring, which the ABI has no
// response for, so only the limit (srq_limit) can be modified.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sroce.h"
#include "wqe.h"

namespace sroce {

ibv_srq *create_srq(ibv_pd *pd, ibv_srq_init_attr *attr)
{
	auto *srq = static_cast<Srq *>(calloc(1, sizeof(Srq)));
	sroce_cmd_create_srq cmd;
	DrvResp<ib_uverbs_create_srq_resp, sroce_create_srq_resp> resp;
	sroce_create_srq_resp drv;
	int ret;

	if (!srq)
		return nullptr;
	pthread_spin_init(&srq->rq.lock, PTHREAD_PROCESS_PRIVATE);
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 resp.core(), sizeof(resp));
	if (ret)
		goto err_free;
	drv = resp.drv();
	ret = queue_map(&srq->rq, pd->context, drv.rq, sizeof(sroce_recv_wqe));
	if (ret)
		goto err_destroy;
	srq->vsrq.srq_num = drv.srq_num;
	srq->max_sge = std::min(attr->attr.max_sge,
				recv_slot_max_sge(srq->rq.ring.entry_size()));
	attr->attr.max_sge = srq->max_sge;
	attr->attr.max_wr = std::min(attr->attr.max_wr, srq->rq.ring.size());
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	pthread_spin_destroy(&srq->rq.lock);
	free(srq);
	errno = ret;
	return nullptr;
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
	pthread_spin_destroy(&srq->rq.lock);
	free(srq);
	return 0;
}

} // namespace sroce
