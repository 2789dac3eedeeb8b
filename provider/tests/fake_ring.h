// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// A ring in ordinary memory, laid out exactly like the kernel's mapping,
// for host tests of the provider's ring and WQE code.
#ifndef SROCE_TEST_FAKE_RING_H
#define SROCE_TEST_FAKE_RING_H

#include <cstdlib>
#include <cstring>

#include "ring.h"

struct FakeRing {
	void *mem = nullptr;
	sroce_ring_info info{};

	FakeRing(uint32_t log2_entries, uint32_t entry_size)
	{
		info.log2_entries = log2_entries;
		info.entry_size = entry_size;
		info.mmap_size = SROCE_RING_HDR_SIZE + (entry_size << log2_entries);
		size_t sz = (info.mmap_size + 4095) & ~size_t(4095);
		mem = aligned_alloc(4096, sz);
		memset(mem, 0, sz);
	}
	~FakeRing() { free(mem); }
	FakeRing(const FakeRing &) = delete;
	FakeRing &operator=(const FakeRing &) = delete;

	sroce_ring_hdr *hdr() { return static_cast<sroce_ring_hdr *>(mem); }
	uint8_t *slots() { return static_cast<uint8_t *>(mem) + SROCE_RING_HDR_SIZE; }
	uint8_t *slot(uint32_t i)
	{
		return slots() + (i & ((1u << info.log2_entries) - 1)) * info.entry_size;
	}
	sroce::RingView view()
	{
		sroce::RingView v;
		v.attach(mem, info.log2_entries, info.entry_size);
		return v;
	}
	void set_indices(uint32_t prod, uint32_t cons)
	{
		hdr()->producer = prod;
		hdr()->consumer = cons;
	}
};

#endif
