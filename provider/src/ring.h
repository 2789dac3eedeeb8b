// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// A view of one shared ring (struct sroce_ring_hdr followed by 2^n slots),
// as laid out by kernel/uapi/sroce-abi.h.
//
// Each index has exactly one writer.  The side that owns an index reads it
// with a relaxed load (nobody else writes it) and publishes it with a
// release store after touching the slots; it reads the other side's index
// with an acquire load, so slot contents written before the other side's
// release are visible.  Indices are free-running u32 counters: all
// arithmetic is modulo 2^32, and "in flight" is always producer - consumer.
//
// The owned index is re-read from the shared header rather than cached, so
// a kernel that resets a queue (QP moved to RESET) is picked up as is.
#ifndef SROCE_RING_H
#define SROCE_RING_H

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "sroce-abi.h"

namespace sroce {

class RingView {
public:
	RingView() = default;

	// @base: start of the mapping (the header); slots follow at
	// SROCE_RING_HDR_SIZE.  Geometry must already be validated
	// (see ring_geometry_ok()).
	void attach(void *base, uint32_t log2_entries, uint32_t entry_size)
	{
		hdr_ = static_cast<sroce_ring_hdr *>(base);
		slots_ = static_cast<uint8_t *>(base) + SROCE_RING_HDR_SIZE;
		size_ = 1u << log2_entries;
		mask_ = size_ - 1;
		entry_size_ = entry_size;
	}

	bool attached() const { return hdr_ != nullptr; }
	uint32_t size() const { return size_; }
	uint32_t entry_size() const { return entry_size_; }
	sroce_ring_hdr *header() const { return hdr_; }

	// The kernel's flags word (SROCE_SQ_FLAG_*, SROCE_RQ_FLAG_*), read
	// after a full fence: our index store before it is ordered against the
	// kernel's "set or clear the flag, full barrier, read the index".
	uint32_t flags_after_fence() const
	{
		std::atomic_thread_fence(std::memory_order_seq_cst);
		return std::atomic_ref<uint32_t>(hdr_->flags).load(std::memory_order_relaxed);
	}

	void *slot(uint32_t index) const
	{
		return slots_ + static_cast<size_t>(index & mask_) * entry_size_;
	}

	// ---- producer side (SQ, RQ, SRQ: the provider produces) ----

	uint32_t producer_owned() const { return load_relaxed(hdr_->producer); }
	uint32_t consumer_acquire() const { return load_acquire(hdr_->consumer); }

	// Slots the producer may fill, starting at producer_owned().  A peer
	// index more than one ring away from ours is nonsense: report no room.
	uint32_t free_slots() const
	{
		uint32_t used = producer_owned() - consumer_acquire();

		return used > size_ ? 0 : size_ - used;
	}

	// Make every slot before @new_producer visible to the consumer.
	void publish(uint32_t new_producer)
	{
		store_release(hdr_->producer, new_producer);
	}

	// ---- consumer side (CQ: the kernel produces) ----

	uint32_t consumer_owned() const { return load_relaxed(hdr_->consumer); }
	uint32_t producer_acquire() const { return load_acquire(hdr_->producer); }

	// Slots ready to read starting at consumer_owned(); UINT32_MAX if the
	// producer index is more than a ring ahead (a corrupted ring).
	uint32_t ready_slots() const
	{
		uint32_t ready = producer_acquire() - consumer_owned();

		return ready > size_ ? UINT32_MAX : ready;
	}

	// Hand every slot before @new_consumer back to the producer.
	void release(uint32_t new_consumer)
	{
		store_release(hdr_->consumer, new_consumer);
	}

private:
	static uint32_t load_relaxed(uint32_t &v)
	{
		return std::atomic_ref<uint32_t>(v).load(std::memory_order_relaxed);
	}
	static uint32_t load_acquire(uint32_t &v)
	{
		return std::atomic_ref<uint32_t>(v).load(std::memory_order_acquire);
	}
	static void store_release(uint32_t &v, uint32_t x)
	{
		std::atomic_ref<uint32_t>(v).store(x, std::memory_order_release);
	}

	sroce_ring_hdr *hdr_ = nullptr;
	uint8_t *slots_ = nullptr;
	uint32_t size_ = 0;
	uint32_t mask_ = 0;
	uint32_t entry_size_ = 0;
};

// Is a ring description from the kernel usable for slots of at least
// @min_entry bytes?  Checked before mapping: a bad size or offset would make
// us read or write past the mapping.
inline bool ring_geometry_ok(const sroce_ring_info &info, uint32_t min_entry)
{
	if (info.log2_entries > 24 || info.entry_size < 64 ||
	    info.entry_size > 65536 ||
	    (info.entry_size & (info.entry_size - 1)) != 0 ||
	    info.entry_size < min_entry || info.offset % SROCE_RING_ALIGN)
		return false;

	uint64_t need = static_cast<uint64_t>(info.offset) + SROCE_RING_HDR_SIZE +
			(static_cast<uint64_t>(info.entry_size) << info.log2_entries);

	return info.mmap_size >= need;
}

static_assert(sizeof(sroce_ring_hdr) == SROCE_RING_HDR_SIZE);
static_assert(offsetof(sroce_ring_hdr, producer) == 0);
static_assert(offsetof(sroce_ring_hdr, consumer) == 64);
static_assert(offsetof(sroce_ring_hdr, flags) == 128);
static_assert(std::atomic_ref<uint32_t>::is_always_lock_free);

} // namespace sroce

#endif // SROCE_RING_H
