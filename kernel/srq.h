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
 * Locks: srq->lock (BH) for the consumer side, taken inside a QP's
 * rq_lock; post_lock (irqsave) for kernel posting.
 */
#ifndef SROCE_SRQ_H
#define SROCE_SRQ_H

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

/* Slot helpers shared with qp.c's receive queues. */
u32 sroce_recv_slot_max_sge(const struct sroce_ring *ring);
int sroce_recv_slot_copy(const struct sroce_ring *ring, u32 index,
			 u32 max_sge, struct sroce_rwqe *rwqe);
int sroce_recv_slot_fill(struct sroce_ring *ring, u32 index, u32 max_sge,
			 const struct ib_recv_wr *wr);

#endif /* SROCE_SRQ_H */
