// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// The extended post API (ibv_wr_start ... ibv_wr_complete).  wr_start takes
// the SQ lock; each opcode builder claims the next slot and writes the
// fixed part of a WQE, the setters that follow fill in addresses and data;
// wr_complete publishes every WQE of the batch with one release store and
// rings the doorbell once, wr_abort forgets them (the producer index never
// moved, so the kernel never saw them).  The first error of a batch sticks
// and is returned by wr_complete, which then publishes nothing.
#include <cerrno>
#include <cstring>

#include "sroce.h"
#include "wqe.h"

namespace sroce {
namespace {

void fail(Qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = nullptr;
}

// Claim and initialise the next slot for @opcode; null after an error.
sroce_send_wqe *begin(ibv_qp_ex *qpx, ibv_wr_opcode opcode)
{
	Qp *qp = from_qp_ex(qpx);
	RingView &r = qp->sq.ring;

	if (qp->wr_err)
		return nullptr;
	if (!send_opcode_allowed(qp->send.qp_type, opcode)) {
		fail(qp, EINVAL);
		return nullptr;
	}
	if (qp->wr_count >= r.free_slots()) {
		fail(qp, ENOMEM);
		return nullptr;
	}

	auto *wqe = static_cast<sroce_send_wqe *>(
		r.slot(qp->wr_first + qp->wr_count));
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = qpx->wr_id;
	wqe->opcode = static_cast<uint8_t>(opcode);
	wqe->flags = static_cast<uint16_t>(qpx->wr_flags & wqe_flag_mask &
					   ~IBV_SEND_INLINE);
	if (qp->send.sig_all)
		wqe->flags |= SROCE_SEND_SIGNALED;
	qp->wr_count++;
	qp->wr_cur = wqe;
	return wqe;
}

Qp *current(ibv_qp_ex *qpx, sroce_send_wqe **wqe)
{
	Qp *qp = from_qp_ex(qpx);

	*wqe = qp->wr_err ? nullptr : qp->wr_cur;
	return qp;
}

// ---- opcode builders ----

void wr_set_xrc_srqn(ibv_qp_ex *qpx, uint32_t remote_srqn)
{
	sroce_send_wqe *w;
	Qp *qp = current(qpx, &w);

	if (!w)
		return;
	if (qp->send.qp_type != IBV_QPT_XRC_SEND) {
		fail(qp, EINVAL);
		return;
	}
	w->xrc_srqn = remote_srqn;
}

void wr_send(ibv_qp_ex *qpx)
{
	begin(qpx, IBV_WR_SEND);
}

void wr_send_imm(ibv_qp_ex *qpx, __be32 imm)
{
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_SEND_WITH_IMM))
		w->ex.imm_data = imm;
}

void wr_send_inv(ibv_qp_ex *qpx, uint32_t rkey)
{
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_SEND_WITH_INV))
		w->ex.invalidate_rkey = rkey;
}

void wr_local_inv(ibv_qp_ex *qpx, uint32_t rkey)
{
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_LOCAL_INV))
		w->ex.invalidate_rkey = rkey;
}

void wr_bind_mw(ibv_qp_ex *qpx, ibv_mw *mw, uint32_t rkey,
		const ibv_mw_bind_info *info)
{
	Qp *qp = from_qp_ex(qpx);

	if (!mw || !info || (info->length && !info->mr)) {
		fail(qp, EINVAL);
		return;
	}
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_BIND_MW))
		encode_bind_mw(w, rkey, *info, false);
}

void set_rdma(sroce_send_wqe *w, uint32_t rkey, uint64_t remote_addr)
{
	w->wr.rdma.remote_addr = remote_addr;
	w->wr.rdma.rkey = rkey;
}

void wr_rdma_write(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_RDMA_WRITE))
		set_rdma(w, rkey, addr);
}

void wr_rdma_write_imm(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		       __be32 imm)
{
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_RDMA_WRITE_WITH_IMM)) {
		set_rdma(w, rkey, addr);
		w->ex.imm_data = imm;
	}
}

void wr_rdma_read(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr)
{
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_RDMA_READ))
		set_rdma(w, rkey, addr);
}

void wr_atomic_cmp_swp(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		       uint64_t compare, uint64_t swap)
{
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_ATOMIC_CMP_AND_SWP)) {
		w->wr.atomic.remote_addr = addr;
		w->wr.atomic.compare_add = compare;
		w->wr.atomic.swap = swap;
		w->wr.atomic.rkey = rkey;
	}
}

void wr_atomic_fetch_add(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
			 uint64_t add)
{
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD)) {
		w->wr.atomic.remote_addr = addr;
		w->wr.atomic.compare_add = add;
		w->wr.atomic.rkey = rkey;
	}
}

void wr_atomic_write(ibv_qp_ex *qpx, uint32_t rkey, uint64_t addr,
		     const void *atomic_wr)
{
	Qp *qp = from_qp_ex(qpx);

	if (!atomic_wr) {
		fail(qp, EINVAL);
		return;
	}
	if (sroce_send_wqe *w = begin(qpx, IBV_WR_ATOMIC_WRITE))
		encode_atomic_write(w, rkey, addr, atomic_wr);
}

// ---- setters for the WQE the last builder started ----

void wr_set_ud_addr(ibv_qp_ex *qpx, ibv_ah *ah, uint32_t remote_qpn,
		    uint32_t remote_qkey)
{
	sroce_send_wqe *w;
	Qp *qp = current(qpx, &w);

	if (!w)
		return;
	if (qp->send.qp_type != IBV_QPT_UD || !ah) {
		fail(qp, EINVAL);
		return;
	}
	w->wr.ud.ah_num = from_ah(ah)->ah_num;
	w->wr.ud.remote_qpn = remote_qpn;
	w->wr.ud.remote_qkey = remote_qkey;
}

bool may_inline(uint8_t opcode)
{
	return opcode == IBV_WR_SEND || opcode == IBV_WR_SEND_WITH_IMM ||
	       opcode == IBV_WR_SEND_WITH_INV || opcode == IBV_WR_RDMA_WRITE ||
	       opcode == IBV_WR_RDMA_WRITE_WITH_IMM;
}

void wr_set_sge_list(ibv_qp_ex *qpx, size_t num_sge, const ibv_sge *sg_list)
{
	sroce_send_wqe *w;
	Qp *qp = current(qpx, &w);

	if (!w)
		return;
	if (num_sge > qp->send.max_sge) {
		fail(qp, EINVAL);
		return;
	}
	sroce_sge *sge = wqe_sges(w);
	for (size_t i = 0; i < num_sge; i++) {
		sge[i].addr = sg_list[i].addr;
		sge[i].length = sg_list[i].length;
		sge[i].lkey = sg_list[i].lkey;
	}
	w->num_sge = static_cast<uint8_t>(num_sge);
	w->inline_len = 0;
	w->flags &= ~SROCE_SEND_INLINE;
}

void wr_set_sge(ibv_qp_ex *qpx, uint32_t lkey, uint64_t addr, uint32_t length)
{
	ibv_sge sge = { addr, length, lkey };

	wr_set_sge_list(qpx, 1, &sge);
}

void wr_set_inline_data_list(ibv_qp_ex *qpx, size_t num_buf,
			     const ibv_data_buf *buf_list)
{
	sroce_send_wqe *w;
	Qp *qp = current(qpx, &w);
	size_t total = 0;

	if (!w)
		return;
	if (!may_inline(w->opcode)) {
		fail(qp, EINVAL);
		return;
	}
	for (size_t i = 0; i < num_buf; i++)
		total += buf_list[i].length;
	if (total > qp->send.max_inline) {
		fail(qp, EINVAL);
		return;
	}
	uint8_t *p = wqe_inline(w);
	for (size_t i = 0; i < num_buf; i++) {
		memcpy(p, buf_list[i].addr, buf_list[i].length);
		p += buf_list[i].length;
	}
	w->inline_len = static_cast<uint32_t>(total);
	w->num_sge = 0;
	w->flags |= SROCE_SEND_INLINE;
}

void wr_set_inline_data(ibv_qp_ex *qpx, void *addr, size_t length)
{
	ibv_data_buf buf = { addr, length };

	wr_set_inline_data_list(qpx, 1, &buf);
}

// ---- batch lifecycle ----

void wr_start(ibv_qp_ex *qpx)
{
	Qp *qp = from_qp_ex(qpx);

	qp->sq.lock.lock();
	qp->wr_count = 0;
	qp->wr_cur = nullptr;
	if (!send_state_ok(qpx->qp_base.state)) {
		qp->wr_err = EINVAL; // as post_send(): not before RTS
	} else if (qp->sq.ring.attached()) {
		qp->wr_first = qp->sq.ring.producer_owned();
		qp->wr_err = 0;
	} else {
		qp->wr_err = ENOMEM; // a QP created with max_send_wr = 0
	}
}

int wr_complete(ibv_qp_ex *qpx)
{
	Qp *qp = from_qp_ex(qpx);
	int err = qp->wr_err;
	bool ring = !err && qp->wr_count;

	if (ring)
		qp->sq.ring.publish(qp->wr_first + qp->wr_count);
	qp->wr_cur = nullptr;
	qp->sq.lock.unlock();
	// Outside the lock, as in post_send().
	return ring ? ring_send_doorbell(qp) : err;
}

void wr_abort(ibv_qp_ex *qpx)
{
	Qp *qp = from_qp_ex(qpx);

	qp->wr_cur = nullptr;
	qp->wr_count = 0;
	qp->sq.lock.unlock();
}

} // namespace

void install_wr_ops(ibv_qp_ex *qpx)
{
	qpx->wr_send = wr_send;
	qpx->wr_send_imm = wr_send_imm;
	qpx->wr_send_inv = wr_send_inv;
	qpx->wr_local_inv = wr_local_inv;
	qpx->wr_bind_mw = wr_bind_mw;
	qpx->wr_rdma_write = wr_rdma_write;
	qpx->wr_rdma_write_imm = wr_rdma_write_imm;
	qpx->wr_rdma_read = wr_rdma_read;
	qpx->wr_atomic_cmp_swp = wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = wr_atomic_fetch_add;
	qpx->wr_atomic_write = wr_atomic_write;
	qpx->wr_set_ud_addr = wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = wr_set_xrc_srqn;
	qpx->wr_set_sge = wr_set_sge;
	qpx->wr_set_sge_list = wr_set_sge_list;
	qpx->wr_set_inline_data = wr_set_inline_data;
	qpx->wr_set_inline_data_list = wr_set_inline_data_list;
	qpx->wr_start = wr_start;
	qpx->wr_complete = wr_complete;
	qpx->wr_abort = wr_abort;
}

} // namespace sroce
