// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// WQE encoding, byte for byte against the uapi layout (offsets written out
// as numbers on purpose: they are the ABI the kernel reads).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>

#include "wqe.h"

namespace {

using sroce::SendLimits;

template <typename T>
T at(const uint8_t *p, size_t off)
{
	T v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

struct Slot {
	alignas(64) uint8_t b[256];
	Slot() { memset(b, 0xAB, sizeof(b)); }
	bool untouched() const
	{
		for (uint8_t c : b)
			if (c != 0xAB)
				return false;
		return true;
	}
};

const SendLimits rc_lim = { IBV_QPT_RC, 4, 128, false };
const SendLimits uc_lim = { IBV_QPT_UC, 4, 128, false };
const SendLimits ud_lim = { IBV_QPT_UD, 4, 128, false };

TEST(Wqe, SendWithTwoSges)
{
	ibv_sge sg[2] = { { 0x1000, 100, 0x11 }, { 0x2000, 200, 0x22 } };
	ibv_send_wr wr{};
	wr.wr_id = 0xdeadbeefcafef00dull;
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	Slot s;

	ASSERT_EQ(sroce::encode_send_wqe(wr, rc_lim, 256, s.b), 0);
	EXPECT_EQ(at<uint64_t>(s.b, 0), 0xdeadbeefcafef00dull);
	EXPECT_EQ(s.b[8], IBV_WR_SEND);
	EXPECT_EQ(s.b[9], 2);
	EXPECT_EQ(at<uint16_t>(s.b, 10), SROCE_SEND_SIGNALED | SROCE_SEND_SOLICITED);
	EXPECT_EQ(at<uint32_t>(s.b, 12), 0u); // inline_len
	for (size_t i = 16; i < 64; i++)
		EXPECT_EQ(s.b[i], 0) << "fixed part byte " << i;
	EXPECT_EQ(at<uint64_t>(s.b, 64), 0x1000u);
	EXPECT_EQ(at<uint32_t>(s.b, 72), 100u);
	EXPECT_EQ(at<uint32_t>(s.b, 76), 0x11u);
	EXPECT_EQ(at<uint64_t>(s.b, 80), 0x2000u);
	EXPECT_EQ(at<uint32_t>(s.b, 88), 200u);
	EXPECT_EQ(at<uint32_t>(s.b, 92), 0x22u);
	EXPECT_EQ(s.b[96], 0xAB); // nothing past the SGEs
}

TEST(Wqe, RdmaWriteWithImm)
{
	ibv_sge sg = { 0xabc000, 4096, 7 };
	ibv_send_wr wr{};
	wr.wr_id = 5;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.imm_data = htonl(0x01020304);
	wr.wr.rdma.remote_addr = 0x7f0011223344ull;
	wr.wr.rdma.rkey = 0x55667788;
	Slot s;

	ASSERT_EQ(sroce::encode_send_wqe(wr, uc_lim, 128, s.b), 0);
	EXPECT_EQ(s.b[8], IBV_WR_RDMA_WRITE_WITH_IMM);
	EXPECT_EQ(at<uint16_t>(s.b, 10), 0);
	// imm_data stays in network byte order: bytes 01 02 03 04.
	EXPECT_EQ(s.b[16], 1);
	EXPECT_EQ(s.b[17], 2);
	EXPECT_EQ(s.b[18], 3);
	EXPECT_EQ(s.b[19], 4);
	EXPECT_EQ(at<uint64_t>(s.b, 24), 0x7f0011223344ull);
	EXPECT_EQ(at<uint32_t>(s.b, 32), 0x55667788u);
	EXPECT_EQ(at<uint64_t>(s.b, 64), 0xabc000u);
}

TEST(Wqe, AtomicsCarryOperandsAndRkey)
{
	ibv_sge sg = { 0x5000, 8, 9 };
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = 0x1111222233334440ull;
	wr.wr.atomic.compare_add = 0xaaaaaaaa55555555ull;
	wr.wr.atomic.swap = 0x0123456789abcdefull;
	wr.wr.atomic.rkey = 0x99;
	Slot s;

	ASSERT_EQ(sroce::encode_send_wqe(wr, rc_lim, 128, s.b), 0);
	EXPECT_EQ(s.b[8], IBV_WR_ATOMIC_CMP_AND_SWP);
	EXPECT_EQ(at<uint64_t>(s.b, 24), 0x1111222233334440ull);
	EXPECT_EQ(at<uint64_t>(s.b, 32), 0xaaaaaaaa55555555ull);
	EXPECT_EQ(at<uint64_t>(s.b, 40), 0x0123456789abcdefull);
	EXPECT_EQ(at<uint32_t>(s.b, 48), 0x99u);

	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	ASSERT_EQ(sroce::encode_send_wqe(wr, rc_lim, 128, s.b), 0);
	EXPECT_EQ(s.b[8], IBV_WR_ATOMIC_FETCH_AND_ADD);
	EXPECT_EQ(at<uint64_t>(s.b, 32), 0xaaaaaaaa55555555ull);
	// Atomics are RC only.
	Slot s2;
	EXPECT_EQ(sroce::encode_send_wqe(wr, uc_lim, 128, s2.b), EINVAL);
	EXPECT_TRUE(s2.untouched());
}

TEST(Wqe, AtomicWriteCarriesItsEightBytesInTheSlot)
{
	const uint8_t value[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	ibv_sge sg = { reinterpret_cast<uintptr_t>(value), 8, 0x77 };
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_ATOMIC_WRITE;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = 0x1111222233334440ull;
	wr.wr.rdma.rkey = 0x99;
	Slot s;

	ASSERT_EQ(sroce::encode_send_wqe(wr, rc_lim, 128, s.b), 0);
	EXPECT_EQ(s.b[8], IBV_WR_ATOMIC_WRITE);
	EXPECT_EQ(s.b[9], 0) << "no SGE: the bytes are in the fixed part";
	EXPECT_EQ(at<uint64_t>(s.b, 24), 0x1111222233334440ull);
	EXPECT_EQ(at<uint32_t>(s.b, 32), 0x99u);
	EXPECT_EQ(memcmp(s.b + 40, value, 8), 0);
	EXPECT_EQ(sroce::encode_send_wqe(wr, { IBV_QPT_XRC_SEND, 4, 128, false },
					 128, s.b), 0);

	// Exactly one SGE of 8 bytes, RC and XRC only; nothing written else.
	Slot s2;
	sg.length = 4;
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 128, s2.b), EINVAL);
	sg.length = 8;
	wr.num_sge = 0;
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 128, s2.b), EINVAL);
	wr.num_sge = 1;
	EXPECT_EQ(sroce::encode_send_wqe(wr, uc_lim, 128, s2.b), EINVAL);
	EXPECT_TRUE(s2.untouched());
}

TEST(Wqe, UdSendCarriesAhNumQpnQkey)
{
	sroce::Ah ah{};
	ah.ah_num = 0x4242;
	ibv_sge sg = { 0x1000, 64, 1 };
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND_WITH_IMM;
	wr.imm_data = htonl(0xa0b0c0d0);
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.wr.ud.ah = &ah.ibah;
	wr.wr.ud.remote_qpn = 0xabcdef;
	wr.wr.ud.remote_qkey = 0x11111111;
	Slot s;

	ASSERT_EQ(sroce::encode_send_wqe(wr, ud_lim, 128, s.b), 0);
	EXPECT_EQ(at<uint32_t>(s.b, 16), htonl(0xa0b0c0d0));
	EXPECT_EQ(at<uint32_t>(s.b, 24), 0x4242u);
	EXPECT_EQ(at<uint32_t>(s.b, 28), 0xabcdefu);
	EXPECT_EQ(at<uint32_t>(s.b, 32), 0x11111111u);

	// UD needs an address handle, and carries sends only.
	Slot s2;
	wr.wr.ud.ah = nullptr;
	EXPECT_EQ(sroce::encode_send_wqe(wr, ud_lim, 128, s2.b), EINVAL);
	wr.wr.ud.ah = &ah.ibah;
	wr.opcode = IBV_WR_RDMA_WRITE;
	EXPECT_EQ(sroce::encode_send_wqe(wr, ud_lim, 128, s2.b), EINVAL);
	EXPECT_TRUE(s2.untouched());
}

TEST(Wqe, XrcSendCarriesRemoteSrqn)
{
	const SendLimits xrc_lim = { IBV_QPT_XRC_SEND, 4, 128, false };
	ibv_sge sg = { 0x1000, 64, 1 };
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_RDMA_READ;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.wr.rdma.remote_addr = 0x123456789ull;
	wr.wr.rdma.rkey = 0x77;
	wr.qp_type.xrc.remote_srqn = 0x00abcdef;
	Slot s;

	ASSERT_EQ(sroce::encode_send_wqe(wr, xrc_lim, 128, s.b), 0);
	EXPECT_EQ(at<uint32_t>(s.b, 20), 0xabcdefu); // xrc_srqn
	EXPECT_EQ(at<uint64_t>(s.b, 24), 0x123456789ull);
	EXPECT_EQ(at<uint32_t>(s.b, 32), 0x77u);

	// Other transports leave the field zero.
	Slot s2;
	ASSERT_EQ(sroce::encode_send_wqe(wr, rc_lim, 128, s2.b), 0);
	EXPECT_EQ(at<uint32_t>(s2.b, 20), 0u);
}

TEST(Wqe, InlineDataIsCopiedAfterTheFixedPart)
{
	char a[] = "hello, ";
	char b[] = "sroce!";
	ibv_sge sg[2] = {
		{ reinterpret_cast<uintptr_t>(a), 7, 0 },
		{ reinterpret_cast<uintptr_t>(b), 6, 0 },
	};
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	Slot s;

	ASSERT_EQ(sroce::encode_send_wqe(wr, rc_lim, 128, s.b), 0);
	EXPECT_EQ(s.b[9], 0); // num_sge
	EXPECT_EQ(at<uint16_t>(s.b, 10), SROCE_SEND_INLINE | SROCE_SEND_SIGNALED);
	EXPECT_EQ(at<uint32_t>(s.b, 12), 13u);
	EXPECT_EQ(memcmp(s.b + 64, "hello, sroce!", 13), 0);
	EXPECT_EQ(s.b[64 + 13], 0xAB);
}

TEST(Wqe, LimitsAreEnforcedWithoutWriting)
{
	static char buf[512];
	ibv_sge sg[5];
	for (auto &e : sg)
		e = { reinterpret_cast<uintptr_t>(buf), 100, 3 };
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.sg_list = sg;
	Slot s;

	wr.num_sge = 5; // > max_sge 4
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 256, s.b), EINVAL);
	wr.num_sge = 4; // fits the caps but not a 128-byte slot (64 + 4*16 = 128 fits)
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 128, s.b), 0);
	Slot s2;
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 64, s2.b), EINVAL);
	wr.num_sge = 2;
	wr.send_flags = IBV_SEND_INLINE; // 200 bytes > max_inline 128
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 512, s2.b), EINVAL);
	sg[0].length = 60;
	sg[1].length = 60; // 120 <= 128 but a 128-byte slot holds only 64
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 128, s2.b), EINVAL);
	wr.opcode = IBV_WR_RDMA_READ; // reads cannot be inline
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 256, s2.b), EINVAL);
	wr.send_flags = 0;
	wr.opcode = static_cast<ibv_wr_opcode>(IBV_WR_BIND_MW);
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 256, s2.b), EINVAL);
	wr.opcode = static_cast<ibv_wr_opcode>(200);
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 256, s2.b), EINVAL);
	wr.opcode = IBV_WR_SEND;
	wr.num_sge = -1;
	EXPECT_EQ(sroce::encode_send_wqe(wr, rc_lim, 256, s2.b), EINVAL);
	EXPECT_TRUE(s2.untouched());
}

TEST(Wqe, SigAllAndFlagMasking)
{
	SendLimits lim = rc_lim;
	lim.sig_all = true;
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_FENCE | IBV_SEND_IP_CSUM;
	Slot s;

	ASSERT_EQ(sroce::encode_send_wqe(wr, lim, 128, s.b), 0);
	EXPECT_EQ(at<uint16_t>(s.b, 10), SROCE_SEND_FENCE | SROCE_SEND_SIGNALED);
	EXPECT_EQ(s.b[9], 0);
}

TEST(Wqe, InvalidateCarriesRkey)
{
	ibv_send_wr wr{};
	wr.opcode = IBV_WR_LOCAL_INV;
	wr.invalidate_rkey = 0xfeed;
	wr.num_sge = 3; // ignored: LOCAL_INV moves no data
	Slot s;

	ASSERT_EQ(sroce::encode_send_wqe(wr, rc_lim, 64, s.b), 0);
	EXPECT_EQ(s.b[8], IBV_WR_LOCAL_INV);
	EXPECT_EQ(s.b[9], 0);
	EXPECT_EQ(at<uint32_t>(s.b, 16), 0xfeedu);
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.num_sge = 0;
	ASSERT_EQ(sroce::encode_send_wqe(wr, rc_lim, 64, s.b), 0);
	EXPECT_EQ(at<uint32_t>(s.b, 16), 0xfeedu);
	// UC and UD have no SEND with Invalidate on the wire.
	Slot s2;
	EXPECT_EQ(sroce::encode_send_wqe(wr, uc_lim, 64, s2.b), EINVAL);
	EXPECT_EQ(sroce::encode_send_wqe(wr, ud_lim, 64, s2.b), EINVAL);
	EXPECT_TRUE(s2.untouched());
}

TEST(Wqe, RecvWqe)
{
	ibv_sge sg[3] = { { 1, 2, 3 }, { 4, 5, 6 }, { 7, 8, 9 } };
	ibv_recv_wr wr{};
	wr.wr_id = 77;
	wr.sg_list = sg;
	wr.num_sge = 3;
	Slot s;

	ASSERT_EQ(sroce::encode_recv_wqe(wr, 3, s.b), 0);
	EXPECT_EQ(at<uint64_t>(s.b, 0), 77u);
	EXPECT_EQ(at<uint32_t>(s.b, 8), 3u);
	EXPECT_EQ(at<uint32_t>(s.b, 12), 0u);
	EXPECT_EQ(at<uint64_t>(s.b, 16), 1u);
	EXPECT_EQ(at<uint32_t>(s.b, 24), 2u);
	EXPECT_EQ(at<uint32_t>(s.b, 28), 3u);
	EXPECT_EQ(at<uint64_t>(s.b, 48), 7u);
	EXPECT_EQ(at<uint32_t>(s.b, 60), 9u);
	EXPECT_EQ(s.b[64], 0xAB);
	Slot s2;
	EXPECT_EQ(sroce::encode_recv_wqe(wr, 2, s2.b), EINVAL);
	EXPECT_TRUE(s2.untouched());
}

TEST(Wqe, SlotCapacity)
{
	EXPECT_EQ(sroce::send_slot_max_sge(64), 0u);
	EXPECT_EQ(sroce::send_slot_max_sge(128), 4u);
	EXPECT_EQ(sroce::send_slot_max_sge(512), 28u);
	EXPECT_EQ(sroce::send_slot_max_inline(512), 448u);
	EXPECT_EQ(sroce::recv_slot_max_sge(64), 3u);
	EXPECT_EQ(sroce::recv_slot_max_sge(256), 15u);
	EXPECT_EQ(sroce::supported_send_ops(IBV_QPT_UD),
		  uint64_t(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM));
	EXPECT_TRUE(sroce::supported_send_ops(IBV_QPT_RC) & IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
	EXPECT_TRUE(sroce::supported_send_ops(IBV_QPT_RC) & IBV_QP_EX_WITH_ATOMIC_WRITE);
	EXPECT_FALSE(sroce::supported_send_ops(IBV_QPT_UC) & IBV_QP_EX_WITH_ATOMIC_WRITE);
	EXPECT_FALSE(sroce::supported_send_ops(IBV_QPT_UC) & IBV_QP_EX_WITH_RDMA_READ);
	// UC has no opcode with an IETH: SEND with invalidate is RC's.
	EXPECT_FALSE(sroce::supported_send_ops(IBV_QPT_UC) & IBV_QP_EX_WITH_SEND_WITH_INV);
	EXPECT_TRUE(sroce::supported_send_ops(IBV_QPT_RC) & IBV_QP_EX_WITH_SEND_WITH_INV);
	EXPECT_FALSE(sroce::send_opcode_allowed(IBV_QPT_UC, IBV_WR_SEND_WITH_INV));
	EXPECT_TRUE(sroce::send_opcode_allowed(IBV_QPT_RC, IBV_WR_SEND_WITH_INV));
	EXPECT_TRUE(sroce::send_opcode_allowed(IBV_QPT_XRC_SEND, IBV_WR_SEND_WITH_INV));
	EXPECT_EQ(sroce::supported_send_ops(IBV_QPT_XRC_SEND),
		  sroce::supported_send_ops(IBV_QPT_RC));
	EXPECT_EQ(sroce::supported_send_ops(IBV_QPT_XRC_RECV), 0u);
}

} // namespace
