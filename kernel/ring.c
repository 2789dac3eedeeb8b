// SPDX-License-Identifier: GPL-2.0-only
/*
 * ring.c - allocation of shared and kernel rings; see ring.h.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "ring.h"
#include "sroce.h"

/* Bytes of one ring, header and slots, before the next ring may start. */
static int sroce_ring_bytes(u32 min_entries, u32 entry_size, u32 *entries,
			    size_t *bytes)
{
	*entries = roundup_pow_of_two(max(min_entries, 1U));
	if (WARN_ON(!is_power_of_2(entry_size) || entry_size < 64 ||
		    *entries > (1U << 24)))
		return -EINVAL;
	*bytes = ALIGN(SROCE_RING_HDR_SIZE + (size_t)*entries * entry_size,
		       SROCE_RING_ALIGN);
	return 0;
}

static void sroce_ring_place(struct sroce_ring *ring, void *buf, u32 offset,
			     u32 entries, u32 entry_size)
{
	ring->hdr = buf + offset;
	ring->slots = buf + offset + SROCE_RING_HDR_SIZE;
	ring->offset = offset;
	ring->log2_entries = ilog2(entries);
	ring->mask = entries - 1;
	ring->entry_size = entry_size;
}

int sroce_ring_alloc_pair(struct sroce_ring *first, u32 first_entries,
			  u32 first_entry_size, struct sroce_ring *second,
			  u32 second_entries, u32 second_entry_size,
			  struct ib_ucontext *uctx)
{
	u32 n1, n2 = 0;
	size_t b1, b2 = 0, size;
	void *buf;
	int err;

	err = sroce_ring_bytes(first_entries, first_entry_size, &n1, &b1);
	if (!err && second)
		err = sroce_ring_bytes(second_entries, second_entry_size,
				       &n2, &b2);
	if (err)
		return err;
	size = PAGE_ALIGN(b1 + b2);
	if (size > U32_MAX)
		return -EINVAL;

	memset(first, 0, sizeof(*first));
	if (second)
		memset(second, 0, sizeof(*second));
	buf = uctx ? sroce_mmap_buf_alloc(size) : kvzalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	if (uctx) {
		struct rdma_user_mmap_entry *mentry;

		mentry = sroce_mmap_insert(uctx, buf, size,
					   &first->mmap_offset);
		if (IS_ERR(mentry)) {
			sroce_mmap_buf_free(buf, size);
			return PTR_ERR(mentry);
		}
		first->mentry = mentry;
	}

	first->buf = buf;
	first->map_size = size;
	sroce_ring_place(first, buf, 0, n1, first_entry_size);
	if (second) {
		second->mmap_offset = first->mmap_offset;
		second->map_size = size;
		sroce_ring_place(second, buf, b1, n2, second_entry_size);
	}
	return 0;
}

int sroce_ring_alloc(struct sroce_ring *ring, struct ib_ucontext *uctx,
		     u32 min_entries, u32 entry_size)
{
	return sroce_ring_alloc_pair(ring, min_entries, entry_size, NULL, 0, 0,
				     uctx);
}

/*
 * A user ring's memory is freed by sroce_mmap_free() once the process no
 * longer maps it; the kernel must not touch it after this call.  A ring
 * that shares its owner's memory (the second of a pair) is freed first.
 */
void sroce_ring_free(struct sroce_ring *ring)
{
	if (ring->buf) {
		if (ring->mentry)
			rdma_user_mmap_entry_remove(ring->mentry);
		else
			kvfree(ring->buf);
	}
	memset(ring, 0, sizeof(*ring));
}

void sroce_ring_get_info(const struct sroce_ring *ring,
			 struct sroce_ring_info *info)
{
	memset(info, 0, sizeof(*info));
	if (!ring->hdr)
		return;
	info->mmap_offset = ring->mmap_offset;
	info->mmap_size = ring->map_size;
	info->log2_entries = ring->log2_entries;
	info->entry_size = ring->entry_size;
	info->offset = ring->offset;
}
