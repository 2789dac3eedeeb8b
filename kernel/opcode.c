// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's copy of the opcode table written in opcode.h: one entry per
 * opcode, indexed by the opcode itself, so that validating an opcode and
 * finding its headers is one array access.  Unlisted opcodes stay zeroed,
 * i.e. invalid.
 */
#include <linux/build_bug.h>
#include <rdma/ib_pack.h>

#include "compat.h"
#include "opcode.h"

/*
 * <rdma/ib_pack.h> has no XRC names: IBA vol 1 table 38 puts XRC at 0xa0
 * with the operation codes shared by every transport.
 */
#define SROCE_IB_XRC(op)	(0xa0 + IB_OPCODE_##op)
#define IB_OPCODE_XRC_SEND_FIRST			SROCE_IB_XRC(SEND_FIRST)
#define IB_OPCODE_XRC_SEND_MIDDLE			SROCE_IB_XRC(SEND_MIDDLE)
#define IB_OPCODE_XRC_SEND_LAST				SROCE_IB_XRC(SEND_LAST)
#define IB_OPCODE_XRC_SEND_LAST_WITH_IMMEDIATE		SROCE_IB_XRC(SEND_LAST_WITH_IMMEDIATE)
#define IB_OPCODE_XRC_SEND_ONLY				SROCE_IB_XRC(SEND_ONLY)
#define IB_OPCODE_XRC_SEND_ONLY_WITH_IMMEDIATE		SROCE_IB_XRC(SEND_ONLY_WITH_IMMEDIATE)
#define IB_OPCODE_XRC_RDMA_WRITE_FIRST			SROCE_IB_XRC(RDMA_WRITE_FIRST)
#define IB_OPCODE_XRC_RDMA_WRITE_MIDDLE			SROCE_IB_XRC(RDMA_WRITE_MIDDLE)
#define IB_OPCODE_XRC_RDMA_WRITE_LAST			SROCE_IB_XRC(RDMA_WRITE_LAST)
#define IB_OPCODE_XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE	SROCE_IB_XRC(RDMA_WRITE_LAST_WITH_IMMEDIATE)
#define IB_OPCODE_XRC_RDMA_WRITE_ONLY			SROCE_IB_XRC(RDMA_WRITE_ONLY)
#define IB_OPCODE_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	SROCE_IB_XRC(RDMA_WRITE_ONLY_WITH_IMMEDIATE)
#define IB_OPCODE_XRC_RDMA_READ_REQUEST			SROCE_IB_XRC(RDMA_READ_REQUEST)
#define IB_OPCODE_XRC_RDMA_READ_RESPONSE_FIRST		SROCE_IB_XRC(RDMA_READ_RESPONSE_FIRST)
#define IB_OPCODE_XRC_RDMA_READ_RESPONSE_MIDDLE		SROCE_IB_XRC(RDMA_READ_RESPONSE_MIDDLE)
#define IB_OPCODE_XRC_RDMA_READ_RESPONSE_LAST		SROCE_IB_XRC(RDMA_READ_RESPONSE_LAST)
#define IB_OPCODE_XRC_RDMA_READ_RESPONSE_ONLY		SROCE_IB_XRC(RDMA_READ_RESPONSE_ONLY)
#define IB_OPCODE_XRC_ACKNOWLEDGE			SROCE_IB_XRC(ACKNOWLEDGE)
#define IB_OPCODE_XRC_ATOMIC_ACKNOWLEDGE		SROCE_IB_XRC(ATOMIC_ACKNOWLEDGE)
#define IB_OPCODE_XRC_COMPARE_SWAP			SROCE_IB_XRC(COMPARE_SWAP)
#define IB_OPCODE_XRC_FETCH_ADD				SROCE_IB_XRC(FETCH_ADD)
#define IB_OPCODE_XRC_SEND_LAST_WITH_INVALIDATE		SROCE_IB_XRC(SEND_LAST_WITH_INVALIDATE)
#define IB_OPCODE_XRC_SEND_ONLY_WITH_INVALIDATE		SROCE_IB_XRC(SEND_ONLY_WITH_INVALIDATE)
#define IB_OPCODE_XRC_ATOMIC_WRITE			SROCE_IB_XRC(ATOMIC_WRITE)

/*
 * Each row also checks the opcode value against the core's <rdma/ib_pack.h>.
 * The core has no name for the CNP opcode itself (IB_OPCODE_CNP is the 0x80
 * transport prefix of the 0x81 packet).
 */
#define SROCE_IB_OPCODE_MISMATCH(name)					\
	BUILD_BUG_ON_ZERO(SROCE_OP_##name !=				\
			  IB_OPCODE_##name + (SROCE_OP_##name == SROCE_OP_CNP))

#define SROCE_OPCODE_ROW(name, qpt, hdrs, flags, kind, next)		\
	[SROCE_OP_##name + SROCE_IB_OPCODE_MISMATCH(name)] =		\
		SROCE_OPCODE_INFO(#name, qpt, hdrs, flags, kind, next),

const struct sroce_opcode_info sroce_opcodes[SROCE_NUM_OPCODES] = SROCE_OPCODES;
