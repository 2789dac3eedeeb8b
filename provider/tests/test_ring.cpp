// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// RingView: free-running u32 indices, full/empty, wraparound at 2^32,
// hostile indices, and a two-thread producer/consumer stress run.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <thread>

#include "fake_ring.h"
#include "ring.h"
#include "sroce.h"

namespace {

using sroce::RingView;

TEST(Ring, FreshRingIsEmpty)
{
	FakeRing f(3, 64);
	RingView r = f.view();

	EXPECT_EQ(r.size(), 8u);
	EXPECT_EQ(r.free_slots(), 8u);
	EXPECT_EQ(r.ready_slots(), 0u);
	EXPECT_EQ(r.slot(0), f.slots());
	EXPECT_EQ(r.slot(7), f.slots() + 7 * 64);
	EXPECT_EQ(r.slot(8), f.slots());
}

TEST(Ring, FullHoldsExactlySizeEntries)
{
	FakeRing f(2, 128);
	RingView r = f.view();

	for (uint32_t i = 0; i < 4; i++) {
		EXPECT_EQ(r.free_slots(), 4 - i);
		r.publish(r.producer_owned() + 1);
	}
	EXPECT_EQ(r.free_slots(), 0u);
	EXPECT_EQ(r.ready_slots(), 4u);
	EXPECT_EQ(f.hdr()->producer, 4u);
	r.release(r.consumer_owned() + 1);
	EXPECT_EQ(f.hdr()->consumer, 1u);
	EXPECT_EQ(r.free_slots(), 1u);
	EXPECT_EQ(r.ready_slots(), 3u);
	r.release(4);
	EXPECT_EQ(r.free_slots(), 4u);
	EXPECT_EQ(r.ready_slots(), 0u);
}

TEST(Ring, IndicesWrapAt2To32)
{
	FakeRing f(4, 64);
	RingView r = f.view();
	const uint32_t start = UINT32_MAX - 5;

	f.set_indices(start, start);
	EXPECT_EQ(r.free_slots(), 16u);
	for (uint32_t k = 0; k < 12; k++) {
		uint32_t idx = start + k; // wraps after 6 entries
		*static_cast<uint32_t *>(r.slot(idx)) = 1000 + k;
		r.publish(idx + 1);
	}
	EXPECT_EQ(f.hdr()->producer, 6u); // start + 12 mod 2^32
	EXPECT_EQ(r.free_slots(), 4u);
	EXPECT_EQ(r.ready_slots(), 12u);
	// Slot positions follow the index modulo the ring size.
	EXPECT_EQ(r.slot(UINT32_MAX), f.slot(15));
	EXPECT_EQ(r.slot(0), f.slot(0));
	for (uint32_t k = 0; k < 12; k++) {
		uint32_t idx = r.consumer_owned();
		EXPECT_EQ(*static_cast<uint32_t *>(r.slot(idx)), 1000 + k);
		r.release(idx + 1);
	}
	EXPECT_EQ(f.hdr()->consumer, 6u);
	EXPECT_EQ(r.ready_slots(), 0u);
	EXPECT_EQ(r.free_slots(), 16u);
}

TEST(Ring, ImpossibleIndicesAreNotTrusted)
{
	FakeRing f(3, 64);
	RingView r = f.view();

	// Producer more than a ring ahead of the consumer.
	f.set_indices(100, 50);
	EXPECT_EQ(r.free_slots(), 0u);
	EXPECT_EQ(r.ready_slots(), UINT32_MAX);
	// Consumer ahead of the producer (the difference wraps to huge).
	f.set_indices(10, 11);
	EXPECT_EQ(r.free_slots(), 0u);
	EXPECT_EQ(r.ready_slots(), UINT32_MAX);
	// Exactly full is fine, across the wrap too.
	f.set_indices(3, UINT32_MAX - 4);
	EXPECT_EQ(r.free_slots(), 0u);
	EXPECT_EQ(r.ready_slots(), 8u);
}

TEST(Ring, GeometryChecks)
{
	sroce_ring_info i{};
	i.log2_entries = 4;
	i.entry_size = 128;
	i.mmap_size = 256 + 16 * 128;
	EXPECT_TRUE(sroce::ring_geometry_ok(i, 80));
	EXPECT_FALSE(sroce::ring_geometry_ok(i, 129)); // slot too small
	i.mmap_size -= 1;
	EXPECT_FALSE(sroce::ring_geometry_ok(i, 80)); // mapping too short
	i.mmap_size = 4096 * 2;
	EXPECT_TRUE(sroce::ring_geometry_ok(i, 80)); // page-rounded is fine
	i.entry_size = 96;
	EXPECT_FALSE(sroce::ring_geometry_ok(i, 80)); // not a power of two
	i.entry_size = 32;
	EXPECT_FALSE(sroce::ring_geometry_ok(i, 16)); // below 64
	i.entry_size = 64;
	i.log2_entries = 31;
	i.mmap_size = UINT32_MAX;
	EXPECT_FALSE(sroce::ring_geometry_ok(i, 16)); // absurd ring
}

// The second ring of a QP's region: its offset counts against the mapping.
TEST(Ring, GeometryChecksOffset)
{
	sroce_ring_info i{};
	i.log2_entries = 4;
	i.entry_size = 64;
	i.mmap_size = 4096;
	i.offset = 4096 - 256 - 16 * 64;
	EXPECT_TRUE(sroce::ring_geometry_ok(i, 64)); // ends at the last byte
	i.offset += 64;
	EXPECT_FALSE(sroce::ring_geometry_ok(i, 64)); // one slot past the end
	i.offset = 8;
	EXPECT_FALSE(sroce::ring_geometry_ok(i, 64)); // misaligned header
	i.offset = UINT32_MAX - 63;
	EXPECT_FALSE(sroce::ring_geometry_ok(i, 64)); // no 32-bit wrap
}

// A QP's receive ring is attached inside the send ring's mapping, only
// when the kernel describes the same region.
TEST(Ring, QueueShareUsesTheOwnersRegion)
{
	alignas(4096) static uint8_t region[8192];
	sroce_ring_info sq{}, rq{};
	sroce::Queue owner{}, q{};

	sq.mmap_offset = 0x10000;
	sq.mmap_size = sizeof(region);
	sq.log2_entries = 4;
	sq.entry_size = 128;
	rq = sq;
	rq.entry_size = 64;
	rq.offset = 256 + 16 * 128;
	owner.map = region;
	owner.map_size = sizeof(region);
	owner.ring.attach(region, sq.log2_entries, sq.entry_size);

	ASSERT_EQ(sroce::queue_share(&q, owner, sq, rq, 64), 0);
	EXPECT_EQ(q.map, nullptr); // the owner unmaps the region
	EXPECT_EQ(static_cast<void *>(q.ring.header()), region + rq.offset);
	EXPECT_EQ(q.ring.slot(0), region + rq.offset + SROCE_RING_HDR_SIZE);
	EXPECT_EQ(q.ring.size(), 16u);

	sroce_ring_info bad = rq;
	bad.mmap_offset += 4096;
	EXPECT_EQ(sroce::queue_share(&q, owner, sq, bad, 64), EPROTO);
	bad = rq;
	bad.mmap_size = 4096; // not the owner's region
	EXPECT_EQ(sroce::queue_share(&q, owner, sq, bad, 64), EPROTO);
	bad = rq;
	bad.offset = sizeof(region) - 256; // slots past the region
	EXPECT_EQ(sroce::queue_share(&q, owner, sq, bad, 64), EPROTO);
	sroce::Queue unmapped{};
	EXPECT_EQ(sroce::queue_share(&q, unmapped, sq, rq, 64), EPROTO);
	// No receive ring at all (an XRC initiator): nothing attached.
	sroce::Queue none{};
	EXPECT_EQ(sroce::queue_share(&none, owner, sq, sroce_ring_info{}, 64), 0);
	EXPECT_FALSE(none.ring.attached());
}

// One thread produces sequence numbers, the other consumes and checks them,
// through a small ring whose indices start just below 2^32.  Each slot
// carries the sequence number and its complement in different cache lines
// of a 128-byte slot, so a consumer that read a slot before the producer's
// release was visible would see a mismatch.
TEST(Ring, TwoThreadStressAcrossWrap)
{
	constexpr uint64_t items = 2'000'000;
	FakeRing f(4, 128);
	const uint32_t start = UINT32_MAX - 777;
	f.set_indices(start, start);
	std::atomic<uint64_t> bad{ 0 };

	std::thread producer([&] {
		RingView r = f.view();
		for (uint64_t seq = 0; seq < items;) {
			uint32_t room = r.free_slots();
			uint32_t prod = r.producer_owned();
			for (uint32_t k = 0; k < room && seq < items; k++, seq++) {
				auto *s = static_cast<uint64_t *>(r.slot(prod + k));
				s[0] = seq;
				s[8] = ~seq;
				r.publish(prod + k + 1);
			}
			if (!room)
				std::this_thread::yield();
		}
	});
	std::thread consumer([&] {
		RingView r = f.view();
		for (uint64_t seq = 0; seq < items;) {
			uint32_t ready = r.ready_slots();
			if (ready == UINT32_MAX) {
				bad++;
				return;
			}
			uint32_t cons = r.consumer_owned();
			for (uint32_t k = 0; k < ready; k++, seq++) {
				auto *s = static_cast<uint64_t *>(r.slot(cons + k));
				if (s[0] != seq || s[8] != ~seq)
					bad++;
			}
			if (ready)
				r.release(cons + ready);
			else
				std::this_thread::yield();
		}
	});
	producer.join();
	consumer.join();
	EXPECT_EQ(bad.load(), 0u);
	EXPECT_EQ(f.hdr()->producer, static_cast<uint32_t>(start + items));
	EXPECT_EQ(f.hdr()->consumer, static_cast<uint32_t>(start + items));
}

} // namespace
