// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#include "wqe.h"

#include <cerrno>
#include <cstring>

namespace sroce {

bool send_opcode_allowed(ibv_qp_type type, ibv_wr_opcode opcode)
{
	// An XRC send QP is the sending half of an RC QP.
	if (type == IBV_QPT_XRC_SEND)
		type = IBV_QPT_RC;
	switch (opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		return type == IBV_QPT_RC || type == IBV_QPT_UC ||
		       type == IBV_QPT_UD;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		return type == IBV_QPT_RC || type == IBV_QPT_UC;
	case IBV_WR_SEND_WITH_INV:
		// IBA has no UC opcode that carries an IETH (table 38).
	case IBV_WR_RDMA_READ:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_WRITE:
		return type == IBV_QPT_RC;
	default:
		// TSO/DRIVER1/FLUSH are not implemented by sroce.
		return false;
	}
}

uint64_t supported_send_ops(ibv_qp_type type)
{
	uint64_t ud = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;
	uint64_t uc = ud | IBV_QP_EX_WITH_RDMA_WRITE |
		      IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		      IBV_QP_EX_WITH_LOCAL_INV | IBV_QP_EX_WITH_BIND_MW;
	uint64_t rc = uc | IBV_QP_EX_WITH_SEND_WITH_INV |
		      IBV_QP_EX_WITH_RDMA_READ |
		      IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		      IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		      IBV_QP_EX_WITH_ATOMIC_WRITE;

	switch (type) {
	case IBV_QPT_RC: return rc;
	case IBV_QPT_XRC_SEND: return rc;
	case IBV_QPT_UC: return uc;
	case IBV_QPT_UD: return ud;
	default: return 0;
	}
}

namespace {

// SGEs or inline data in the slot: an ATOMIC WRITE's 8 bytes go into
// its fixed part instead.
bool carries_data(ibv_wr_opcode op)
{
	return op != IBV_WR_LOCAL_INV && op != IBV_WR_BIND_MW &&
	       op != IBV_WR_ATOMIC_WRITE;
}

bool may_inline(ibv_wr_opcode op)
{
	// Inline data is payload we send; reads and atomics write locally.
	return op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM ||
	       op == IBV_WR_SEND_WITH_INV || op == IBV_WR_RDMA_WRITE ||
	       op == IBV_WR_RDMA_WRITE_WITH_IMM;
}

} // namespace

void encode_bind_mw(sroce_send_wqe *wqe, uint32_t new_rkey,
		    const ibv_mw_bind_info &info, bool by_verb)
{
	wqe->wr.bind_mw.addr = info.addr;
	wqe->wr.bind_mw.length = info.length;
	wqe->wr.bind_mw.mw_rkey = new_rkey;
	wqe->wr.bind_mw.mr_lkey = info.mr ? info.mr->lkey : 0;
	wqe->wr.bind_mw.access = info.mw_access_flags;
	wqe->wr.bind_mw.bind_flags = by_verb ? SROCE_BIND_VERB : 0;
}

void encode_atomic_write(sroce_send_wqe *wqe, uint32_t rkey,
			 uint64_t remote_addr, const void *data)
{
	wqe->wr.atomic_write.remote_addr = remote_addr;
	wqe->wr.atomic_write.rkey = rkey;
	memcpy(wqe->wr.atomic_write.data, data,
	       sizeof(wqe->wr.atomic_write.data));
}

int encode_send_wqe(const ibv_send_wr &wr, const SendLimits &lim,
		    uint32_t entry_size, void *slot, bool bind_by_verb)
{
	const bool inl = (wr.send_flags & IBV_SEND_INLINE) &&
			 carries_data(wr.opcode);
	uint32_t inline_len = 0;
	int num_sge = carries_data(wr.opcode) ? wr.num_sge : 0;

	if (!send_opcode_allowed(lim.qp_type, wr.opcode))
		return EINVAL;
	if (num_sge < 0 || num_sge > UINT8_MAX) // sroce_send_wqe.num_sge is a u8
		return EINVAL;
	if (inl) {
		if (!may_inline(wr.opcode))
			return EINVAL;
		uint64_t total = 0;
		for (int i = 0; i < num_sge; i++)
			total += wr.sg_list[i].length;
		if (total > lim.max_inline ||
		    total > send_slot_max_inline(entry_size))
			return EINVAL;
		inline_len = static_cast<uint32_t>(total);
	} else if (static_cast<uint32_t>(num_sge) > lim.max_sge ||
		   static_cast<uint32_t>(num_sge) > send_slot_max_sge(entry_size)) {
		return EINVAL;
	}
	if (lim.qp_type == IBV_QPT_UD && !wr.wr.ud.ah)
		return EINVAL;
	// ATOMIC WRITE: the 64 bits to write are at the one SGE's address.
	if (wr.opcode == IBV_WR_ATOMIC_WRITE &&
	    (wr.num_sge != 1 || !wr.sg_list ||
	     wr.sg_list[0].length != sizeof(wqe_atomic_write_data)))
		return EINVAL;
	if (wr.opcode == IBV_WR_BIND_MW &&
	    (!wr.bind_mw.mw ||
	     (wr.bind_mw.bind_info.length && !wr.bind_mw.bind_info.mr)))
		return EINVAL;

	auto *wqe = static_cast<sroce_send_wqe *>(slot);
	memset(wqe, 0, sizeof(*wqe));
	wqe->wr_id = wr.wr_id;
	wqe->opcode = static_cast<uint8_t>(wr.opcode);
	wqe->flags = static_cast<uint16_t>(wr.send_flags & wqe_flag_mask);
	if (!inl)
		wqe->flags &= ~SROCE_SEND_INLINE;
	if (lim.sig_all)
		wqe->flags |= SROCE_SEND_SIGNALED;

	switch (wr.opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex.imm_data = wr.imm_data; // already big endian
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		wqe->ex.invalidate_rkey = wr.invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr.opcode) {
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = wr.wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr.wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = wr.wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr.wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr.wr.atomic.swap;
		wqe->wr.atomic.rkey = wr.wr.atomic.rkey;
		break;
	case IBV_WR_ATOMIC_WRITE:
		encode_atomic_write(wqe, wr.wr.rdma.rkey, wr.wr.rdma.remote_addr,
				    reinterpret_cast<const void *>(wr.sg_list[0].addr));
		break;
	case IBV_WR_BIND_MW:
		encode_bind_mw(wqe, wr.bind_mw.rkey, wr.bind_mw.bind_info,
			       bind_by_verb);
		break;
	default:
		break;
	}
	if (lim.qp_type == IBV_QPT_XRC_SEND)
		wqe->xrc_srqn = wr.qp_type.xrc.remote_srqn;
	if (lim.qp_type == IBV_QPT_UD) {
		wqe->wr.ud.ah_num = from_ah(wr.wr.ud.ah)->ah_num;
		wqe->wr.ud.remote_qpn = wr.wr.ud.remote_qpn;
		wqe->wr.ud.remote_qkey = wr.wr.ud.remote_qkey;
	}

	if (inl) {
		uint8_t *p = wqe_inline(wqe);
		for (int i = 0; i < num_sge; i++) {
			memcpy(p, reinterpret_cast<const void *>(wr.sg_list[i].addr),
			       wr.sg_list[i].length);
			p += wr.sg_list[i].length;
		}
		wqe->inline_len = inline_len;
	} else {
		sroce_sge *sge = wqe_sges(wqe);
		for (int i = 0; i < num_sge; i++) {
			sge[i].addr = wr.sg_list[i].addr;
			sge[i].length = wr.sg_list[i].length;
			sge[i].lkey = wr.sg_list[i].lkey;
		}
		wqe->num_sge = static_cast<uint8_t>(num_sge);
	}
	return 0;
}

int encode_recv_wqe(const ibv_recv_wr &wr, uint32_t max_sge, void *slot)
{
	if (wr.num_sge < 0 || static_cast<uint32_t>(wr.num_sge) > max_sge)
		return EINVAL;

	auto *wqe = static_cast<sroce_recv_wqe *>(slot);
	auto *sge = reinterpret_cast<sroce_sge *>(wqe + 1);
	wqe->wr_id = wr.wr_id;
	wqe->num_sge = static_cast<uint32_t>(wr.num_sge);
	wqe->reserved = 0;
	for (int i = 0; i < wr.num_sge; i++) {
		sge[i].addr = wr.sg_list[i].addr;
		sge[i].length = wr.sg_list[i].length;
		sge[i].lkey = wr.sg_list[i].lkey;
	}
	return 0;
}

} // namespace sroce
