// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// The PABI-34 declarations in abi34.h against the real libibverbs: every
// private symbol we call must exist with version IBVERBS_PRIVATE_34 in the
// installed libibverbs.so.1 (a missing one would make libibverbs' RTLD_NOW
// dlopen of the provider fail with "couldn't load driver").
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <string>

#include "abi34.h"
#include "sroce-abi.h"
#include "sroce.h"

namespace {

struct Sym {
	const char *name;
	void *ours; // address as linked into this test binary
};

#define SROCE_SYM(n) { #n, reinterpret_cast<void *>(&n) },
const Sym private34[] = { SROCE_PRIVATE34_SYMBOLS(SROCE_SYM) };
#undef SROCE_SYM

TEST(Abi34, EveryDeclaredPrivateSymbolResolvesWithPrivate34Version)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h)
		h = dlopen("libibverbs.so.1", RTLD_NOW);
	ASSERT_NE(h, nullptr) << dlerror();
	EXPECT_GE(std::size(private34), 29u);
	for (const Sym &s : private34) {
		void *v = dlvsym(h, s.name, "IBVERBS_PRIVATE_34");
		EXPECT_NE(v, nullptr) << s.name << ": " << dlerror();
		// The test binary's own link resolved to the same function.
		EXPECT_EQ(v, s.ours) << s.name;
	}
	// And the mechanism can fail: a symbol of another PABI is absent.
	EXPECT_EQ(dlvsym(h, "verbs_register_driver_33", "IBVERBS_PRIVATE_33"),
		  nullptr);
	EXPECT_EQ(dlvsym(h, "ibv_cmd_get_context", "IBVERBS_PRIVATE_33"),
		  nullptr);
	dlclose(h);
}

TEST(Abi34, ContextOpsIs76PointersInSortedOrder)
{
	EXPECT_EQ(sizeof(verbs_context_ops), 76 * sizeof(void *));
	EXPECT_EQ(offsetof(verbs_context_ops, advise_mr), 0u);
	EXPECT_EQ(offsetof(verbs_context_ops, create_ah), 13u * 8);
	EXPECT_EQ(offsetof(verbs_context_ops, destroy_cq), 31u * 8);
	EXPECT_EQ(offsetof(verbs_context_ops, destroy_qp), 34u * 8);
	EXPECT_EQ(offsetof(verbs_context_ops, post_recv), 54u * 8);
	EXPECT_EQ(offsetof(verbs_context_ops, post_srq_recv), 57u * 8);
	EXPECT_EQ(offsetof(verbs_context_ops, query_qp), 61u * 8);
	EXPECT_EQ(offsetof(verbs_context_ops, req_notify_cq), 69u * 8);
	EXPECT_EQ(offsetof(verbs_context_ops, unimport_dm), 73u * 8);
}

TEST(Abi34, CqeSlotIsTheUverbsWcWhichIsIbvWc)
{
	// poll_cq copies ring slots straight into ibv_wc arrays.
	EXPECT_EQ(sizeof(ib_uverbs_wc), sizeof(ibv_wc));
	EXPECT_EQ(offsetof(ib_uverbs_wc, wr_id), offsetof(ibv_wc, wr_id));
	EXPECT_EQ(offsetof(ib_uverbs_wc, status), offsetof(ibv_wc, status));
	EXPECT_EQ(offsetof(ib_uverbs_wc, opcode), offsetof(ibv_wc, opcode));
	EXPECT_EQ(offsetof(ib_uverbs_wc, vendor_err), offsetof(ibv_wc, vendor_err));
	EXPECT_EQ(offsetof(ib_uverbs_wc, byte_len), offsetof(ibv_wc, byte_len));
	EXPECT_EQ(offsetof(ib_uverbs_wc, ex), offsetof(ibv_wc, imm_data));
	EXPECT_EQ(offsetof(ib_uverbs_wc, qp_num), offsetof(ibv_wc, qp_num));
	EXPECT_EQ(offsetof(ib_uverbs_wc, src_qp), offsetof(ibv_wc, src_qp));
	EXPECT_EQ(offsetof(ib_uverbs_wc, wc_flags), offsetof(ibv_wc, wc_flags));
	EXPECT_EQ(offsetof(ib_uverbs_wc, pkey_index), offsetof(ibv_wc, pkey_index));
	EXPECT_EQ(offsetof(ib_uverbs_wc, slid), offsetof(ibv_wc, slid));
	EXPECT_EQ(offsetof(ib_uverbs_wc, sl), offsetof(ibv_wc, sl));
	EXPECT_EQ(offsetof(ib_uverbs_wc, dlid_path_bits),
		  offsetof(ibv_wc, dlid_path_bits));
	EXPECT_LE(sizeof(ib_uverbs_wc), static_cast<size_t>(SROCE_CQE_SIZE));
	// CQE wc_flags are libibverbs' values, copied out unchanged.
	EXPECT_EQ(SROCE_WC_GRH, IBV_WC_GRH);
	EXPECT_EQ(SROCE_WC_WITH_IMM, IBV_WC_WITH_IMM);
	EXPECT_EQ(SROCE_WC_WITH_INV, IBV_WC_WITH_INV);
	// And CQE opcodes (ib_uverbs_wc_opcode) are IBV_WC_* values.
	EXPECT_EQ(IB_UVERBS_WC_SEND, IBV_WC_SEND);
	EXPECT_EQ(IB_UVERBS_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
	EXPECT_EQ(IB_UVERBS_WC_RDMA_READ, IBV_WC_RDMA_READ);
	EXPECT_EQ(IB_UVERBS_WC_COMP_SWAP, IBV_WC_COMP_SWAP);
	EXPECT_EQ(IB_UVERBS_WC_FETCH_ADD, IBV_WC_FETCH_ADD);
	EXPECT_EQ(IB_UVERBS_WC_BIND_MW, IBV_WC_BIND_MW);
	EXPECT_EQ(IB_UVERBS_WC_LOCAL_INV, IBV_WC_LOCAL_INV);
	EXPECT_EQ(128, IBV_WC_RECV);
	EXPECT_EQ(129, IBV_WC_RECV_RDMA_WITH_IMM);
	// Send WQE opcodes are IBV_WR_* = IB_UVERBS_WR_* values.
	EXPECT_EQ(IB_UVERBS_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE);
	EXPECT_EQ(IB_UVERBS_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM);
	EXPECT_EQ(IB_UVERBS_WR_SEND, IBV_WR_SEND);
	EXPECT_EQ(IB_UVERBS_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM);
	EXPECT_EQ(IB_UVERBS_WR_RDMA_READ, IBV_WR_RDMA_READ);
	EXPECT_EQ(IB_UVERBS_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP);
	EXPECT_EQ(IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD);
	EXPECT_EQ(IB_UVERBS_WR_LOCAL_INV, IBV_WR_LOCAL_INV);
	EXPECT_EQ(IB_UVERBS_WR_SEND_WITH_INV, IBV_WR_SEND_WITH_INV);
	// IBTA 1.5 ATOMIC WRITE: named in the uapi header for kernels < 6.2.
	EXPECT_EQ(SROCE_WR_ATOMIC_WRITE, IBV_WR_ATOMIC_WRITE);
	EXPECT_EQ(SROCE_WC_ATOMIC_WRITE, IBV_WC_ATOMIC_WRITE);
}

TEST(Abi34, SroceUapiLayout)
{
	EXPECT_EQ(sizeof(sroce_ring_hdr), static_cast<size_t>(SROCE_RING_HDR_SIZE));
	EXPECT_EQ(offsetof(sroce_ring_hdr, consumer), 64u);
	EXPECT_EQ(offsetof(sroce_ring_hdr, flags), 128u);
	EXPECT_EQ(sizeof(sroce_ring_info), 24u);
	EXPECT_EQ(sizeof(sroce_sge), 16u);
	EXPECT_EQ(sizeof(sroce_send_wqe), 64u);
	EXPECT_EQ(offsetof(sroce_send_wqe, ex), 16u);
	EXPECT_EQ(offsetof(sroce_send_wqe, wr), 24u);
	EXPECT_EQ(sizeof(sroce_recv_wqe), 16u);
	// The driver response parts are appended right after the core
	// responses, whose sizes keep them 8-byte aligned where needed.
	EXPECT_EQ(sizeof(sroce_create_qp_resp), 48u);
	EXPECT_EQ(sizeof(sroce_create_srq_resp), 32u);
	EXPECT_EQ(sizeof(sroce_create_ah_resp), 8u);
	EXPECT_EQ(sizeof(sroce_alloc_ucontext_resp), 16u);
	// IB send flag bits are the IBV ones, so WQE flags need no mapping.
	EXPECT_EQ(SROCE_SEND_FENCE, IBV_SEND_FENCE);
	EXPECT_EQ(SROCE_SEND_SIGNALED, IBV_SEND_SIGNALED);
	EXPECT_EQ(SROCE_SEND_SOLICITED, IBV_SEND_SOLICITED);
	EXPECT_EQ(SROCE_SEND_INLINE, IBV_SEND_INLINE);
}

// create_qp's driver data (the SQ poller request) follows the core command
// directly: libibverbs sends the bytes past sizeof(core) as the kernel's
// udata, which reads sq_poll_us from its first 4.
TEST(CreateQpCmd, SqPollRequestFollowsTheCoreCommand)
{
	sroce::DrvCmd<sroce_cmd_ex_create_qp, sroce_create_qp_cmd> cmd;
	sroce_create_qp_cmd req = { 0x01020304u, 0 };
	uint32_t first;

	EXPECT_EQ(sizeof(sroce_create_qp_cmd), 8u);
	EXPECT_EQ(sizeof(cmd), sizeof(sroce_cmd_ex_create_qp) + 8u);
	memset(&cmd, 0, sizeof(cmd));
	cmd.set_drv(req);
	memcpy(&first, cmd.bytes + sizeof(sroce_cmd_ex_create_qp), 4);
	EXPECT_EQ(first, 0x01020304u);
	EXPECT_EQ(static_cast<void *>(cmd.cmd()), static_cast<void *>(cmd.bytes));
}

TEST(CreateQpCmd, SqPollEnvironmentValue)
{
	uint32_t us = 7;

	EXPECT_TRUE(sroce::parse_sq_poll_us(nullptr, &us));
	EXPECT_EQ(us, 0u);
	EXPECT_TRUE(sroce::parse_sq_poll_us("", &us));
	EXPECT_EQ(us, 0u);
	EXPECT_TRUE(sroce::parse_sq_poll_us("200", &us));
	EXPECT_EQ(us, 200u);
	EXPECT_TRUE(sroce::parse_sq_poll_us("4294967295", &us));
	EXPECT_EQ(us, 4294967295u);
	for (const char *bad : { "4294967296", "99999999999999999999", "-1",
				 " 200", "200us", "0x10", "abc" }) {
		us = 7;
		EXPECT_FALSE(sroce::parse_sq_poll_us(bad, &us)) << bad;
		EXPECT_EQ(us, 0u) << bad;
	}
}

} // namespace
