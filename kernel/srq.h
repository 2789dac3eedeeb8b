/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * srq.h - shared receive queues.
 *
 * An SRQ is one receive ring (same slots as a QP's RQ) that the responders
 * of several QPs consume.  A QP takes a WQE out of the SRQ when a message
 * needs one (sroce_srq_take(), through sroce_rq_fetch() in qp.c) and from
 * then on owns it: it completes it, successfully or with a flush error if
 * the QP fails first.  The SRQ itself outlives its QPs (the core counts
 * them).
 *
 * XRC SRQs (IB_SRQT_XRC) are the same ring with a CQ and an XRC domain of
 * their own.  No QP is attached to them: an XRC request names one by its
 * number in the XRCETH, and the responder of the XRC target QP looks it
 * up in sdev->xrc_srq_xa (sroce_xrc_srq_get()), which takes a reference
 * for the time the packet is processed.  A WQE the target QP took stays
 * its own (qp->xrc_srq) until it completes; destroying the SRQ first
 * waits for those references, then takes every such WQE back from the
 * QPs holding one (completed with IB_WC_WR_FLUSH_ERR on the SRQ's CQ),
 * target QPs being destroyed included (sdev->xrc_tgt_list).
 *
 * Locks: srq->lock (BH) for the consumer side, taken inside a QP's
 * rq_lock; post_lock (irqsave) for kernel posting.
 */
#ifndef SROCE_SRQ_H
#define SROCE_SRQ_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "ring.h"

struct sroce_rwqe;

struct sroce_srq {
	struct ib_srq ibsrq;
	spinlock_t lock;		/* consumer side, see above */
	struct sroce_ring ring;
	u32 tail;			/* our consumer index */
	u32 limit;			/* armed srq_limit, 0: not armed */
	u32 max_sge;			/* what a slot holds */
	u32 srq_num;
	bool user;
	spinlock_t post_lock;		/* kernel SRQs: producer */
	u32 producer;
	refcount_t ref;			/* XRC: 1 + receive path users */
	struct completion released;	/* XRC: ref reached zero */
};

static inline struct sroce_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct sroce_srq, ibsrq);
}

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata);
int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr);

/*
 * Take the oldest WQE: copy, validate, consume.  Same returns as
 * sroce_rq_fetch() (-EINVAL: consumed, but invalid; complete it in error).
 */
int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *rwqe);

/*
 * The XRC SRQ numbered @srqn, with a reference, or NULL; any context.
 * sroce_srq_put() drops the reference.
 */
struct sroce_srq *sroce_xrc_srq_get(struct sroce_dev *sdev, u32 srqn);
void sroce_srq_put(struct sroce_srq *srq);

/* Slot helpers shared with qp.c's receive queues. */
u32 sroce_recv_slot_max_sge(const struct sroce_ring *ring);
int sroce_recv_slot_copy(const struct sroce_ring *ring, u32 index,
			 u32 max_sge, struct sroce_rwqe *rwqe);
int sroce_recv_slot_fill(struct sroce_ring *ring, u32 index, u32 max_sge,
			 const struct ib_recv_wr *wr);

#endif /* SROCE_SRQ_H */
