// SPDX-License-Identifier: GPL-2.0-only
/*
 * cq.c - completion queues; see cq.h.
 */
#include <linux/log2.h>
#include <linux/vmalloc.h>

#include "cq.h"
#include "qp.h"
#include "sroce.h"
#include "trace.h"

static_assert(sizeof(struct ib_uverbs_wc) <= SROCE_CQE_SIZE);

static int sroce_cq_check_size(int cqe)
{
	return cqe < 1 || cqe > SROCE_MAX_CQE ? -EINVAL : 0;
}

static struct ib_ucontext *sroce_udata_uctx(struct ib_udata *udata)
{
	struct sroce_ucontext *suc;

	if (!udata)
		return NULL;
	suc = rdma_udata_to_drv_context(udata, struct sroce_ucontext, ibuc);
	return &suc->ibuc;
}

static int sroce_cq_copy_resp(struct ib_udata *udata,
			      const struct sroce_ring *ring)
{
	struct sroce_create_cq_resp resp;

	/* The provider cannot poll without the ring: no short responses. */
	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	sroce_ring_get_info(ring, &resp.cq);
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

int sroce_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		    SROCE_CREATE_CQ_LAST_ARG)
{
	struct ib_udata *udata = sroce_cq_udata(attrs);
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	err = sroce_cq_check_size(attr->cqe);
	if (err)
		return err;
	if (!sroce_res_get(&sdev->num_cq, sdev->attr.max_cq))
		return -ENOMEM;

	spin_lock_init(&cq->lock);
	cq->user = udata;
	err = sroce_ring_alloc(&cq->ring, sroce_udata_uctx(udata), attr->cqe,
			       SROCE_CQE_SIZE);
	if (err)
		goto err_count;

	if (udata) {
		err = sroce_cq_copy_resp(udata, &cq->ring);
		if (err)
			goto err_ring;
	}
	ibcq->cqe = sroce_ring_size(&cq->ring);
	return 0;

err_ring:
	sroce_ring_free(&cq->ring);
err_count:
	atomic_dec(&sdev->num_cq);
	return err;
}

/*
 * The core destroys a CQ only when no QP uses it any more, and QP destroy
 * stops every producer of that QP, so nothing posts concurrently.
 */
int sroce_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);

	sroce_ring_free(&cq->ring);
	atomic_dec(&to_sdev(ibcq->device)->num_cq);
	return 0;
}

/*
 * Move the unpolled CQEs into a new ring at the same indices, so that both
 * sides just carry on with their indices.  The provider keeps its pollers
 * out during the call.
 */
int sroce_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct sroce_cq *cq = to_scq(ibcq);
	struct sroce_resize_cq_resp resp;
	struct sroce_ring fresh, old;
	unsigned long flags;
	u32 used, consumer, i;
	int err;

	err = sroce_cq_check_size(cqe);
	if (err)
		return err;
	/* Before anything changes: a refusal leaves the CQ as it was. */
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	err = sroce_ring_alloc(&fresh, sroce_udata_uctx(udata), cqe,
			       SROCE_CQE_SIZE);
	if (err)
		return err;

	spin_lock_irqsave(&cq->lock, flags);
	consumer = sroce_ring_consumer(&cq->ring);
	used = cq->producer - consumer;
	if (used > sroce_ring_size(&cq->ring) || used > sroce_ring_size(&fresh)) {
		spin_unlock_irqrestore(&cq->lock, flags);
		sroce_ring_free(&fresh);
		return -EINVAL;
	}
	for (i = 0; i < used; i++)
		memcpy(sroce_ring_slot(&fresh, consumer + i),
		       sroce_ring_slot(&cq->ring, consumer + i), SROCE_CQE_SIZE);
	fresh.hdr->consumer = consumer;
	fresh.hdr->producer = cq->producer;
	old = cq->ring;
	cq->ring = fresh;
	/* Of this ring, not of one a concurrent resize put in its place. */
	if (udata)
		sroce_ring_get_info(&fresh, &resp.cq);
	ibcq->cqe = sroce_ring_size(&fresh);
	spin_unlock_irqrestore(&cq->lock, flags);

	/*
	 * Tell the provider last: if the copy faults it keeps using the old
	 * ring, which stays mapped in its address space but is dead.
	 */
	if (udata)
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	sroce_ring_free(&old);
	return err;
}

int sroce_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* Solicited-only arming does not weaken a pending next-completion. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    cq->producer != sroce_ring_consumer(&cq->ring))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

static void sroce_cq_overflow(struct sroce_cq *cq)
{
	struct ib_event event = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	atomic64_inc(&to_sdev(cq->ibcq.device)->stats.cq_overflows);
	ibdev_warn_ratelimited(cq->ibcq.device, "CQ overflow, CQ is in error\n");
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&event, cq->ibcq.cq_context);
}

int sroce_cq_post(struct sroce_cq *cq, const struct ib_uverbs_wc *wc,
		  bool solicited)
{
	bool notify = false, overflow = false;
	unsigned long flags;
	u32 room;

	trace_sroce_comp_err(&cq->ibcq, wc);
	spin_lock_irqsave(&cq->lock, flags);
	if (cq->overflowed) {
		spin_unlock_irqrestore(&cq->lock, flags);
		return -ENOSPC;
	}
	/* A consumer index that makes no sense counts as a full ring. */
	room = sroce_ring_room(&cq->ring, cq->producer);
	if (room == 0 || room == U32_MAX) {
		cq->overflowed = true;
		overflow = true;
	} else {
		memcpy(sroce_ring_slot(&cq->ring, cq->producer), wc, sizeof(*wc));
		sroce_ring_set_producer(&cq->ring, ++cq->producer);
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED &&
		     (solicited || wc->status != IB_WC_SUCCESS))) {
			cq->notify = 0;
			notify = true;
		}
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	/* Outside the lock: kernel handlers poll or re-arm from here. */
	if (overflow) {
		sroce_cq_overflow(cq);
		return -ENOSPC;
	}
	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	return 0;
}

/* Kernel CQs only: the ring is kernel memory, its consumer index ours. */
static void sroce_cqe_to_wc(struct sroce_dev *sdev,
			    const struct ib_uverbs_wc *uwc, struct ib_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = uwc->wr_id;
	wc->status = uwc->status;
	wc->opcode = uwc->opcode;
	wc->vendor_err = uwc->vendor_err;
	wc->byte_len = uwc->byte_len;
	wc->ex.imm_data = uwc->ex.imm_data;
	wc->qp = sroce_qp_ibqp(sdev, uwc->qp_num);
	wc->src_qp = uwc->src_qp;
	if (uwc->wc_flags & SROCE_WC_GRH) {
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = uwc->reserved;	/* see cq.h */
	}
	if (uwc->wc_flags & SROCE_WC_KERNEL_VLAN) {
		wc->wc_flags |= IB_WC_WITH_VLAN;
		wc->vlan_id = uwc->slid;
	}
	if (uwc->wc_flags & SROCE_WC_WITH_IMM)
		wc->wc_flags |= IB_WC_WITH_IMM;
	if (uwc->wc_flags & SROCE_WC_WITH_INV)
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	wc->pkey_index = uwc->pkey_index;
	wc->slid = uwc->wc_flags & SROCE_WC_KERNEL_VLAN ? 0 : uwc->slid;
	wc->sl = uwc->sl;
	wc->dlid_path_bits = uwc->dlid_path_bits;
	wc->port_num = 1;
}

int sroce_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct sroce_dev *sdev = to_sdev(ibcq->device);
	struct sroce_cq *cq = to_scq(ibcq);
	unsigned long flags;
	u32 consumer;
	int n = 0;

	if (WARN_ON_ONCE(cq->user))
		return -EINVAL;

	spin_lock_irqsave(&cq->lock, flags);
	consumer = sroce_ring_consumer(&cq->ring);
	while (n < num_entries && consumer != cq->producer) {
		sroce_cqe_to_wc(sdev, sroce_ring_slot(&cq->ring, consumer),
				&wc[n++]);
		consumer++;
	}
	sroce_ring_set_consumer(&cq->ring, consumer);
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}
