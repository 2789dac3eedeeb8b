/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ring.h - the rings of CQs, send and receive queues (layout in
 * uapi/sroce-abi.h: a 256-byte header, then 2^n slots).
 *
 * A user object's ring is zeroed memory mapped into the process (see
 * ucontext.c; a QP's send and receive rings share one mapping, one after
 * the other): the peer's index and every slot the peer writes are hostile,
 * so the
 * kernel keeps its own copy of the index it owns, checks the peer's index
 * against it (sroce_ring_published(), sroce_ring_room()), and copies a slot
 * into kernel memory before it validates it.  A kernel object's ring is
 * ordinary kernel memory with the same layout, so kernel and user objects
 * share the datapath.
 *
 * A user region is made of single pages (struct sroce_ring_pages), taken
 * from the per-CPU free lists in one call: no higher-order block to find,
 * nothing to set up in the vmalloc space.  The kernel reaches a slot
 * through the page array (sroce_ring_slot()) when no slot of the region
 * crosses a page boundary, which holds for slots of up to 256 bytes (the
 * 256-byte header keeps them aligned); a region with larger slots gets a
 * vmap() of its pages once, so that every slot is contiguous.
 */
#ifndef SROCE_RING_H
#define SROCE_RING_H

#include <asm/barrier.h>
#include <linux/mm.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "uapi/sroce-abi.h"

/*
 * The memory of a region userspace maps: @count zeroed order-0 pages.  The
 * region's mmap entry owns it once inserted (ucontext.c); vm_insert_pages()
 * takes a reference on each page it maps, so a page outlives the entry as
 * long as a process maps it.
 */
struct sroce_ring_pages {
	unsigned int count;
	struct page *page[];
};

struct sroce_ring {
	struct sroce_ring_hdr *hdr;	/* NULL: the ring is not present */
	/*
	 * Slot 0 when the slots are contiguous in kernel memory (kernel
	 * rings, vmap()ed regions), else NULL and slot i is at byte
	 * slots_offset + i * entry_size of the region's @pages.
	 */
	void *slots;
	struct page **pages;
	u32 slots_offset;
	u32 mask;			/* entries - 1 */
	u32 log2_entries;
	u32 entry_size;
	u32 offset;			/* of hdr in the memory below */
	u32 map_size;			/* all of that memory, page aligned */
	/*
	 * What this ring owns; nothing in the second ring of a pair, which
	 * lives in the first one's memory.  Kernel rings: @buf.  User rings:
	 * the mmap entry (which owns the pages, see ucontext.c) and @vmap,
	 * the kernel's contiguous view of them if the slots need one.
	 */
	void *buf;
	void *vmap;
	struct rdma_user_mmap_entry *mentry;
	u64 mmap_offset;
};

/*
 * Allocate a ring of at least @min_entries (rounded up to a power of two)
 * slots of @entry_size bytes (a power of two >= 64), mapped for @uctx if
 * it is not NULL.  Indices start at 0.
 */
int sroce_ring_alloc(struct sroce_ring *ring, struct ib_ucontext *uctx,
		     u32 min_entries, u32 entry_size);
/*
 * Two rings in one allocation and, for @uctx, one mapping (a QP's send and
 * receive queues): one allocation, one mmap entry and one mmap() instead
 * of two each.  @second may be NULL.  Free @second before @first.
 */
int sroce_ring_alloc_pair(struct sroce_ring *first, u32 first_entries,
			  u32 first_entry_size, struct sroce_ring *second,
			  u32 second_entries, u32 second_entry_size,
			  struct ib_ucontext *uctx);
void sroce_ring_free(struct sroce_ring *ring);
void sroce_ring_get_info(const struct sroce_ring *ring,
			 struct sroce_ring_info *info);

static inline bool sroce_ring_present(const struct sroce_ring *ring)
{
	return ring->hdr;
}

static inline u32 sroce_ring_size(const struct sroce_ring *ring)
{
	return ring->mask + 1;
}

static inline u32 sroce_ring_entry_size(const struct sroce_ring *ring)
{
	return ring->entry_size;
}

/* User regions: the mmap entry frees the pages (sroce_mmap_free()). */
struct sroce_ring_pages *sroce_ring_pages_alloc(unsigned int count);
void sroce_ring_pages_free(struct sroce_ring_pages *pages);

static inline void *sroce_ring_slot(const struct sroce_ring *ring, u32 index)
{
	size_t pos = (size_t)(index & ring->mask) * ring->entry_size;

	if (ring->slots)
		return ring->slots + pos;
	/* No slot crosses a page: see sroce_ring_fits_pages(). */
	pos += ring->slots_offset;
	return page_address(ring->pages[pos >> PAGE_SHIFT]) +
	       offset_in_page(pos);
}

/* Acquire: slot contents published before the index are visible. */
static inline u32 sroce_ring_producer(const struct sroce_ring *ring)
{
	/* Pairs with the producer's release store of the index. */
	return smp_load_acquire(&ring->hdr->producer);
}

static inline u32 sroce_ring_consumer(const struct sroce_ring *ring)
{
	/* Pairs with the consumer's release store: the slots are free. */
	return smp_load_acquire(&ring->hdr->consumer);
}

/* Release: everything written to the slots before is visible first. */
static inline void sroce_ring_set_producer(struct sroce_ring *ring, u32 index)
{
	/* Pairs with sroce_ring_producer() / the provider's acquire load. */
	smp_store_release(&ring->hdr->producer, index);
}

static inline void sroce_ring_set_consumer(struct sroce_ring *ring, u32 index)
{
	/* Our reads of the slots happen before the peer may reuse them. */
	smp_store_release(&ring->hdr->consumer, index);
}

/*
 * The header's flags word (SROCE_SQ_FLAG_*, SROCE_RQ_FLAG_*): the kernel
 * writes it, the provider only reads it, and the kernel never reads it
 * back.  Callers order it against the indices with their own barriers.
 */
static inline void sroce_ring_set_flags(struct sroce_ring *ring, u32 flags)
{
	WRITE_ONCE(ring->hdr->flags, flags);
}

/*
 * We consume, and @consumer is our own index: how many slots has the peer
 * published?  U32_MAX when its producer index is more than one ring ahead
 * (a corrupt or hostile peer), or when the ring is absent (the RQ of a QP
 * with an SRQ): no count can be believed either way.
 */
static inline u32 sroce_ring_published(const struct sroce_ring *ring,
				       u32 consumer)
{
	u32 n;

	if (!sroce_ring_present(ring))
		return U32_MAX;
	n = sroce_ring_producer(ring) - consumer;

	return n > sroce_ring_size(ring) ? U32_MAX : n;
}

/*
 * We produce, and @producer is our own index: how many slots are free?
 * U32_MAX when the peer's consumer index is not within one ring behind
 * @producer, or when the ring is absent.
 */
static inline u32 sroce_ring_room(const struct sroce_ring *ring, u32 producer)
{
	u32 used;

	if (!sroce_ring_present(ring))
		return U32_MAX;
	used = producer - sroce_ring_consumer(ring);

	return used > sroce_ring_size(ring) ? U32_MAX :
	       sroce_ring_size(ring) - used;
}

/* Kernel producers: may one more slot be written? */
static inline bool sroce_ring_has_room(const struct sroce_ring *ring,
				       u32 producer)
{
	u32 room = sroce_ring_room(ring, producer);

	return room && room != U32_MAX;
}

#endif /* SROCE_RING_H */
