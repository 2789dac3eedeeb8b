// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests of the RoCEv2 wire definitions shared with the kernel module:
 * header layout (kernel/wire.h), the opcode table (kernel/opcode.h), PSN
 * arithmetic (kernel/psn.h) and the ICRC (kernel/icrc.h), including known
 * answers from packets captured on real RoCE NICs.
 */
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../kernel/icrc.h"
#include "../../kernel/opcode.h"
#include "../../kernel/psn.h"
#include "../../kernel/wire.h"

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes hex(const char *s)
{
	Bytes out;
	int nibble = -1;

	for (; *s; s++) {
		int v;

		if (*s >= '0' && *s <= '9')
			v = *s - '0';
		else if (*s >= 'a' && *s <= 'f')
			v = *s - 'a' + 10;
		else
			continue;
		if (nibble < 0) {
			nibble = v;
		} else {
			out.push_back(static_cast<std::uint8_t>(nibble << 4 | v));
			nibble = -1;
		}
	}
	return out;
}

/* ---- header layout ------------------------------------------------------- */

TEST(WireLayout, HeaderSizes)
{
	EXPECT_EQ(sizeof(struct sroce_bth), 12u);
	EXPECT_EQ(sizeof(struct sroce_reth), 16u);
	EXPECT_EQ(sizeof(struct sroce_aeth), 4u);
	EXPECT_EQ(sizeof(struct sroce_atmeth), 28u);
	EXPECT_EQ(sizeof(struct sroce_atmack), 8u);
	EXPECT_EQ(sizeof(struct sroce_immdt), 4u);
	EXPECT_EQ(sizeof(struct sroce_ieth), 4u);
	EXPECT_EQ(sizeof(struct sroce_deth), 8u);
	EXPECT_EQ(sizeof(struct sroce_cnp), 16u);
}

TEST(WireLayout, FieldOffsets)
{
	EXPECT_EQ(offsetof(struct sroce_bth, pkey), 2u);
	EXPECT_EQ(offsetof(struct sroce_bth, qpn), 4u);
	EXPECT_EQ(offsetof(struct sroce_bth, psn), 8u);
	EXPECT_EQ(offsetof(struct sroce_reth, rkey), 8u);
	EXPECT_EQ(offsetof(struct sroce_reth, dma_len), 12u);
	EXPECT_EQ(offsetof(struct sroce_atmeth, rkey), 8u);
	EXPECT_EQ(offsetof(struct sroce_atmeth, swap_add), 12u);
	EXPECT_EQ(offsetof(struct sroce_atmeth, compare), 20u);
	EXPECT_EQ(offsetof(struct sroce_deth, sqp), 4u);
}

TEST(WireLayout, Constants)
{
	EXPECT_EQ(SROCE_UDP_PORT, 4791);
	EXPECT_EQ(SROCE_BTH_TVER, 0);
	EXPECT_EQ(SROCE_DEFAULT_PKEY, 0xffff);
	EXPECT_EQ(SROCE_AETH_ACK, 0x00);
	EXPECT_EQ(SROCE_AETH_RNR_NAK, 0x20);
	EXPECT_EQ(SROCE_AETH_NAK, 0x60);
	EXPECT_EQ(SROCE_NAK_PSN_SEQ_ERR, 0);
	EXPECT_EQ(SROCE_NAK_INVALID_REQ, 1);
	EXPECT_EQ(SROCE_NAK_REM_ACCESS_ERR, 2);
	EXPECT_EQ(SROCE_NAK_REM_OP_ERR, 3);
	EXPECT_EQ(SROCE_NAK_INVALID_RD_REQ, 4);
}

/* Writes through the helpers must land on the exact wire bytes. */
TEST(WireFields, BthPacking)
{
	struct sroce_bth bth;
	std::uint8_t raw[12];

	std::memset(&bth, 0xa5, sizeof(bth));
	bth.opcode = SROCE_OP_RC_SEND_ONLY;
	bth.flags = sroce_bth_flags(true, false, 3);
	bth.pkey = sroce_cpu_to_be16(SROCE_DEFAULT_PKEY);
	sroce_bth_set_qpn(&bth, 0xfe123456);	/* bits above 24 dropped */
	sroce_bth_set_psn(&bth, 0xabcdef, true);
	std::memcpy(raw, &bth, sizeof(raw));

	const std::uint8_t want[12] = { 0x04, 0xb0, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
					0x80, 0xab, 0xcd, 0xef };
	EXPECT_EQ(0, std::memcmp(raw, want, sizeof(want)));

	EXPECT_EQ(sroce_bth_qpn(&bth), 0x123456u);
	EXPECT_EQ(sroce_bth_psn(&bth), 0xabcdefu);
	EXPECT_TRUE(sroce_bth_ackreq(&bth));
	EXPECT_TRUE(sroce_bth_se(&bth));
	EXPECT_FALSE(sroce_bth_mig(&bth));
	EXPECT_EQ(sroce_bth_pad(&bth), 3u);
	EXPECT_EQ(sroce_bth_tver(&bth), 0u);
	EXPECT_FALSE(sroce_bth_becn(&bth));
	EXPECT_FALSE(sroce_bth_fecn(&bth));

	sroce_bth_set_becn(&bth);
	EXPECT_TRUE(sroce_bth_becn(&bth));
	EXPECT_FALSE(sroce_bth_fecn(&bth));
	EXPECT_EQ(sroce_bth_qpn(&bth), 0x123456u) << "BECN must not leak into the QPN";

	sroce_bth_set_psn(&bth, 0xffffff, false);
	EXPECT_FALSE(sroce_bth_ackreq(&bth));
	EXPECT_EQ(sroce_bth_psn(&bth), 0xffffffu);

	bth.flags = sroce_bth_flags(false, true, 1);
	EXPECT_EQ(bth.flags, 0x50);
	EXPECT_FALSE(sroce_bth_se(&bth));
	EXPECT_TRUE(sroce_bth_mig(&bth));
	EXPECT_EQ(sroce_bth_pad(&bth), 1u);
}

TEST(WireFields, BthFromCapturedBytes)
{
	/* BTH of the ConnectX-4 Lx CNP used in the ICRC tests below. */
	const Bytes b = hex("8100ffff 40000118 00000000");
	struct sroce_bth bth;

	std::memcpy(&bth, b.data(), sizeof(bth));
	EXPECT_EQ(bth.opcode, SROCE_OP_CNP);
	EXPECT_EQ(sroce_be16_to_cpu(bth.pkey), 0xffff);
	EXPECT_TRUE(sroce_bth_becn(&bth));
	EXPECT_FALSE(sroce_bth_fecn(&bth));
	EXPECT_EQ(sroce_bth_qpn(&bth), 0x118u);
	EXPECT_EQ(sroce_bth_psn(&bth), 0u);
}

TEST(WireFields, AethAndDeth)
{
	struct sroce_aeth aeth;
	struct sroce_deth deth;
	std::uint8_t raw[8];

	sroce_aeth_set(&aeth, SROCE_AETH_NAK | SROCE_NAK_REM_ACCESS_ERR, 0x1abcdef);
	std::memcpy(raw, &aeth, 4);
	EXPECT_EQ(raw[0], 0x62);
	EXPECT_EQ(raw[1], 0xab);
	EXPECT_EQ(raw[3], 0xef);
	EXPECT_EQ(sroce_aeth_syndrome(&aeth), 0x62);
	EXPECT_EQ(sroce_aeth_msn(&aeth), 0xabcdefu);
	EXPECT_EQ(sroce_aeth_syndrome(&aeth) & SROCE_AETH_TYPE_MASK, SROCE_AETH_NAK);
	EXPECT_EQ(sroce_aeth_syndrome(&aeth) & SROCE_AETH_VALUE_MASK, SROCE_NAK_REM_ACCESS_ERR);

	deth.qkey = sroce_cpu_to_be32(SROCE_GSI_QKEY);
	sroce_deth_set_sqp(&deth, 0xff000001);
	std::memcpy(raw, &deth, 8);
	const std::uint8_t want[8] = { 0x80, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01 };
	EXPECT_EQ(0, std::memcmp(raw, want, 8));
	EXPECT_EQ(sroce_deth_sqp(&deth), 1u);
}

TEST(WireFields, AtomicEthByteOrder)
{
	struct sroce_atmeth a;
	std::uint8_t raw[28];

	a.va = sroce_cpu_to_be64(0x0102030405060708ULL);
	a.rkey = sroce_cpu_to_be32(0x11223344);
	a.swap_add = sroce_cpu_to_be64(0x2122232425262728ULL);
	a.compare = sroce_cpu_to_be64(0x3132333435363738ULL);
	std::memcpy(raw, &a, sizeof(raw));
	EXPECT_EQ(raw[0], 0x01);
	EXPECT_EQ(raw[7], 0x08);
	EXPECT_EQ(raw[8], 0x11);
	EXPECT_EQ(raw[12], 0x21);
	EXPECT_EQ(raw[19], 0x28);
	EXPECT_EQ(raw[20], 0x31);
	EXPECT_EQ(raw[27], 0x38);
	EXPECT_EQ(sroce_be64_to_cpu(a.swap_add), 0x2122232425262728ULL);
}

TEST(WireFields, RnrTimerTable)
{
	/* IBTA vol 1 table 45 (9.7.5.2.8); code 0 is the longest. */
	EXPECT_EQ(sroce_rnr_timer_usec(0), 655360u);
	EXPECT_EQ(sroce_rnr_timer_usec(1), 10u);
	EXPECT_EQ(sroce_rnr_timer_usec(14), 1280u);
	EXPECT_EQ(sroce_rnr_timer_usec(25), 61440u);	/* rxe has 61410 */
	EXPECT_EQ(sroce_rnr_timer_usec(31), 491520u);
	for (unsigned int c = 2; c < 32; c++)
		EXPECT_GT(sroce_rnr_timer_usec(c), sroce_rnr_timer_usec(c - 1)) << c;
	/* From 0.04 ms on, the values alternate x1.5 and x1.333 (4, 6, 8, 12...). */
	for (unsigned int c = 6; c < 32; c += 2)
		EXPECT_EQ(sroce_rnr_timer_usec(c), 2 * sroce_rnr_timer_usec(c - 2)) << c;
	EXPECT_EQ(sroce_rnr_timer_usec(32 + 1), 10u) << "code is masked to 5 bits";
}

TEST(WireFields, CreditTable)
{
	EXPECT_EQ(sroce_aeth_credits(0), 0);
	EXPECT_EQ(sroce_aeth_credits(4), 4);
	EXPECT_EQ(sroce_aeth_credits(5), 6);
	EXPECT_EQ(sroce_aeth_credits(30), 32768);
	EXPECT_EQ(sroce_aeth_credits(SROCE_AETH_CREDIT_INVALID), -1);
	for (unsigned int c = 6; c < 31; c++)
		EXPECT_EQ(sroce_aeth_credits(c), 2 * sroce_aeth_credits(c - 2)) << c;
}

/* ---- opcode table ----------------------------------------------------------- */

struct Expected {
	std::uint8_t op;
	const char *name;
	unsigned int hdrs;
};

/* Every opcode sroce knows, with its IBTA extension headers. */
const Expected kOpcodes[] = {
	{ 0x00, "RC_SEND_FIRST", 0 },
	{ 0x01, "RC_SEND_MIDDLE", 0 },
	{ 0x02, "RC_SEND_LAST", 0 },
	{ 0x03, "RC_SEND_LAST_WITH_IMMEDIATE", SROCE_HDRM_IMMDT },
	{ 0x04, "RC_SEND_ONLY", 0 },
	{ 0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", SROCE_HDRM_IMMDT },
	{ 0x06, "RC_RDMA_WRITE_FIRST", SROCE_HDRM_RETH },
	{ 0x07, "RC_RDMA_WRITE_MIDDLE", 0 },
	{ 0x08, "RC_RDMA_WRITE_LAST", 0 },
	{ 0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", SROCE_HDRM_IMMDT },
	{ 0x0a, "RC_RDMA_WRITE_ONLY", SROCE_HDRM_RETH },
	{ 0x0b, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", SROCE_HDRM_RETH | SROCE_HDRM_IMMDT },
	{ 0x0c, "RC_RDMA_READ_REQUEST", SROCE_HDRM_RETH },
	{ 0x0d, "RC_RDMA_READ_RESPONSE_FIRST", SROCE_HDRM_AETH },
	{ 0x0e, "RC_RDMA_READ_RESPONSE_MIDDLE", 0 },
	{ 0x0f, "RC_RDMA_READ_RESPONSE_LAST", SROCE_HDRM_AETH },
	{ 0x10, "RC_RDMA_READ_RESPONSE_ONLY", SROCE_HDRM_AETH },
	{ 0x11, "RC_ACKNOWLEDGE", SROCE_HDRM_AETH },
	{ 0x12, "RC_ATOMIC_ACKNOWLEDGE", SROCE_HDRM_AETH | SROCE_HDRM_ATMACK },
	{ 0x13, "RC_COMPARE_SWAP", SROCE_HDRM_ATMETH },
	{ 0x14, "RC_FETCH_ADD", SROCE_HDRM_ATMETH },
	{ 0x16, "RC_SEND_LAST_WITH_INVALIDATE", SROCE_HDRM_IETH },
	{ 0x17, "RC_SEND_ONLY_WITH_INVALIDATE", SROCE_HDRM_IETH },
	{ 0x1d, "RC_ATOMIC_WRITE", SROCE_HDRM_RETH },
	{ 0x20, "UC_SEND_FIRST", 0 },
	{ 0x21, "UC_SEND_MIDDLE", 0 },
	{ 0x22, "UC_SEND_LAST", 0 },
	{ 0x23, "UC_SEND_LAST_WITH_IMMEDIATE", SROCE_HDRM_IMMDT },
	{ 0x24, "UC_SEND_ONLY", 0 },
	{ 0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", SROCE_HDRM_IMMDT },
	{ 0x26, "UC_RDMA_WRITE_FIRST", SROCE_HDRM_RETH },
	{ 0x27, "UC_RDMA_WRITE_MIDDLE", 0 },
	{ 0x28, "UC_RDMA_WRITE_LAST", 0 },
	{ 0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", SROCE_HDRM_IMMDT },
	{ 0x2a, "UC_RDMA_WRITE_ONLY", SROCE_HDRM_RETH },
	{ 0x2b, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", SROCE_HDRM_RETH | SROCE_HDRM_IMMDT },
	{ 0x64, "UD_SEND_ONLY", SROCE_HDRM_DETH },
	{ 0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", SROCE_HDRM_DETH | SROCE_HDRM_IMMDT },
	{ 0x81, "CNP", SROCE_HDRM_CNP },
	/* XRC (IBA 9.3.5): RC opcodes + 0xa0, XRCETH right after the BTH of requests. */
	{ 0xa0, "XRC_SEND_FIRST", SROCE_HDRM_XRCETH },
	{ 0xa1, "XRC_SEND_MIDDLE", SROCE_HDRM_XRCETH },
	{ 0xa2, "XRC_SEND_LAST", SROCE_HDRM_XRCETH },
	{ 0xa3, "XRC_SEND_LAST_WITH_IMMEDIATE", SROCE_HDRM_XRCETH | SROCE_HDRM_IMMDT },
	{ 0xa4, "XRC_SEND_ONLY", SROCE_HDRM_XRCETH },
	{ 0xa5, "XRC_SEND_ONLY_WITH_IMMEDIATE", SROCE_HDRM_XRCETH | SROCE_HDRM_IMMDT },
	{ 0xa6, "XRC_RDMA_WRITE_FIRST", SROCE_HDRM_XRCETH | SROCE_HDRM_RETH },
	{ 0xa7, "XRC_RDMA_WRITE_MIDDLE", SROCE_HDRM_XRCETH },
	{ 0xa8, "XRC_RDMA_WRITE_LAST", SROCE_HDRM_XRCETH },
	{ 0xa9, "XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE", SROCE_HDRM_XRCETH | SROCE_HDRM_IMMDT },
	{ 0xaa, "XRC_RDMA_WRITE_ONLY", SROCE_HDRM_XRCETH | SROCE_HDRM_RETH },
	{ 0xab, "XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", SROCE_HDRM_XRCETH | SROCE_HDRM_RETH | SROCE_HDRM_IMMDT },
	{ 0xac, "XRC_RDMA_READ_REQUEST", SROCE_HDRM_XRCETH | SROCE_HDRM_RETH },
	{ 0xad, "XRC_RDMA_READ_RESPONSE_FIRST", SROCE_HDRM_AETH },
	{ 0xae, "XRC_RDMA_READ_RESPONSE_MIDDLE", 0 },
	{ 0xaf, "XRC_RDMA_READ_RESPONSE_LAST", SROCE_HDRM_AETH },
	{ 0xb0, "XRC_RDMA_READ_RESPONSE_ONLY", SROCE_HDRM_AETH },
	{ 0xb1, "XRC_ACKNOWLEDGE", SROCE_HDRM_AETH },
	{ 0xb2, "XRC_ATOMIC_ACKNOWLEDGE", SROCE_HDRM_AETH | SROCE_HDRM_ATMACK },
	{ 0xb3, "XRC_COMPARE_SWAP", SROCE_HDRM_XRCETH | SROCE_HDRM_ATMETH },
	{ 0xb4, "XRC_FETCH_ADD", SROCE_HDRM_XRCETH | SROCE_HDRM_ATMETH },
	{ 0xb6, "XRC_SEND_LAST_WITH_INVALIDATE", SROCE_HDRM_XRCETH | SROCE_HDRM_IETH },
	{ 0xb7, "XRC_SEND_ONLY_WITH_INVALIDATE", SROCE_HDRM_XRCETH | SROCE_HDRM_IETH },
	{ 0xbd, "XRC_ATOMIC_WRITE", SROCE_HDRM_XRCETH | SROCE_HDRM_RETH },
};

unsigned int hdr_size(unsigned int h)
{
	switch (h) {
	case SROCE_HDR_DETH: return sizeof(struct sroce_deth);
	case SROCE_HDR_XRCETH: return sizeof(struct sroce_xrceth);
	case SROCE_HDR_RETH: return sizeof(struct sroce_reth);
	case SROCE_HDR_ATMETH: return sizeof(struct sroce_atmeth);
	case SROCE_HDR_AETH: return sizeof(struct sroce_aeth);
	case SROCE_HDR_ATMACK: return sizeof(struct sroce_atmack);
	case SROCE_HDR_IMMDT: return sizeof(struct sroce_immdt);
	case SROCE_HDR_IETH: return sizeof(struct sroce_ieth);
	case SROCE_HDR_CNP: return sizeof(struct sroce_cnp);
	}
	ADD_FAILURE() << "unknown header " << h;
	return 0;
}

const Expected *expected(unsigned int op)
{
	for (const Expected &e : kOpcodes)
		if (e.op == op)
			return &e;
	return nullptr;
}

TEST(OpcodeTable, ExactlyTheKnownOpcodesAreValid)
{
	for (unsigned int op = 0; op < SROCE_NUM_OPCODES; op++) {
		const Expected *e = expected(op);
		const struct sroce_opcode_info *info = sroce_opcode_info(op);

		ASSERT_EQ(sroce_opcode_valid(op), e != nullptr) << std::hex << op;
		if (!e) {
			EXPECT_EQ(sroce_hdr_len(op), 0u);
			continue;
		}
		EXPECT_STREQ(info->name, e->name);
		EXPECT_EQ(info->hdrs, e->hdrs) << e->name;
	}
	EXPECT_FALSE(sroce_opcode_valid(0x15)) << "reserved";
	EXPECT_FALSE(sroce_opcode_valid(0x1c)) << "FLUSH is not supported";
	EXPECT_FALSE(sroce_opcode_valid(0x40)) << "RD is not supported";
	EXPECT_FALSE(sroce_opcode_valid(0xb5)) << "reserved (XRC)";
	EXPECT_FALSE(sroce_opcode_valid(0xbc)) << "XRC FLUSH is not supported";
	EXPECT_FALSE(sroce_opcode_valid(0x80));
	EXPECT_FALSE(sroce_opcode_valid(0xff));
}

TEST(OpcodeTable, OffsetsAndLengthsFollowFromTheHeaders)
{
	unsigned int longest = 0;

	for (const Expected &e : kOpcodes) {
		unsigned int off = SROCE_BTH_LEN;

		/* Extension headers are packed back to back in enum order. */
		for (unsigned int h = 0; h < SROCE_HDR_COUNT; h++) {
			auto hdr = static_cast<enum sroce_hdr>(h);

			if (e.hdrs & SROCE_HDRM(h)) {
				EXPECT_TRUE(sroce_opcode_has(e.op, hdr));
				EXPECT_EQ(sroce_hdr_offset(e.op, hdr), off) << e.name << " hdr " << h;
				off += hdr_size(h);
			} else {
				EXPECT_FALSE(sroce_opcode_has(e.op, hdr));
				EXPECT_EQ(sroce_hdr_offset(e.op, hdr), 0u) << e.name << " hdr " << h;
			}
		}
		EXPECT_EQ(sroce_hdr_len(e.op), off) << e.name;
		longest = std::max(longest, off);
	}
	EXPECT_EQ(longest, static_cast<unsigned int>(SROCE_MAX_HDR_LEN));
}

TEST(OpcodeTable, SpotChecks)
{
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_RC_SEND_ONLY), 12u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_RC_RDMA_READ_REQUEST), 28u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_RC_RDMA_READ_REQUEST, SROCE_HDR_RETH), 12u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_RC_COMPARE_SWAP), 40u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_RC_COMPARE_SWAP, SROCE_HDR_ATMETH), 12u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_RC_ACKNOWLEDGE), 16u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_RC_ATOMIC_ACKNOWLEDGE, SROCE_HDR_AETH), 12u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_RC_ATOMIC_ACKNOWLEDGE, SROCE_HDR_ATMACK), 16u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_RC_ATOMIC_ACKNOWLEDGE), 24u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, SROCE_HDR_IMMDT), 28u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE), 32u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_RC_SEND_LAST_WITH_INVALIDATE, SROCE_HDR_IETH), 12u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, SROCE_HDR_DETH), 12u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE, SROCE_HDR_IMMDT), 20u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_CNP), 28u);
	/* XRC: the XRCETH comes before the RETH / AtomicETH / ImmDt. */
	EXPECT_EQ(sizeof(struct sroce_xrceth), 4u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_XRC_SEND_ONLY, SROCE_HDR_XRCETH), 12u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_XRC_SEND_ONLY), 16u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, SROCE_HDR_RETH), 16u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, SROCE_HDR_IMMDT), 32u);
	EXPECT_EQ(sroce_hdr_offset(SROCE_OP_XRC_COMPARE_SWAP, SROCE_HDR_ATMETH), 16u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_XRC_COMPARE_SWAP), 44u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_XRC_ACKNOWLEDGE), 16u);
	EXPECT_EQ(sroce_hdr_len(SROCE_OP_XRC_ATOMIC_ACKNOWLEDGE), 24u);
	EXPECT_FALSE(sroce_opcode_has(SROCE_OP_XRC_RDMA_READ_RESPONSE_ONLY, SROCE_HDR_XRCETH));
}

TEST(Wire, XrcethCarries24BitSrqNumber)
{
	struct sroce_xrceth x;

	sroce_xrceth_set_srqn(&x, 0xab123456);
	EXPECT_EQ(sroce_be32_to_cpu(x.srqn), 0x00123456u) << "resv8 is sent as 0";
	EXPECT_EQ(sroce_xrceth_srqn(&x), 0x123456u);
	x.srqn = sroce_cpu_to_be32(0xff000001);
	EXPECT_EQ(sroce_xrceth_srqn(&x), 1u) << "resv8 is ignored";
}

unsigned int position(const struct sroce_opcode_info *i)
{
	return i->flags & (SROCE_OPF_FIRST | SROCE_OPF_MIDDLE | SROCE_OPF_LAST);
}

TEST(OpcodeTable, FlagsAreConsistent)
{
	for (const Expected &e : kOpcodes) {
		const struct sroce_opcode_info *i = sroce_opcode_info(e.op);
		const unsigned int pos = position(i);
		const bool carries_data = i->kind == SROCE_OPK_SEND ||
					  i->kind == SROCE_OPK_WRITE ||
					  i->kind == SROCE_OPK_ATOMIC_WRITE ||
					  i->kind == SROCE_OPK_READ_RESP;
		const bool is_req = i->kind == SROCE_OPK_SEND || i->kind == SROCE_OPK_WRITE ||
				    i->kind == SROCE_OPK_READ_REQ || i->kind == SROCE_OPK_ATOMIC ||
				    i->kind == SROCE_OPK_ATOMIC_WRITE;
		const bool is_resp = i->kind == SROCE_OPK_READ_RESP || i->kind == SROCE_OPK_ACK ||
				     i->kind == SROCE_OPK_ATOMIC_ACK;
		const std::string n = e.name;

		EXPECT_TRUE(pos == SROCE_OPF_FIRST || pos == SROCE_OPF_MIDDLE ||
			    pos == SROCE_OPF_LAST || pos == SROCE_OPF_ONLY) << n;
		EXPECT_EQ(!!(i->flags & SROCE_OPF_PAYLOAD), carries_data) << n;
		EXPECT_EQ(!!(i->flags & SROCE_OPF_REQ), is_req) << n;
		EXPECT_EQ(!!(i->flags & SROCE_OPF_RESP), is_resp) << n;

		/* Name and position agree. */
		EXPECT_EQ(pos == SROCE_OPF_FIRST, n.find("_FIRST") != std::string::npos) << n;
		EXPECT_EQ(pos == SROCE_OPF_MIDDLE, n.find("_MIDDLE") != std::string::npos) << n;
		EXPECT_EQ(pos == SROCE_OPF_LAST, n.find("_LAST") != std::string::npos) << n;
		EXPECT_EQ(!!(i->hdrs & SROCE_HDRM_IMMDT),
			  n.find("WITH_IMMEDIATE") != std::string::npos) << n;
		EXPECT_EQ(!!(i->hdrs & SROCE_HDRM_IETH),
			  n.find("WITH_INVALIDATE") != std::string::npos) << n;

		/* Immediate data and invalidation only on the packet that ends a message. */
		if (i->hdrs & (SROCE_HDRM_IMMDT | SROCE_HDRM_IETH)) {
			EXPECT_TRUE(i->flags & SROCE_OPF_LAST) << n;
		}
		/*
		 * RETH on the first packet of a write, on read requests and on
		 * ATOMIC WRITE (a one-packet write) only.
		 */
		if (i->hdrs & SROCE_HDRM_RETH) {
			EXPECT_TRUE((i->kind == SROCE_OPK_WRITE && (i->flags & SROCE_OPF_FIRST)) ||
				    i->kind == SROCE_OPK_READ_REQ ||
				    (i->kind == SROCE_OPK_ATOMIC_WRITE &&
				     pos == SROCE_OPF_ONLY)) << n;
		}
		if (i->kind == SROCE_OPK_WRITE && (i->flags & SROCE_OPF_FIRST)) {
			EXPECT_TRUE(i->hdrs & SROCE_HDRM_RETH) << n;
		}
		/* Read responses carry an AETH except in the middle. */
		if (i->kind == SROCE_OPK_READ_RESP) {
			EXPECT_EQ(!!(i->hdrs & SROCE_HDRM_AETH), pos != SROCE_OPF_MIDDLE) << n;
		}

		/*
		 * Receive queue: a send takes its WQE on its first packet and
		 * completes it on its last; a write takes and completes one
		 * only when it carries immediate data, on its last packet.
		 */
		if (i->kind == SROCE_OPK_SEND) {
			EXPECT_EQ(!!(i->flags & SROCE_OPF_RECV), !!(i->flags & SROCE_OPF_FIRST)) << n;
			EXPECT_EQ(!!(i->flags & SROCE_OPF_RECV_CQE), !!(i->flags & SROCE_OPF_LAST)) << n;
		} else if (i->kind == SROCE_OPK_WRITE) {
			const bool imm = i->hdrs & SROCE_HDRM_IMMDT;

			EXPECT_EQ(!!(i->flags & SROCE_OPF_RECV), imm) << n;
			EXPECT_EQ(!!(i->flags & SROCE_OPF_RECV_CQE), imm) << n;
		} else {
			EXPECT_FALSE(i->flags & (SROCE_OPF_RECV | SROCE_OPF_RECV_CQE)) << n;
		}

		/* QP types follow from the transport (top three bits). */
		switch (e.op >> 5) {
		case 0: EXPECT_EQ(i->qp_types, SROCE_QPT_RC) << n; break;
		case 1: EXPECT_EQ(i->qp_types, SROCE_QPT_UC) << n; break;
		case 3: EXPECT_EQ(i->qp_types, SROCE_QPT_UD) << n; break;
		case 4: EXPECT_EQ(i->qp_types, SROCE_QPT_ANY) << n; break;
		case 5:
			/* XRC: requests to targets (with XRCETH), responses to initiators. */
			EXPECT_EQ(i->qp_types, is_req ? SROCE_QPT_XRC_TGT : SROCE_QPT_XRC_INI) << n;
			EXPECT_EQ(!!(i->hdrs & SROCE_HDRM_XRCETH), is_req) << n;
			break;
		default: ADD_FAILURE() << n;
		}

		/* Continuations are listed exactly for packets inside a message. */
		EXPECT_EQ(i->next != 0, !(i->flags & SROCE_OPF_LAST)) << n;
	}
}

TEST(OpcodeTable, KindsOfNamedOpcodes)
{
	EXPECT_EQ(sroce_opcode_info(SROCE_OP_RC_RDMA_READ_REQUEST)->kind, SROCE_OPK_READ_REQ);
	EXPECT_EQ(sroce_opcode_info(SROCE_OP_RC_COMPARE_SWAP)->kind, SROCE_OPK_ATOMIC);
	EXPECT_EQ(sroce_opcode_info(SROCE_OP_RC_FETCH_ADD)->kind, SROCE_OPK_ATOMIC);
	EXPECT_EQ(sroce_opcode_info(SROCE_OP_RC_ATOMIC_WRITE)->kind, SROCE_OPK_ATOMIC_WRITE);
	EXPECT_EQ(sroce_opcode_info(SROCE_OP_RC_ACKNOWLEDGE)->kind, SROCE_OPK_ACK);
	EXPECT_EQ(sroce_opcode_info(SROCE_OP_RC_ATOMIC_ACKNOWLEDGE)->kind, SROCE_OPK_ATOMIC_ACK);
	EXPECT_EQ(sroce_opcode_info(SROCE_OP_UC_RDMA_WRITE_LAST)->kind, SROCE_OPK_WRITE);
	EXPECT_EQ(sroce_opcode_info(SROCE_OP_UD_SEND_ONLY)->kind, SROCE_OPK_SEND);
	EXPECT_EQ(sroce_opcode_info(SROCE_OP_CNP)->kind, SROCE_OPK_CNP);
}

/*
 * The continuation masks, checked against an independent statement of the
 * rule: inside a message, only MIDDLE or LAST packets of the same operation
 * on the same transport may follow.
 */
TEST(OpcodeSequence, ContinuationsMatchTheRule)
{
	for (const Expected &p : kOpcodes) {
		const struct sroce_opcode_info *pi = sroce_opcode_info(p.op);

		for (unsigned int next = 0; next < SROCE_NUM_OPCODES; next++) {
			const struct sroce_opcode_info *ni = sroce_opcode_info(next);
			bool want;

			if (!sroce_opcode_valid(next))
				want = false;
			else if (pi->flags & SROCE_OPF_LAST)
				want = ni->flags & SROCE_OPF_FIRST;
			else
				want = (p.op >> 5) == (next >> 5) && ni->kind == pi->kind &&
				       !(ni->flags & SROCE_OPF_FIRST);
			EXPECT_EQ(sroce_opcode_may_follow(p.op, next), want)
				<< p.name << " -> 0x" << std::hex << next;
		}
	}
}

TEST(OpcodeSequence, Examples)
{
	EXPECT_TRUE(sroce_opcode_may_follow(SROCE_OP_RC_SEND_FIRST, SROCE_OP_RC_SEND_MIDDLE));
	EXPECT_TRUE(sroce_opcode_may_follow(SROCE_OP_RC_SEND_MIDDLE,
					    SROCE_OP_RC_SEND_LAST_WITH_INVALIDATE));
	EXPECT_TRUE(sroce_opcode_may_follow(SROCE_OP_RC_SEND_FIRST,
					    SROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE));
	EXPECT_FALSE(sroce_opcode_may_follow(SROCE_OP_RC_SEND_FIRST, SROCE_OP_RC_SEND_ONLY));
	EXPECT_FALSE(sroce_opcode_may_follow(SROCE_OP_RC_SEND_FIRST, SROCE_OP_RC_SEND_FIRST));
	EXPECT_FALSE(sroce_opcode_may_follow(SROCE_OP_RC_SEND_FIRST,
					     SROCE_OP_RC_RDMA_WRITE_MIDDLE));
	EXPECT_FALSE(sroce_opcode_may_follow(SROCE_OP_RC_SEND_FIRST, SROCE_OP_UC_SEND_MIDDLE));
	EXPECT_FALSE(sroce_opcode_may_follow(SROCE_OP_UC_SEND_FIRST, 0x36))
		<< "UC has no SEND_LAST_WITH_INVALIDATE";
	EXPECT_TRUE(sroce_opcode_may_follow(SROCE_OP_UC_RDMA_WRITE_FIRST,
					    SROCE_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE));
	EXPECT_TRUE(sroce_opcode_may_follow(SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST,
					    SROCE_OP_RC_RDMA_READ_RESPONSE_LAST));
	EXPECT_FALSE(sroce_opcode_may_follow(SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE,
					     SROCE_OP_RC_ACKNOWLEDGE));
	EXPECT_TRUE(sroce_opcode_may_follow(SROCE_OP_RC_SEND_LAST, SROCE_OP_RC_RDMA_READ_REQUEST));
	EXPECT_FALSE(sroce_opcode_may_follow(SROCE_OP_RC_SEND_LAST, SROCE_OP_RC_SEND_MIDDLE));
	EXPECT_TRUE(sroce_opcode_may_follow(0x15, SROCE_OP_RC_SEND_ONLY))
		<< "after garbage, only a message start is acceptable";
	EXPECT_FALSE(sroce_opcode_may_follow(0x15, SROCE_OP_RC_SEND_MIDDLE));
}

/* ---- PSN arithmetic ------------------------------------------------------------ */

TEST(Psn, AddWraps)
{
	EXPECT_EQ(sroce_psn_add(0xfffffe, 1), 0xffffffu);
	EXPECT_EQ(sroce_psn_next(0xffffff), 0u);
	EXPECT_EQ(sroce_psn_add(0xfffff0, 0x20), 0x10u);
	EXPECT_EQ(sroce_psn_add(5, 0x1000000), 5u);
	EXPECT_EQ(sroce_psn_add(0xab000001, 1), 2u) << "input garbage above bit 23 is dropped";
}

TEST(Psn, DiffAcrossWrap)
{
	EXPECT_EQ(sroce_psn_diff(0xfffffe, 0x000001), 3);
	EXPECT_EQ(sroce_psn_diff(0x000001, 0xfffffe), -3);
	EXPECT_EQ(sroce_psn_diff(7, 7), 0);
	EXPECT_EQ(sroce_psn_diff(0, 0x7fffff), 0x7fffff);
	EXPECT_EQ(sroce_psn_diff(0, 0x800000), -0x800000) << "exactly half: treated as behind";
	EXPECT_EQ(sroce_psn_diff(0, 0x800001), -0x7fffff);
	EXPECT_EQ(sroce_psn_diff(0xff000010, 0x00000012), 2) << "inputs masked";
}

TEST(Psn, Ordering)
{
	EXPECT_TRUE(sroce_psn_before(0xffffff, 0));
	EXPECT_TRUE(sroce_psn_after(0, 0xffffff));
	EXPECT_FALSE(sroce_psn_before(5, 5));
	EXPECT_FALSE(sroce_psn_after(5, 5));
	EXPECT_TRUE(sroce_psn_before(0x10, 0x7ffff0));
	EXPECT_FALSE(sroce_psn_before(0x10, 0x800010)) << "half apart: neither";
	EXPECT_FALSE(sroce_psn_after(0x10, 0x800010));

	std::mt19937 rng(1234);
	for (int i = 0; i < 100000; i++) {
		__u32 a = rng() & SROCE_PSN_MASK;
		__u32 n = rng() % SROCE_PSN_HALF;

		ASSERT_EQ(sroce_psn_diff(a, sroce_psn_add(a, n)), static_cast<__s32>(n));
		if (n) {
			ASSERT_TRUE(sroce_psn_before(a, sroce_psn_add(a, n)));
			ASSERT_TRUE(sroce_psn_after(sroce_psn_add(a, n), a));
		}
	}
}

TEST(Psn, InRange)
{
	EXPECT_TRUE(sroce_psn_in_range(0xfffffe, 0xfffffe, 4));
	EXPECT_TRUE(sroce_psn_in_range(1, 0xfffffe, 4));
	EXPECT_FALSE(sroce_psn_in_range(2, 0xfffffe, 4));
	EXPECT_FALSE(sroce_psn_in_range(0xfffffd, 0xfffffe, 4));
	EXPECT_FALSE(sroce_psn_in_range(0, 0, 0));
}

/* ---- ICRC -------------------------------------------------------------------------- */

/* An independent table-driven CRC-32 (reflected 0xedb88320) to check the header's. */
__u32 table_crc32_le(__u32 crc, const std::uint8_t *p, std::size_t len)
{
	static const auto table = [] {
		std::array<__u32, 256> t{};

		for (__u32 i = 0; i < 256; i++) {
			__u32 c = i;

			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320U ^ (c >> 1) : c >> 1;
			t[i] = c;
		}
		return t;
	}();

	while (len--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

TEST(Icrc, Crc32Primitive)
{
	const char *check = "123456789";

	EXPECT_EQ(~sroce_crc32_le(~0U, check, 9), 0xcbf43926U) << "CRC-32 check value";
	std::mt19937 rng(42);
	Bytes data(3000);
	for (auto &b : data)
		b = static_cast<std::uint8_t>(rng());
	for (std::size_t len : { 0, 1, 7, 64, 1500, 3000 })
		EXPECT_EQ(sroce_crc32_le(0x12345678, data.data(), len),
			  table_crc32_le(0x12345678, data.data(), len)) << len;
}

TEST(Icrc, SeedIsTheMaskedLrh)
{
	const std::uint8_t ones[SROCE_ICRC_PREFIX_LEN] = { 0xff, 0xff, 0xff, 0xff,
							   0xff, 0xff, 0xff, 0xff };

	EXPECT_EQ(sroce_crc32_le(~0U, ones, sizeof(ones)), SROCE_ICRC_SEED);
}

TEST(Icrc, WireByteOrder)
{
	std::uint8_t w[4];

	sroce_icrc_put(w, 0x2a00fd82);
	EXPECT_EQ(w[0], 0x82);
	EXPECT_EQ(w[3], 0x2a);
	EXPECT_EQ(sroce_icrc_get(w), 0x2a00fd82U);
}

/*
 * Known answer: a RoCEv2 CNP captured on a Mellanox ConnectX-4 Lx, published
 * as a hex dump in scapy's RoCE test suite (secdev/scapy,
 * test/contrib/roce.uts, "RoCE CNP captured on ConnectX-4 Lx").  Ethernet
 * header dropped.  Its TOS (0xc2), IP checksum and BECN are non-zero, so the
 * IPv4, UDP and BTH masks all matter; the UDP checksum is 0.
 */
const char *const kCnpIpv4 =
	"45c2003c 718c4000 40119161 0a001101 0a001201"	/* IPv4 */
	"000012b7 00280000"				/* UDP 0 -> 4791 */
	"8100ffff 40000118 00000000"			/* BTH: CNP, BECN, QP 0x118 */
	"00000000 00000000 00000000 00000000"		/* CNP reserved */
	"82fd002a";					/* ICRC */

TEST(Icrc, KnownAnswerCnpFromConnectX4)
{
	const Bytes pkt = hex(kCnpIpv4);
	const std::size_t covered = pkt.size() - SROCE_ICRC_LEN;
	__u32 icrc = 0;

	ASSERT_EQ(pkt.size(), 60u);
	ASSERT_EQ(sroce_icrc_calc(pkt.data(), covered, nullptr, 0, &icrc), 0);
	EXPECT_EQ(icrc, sroce_icrc_get(pkt.data() + covered));

	std::uint8_t wire[4];
	sroce_icrc_put(wire, icrc);
	EXPECT_EQ(0, std::memcmp(wire, pkt.data() + covered, 4));
}

/*
 * Known answers for the IPv6-shaped masking: RoCE v1 packets (GRH instead
 * of IP/UDP) captured between two ConnectX NICs (MAC OUI 7c:fe:90), from
 * the same scapy test file ("RoCE v1 RC RDMA WRITE ONLY", "RoCE v1 RC
 * ACKNOWLEDGE").  The GRH has the IPv6 layout and the ICRC masks the same
 * traffic class, flow label and hop limit fields, so these check
 * sroce_icrc_mask_ip() for IPv6 and sroce_icrc_mask_bth() against hardware.
 */
const char *const kRocev1WriteOnly =
	"60200000 00281b40 00000000 00000000 0000ffff 0f000002"	/* GRH */
	"00000000 00000000 0000ffff 0f000002"
	"0a70ffff 0000010a 80a788bc"				/* BTH */
	"000055d4 c0726000 000047b3 00000005"			/* RETH */
	"00000000 01000000"					/* payload + pad */
	"e3d856bb";
const char *const kRocev1Ack =
	"60200000 00141b40 00000000 00000000 0000ffff 0f000002"
	"00000000 00000000 0000ffff 0f000002"
	"1140ffff 00000109 00a788c0"				/* BTH */
	"00000005"						/* AETH */
	"25f0c038";

__u32 rocev1_icrc(const Bytes &pkt)
{
	Bytes m(pkt.begin(), pkt.end() - SROCE_ICRC_LEN);

	sroce_icrc_mask_ip(m.data());
	sroce_icrc_mask_bth(m.data() + SROCE_IPV6_HLEN);
	return ~sroce_crc32_le(SROCE_ICRC_SEED, m.data(), m.size());
}

TEST(Icrc, KnownAnswerRocev1GrhMasking)
{
	for (const char *h : { kRocev1WriteOnly, kRocev1Ack }) {
		const Bytes pkt = hex(h);

		EXPECT_EQ(rocev1_icrc(pkt), sroce_icrc_get(pkt.data() + pkt.size() - 4));
	}
}

/* Hand-built packets: IPv4 and IPv6, each carrying an RC RDMA WRITE ONLY. */
Bytes build_packet(bool ipv6, std::size_t payload)
{
	Bytes p;
	const std::size_t l4 = SROCE_UDP_HDR_LEN + SROCE_BTH_LEN + SROCE_RETH_LEN + payload +
			       SROCE_ICRC_LEN;

	if (!ipv6) {
		const std::size_t tot = 20 + l4;
		p = { 0x45, 0x6a, static_cast<std::uint8_t>(tot >> 8), static_cast<std::uint8_t>(tot),
		      0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0xbe, 0xef,
		      192, 168, 1, 10, 192, 168, 1, 20 };
	} else {
		p = { 0x62, 0xa1, 0x23, 0x45, static_cast<std::uint8_t>(l4 >> 8),
		      static_cast<std::uint8_t>(l4), 0x11, 0x40 };
		for (int i = 0; i < 32; i++)
			p.push_back(static_cast<std::uint8_t>(0xfe + i * 7));
	}
	const Bytes udp = { 0xc3, 0x50, 0x12, 0xb7, static_cast<std::uint8_t>(l4 >> 8),
			    static_cast<std::uint8_t>(l4), 0x5a, 0x5a };
	p.insert(p.end(), udp.begin(), udp.end());

	struct sroce_bth bth {};
	bth.opcode = SROCE_OP_RC_RDMA_WRITE_ONLY;
	bth.flags = sroce_bth_flags(false, true, 0);
	bth.pkey = sroce_cpu_to_be16(SROCE_DEFAULT_PKEY);
	sroce_bth_set_qpn(&bth, 0x000123);
	sroce_bth_set_psn(&bth, 0xfffffe, true);
	const auto *b = reinterpret_cast<const std::uint8_t *>(&bth);
	p.insert(p.end(), b, b + sizeof(bth));

	struct sroce_reth reth;
	reth.va = sroce_cpu_to_be64(0x00007f1234567000ULL);
	reth.rkey = sroce_cpu_to_be32(0xabcd1234);
	reth.dma_len = sroce_cpu_to_be32(static_cast<__u32>(payload));
	b = reinterpret_cast<const std::uint8_t *>(&reth);
	p.insert(p.end(), b, b + sizeof(reth));

	for (std::size_t i = 0; i < payload; i++)
		p.push_back(static_cast<std::uint8_t>(i * 31 + 7));
	p.insert(p.end(), SROCE_ICRC_LEN, 0);
	return p;
}

__u32 icrc_of(const Bytes &p)
{
	__u32 icrc = 0;

	EXPECT_EQ(sroce_icrc_calc(p.data(), p.size() - SROCE_ICRC_LEN, nullptr, 0, &icrc), 0);
	return icrc;
}

/*
 * The bits a router may change, written down independently of icrc.h: for
 * each byte of the packet, the mask of bits that must not affect the ICRC.
 */
std::uint8_t variant_bits(bool ipv6, std::size_t i)
{
	const std::size_t ip_len = ipv6 ? 40 : 20;

	if (!ipv6) {
		if (i == 1 || i == 8 || i == 10 || i == 11)	/* TOS, TTL, checksum */
			return 0xff;
	} else {
		if (i == 0)
			return 0x0f;				/* traffic class, high */
		if (i == 1 || i == 2 || i == 3 || i == 7)	/* TC, flow label, hop limit */
			return 0xff;
	}
	if (i == ip_len + 6 || i == ip_len + 7)		/* UDP checksum */
		return 0xff;
	if (i == ip_len + 8 + 4)				/* BTH FECN/BECN/resv6 */
		return 0xff;
	return 0;
}

void check_every_bit(bool ipv6)
{
	const Bytes pkt = build_packet(ipv6, 37);
	const __u32 ref = icrc_of(pkt);
	const std::size_t covered = pkt.size() - SROCE_ICRC_LEN;
	const std::size_t ip_len = ipv6 ? 40 : 20;

	for (std::size_t i = 0; i < covered; i++) {
		for (int bit = 0; bit < 8; bit++) {
			Bytes p = pkt;

			/*
			 * The version nibble (and IPv4's header length) decide
			 * what the header is; they are tested separately.
			 */
			if (i == 0 && (bit >= 4 || !ipv6))
				continue;
			p[i] ^= static_cast<std::uint8_t>(1 << bit);
			const bool variant = variant_bits(ipv6, i) & (1 << bit);
			EXPECT_EQ(icrc_of(p) == ref, variant)
				<< (ipv6 ? "IPv6" : "IPv4") << " byte " << i << " bit " << bit
				<< (i >= ip_len ? " (after IP)" : "");
		}
	}
}

TEST(Icrc, Ipv4MaskingBitByBit)
{
	check_every_bit(false);
}

TEST(Icrc, Ipv6MaskingBitByBit)
{
	check_every_bit(true);
}

TEST(Icrc, VariantFieldsTogether)
{
	Bytes v4 = build_packet(false, 64);
	const __u32 ref4 = icrc_of(v4);

	v4[1] = 0x03;		/* ECN CE, new DSCP */
	v4[8] -= 1;		/* one more hop */
	v4[10] = 0x00;
	v4[11] = 0x00;
	v4[20 + 6] = 0x12;	/* UDP checksum filled in */
	v4[20 + 8 + 4] = 0xc0;	/* FECN + BECN */
	EXPECT_EQ(icrc_of(v4), ref4);

	Bytes v6 = build_packet(true, 64);
	const __u32 ref6 = icrc_of(v6);

	v6[0] = 0x6f;
	v6[1] = 0x00;
	v6[2] = 0x00;
	v6[3] = 0x01;
	v6[7] = 1;
	v6[40 + 7] = 0;
	v6[40 + 8 + 4] = 0x3f;
	EXPECT_EQ(icrc_of(v6), ref6);
	EXPECT_NE(ref4, ref6);
}

TEST(Icrc, SplitBuffersGiveTheSameResult)
{
	for (bool ipv6 : { false, true }) {
		const Bytes p = build_packet(ipv6, 300);
		const std::size_t covered = p.size() - SROCE_ICRC_LEN;
		const std::size_t min = (ipv6 ? 40 : 20) + SROCE_UDP_HDR_LEN + SROCE_BTH_LEN;
		const __u32 ref = icrc_of(p);

		for (std::size_t split = min; split <= covered; split++) {
			__u32 icrc = 0;

			ASSERT_EQ(sroce_icrc_calc(p.data(), split, p.data() + split, covered - split,
						  &icrc), 0);
			ASSERT_EQ(icrc, ref) << split;
		}
		__u32 icrc = 0;
		EXPECT_EQ(sroce_icrc_calc(p.data(), min - 1, p.data() + min - 1, covered - min + 1,
					  &icrc), -EINVAL) << "BTH must be in the first buffer";
	}
}

TEST(Icrc, RejectsMalformedHeaders)
{
	Bytes p = build_packet(false, 8);
	__u32 icrc = 0;

	p[0] = 0x44;		/* IHL 4 */
	EXPECT_EQ(sroce_icrc_calc(p.data(), p.size() - 4, nullptr, 0, &icrc), -EINVAL);
	p[0] = 0x55;		/* version 5 */
	EXPECT_EQ(sroce_icrc_calc(p.data(), p.size() - 4, nullptr, 0, &icrc), -EINVAL);
	p[0] = 0x4f;		/* IHL 15: 60 bytes, then no room for UDP + BTH */
	EXPECT_EQ(sroce_icrc_calc(p.data(), 60 + 8 + 11, nullptr, 0, &icrc), -EINVAL);
	EXPECT_EQ(sroce_icrc_calc(p.data(), 0, nullptr, 0, &icrc), -EINVAL);
	p[0] = 0x45;
	EXPECT_EQ(sroce_icrc_calc(p.data(), 20 + 8 + 11, nullptr, 0, &icrc), -EINVAL);
	EXPECT_EQ(sroce_icrc_calc(p.data(), 20 + 8 + 12, nullptr, 0, &icrc), 0);
}

TEST(Icrc, Ipv4OptionsAreCoveredVerbatim)
{
	Bytes p = build_packet(false, 16);
	const Bytes opt = { 0x01, 0x01, 0x01, 0x00 };	/* NOP NOP NOP EOL */

	p.insert(p.begin() + 20, opt.begin(), opt.end());
	p[0] = 0x46;
	const __u32 ref = icrc_of(p);

	p[22] ^= 0x01;
	EXPECT_NE(icrc_of(p), ref) << "options are invariant";
	p[22] ^= 0x01;
	p[24 + 6] ^= 0xff;	/* UDP checksum, now at 24 + 6 */
	EXPECT_EQ(icrc_of(p), ref);
}

} // namespace
