// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Mapping the rings the kernel allocates for CQs, QPs and SRQs.  The
// create command returns a struct sroce_ring_info; the ring's region is
// mmap()ed shared on the context's command fd at its offset (an
// rdma_user_mmap_entry on the kernel side, which insists on the exact size)
// and the ring starts at info.offset in it.  A QP's receive ring shares the
// send ring's region (queue_share()): one mmap() per QP.
#include <sys/mman.h>

#include <cerrno>

#include "sroce.h"

namespace sroce {

int queue_map(Queue *q, ibv_context *ctx, const sroce_ring_info &info,
	      uint32_t min_entry, bool optional)
{
	// A work queue of zero entries (max_recv_wr = 0, say) may come back
	// as an all-zero ring_info: nothing to map, posting to it fails.
	if (optional && !info.mmap_size && !info.mmap_offset)
		return 0;

	// The geometry decides every slot address we compute: never map or
	// use a ring whose description does not add up.
	if (!ring_geometry_ok(info, min_entry))
		return EPROTO;

	void *p = mmap(nullptr, info.mmap_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, ctx->cmd_fd,
		       static_cast<off_t>(info.mmap_offset));
	if (p == MAP_FAILED)
		return errno;

	q->map = p;
	q->map_size = info.mmap_size;
	q->ring.attach(static_cast<uint8_t *>(p) + info.offset,
		       info.log2_entries, info.entry_size);
	return 0;
}

int queue_share(Queue *q, const Queue &owner, const sroce_ring_info &owner_info,
		const sroce_ring_info &info, uint32_t min_entry)
{
	// No receive ring (XRC, zero entries): an all-zero ring_info.
	if (!info.mmap_size && !info.mmap_offset)
		return 0;
	// Same region as the owner's, which must be mapped; the geometry
	// check then keeps the ring inside that mapping.
	if (!owner.map || info.mmap_offset != owner_info.mmap_offset ||
	    info.mmap_size != owner.map_size ||
	    !ring_geometry_ok(info, min_entry))
		return EPROTO;
	q->map = nullptr;
	q->map_size = 0;
	q->ring.attach(static_cast<uint8_t *>(owner.map) + info.offset,
		       info.log2_entries, info.entry_size);
	return 0;
}

void queue_unmap(Queue *q)
{
	if (q->map)
		munmap(q->map, q->map_size);
	q->map = nullptr;
	q->map_size = 0;
	q->ring = RingView();
}

} // namespace sroce
