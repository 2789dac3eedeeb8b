// SPDX-License-Identifier: GPL-2.0-only
/*
 * ring.c - allocation of shared and kernel rings; see ring.h.
 */
#include <linux/gfp.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

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

/*
 * Zeroed, so userspace sees no stale kernel data and the indices start at
 * 0.  Single pages: the bulk allocator takes them from the per-CPU free
 * lists in one call, where a physically contiguous block of the same size
 * (order 3 for the rings of a QP) had to be found and split, and zeroing
 * costs the same either way.  They are the process's (SROCE_GFP_SIZED):
 * with memory cgroups on, the bulk allocator, which cannot charge them,
 * returns one page and the loop below takes the others one by one.
 */
struct sroce_ring_pages *sroce_ring_pages_alloc(unsigned int count)
{
	const gfp_t gfp = SROCE_GFP_SIZED | __GFP_ZERO;
	struct sroce_ring_pages *pages;
	unsigned long got;

	pages = kvzalloc(struct_size(pages, page, count), SROCE_GFP_SIZED);
	if (!pages)
		return NULL;
	pages->count = count;
	/* It fills the array from the front and may stop short. */
	got = alloc_pages_bulk_array(gfp, count, pages->page);
	for (; got < count; got++) {
		pages->page[got] = alloc_page(gfp);
		if (!pages->page[got]) {
			sroce_ring_pages_free(pages);
			return NULL;
		}
	}
	return pages;
}

/* A page still mapped by a process goes when it is unmapped. */
void sroce_ring_pages_free(struct sroce_ring_pages *pages)
{
	unsigned int i;

	for (i = 0; i < pages->count && pages->page[i]; i++)
		__free_page(pages->page[i]);
	kvfree(pages);
}

/*
 * Can the kernel reach the ring at @offset through the page array: does
 * its header, and does each slot, lie within one page?  Slots are
 * naturally aligned powers of two, so they do if the first one is aligned
 * to its size and that size is at most a page.
 */
static bool sroce_ring_fits_pages(u32 offset, u32 entry_size)
{
	u32 first = offset + SROCE_RING_HDR_SIZE;

	return offset_in_page(offset) + SROCE_RING_HDR_SIZE <= PAGE_SIZE &&
	       entry_size <= PAGE_SIZE && !(first & (entry_size - 1));
}

/* @base: the region's contiguous kernel mapping, or NULL to use @pages. */
static void sroce_ring_place(struct sroce_ring *ring, void *base,
			     struct sroce_ring_pages *pages, u32 offset,
			     u32 entries, u32 entry_size)
{
	if (base) {
		ring->hdr = base + offset;
		ring->slots = base + offset + SROCE_RING_HDR_SIZE;
	} else {
		ring->hdr = page_address(pages->page[offset >> PAGE_SHIFT]) +
			    offset_in_page(offset);
		ring->pages = pages->page;
		ring->slots_offset = offset + SROCE_RING_HDR_SIZE;
	}
	ring->offset = offset;
	ring->log2_entries = ilog2(entries);
	ring->mask = entries - 1;
	ring->entry_size = entry_size;
}

/*
 * The region's pages for @uctx, in @first's mmap entry; *@base is NULL if
 * the kernel uses the page array, else a vmap() of the pages (@first owns
 * it).
 */
static int sroce_ring_user_region(struct sroce_ring *first,
				  struct ib_ucontext *uctx, size_t size,
				  bool fits_pages, void **base,
				  struct sroce_ring_pages **out)
{
	struct rdma_user_mmap_entry *mentry;
	struct sroce_ring_pages *pages;

	pages = sroce_ring_pages_alloc(size >> PAGE_SHIFT);
	if (!pages)
		return -ENOMEM;
	*base = NULL;
	if (!fits_pages) {
		*base = vmap(pages->page, pages->count, VM_MAP, PAGE_KERNEL);
		if (!*base) {
			sroce_ring_pages_free(pages);
			return -ENOMEM;
		}
	}
	mentry = sroce_mmap_insert(uctx, pages, &first->mmap_offset);
	if (IS_ERR(mentry)) {
		if (*base)
			vunmap(*base);
		sroce_ring_pages_free(pages);
		return PTR_ERR(mentry);
	}
	first->mentry = mentry;
	first->vmap = *base;
	*out = pages;
	return 0;
}

int sroce_ring_alloc_pair(struct sroce_ring *first, u32 first_entries,
			  u32 first_entry_size, struct sroce_ring *second,
			  u32 second_entries, u32 second_entry_size,
			  struct ib_ucontext *uctx)
{
	struct sroce_ring_pages *pages = NULL;
	u32 n1, n2 = 0;
	size_t b1, b2 = 0, size;
	void *base;
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
	if (uctx) {
		bool fits = sroce_ring_fits_pages(0, first_entry_size) &&
			    (!second ||
			     sroce_ring_fits_pages(b1, second_entry_size));

		err = sroce_ring_user_region(first, uctx, size, fits, &base,
					     &pages);
		if (err)
			return err;
	} else {
		base = kvzalloc(size, GFP_KERNEL);
		if (!base)
			return -ENOMEM;
		first->buf = base;
	}

	first->map_size = size;
	sroce_ring_place(first, base, pages, 0, n1, first_entry_size);
	if (second) {
		second->mmap_offset = first->mmap_offset;
		second->map_size = size;
		sroce_ring_place(second, base, pages, b1, n2,
				 second_entry_size);
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
 * A user ring's pages are freed by sroce_mmap_free() once the process no
 * longer maps them; the kernel must not touch them after this call.  A
 * ring that shares its owner's memory (the second of a pair) is freed
 * first.
 */
void sroce_ring_free(struct sroce_ring *ring)
{
	if (ring->mentry) {
		if (ring->vmap)
			vunmap(ring->vmap);
		rdma_user_mmap_entry_remove(ring->mentry);
	} else {
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
