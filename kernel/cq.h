/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * cq.h - completion queues.
 *
 * The kernel is the only producer of a CQ ring: requester, completer and
 * responder call sroce_cq_post() with a finished struct ib_uverbs_wc.  The
 * consumer is the provider (user CQs, no system call) or sroce_poll_cq()
 * (kernel CQs).  cq->lock serialises producers, resize, arming and kernel
 * polling; it is taken with irqsave because kernel consumers may poll or
 * arm from any context.
 */
#ifndef SROCE_CQ_H
#define SROCE_CQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "ring.h"

struct sroce_cq {
	struct ib_cq ibcq;
	spinlock_t lock;		/* see above */
	struct sroce_ring ring;
	u32 producer;		/* our copy of ring.hdr->producer */
	u8 notify;		/* 0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP */
	bool overflowed;	/* CQ error reported; further CQEs dropped */
	bool user;
};

static inline struct sroce_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct sroce_cq, ibcq);
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_LAST_ARG);
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);

/*
 * Add a completion.  @wc is in the userspace format: opcode and status
 * values of enum ib_uverbs_wc_opcode / ib_wc_status (the kernel's IB_WC_*
 * values are the same), wc_flags from enum sroce_wc_flags.  @solicited:
 * the completion is for a received message with the solicited event bit.
 * For a UD receive on a kernel CQ, put the packet's enum rdma_network_type
 * (RDMA_NETWORK_IPV4/IPV6) in @wc->reserved: kernel consumers need it to
 * read the GRH area (ib_init_ah_attr_from_wc()); userspace ignores it.
 * A UD receive that arrived on a VLAN netdev also sets SROCE_WC_KERNEL_VLAN
 * in @wc->wc_flags and the VLAN ID in @wc->slid (RoCE has no LIDs); both
 * only on kernel CQs.
 * Any context.  Returns 0, or -ENOSPC if the CQ overflowed (the CQ is then
 * in error: IB_EVENT_CQ_ERR was dispatched and the CQE is lost).
 */
/* Kernel CQs only, never seen by userspace: see sroce_cq_post(). */
#define SROCE_WC_KERNEL_VLAN	BIT(7)

int sroce_cq_post(struct sroce_cq *cq, const struct ib_uverbs_wc *wc,
		  bool solicited);

#endif /* SROCE_CQ_H */
