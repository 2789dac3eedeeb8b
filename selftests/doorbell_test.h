/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * doorbell_test.h: what the programs that ring a doorbell file themselves
 * (sroce_verbs --hold, doorbell_cost) share: opening one as the ABI says,
 * not through the provider (which opens its own), and a UD QP in RTS,
 * whose doorbell is accepted without a peer.
 */
#ifndef SROCE_SELFTESTS_DOORBELL_TEST_H
#define SROCE_SELFTESTS_DOORBELL_TEST_H

#include <infiniband/verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>

#include "sroce-abi.h"

/* A new doorbell file of @ctx, or -1 (with errno; not an sroce device). */
static inline int open_doorbell_file(struct ibv_context *ctx)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr;
	} req = {
		.hdr = {
			.length = sizeof(req),
			.object_id = SROCE_OBJECT_DOORBELL,
			.method_id = SROCE_METHOD_DOORBELL_ALLOC,
			.num_attrs = 1,
			.driver_id = SROCE_DRIVER_ID,
		},
		.attr = {
			.attr_id = SROCE_ATTR_DOORBELL_ALLOC_FD,
			.flags = UVERBS_ATTR_F_MANDATORY,
		},
	};

	if (ioctl(ctx->cmd_fd, RDMA_VERBS_IOCTL, &req))
		return -1;
	return req.attr.data;
}

/* A UD QP in RTS on @pd and @cq, or NULL (with errno). */
static inline struct ibv_qp *ud_qp_rts(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 1
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp || ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				 IBV_QP_PORT | IBV_QP_QKEY))
		return NULL;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return NULL;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return NULL;
	return qp;
}

#endif
