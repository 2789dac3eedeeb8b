// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's copy of the opcode table written in opcode.h: one entry per
 * opcode, indexed by the opcode itself, so that validating an opcode and
 * finding its headers is one array access.  Unlisted opcodes stay zeroed,
 * i.e. invalid.
 */
#include <linux/build_bug.h>
#include <rdma/ib_pack.h>

#include "opcode.h"

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
