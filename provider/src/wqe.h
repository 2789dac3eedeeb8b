// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Encoding work requests into ring slots (struct sroce_send_wqe /
// sroce_recv_wqe from the uapi header).  Pure functions over a slot in
// memory, so the exact bytes are unit-tested on the host; post.cpp and
// wr_ex.cpp add the locking, ring indices and doorbell.
#ifndef SROCE_WQE_H
#define SROCE_WQE_H

#include <cstddef>
#include <cstdint>

#include "sroce.h"

namespace sroce {

// Largest SGE count / inline payload a slot of @entry_size bytes holds.
constexpr uint32_t send_slot_max_sge(uint32_t entry_size)
{
	return entry_size < sizeof(sroce_send_wqe) ? 0 :
		(entry_size - sizeof(sroce_send_wqe)) / sizeof(sroce_sge);
}
constexpr uint32_t send_slot_max_inline(uint32_t entry_size)
{
	return entry_size < sizeof(sroce_send_wqe) ? 0 :
		entry_size - sizeof(sroce_send_wqe);
}
constexpr uint32_t recv_slot_max_sge(uint32_t entry_size)
{
	return entry_size < sizeof(sroce_recv_wqe) ? 0 :
		(entry_size - sizeof(sroce_recv_wqe)) / sizeof(sroce_sge);
}

// May @opcode be posted on a QP of @type?  (IBA 10.8: UD carries only
// sends, UC no reads or atomics.)
bool send_opcode_allowed(ibv_qp_type type, ibv_wr_opcode opcode);

// The IBV_QP_EX_WITH_* bits ibv_wr_* may use on a QP of @type.
uint64_t supported_send_ops(ibv_qp_type type);

// The send flags we carry to the kernel; others (IP_CSUM, ...) are ignored,
// as they have no meaning for a RoCE transport.
constexpr unsigned wqe_flag_mask = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				   IBV_SEND_SOLICITED | IBV_SEND_INLINE;

// Validate @wr against @lim and write it into @slot (lim.entry_size bytes).
// Returns 0, or EINVAL for a request the QP cannot carry; nothing is
// written to the slot unless the whole request is valid.  @bind_by_verb:
// @wr is the BIND_MW of ibv_bind_mw() (a type 1 window).
int encode_send_wqe(const ibv_send_wr &wr, const SendLimits &lim,
		    uint32_t entry_size, void *slot, bool bind_by_verb = false);

// The size of an ATOMIC WRITE's data: one 64-bit word.
using wqe_atomic_write_data = decltype(sroce_send_wqe::wr.atomic_write.data);

// The ATOMIC WRITE fields of a WQE: the 8 bytes at @data to @remote_addr.
void encode_atomic_write(sroce_send_wqe *wqe, uint32_t rkey,
			 uint64_t remote_addr, const void *data);

// The BIND_MW fields of a WQE: window @new_rkey onto @info.
void encode_bind_mw(sroce_send_wqe *wqe, uint32_t new_rkey,
		    const ibv_mw_bind_info &info, bool by_verb);

// Same for receive queues (QP RQ or SRQ).
int encode_recv_wqe(const ibv_recv_wr &wr, uint32_t max_sge, void *slot);

// Pieces shared with the ibv_wr_* builders.
inline sroce_sge *wqe_sges(sroce_send_wqe *wqe)
{
	return reinterpret_cast<sroce_sge *>(wqe + 1);
}
inline uint8_t *wqe_inline(sroce_send_wqe *wqe)
{
	return reinterpret_cast<uint8_t *>(wqe + 1);
}

} // namespace sroce

#endif // SROCE_WQE_H
