// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Completion queues.  The kernel produces struct ib_uverbs_wc entries into a
// mapped ring; polling copies them out and advances the consumer index with
// no system call.  Only arming (req_notify_cq) and resizing go to the kernel.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sroce.h"

namespace sroce {
namespace {

constexpr uint64_t supported_wc_flags =
	IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
	IBV_WC_EX_WITH_SRC_QP | IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
	IBV_WC_EX_WITH_DLID_PATH_BITS;

Cq *cq_alloc()
{
	auto *cq = static_cast<Cq *>(calloc(1, sizeof(Cq)));

	if (cq)
		cq->q.lock.init();
	return cq;
}

void cq_free(Cq *cq)
{
	cq->q.lock.destroy();
	free(cq);
}

// ---- extended polling (ibv_start_poll / ibv_next_poll / ibv_end_poll) ----

// CQEs ready at the consumer index; UINT32_MAX if the CQ has no ring (a
// resize whose new ring could not be mapped, resize_cq()) or the kernel's
// producer index is nonsense.
uint32_t cq_ready(const RingView &r)
{
	return r.attached() ? r.ready_slots() : UINT32_MAX;
}

// Make the CQE at the consumer index current; ENOENT if there is none.
int cq_load_current(Cq *cq)
{
	RingView &r = cq->q.ring;
	uint32_t ready = cq_ready(r);

	if (ready == 0 || ready == UINT32_MAX) {
		cq->cur = nullptr;
		return ready ? EIO : ENOENT;
	}
	cq->cur = static_cast<const ib_uverbs_wc *>(r.slot(r.consumer_owned()));
	cq->vcq.cq_ex.wr_id = cq->cur->wr_id;
	cq->vcq.cq_ex.status = static_cast<ibv_wc_status>(cq->cur->status);
	return 0;
}

void cq_consume_current(Cq *cq)
{
	if (cq->cur) {
		cq->q.ring.release(cq->q.ring.consumer_owned() + 1);
		cq->cur = nullptr;
	}
}

int start_poll(ibv_cq_ex *cqx, ibv_poll_cq_attr *attr)
{
	Cq *cq = from_cq_ex(cqx);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	cq->q.lock.lock();
	ret = cq_load_current(cq);
	// On ENOENT the caller must not call end_poll: drop the lock now.
	if (ret)
		cq->q.lock.unlock();
	return ret;
}

int next_poll(ibv_cq_ex *cqx)
{
	Cq *cq = from_cq_ex(cqx);

	cq_consume_current(cq);
	return cq_load_current(cq);
}

void end_poll(ibv_cq_ex *cqx)
{
	Cq *cq = from_cq_ex(cqx);

	cq_consume_current(cq);
	cq->q.lock.unlock();
}

const ib_uverbs_wc *cur(ibv_cq_ex *cqx)
{
	return from_cq_ex(cqx)->cur;
}

ibv_wc_opcode read_opcode(ibv_cq_ex *cqx)
{
	return static_cast<ibv_wc_opcode>(cur(cqx)->opcode);
}
uint32_t read_vendor_err(ibv_cq_ex *cqx) { return cur(cqx)->vendor_err; }
uint32_t read_byte_len(ibv_cq_ex *cqx) { return cur(cqx)->byte_len; }
__be32 read_imm_data(ibv_cq_ex *cqx) { return cur(cqx)->ex.imm_data; }
uint32_t read_qp_num(ibv_cq_ex *cqx) { return cur(cqx)->qp_num; }
uint32_t read_src_qp(ibv_cq_ex *cqx) { return cur(cqx)->src_qp; }
unsigned int read_wc_flags(ibv_cq_ex *cqx) { return cur(cqx)->wc_flags; }
uint32_t read_slid(ibv_cq_ex *cqx) { return cur(cqx)->slid; }
uint8_t read_sl(ibv_cq_ex *cqx) { return cur(cqx)->sl; }
uint8_t read_dlid_path_bits(ibv_cq_ex *cqx) { return cur(cqx)->dlid_path_bits; }

} // namespace

void install_poll_ops(ibv_cq_ex *cqx, uint64_t wc_flags)
{
	cqx->start_poll = start_poll;
	cqx->next_poll = next_poll;
	cqx->end_poll = end_poll;
	cqx->read_opcode = read_opcode;
	cqx->read_vendor_err = read_vendor_err;
	cqx->read_wc_flags = read_wc_flags;
	if (wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cqx->read_byte_len = read_byte_len;
	if (wc_flags & IBV_WC_EX_WITH_IMM)
		cqx->read_imm_data = read_imm_data;
	if (wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cqx->read_qp_num = read_qp_num;
	if (wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cqx->read_src_qp = read_src_qp;
	if (wc_flags & IBV_WC_EX_WITH_SLID)
		cqx->read_slid = read_slid;
	if (wc_flags & IBV_WC_EX_WITH_SL)
		cqx->read_sl = read_sl;
	if (wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cqx->read_dlid_path_bits = read_dlid_path_bits;
}

// Remove the completions of QP @qp_num that the application has not polled
// yet, keeping the others in order.  Called when the QP is reset: its
// flushed work requests must not surface after it is brought up again (the
// behaviour of RoCE NICs that rdma-core's tests rely on).  With @keep_recv
// (a QP on an SRQ) its receive completions stay: they carry the SRQ's
// buffers, which the application would otherwise never get back (NICs
// return such WQEs to the SRQ; the SRQ ring here has already moved past
// them).  Only slots the kernel already published are touched, from the
// newest down, so the kernel producing further CQEs meanwhile is harmless;
// the consumer index then moves past the removed ones.
void cq_clean(Cq *cq, uint32_t qp_num, bool keep_recv)
{
	RingView &r = cq->q.ring;

	cq->q.lock.lock();
	uint32_t ready = cq_ready(r);
	if (ready != UINT32_MAX) {
		uint32_t cons = r.consumer_owned();
		uint32_t removed = 0;

		for (uint32_t i = cons + ready; i-- != cons;) {
			const auto *wc = static_cast<const ib_uverbs_wc *>(r.slot(i));
			if (wc->qp_num == qp_num &&
			    !(keep_recv && (wc->opcode & IBV_WC_RECV)))
				removed++;
			else if (removed)
				memcpy(r.slot(i + removed), wc, sizeof(*wc));
		}
		if (removed)
			r.release(cons + removed);
	}
	cq->q.lock.unlock();
}

int poll_cq(ibv_cq *ibcq, int ne, ibv_wc *wc)
{
	Cq *cq = from_cq(ibcq);
	RingView &r = cq->q.ring;
	int n = 0;

	static_assert(sizeof(ibv_wc) == sizeof(ib_uverbs_wc));
	cq->q.lock.lock();
	uint32_t ready = cq_ready(r);
	if (ready == UINT32_MAX) {
		cq->q.lock.unlock();
		return -EIO;
	}
	uint32_t cons = r.consumer_owned();
	// The acquire load of the producer index in ready_slots() orders
	// these reads after the kernel's writes of the entries.
	for (; n < ne && static_cast<uint32_t>(n) < ready; n++)
		memcpy(&wc[n], r.slot(cons + n), sizeof(ibv_wc));
	if (n)
		r.release(cons + n);
	cq->q.lock.unlock();
	return n;
}

ibv_cq *create_cq(ibv_context *ctx, int cqe, ibv_comp_channel *channel,
		  int comp_vector)
{
	Cq *cq = cq_alloc();
	sroce_cmd_create_cq cmd;
	DrvResp<ib_uverbs_create_cq_resp, sroce_create_cq_resp> resp;
	int ret;

	if (!cq)
		return nullptr;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_cq(ctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), resp.core(), sizeof(resp));
	if (ret)
		goto err_free;
	ret = queue_map(&cq->q, ctx, resp.drv().cq, sizeof(ib_uverbs_wc));
	if (ret)
		goto err_destroy;
	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	cq_free(cq);
	errno = ret;
	return nullptr;
}

ibv_cq_ex *create_cq_ex(ibv_context *ctx, ibv_cq_init_attr_ex *attr)
{
	sroce_cmd_ex_create_cq cmd;
	DrvResp<ib_uverbs_ex_create_cq_resp, sroce_create_cq_resp> resp;
	Cq *cq;
	int ret;

	if (attr->wc_flags & ~supported_wc_flags) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	if (attr->comp_mask & ~static_cast<uint32_t>(IBV_CQ_INIT_ATTR_MASK_FLAGS |
						     IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~static_cast<uint32_t>(IBV_CREATE_CQ_ATTR_SINGLE_THREADED))) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	// A CQ may belong to a parent domain (of this context), and no other
	// kind of PD; the kernel's CQ has no PD, so the command does not see it.
	ibv_cq_init_attr_ex kattr = *attr;
	bool single = (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		      (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED);
	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		ibv_pd *pd = attr->parent_domain;

		if (!pd || pd->context != ctx || !from_pd(pd)->protection) {
			errno = EINVAL;
			return nullptr;
		}
		single = single || pd_single_thread(pd);
		kattr.comp_mask &= ~static_cast<uint32_t>(IBV_CQ_INIT_ATTR_MASK_PD);
		kattr.parent_domain = nullptr;
	}

	cq = cq_alloc();
	if (!cq)
		return nullptr;
	cq->q.lock.set_single_thread(single);
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_cq_ex(ctx, &kattr, &cq->vcq, &cmd, sizeof(cmd),
				   resp.core(), sizeof(resp), 0);
	if (ret)
		goto err_free;
	ret = queue_map(&cq->q, ctx, resp.drv().cq, sizeof(ib_uverbs_wc));
	if (ret)
		goto err_destroy;
	install_poll_ops(&cq->vcq.cq_ex, attr->wc_flags);
	return &cq->vcq.cq_ex;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	cq_free(cq);
	errno = ret;
	return nullptr;
}

// After a successful resize command, with the CQ's lock held: the kernel
// produces into the ring @info from now on and has freed the old one (its
// pages live on only in our mapping), so the old ring is dead whether or
// not the new one maps.  If it does not, the CQ is left without a ring:
// polling fails with EIO instead of waiting forever on the dead ring, and
// destroy_cq() still works.
int cq_replace_ring(Cq *cq, ibv_context *ctx, const sroce_ring_info &info)
{
	Queue fresh{};
	int ret = queue_map(&fresh, ctx, info, sizeof(ib_uverbs_wc));

	queue_unmap(&cq->q);
	if (!ret) {
		cq->q.map = fresh.map;
		cq->q.map_size = fresh.map_size;
		cq->q.ring = fresh.ring;
	}
	return ret;
}

int resize_cq(ibv_cq *ibcq, int cqe)
{
	Cq *cq = from_cq(ibcq);
	sroce_cmd_resize_cq cmd;
	DrvResp<ib_uverbs_resize_cq_resp, sroce_resize_cq_resp> resp;
	int ret;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	// Pollers must not touch the old ring while the kernel moves the
	// unpolled entries into the new one.
	cq->q.lock.lock();
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), resp.core(),
				sizeof(resp));
	if (!ret)
		ret = cq_replace_ring(cq, ibcq->context, resp.drv().cq);
	cq->q.lock.unlock();
	return ret;
}

int destroy_cq(ibv_cq *ibcq)
{
	Cq *cq = from_cq(ibcq);
	int ret = ibv_cmd_destroy_cq(ibcq);

	// Unmap only once the kernel has stopped producing into the ring.
	if (ret)
		return ret;
	queue_unmap(&cq->q);
	cq_free(cq);
	return 0;
}

} // namespace sroce
