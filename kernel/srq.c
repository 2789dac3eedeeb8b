// SPDX-License-Identifier: GPL-2.0-only
/*
 * srq.c - shared receive queues, and the receive slot format shared with
 * QP receive queues.  See srq.h.
 */
#include <linux/log2.h>

#include "cq.h"
#include "qp.h"
#include "srq.h"

/* ---- receive slots (QP RQs and SRQs) ------------------------------------- */

u32 sroce_recv_slot_max_sge(const struct sroce_ring *ring)
{
	u32 room = sroce_ring_entry_size(ring) - sizeof(struct sroce_recv_wqe);

	return min_t(u32, room / sizeof(struct sroce_sge), SROCE_MAX_SGE);
}

/*
 * Copy slot @index into @rwqe and validate the copy; the slot may be
 * shared memory, so every field is read once.  -EINVAL for a bad WQE
 * (rwqe->wr_id is valid then).
 */
int sroce_recv_slot_copy(const struct sroce_ring *ring, u32 index,
			 u32 max_sge, struct sroce_rwqe *rwqe)
{
	const struct sroce_recv_wqe *slot = sroce_ring_slot(ring, index);
	u64 length = 0;
	u32 i;

	rwqe->wr_id = READ_ONCE(slot->wr_id);
	rwqe->num_sge = READ_ONCE(slot->num_sge);
	rwqe->length = 0;
	if (rwqe->num_sge > max_sge) {
		rwqe->num_sge = 0;
		return -EINVAL;
	}
	memcpy(rwqe->sge, slot + 1, rwqe->num_sge * sizeof(struct sroce_sge));
	for (i = 0; i < rwqe->num_sge; i++)
		length += rwqe->sge[i].length;
	if (length > SROCE_MAX_MSG_SIZE)
		return -EINVAL;
	rwqe->length = length;
	return 0;
}

/* Kernel posting: ib_recv_wr -> slot @index (kernel memory). */
int sroce_recv_slot_fill(struct sroce_ring *ring, u32 index, u32 max_sge,
			 const struct ib_recv_wr *wr)
{
	struct sroce_recv_wqe *wqe = sroce_ring_slot(ring, index);
	struct sroce_sge *sge = (struct sroce_sge *)(wqe + 1);
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	wqe->wr_id = wr->wr_id;
	wqe->num_sge = wr->num_sge;
	wqe->reserved = 0;
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	return 0;
}

/* ---- verbs --------------------------------------------------------------- */

int sroce_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		     struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct ib_ucontext *uctx = NULL;
	u32 slot;
	int err;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (init->srq_type == IB_SRQT_XRC &&
	    (!ibsrq->ext.cq || !ibsrq->ext.xrc.xrcd))
		return -EINVAL;
	if (!attr->max_wr || attr->max_wr > SROCE_MAX_SRQ_WR ||
	    attr->max_sge > SROCE_MAX_SGE)
		return -EINVAL;
	if (!sroce_res_get(&sdev->num_srq, sdev->attr.max_srq))
		return -ENOMEM;

	spin_lock_init(&srq->lock);
	spin_lock_init(&srq->post_lock);
	refcount_set(&srq->ref, 1);
	init_completion(&srq->released);
	srq->user = udata;
	if (udata)
		uctx = &rdma_udata_to_drv_context(udata, struct sroce_ucontext,
						  ibuc)->ibuc;

	slot = roundup_pow_of_two(max_t(u32, sizeof(struct sroce_recv_wqe) +
					attr->max_sge * sizeof(struct sroce_sge),
					64));
	err = sroce_ring_alloc(&srq->ring, uctx, attr->max_wr, slot);
	if (err)
		goto err_count;
	srq->max_sge = sroce_recv_slot_max_sge(&srq->ring);

	err = ida_alloc_range(&sdev->srq_ida, 1, SROCE_LAST_QPN, GFP_KERNEL);
	if (err < 0)
		goto err_ring;
	srq->srq_num = err;

	if (udata) {
		struct sroce_create_srq_resp resp = { .srq_num = srq->srq_num };

		err = -EINVAL;
		if (udata->outlen < sizeof(resp))
			goto err_num;
		sroce_ring_get_info(&srq->ring, &resp.rq);
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_num;
	}

	/*
	 * libibverbs documents srq_limit as irrelevant here, and programs
	 * leave it as it happens to be: a limit that fits arms the event, as
	 * in rdma_rxe, any other is ignored rather than refused.
	 */
	srq->limit = attr->srq_limit <= attr->max_wr ? attr->srq_limit : 0;
	attr->max_wr = sroce_ring_size(&srq->ring);
	attr->max_sge = srq->max_sge;
	if (init->srq_type == IB_SRQT_XRC) {
		/* Visible to XRCETHs from now on; the core reports the number. */
		ibsrq->ext.xrc.srq_num = srq->srq_num;
		err = xa_insert_bh(&sdev->xrc_srq_xa, srq->srq_num, srq,
				   GFP_KERNEL);
		if (err)
			goto err_num;
	}
	return 0;

err_num:
	ida_free(&sdev->srq_ida, srq->srq_num);
err_ring:
	sroce_ring_free(&srq->ring);
err_count:
	atomic_dec(&sdev->num_srq);
	return err;
}

int sroce_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		     enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	/* Resizing would need a new ring, which the ABI cannot hand out. */
	if (mask & IB_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IB_SRQ_LIMIT) {
		if (attr->srq_limit > sroce_ring_size(&srq->ring))
			return -EINVAL;
		spin_lock_bh(&srq->lock);
		srq->limit = attr->srq_limit;
		spin_unlock_bh(&srq->lock);
	}
	return 0;
}

int sroce_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);

	attr->max_wr = sroce_ring_size(&srq->ring);
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

struct sroce_srq *sroce_xrc_srq_get(struct sroce_dev *sdev, u32 srqn)
{
	struct sroce_srq *srq;

	xa_lock_bh(&sdev->xrc_srq_xa);
	srq = xa_load(&sdev->xrc_srq_xa, srqn);
	if (srq && !refcount_inc_not_zero(&srq->ref))
		srq = NULL;
	xa_unlock_bh(&sdev->xrc_srq_xa);
	return srq;
}

void sroce_srq_put(struct sroce_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->released);
}

/*
 * The core destroys a basic SRQ only when no QP uses it any more.  An XRC
 * SRQ has no attached QPs: see srq.h for how it leaves the target QPs.
 */
int sroce_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibsrq->device);
	struct sroce_srq *srq = to_ssrq(ibsrq);

	if (ibsrq->srq_type == IB_SRQT_XRC) {
		xa_erase_bh(&sdev->xrc_srq_xa, srq->srq_num);
		sroce_srq_put(srq);
		wait_for_completion(&srq->released);
		sroce_qp_xrc_srq_gone(sdev, srq);
	}
	ida_free(&sdev->srq_ida, srq->srq_num);
	sroce_ring_free(&srq->ring);
	atomic_dec(&sdev->num_srq);
	return 0;
}

int sroce_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			const struct ib_recv_wr **bad_wr)
{
	struct sroce_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	int err = 0;

	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->post_lock, flags);
	for (; wr; wr = wr->next) {
		if (!sroce_ring_has_room(&srq->ring, srq->producer)) {
			err = -ENOMEM;
			break;
		}
		err = sroce_recv_slot_fill(&srq->ring, srq->producer,
					   srq->max_sge, wr);
		if (err)
			break;
		sroce_ring_set_producer(&srq->ring, ++srq->producer);
	}
	spin_unlock_irqrestore(&srq->post_lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

static void sroce_srq_limit_event(struct sroce_srq *srq)
{
	struct ib_event event = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&event, srq->ibsrq.srq_context);
}

int sroce_srq_take(struct sroce_srq *srq, struct sroce_rwqe *rwqe)
{
	bool limit_reached = false;
	u32 n;
	int err;

	spin_lock_bh(&srq->lock);
	n = sroce_ring_published(&srq->ring, srq->tail);
	if (n == U32_MAX) {
		err = -EIO;
	} else if (!n) {
		err = -ENOENT;
	} else {
		err = sroce_recv_slot_copy(&srq->ring, srq->tail, srq->max_sge,
					   rwqe);
		srq->tail++;
		sroce_ring_set_consumer(&srq->ring, srq->tail);
		/* IBA 10.2.9.3: the event fires once, then disarms. */
		if (srq->limit && n - 1 < srq->limit) {
			srq->limit = 0;
			limit_reached = true;
		}
	}
	spin_unlock_bh(&srq->lock);

	if (limit_reached)
		sroce_srq_limit_event(srq);
	return err;
}
