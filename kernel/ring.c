// SPDX-License-Identifier: GPL-2.0-only
/*
 * ring.c - allocation of shared and kernel rings; see ring.h.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "ring.h"
#include "sroce.h"

int sroce_ring_alloc(struct sroce_ring *ring, struct ib_ucontext *uctx,
		     u32 min_entries, u32 entry_size)
{
	u32 entries = roundup_pow_of_two(max(min_entries, 1U));
	struct rdma_user_mmap_entry *mentry;
	size_t size;
	void *buf;

	if (WARN_ON(!is_power_of_2(entry_size) || entry_size < 64 ||
		    entries > (1U << 24)))
		return -EINVAL;

	size = PAGE_ALIGN(SROCE_RING_HDR_SIZE + (size_t)entries * entry_size);
	if (size > U32_MAX)
		return -EINVAL;

	memset(ring, 0, sizeof(*ring));
	buf = uctx ? vmalloc_user(size) : kvzalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	if (uctx) {
		mentry = sroce_mmap_insert(uctx, buf, size, &ring->mmap_offset);
		if (IS_ERR(mentry)) {
			vfree(buf);
			return PTR_ERR(mentry);
		}
		ring->mentry = mentry;
	}

	ring->hdr = buf;
	ring->slots = buf + SROCE_RING_HDR_SIZE;
	ring->log2_entries = ilog2(entries);
	ring->mask = entries - 1;
	ring->entry_size = entry_size;
	ring->buf_size = size;
	return 0;
}

/*
 * A user ring's memory is freed by sroce_mmap_free() once the process no
 * longer maps it; the kernel must not touch it after this call.
 */
void sroce_ring_free(struct sroce_ring *ring)
{
	if (!ring->hdr)
		return;
	if (ring->mentry)
		rdma_user_mmap_entry_remove(ring->mentry);
	else
		kvfree(ring->hdr);
	memset(ring, 0, sizeof(*ring));
}

void sroce_ring_get_info(const struct sroce_ring *ring,
			 struct sroce_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!ring->hdr)
		return;
	info->mmap_offset = ring->mmap_offset;
	info->mmap_size = ring->buf_size;
	info->log2_entries = ring->log2_entries;
	info->entry_size = ring->entry_size;
}
