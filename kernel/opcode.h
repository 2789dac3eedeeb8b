/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The RoCEv2 opcode table: for every opcode sroce speaks, which extension
 * headers follow the BTH (and so where each one is), whether a payload may
 * follow, where the packet sits in a message, and what the receiver does
 * with it.  The packet pipeline makes every per-opcode decision by looking
 * here, so an opcode without an entry is simply invalid.
 *
 * SROCE_OPCODES below is the only place the table is written.  It is an
 * "X macro" so that the same rows build the kernel's array (opcode.c, with
 * designated initializers indexed by opcode) and, in userspace C++, a
 * constexpr copy for the host tests and the packet generator; C++ has no
 * array designators, which rules out sharing opcode.c itself.
 *
 * The opcode values are the enum sroce_opcode below (opcode.c checks each
 * against the core's IB_OPCODE_<name>); everything else about an opcode is
 * its row in SROCE_OPCODES:
 *
 * SROCE_OPCODE_ROW(name, qpt, hdrs, flags, kind, next)
 *   name    SROCE_OP_<name> is the opcode
 *   qpt     SROCE_QPT_* of the QPs that may send and receive it
 *   hdrs    SROCE_HDRM_* of the headers between BTH and payload
 *   flags   SROCE_OPF_*: position in the message, class, receive-queue use
 *   kind    enum sroce_op_kind
 *   next    for FIRST and MIDDLE packets, the opcodes allowed to follow in
 *           the same message, as SROCE_OPBIT()s of the low five bits (the
 *           transport, the top three bits, must stay the same); 0 for
 *           packets that end a message
 *
 * XRC (0xa0-0xb7) is RC with an XRCETH after the BTH of every request:
 * requests go to XRC target QPs, responses to XRC initiator QPs.
 *
 * Not (yet) supported, and therefore invalid: RD (0x40-0x5f) and IBTA 1.5
 * FLUSH (0x1c, 0xbc).  IBTA 1.5 ATOMIC WRITE (0x1d, 0xbd) is an RDMA WRITE
 * ONLY of one aligned 64-bit word that lands in a single store.
 */
#ifndef SROCE_OPCODE_H
#define SROCE_OPCODE_H

#include "wire.h"

#define SROCE_NUM_OPCODES	256

/*
 * Extension headers in the order they appear after the BTH (IBTA vol 1
 * 9.2: DETH or XRCETH first; RETH before ImmDt; AETH before AtomicAckETH).
 * Offsets are derived from this order, never written per opcode.
 */
enum sroce_hdr {
	SROCE_HDR_DETH,
	SROCE_HDR_XRCETH,
	SROCE_HDR_RETH,
	SROCE_HDR_ATMETH,
	SROCE_HDR_AETH,
	SROCE_HDR_ATMACK,
	SROCE_HDR_IMMDT,
	SROCE_HDR_IETH,
	SROCE_HDR_CNP,		/* the 16 reserved bytes of a CNP */
	SROCE_HDR_COUNT
};

#define SROCE_HDRM(h)		(1U << (h))
#define SROCE_HDRM_DETH		SROCE_HDRM(SROCE_HDR_DETH)
#define SROCE_HDRM_XRCETH	SROCE_HDRM(SROCE_HDR_XRCETH)
#define SROCE_HDRM_RETH		SROCE_HDRM(SROCE_HDR_RETH)
#define SROCE_HDRM_ATMETH	SROCE_HDRM(SROCE_HDR_ATMETH)
#define SROCE_HDRM_AETH		SROCE_HDRM(SROCE_HDR_AETH)
#define SROCE_HDRM_ATMACK	SROCE_HDRM(SROCE_HDR_ATMACK)
#define SROCE_HDRM_IMMDT	SROCE_HDRM(SROCE_HDR_IMMDT)
#define SROCE_HDRM_IETH		SROCE_HDRM(SROCE_HDR_IETH)
#define SROCE_HDRM_CNP		SROCE_HDRM(SROCE_HDR_CNP)

/* Bytes of the headers in mask m that come before header h. */
#define SROCE__HDR_PART(m, h, k, len)	((m) & (SROCE_HDRM(h) - 1) & SROCE_HDRM(k) ? (len) : 0)
#define SROCE_HDRS_LEN_BEFORE(m, h)					\
	(SROCE__HDR_PART(m, h, SROCE_HDR_DETH, SROCE_DETH_LEN) +	\
	 SROCE__HDR_PART(m, h, SROCE_HDR_XRCETH, SROCE_XRCETH_LEN) +	\
	 SROCE__HDR_PART(m, h, SROCE_HDR_RETH, SROCE_RETH_LEN) +	\
	 SROCE__HDR_PART(m, h, SROCE_HDR_ATMETH, SROCE_ATMETH_LEN) +	\
	 SROCE__HDR_PART(m, h, SROCE_HDR_AETH, SROCE_AETH_LEN) +	\
	 SROCE__HDR_PART(m, h, SROCE_HDR_ATMACK, SROCE_ATMACK_LEN) +	\
	 SROCE__HDR_PART(m, h, SROCE_HDR_IMMDT, SROCE_IMMDT_LEN) +	\
	 SROCE__HDR_PART(m, h, SROCE_HDR_IETH, SROCE_IETH_LEN) +	\
	 SROCE__HDR_PART(m, h, SROCE_HDR_CNP, SROCE_CNP_LEN))

/* Offset of header h from the start of the BTH, 0 if m lacks it. */
#define SROCE_HDR_OFFSET(m, h)						\
	((m) & SROCE_HDRM(h) ? SROCE_BTH_LEN + SROCE_HDRS_LEN_BEFORE(m, h) : 0)

/* BTH plus all extension headers: where the payload starts. */
#define SROCE_HDRS_LEN(m)	(SROCE_BTH_LEN + SROCE_HDRS_LEN_BEFORE(m, SROCE_HDR_COUNT))

/* The longest transport header: BTH + XRCETH + AtomicETH. */
#define SROCE_MAX_HDR_LEN	(SROCE_BTH_LEN + SROCE_XRCETH_LEN + SROCE_ATMETH_LEN)

/* Position of the packet in its message. */
#define SROCE_OPF_FIRST		0x0001
#define SROCE_OPF_MIDDLE	0x0002
#define SROCE_OPF_LAST		0x0004
#define SROCE_OPF_ONLY		(SROCE_OPF_FIRST | SROCE_OPF_LAST)
/* Payload bytes may follow the headers. */
#define SROCE_OPF_PAYLOAD	0x0010
/* Class: request (requester -> responder) or response (-> requester). */
#define SROCE_OPF_REQ		0x0020
#define SROCE_OPF_RESP		0x0040
/* The responder takes a receive WQE when this packet arrives. */
#define SROCE_OPF_RECV		0x0100
/* The responder completes the receive WQE (a CQE) with this packet. */
#define SROCE_OPF_RECV_CQE	0x0200

enum sroce_op_kind {
	SROCE_OPK_SEND,
	SROCE_OPK_WRITE,
	SROCE_OPK_READ_REQ,
	SROCE_OPK_READ_RESP,
	SROCE_OPK_ATOMIC,	/* compare&swap, fetch&add request */
	SROCE_OPK_ATOMIC_WRITE,	/* IBTA 1.5 ATOMIC WRITE request */
	SROCE_OPK_ACK,
	SROCE_OPK_ATOMIC_ACK,
	SROCE_OPK_CNP,
};

/* QP types an opcode is valid on. */
#define SROCE_QPT_RC		0x01
#define SROCE_QPT_UC		0x02
#define SROCE_QPT_UD		0x04	/* also the GSI QP */
#define SROCE_QPT_XRC_INI	0x08	/* XRC initiator: sends requests */
#define SROCE_QPT_XRC_TGT	0x10	/* XRC target: receives them */
#define SROCE_QPT_ANY		(SROCE_QPT_RC | SROCE_QPT_UC | SROCE_QPT_UD | \
				 SROCE_QPT_XRC_INI | SROCE_QPT_XRC_TGT)

/* Opcode values (IBTA vol 1 table 38; CNP: annex A17.9.3). */
enum sroce_opcode {
	SROCE_OP_RC_SEND_FIRST				= 0x00,
	SROCE_OP_RC_SEND_MIDDLE				= 0x01,
	SROCE_OP_RC_SEND_LAST				= 0x02,
	SROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE		= 0x03,
	SROCE_OP_RC_SEND_ONLY				= 0x04,
	SROCE_OP_RC_SEND_ONLY_WITH_IMMEDIATE		= 0x05,
	SROCE_OP_RC_RDMA_WRITE_FIRST			= 0x06,
	SROCE_OP_RC_RDMA_WRITE_MIDDLE			= 0x07,
	SROCE_OP_RC_RDMA_WRITE_LAST			= 0x08,
	SROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x09,
	SROCE_OP_RC_RDMA_WRITE_ONLY			= 0x0a,
	SROCE_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x0b,
	SROCE_OP_RC_RDMA_READ_REQUEST			= 0x0c,
	SROCE_OP_RC_RDMA_READ_RESPONSE_FIRST		= 0x0d,
	SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE		= 0x0e,
	SROCE_OP_RC_RDMA_READ_RESPONSE_LAST		= 0x0f,
	SROCE_OP_RC_RDMA_READ_RESPONSE_ONLY		= 0x10,
	SROCE_OP_RC_ACKNOWLEDGE				= 0x11,
	SROCE_OP_RC_ATOMIC_ACKNOWLEDGE			= 0x12,
	SROCE_OP_RC_COMPARE_SWAP			= 0x13,
	SROCE_OP_RC_FETCH_ADD				= 0x14,
	SROCE_OP_RC_SEND_LAST_WITH_INVALIDATE		= 0x16,
	SROCE_OP_RC_SEND_ONLY_WITH_INVALIDATE		= 0x17,
	SROCE_OP_RC_ATOMIC_WRITE			= 0x1d,

	SROCE_OP_UC_SEND_FIRST				= 0x20,
	SROCE_OP_UC_SEND_MIDDLE				= 0x21,
	SROCE_OP_UC_SEND_LAST				= 0x22,
	SROCE_OP_UC_SEND_LAST_WITH_IMMEDIATE		= 0x23,
	SROCE_OP_UC_SEND_ONLY				= 0x24,
	SROCE_OP_UC_SEND_ONLY_WITH_IMMEDIATE		= 0x25,
	SROCE_OP_UC_RDMA_WRITE_FIRST			= 0x26,
	SROCE_OP_UC_RDMA_WRITE_MIDDLE			= 0x27,
	SROCE_OP_UC_RDMA_WRITE_LAST			= 0x28,
	SROCE_OP_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0x29,
	SROCE_OP_UC_RDMA_WRITE_ONLY			= 0x2a,
	SROCE_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0x2b,

	SROCE_OP_UD_SEND_ONLY				= 0x64,
	SROCE_OP_UD_SEND_ONLY_WITH_IMMEDIATE		= 0x65,

	SROCE_OP_CNP					= 0x81,

	SROCE_OP_XRC_SEND_FIRST				= 0xa0,
	SROCE_OP_XRC_SEND_MIDDLE			= 0xa1,
	SROCE_OP_XRC_SEND_LAST				= 0xa2,
	SROCE_OP_XRC_SEND_LAST_WITH_IMMEDIATE		= 0xa3,
	SROCE_OP_XRC_SEND_ONLY				= 0xa4,
	SROCE_OP_XRC_SEND_ONLY_WITH_IMMEDIATE		= 0xa5,
	SROCE_OP_XRC_RDMA_WRITE_FIRST			= 0xa6,
	SROCE_OP_XRC_RDMA_WRITE_MIDDLE			= 0xa7,
	SROCE_OP_XRC_RDMA_WRITE_LAST			= 0xa8,
	SROCE_OP_XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE	= 0xa9,
	SROCE_OP_XRC_RDMA_WRITE_ONLY			= 0xaa,
	SROCE_OP_XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE	= 0xab,
	SROCE_OP_XRC_RDMA_READ_REQUEST			= 0xac,
	SROCE_OP_XRC_RDMA_READ_RESPONSE_FIRST		= 0xad,
	SROCE_OP_XRC_RDMA_READ_RESPONSE_MIDDLE		= 0xae,
	SROCE_OP_XRC_RDMA_READ_RESPONSE_LAST		= 0xaf,
	SROCE_OP_XRC_RDMA_READ_RESPONSE_ONLY		= 0xb0,
	SROCE_OP_XRC_ACKNOWLEDGE			= 0xb1,
	SROCE_OP_XRC_ATOMIC_ACKNOWLEDGE			= 0xb2,
	SROCE_OP_XRC_COMPARE_SWAP			= 0xb3,
	SROCE_OP_XRC_FETCH_ADD				= 0xb4,
	SROCE_OP_XRC_SEND_LAST_WITH_INVALIDATE		= 0xb6,
	SROCE_OP_XRC_SEND_ONLY_WITH_INVALIDATE		= 0xb7,
	SROCE_OP_XRC_ATOMIC_WRITE			= 0xbd,
};

/*
 * The transport is the top three bits of an opcode; RC, UC and XRC share
 * the operation in the low five (UC has a subset of them).
 */
#define SROCE_OP_TRANSPORT_MASK	0xe0
#define SROCE_OP_TRANSPORT_RC	0x00
#define SROCE_OP_TRANSPORT_UC	0x20
#define SROCE_OP_TRANSPORT_XRC	0xa0

/* The RC opcode of the same operation as an RC, UC or XRC @opcode. */
static inline __u8 sroce_opcode_rc(__u8 opcode)
{
	return opcode & ~SROCE_OP_TRANSPORT_MASK;
}

#define SROCE_OPBIT(op)		(1U << ((op) & 0x1f))

/*
 * Opcodes that may continue a message after its FIRST or a MIDDLE packet.
 * Only RC has SEND_LAST_WITH_INVALIDATE.  The bits are the low five bits
 * of the opcode, so the same masks serve RC and UC.
 */
#define SROCE_NEXT_SEND_UC	(SROCE_OPBIT(SROCE_OP_RC_SEND_MIDDLE) |		\
				 SROCE_OPBIT(SROCE_OP_RC_SEND_LAST) |		\
				 SROCE_OPBIT(SROCE_OP_RC_SEND_LAST_WITH_IMMEDIATE))
#define SROCE_NEXT_SEND_RC	(SROCE_NEXT_SEND_UC |				\
				 SROCE_OPBIT(SROCE_OP_RC_SEND_LAST_WITH_INVALIDATE))
#define SROCE_NEXT_WRITE	(SROCE_OPBIT(SROCE_OP_RC_RDMA_WRITE_MIDDLE) |	\
				 SROCE_OPBIT(SROCE_OP_RC_RDMA_WRITE_LAST) |	\
				 SROCE_OPBIT(SROCE_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE))
#define SROCE_NEXT_READ_RESP	(SROCE_OPBIT(SROCE_OP_RC_RDMA_READ_RESPONSE_MIDDLE) |	\
				 SROCE_OPBIT(SROCE_OP_RC_RDMA_READ_RESPONSE_LAST))

/* Shorthands for the rows below. */
#define SROCE__SEND_FIRST	(SROCE_OPF_FIRST | SROCE_OPF_PAYLOAD | SROCE_OPF_REQ |	\
				 SROCE_OPF_RECV)
#define SROCE__SEND_MIDDLE	(SROCE_OPF_MIDDLE | SROCE_OPF_PAYLOAD | SROCE_OPF_REQ)
#define SROCE__SEND_LAST	(SROCE_OPF_LAST | SROCE_OPF_PAYLOAD | SROCE_OPF_REQ |	\
				 SROCE_OPF_RECV_CQE)
#define SROCE__SEND_ONLY	(SROCE__SEND_FIRST | SROCE__SEND_LAST)
#define SROCE__WRITE_FIRST	(SROCE_OPF_FIRST | SROCE_OPF_PAYLOAD | SROCE_OPF_REQ)
#define SROCE__WRITE_MIDDLE	(SROCE_OPF_MIDDLE | SROCE_OPF_PAYLOAD | SROCE_OPF_REQ)
#define SROCE__WRITE_LAST	(SROCE_OPF_LAST | SROCE_OPF_PAYLOAD | SROCE_OPF_REQ)
#define SROCE__WRITE_LAST_IMM	(SROCE__WRITE_LAST | SROCE_OPF_RECV | SROCE_OPF_RECV_CQE)
#define SROCE__WRITE_ONLY	(SROCE__WRITE_FIRST | SROCE__WRITE_LAST)
#define SROCE__WRITE_ONLY_IMM	(SROCE__WRITE_ONLY | SROCE_OPF_RECV | SROCE_OPF_RECV_CQE)
#define SROCE__READ_RESP(pos)	((pos) | SROCE_OPF_PAYLOAD | SROCE_OPF_RESP)

/*
 * The table.  Define SROCE_OPCODE_ROW(name, qpt, hdrs, flags, kind, next)
 * before expanding SROCE_OPCODES, a braced list of its expansions.
 */
#define SROCE_OPCODES									\
{											\
	/* RC */									\
	SROCE_OPCODE_ROW(RC_SEND_FIRST, SROCE_QPT_RC,				\
			 0,								\
			 SROCE__SEND_FIRST,						\
			 SROCE_OPK_SEND, SROCE_NEXT_SEND_RC)				\
	SROCE_OPCODE_ROW(RC_SEND_MIDDLE, SROCE_QPT_RC,				\
			 0,								\
			 SROCE__SEND_MIDDLE,						\
			 SROCE_OPK_SEND, SROCE_NEXT_SEND_RC)				\
	SROCE_OPCODE_ROW(RC_SEND_LAST, SROCE_QPT_RC,				\
			 0,								\
			 SROCE__SEND_LAST,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(RC_SEND_LAST_WITH_IMMEDIATE, SROCE_QPT_RC,		\
			 SROCE_HDRM_IMMDT,						\
			 SROCE__SEND_LAST,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(RC_SEND_ONLY, SROCE_QPT_RC,				\
			 0,								\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(RC_SEND_ONLY_WITH_IMMEDIATE, SROCE_QPT_RC,		\
			 SROCE_HDRM_IMMDT,						\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(RC_RDMA_WRITE_FIRST, SROCE_QPT_RC,			\
			 SROCE_HDRM_RETH,						\
			 SROCE__WRITE_FIRST,						\
			 SROCE_OPK_WRITE, SROCE_NEXT_WRITE)				\
	SROCE_OPCODE_ROW(RC_RDMA_WRITE_MIDDLE, SROCE_QPT_RC,			\
			 0,								\
			 SROCE__WRITE_MIDDLE,						\
			 SROCE_OPK_WRITE, SROCE_NEXT_WRITE)				\
	SROCE_OPCODE_ROW(RC_RDMA_WRITE_LAST, SROCE_QPT_RC,			\
			 0,								\
			 SROCE__WRITE_LAST,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, SROCE_QPT_RC,		\
			 SROCE_HDRM_IMMDT,						\
			 SROCE__WRITE_LAST_IMM,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(RC_RDMA_WRITE_ONLY, SROCE_QPT_RC,			\
			 SROCE_HDRM_RETH,						\
			 SROCE__WRITE_ONLY,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, SROCE_QPT_RC,		\
			 SROCE_HDRM_RETH | SROCE_HDRM_IMMDT,				\
			 SROCE__WRITE_ONLY_IMM,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(RC_RDMA_READ_REQUEST, SROCE_QPT_RC,			\
			 SROCE_HDRM_RETH,						\
			 SROCE_OPF_ONLY | SROCE_OPF_REQ,				\
			 SROCE_OPK_READ_REQ, 0)						\
	SROCE_OPCODE_ROW(RC_RDMA_READ_RESPONSE_FIRST, SROCE_QPT_RC,		\
			 SROCE_HDRM_AETH,						\
			 SROCE__READ_RESP(SROCE_OPF_FIRST),				\
			 SROCE_OPK_READ_RESP, SROCE_NEXT_READ_RESP)			\
	SROCE_OPCODE_ROW(RC_RDMA_READ_RESPONSE_MIDDLE, SROCE_QPT_RC,		\
			 0,								\
			 SROCE__READ_RESP(SROCE_OPF_MIDDLE),				\
			 SROCE_OPK_READ_RESP, SROCE_NEXT_READ_RESP)			\
	SROCE_OPCODE_ROW(RC_RDMA_READ_RESPONSE_LAST, SROCE_QPT_RC,		\
			 SROCE_HDRM_AETH,						\
			 SROCE__READ_RESP(SROCE_OPF_LAST),				\
			 SROCE_OPK_READ_RESP, 0)					\
	SROCE_OPCODE_ROW(RC_RDMA_READ_RESPONSE_ONLY, SROCE_QPT_RC,		\
			 SROCE_HDRM_AETH,						\
			 SROCE__READ_RESP(SROCE_OPF_ONLY),				\
			 SROCE_OPK_READ_RESP, 0)					\
	SROCE_OPCODE_ROW(RC_ACKNOWLEDGE, SROCE_QPT_RC,				\
			 SROCE_HDRM_AETH,						\
			 SROCE_OPF_ONLY | SROCE_OPF_RESP,				\
			 SROCE_OPK_ACK, 0)						\
	SROCE_OPCODE_ROW(RC_ATOMIC_ACKNOWLEDGE, SROCE_QPT_RC,			\
			 SROCE_HDRM_AETH | SROCE_HDRM_ATMACK,				\
			 SROCE_OPF_ONLY | SROCE_OPF_RESP,				\
			 SROCE_OPK_ATOMIC_ACK, 0)					\
	SROCE_OPCODE_ROW(RC_COMPARE_SWAP, SROCE_QPT_RC,				\
			 SROCE_HDRM_ATMETH,						\
			 SROCE_OPF_ONLY | SROCE_OPF_REQ,				\
			 SROCE_OPK_ATOMIC, 0)						\
	SROCE_OPCODE_ROW(RC_FETCH_ADD, SROCE_QPT_RC,				\
			 SROCE_HDRM_ATMETH,						\
			 SROCE_OPF_ONLY | SROCE_OPF_REQ,				\
			 SROCE_OPK_ATOMIC, 0)						\
	SROCE_OPCODE_ROW(RC_SEND_LAST_WITH_INVALIDATE, SROCE_QPT_RC,		\
			 SROCE_HDRM_IETH,						\
			 SROCE__SEND_LAST,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(RC_SEND_ONLY_WITH_INVALIDATE, SROCE_QPT_RC,		\
			 SROCE_HDRM_IETH,						\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(RC_ATOMIC_WRITE, SROCE_QPT_RC,				\
			 SROCE_HDRM_RETH,						\
			 SROCE__WRITE_ONLY,						\
			 SROCE_OPK_ATOMIC_WRITE, 0)					\
	/* UC: no read, atomic or invalidate */						\
	SROCE_OPCODE_ROW(UC_SEND_FIRST, SROCE_QPT_UC,				\
			 0,								\
			 SROCE__SEND_FIRST,						\
			 SROCE_OPK_SEND, SROCE_NEXT_SEND_UC)				\
	SROCE_OPCODE_ROW(UC_SEND_MIDDLE, SROCE_QPT_UC,				\
			 0,								\
			 SROCE__SEND_MIDDLE,						\
			 SROCE_OPK_SEND, SROCE_NEXT_SEND_UC)				\
	SROCE_OPCODE_ROW(UC_SEND_LAST, SROCE_QPT_UC,				\
			 0,								\
			 SROCE__SEND_LAST,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(UC_SEND_LAST_WITH_IMMEDIATE, SROCE_QPT_UC,		\
			 SROCE_HDRM_IMMDT,						\
			 SROCE__SEND_LAST,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(UC_SEND_ONLY, SROCE_QPT_UC,				\
			 0,								\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(UC_SEND_ONLY_WITH_IMMEDIATE, SROCE_QPT_UC,		\
			 SROCE_HDRM_IMMDT,						\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(UC_RDMA_WRITE_FIRST, SROCE_QPT_UC,			\
			 SROCE_HDRM_RETH,						\
			 SROCE__WRITE_FIRST,						\
			 SROCE_OPK_WRITE, SROCE_NEXT_WRITE)				\
	SROCE_OPCODE_ROW(UC_RDMA_WRITE_MIDDLE, SROCE_QPT_UC,			\
			 0,								\
			 SROCE__WRITE_MIDDLE,						\
			 SROCE_OPK_WRITE, SROCE_NEXT_WRITE)				\
	SROCE_OPCODE_ROW(UC_RDMA_WRITE_LAST, SROCE_QPT_UC,			\
			 0,								\
			 SROCE__WRITE_LAST,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, SROCE_QPT_UC,		\
			 SROCE_HDRM_IMMDT,						\
			 SROCE__WRITE_LAST_IMM,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(UC_RDMA_WRITE_ONLY, SROCE_QPT_UC,			\
			 SROCE_HDRM_RETH,						\
			 SROCE__WRITE_ONLY,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, SROCE_QPT_UC,		\
			 SROCE_HDRM_RETH | SROCE_HDRM_IMMDT,				\
			 SROCE__WRITE_ONLY_IMM,						\
			 SROCE_OPK_WRITE, 0)						\
	/* UD: single-packet sends only */						\
	SROCE_OPCODE_ROW(UD_SEND_ONLY, SROCE_QPT_UD,				\
			 SROCE_HDRM_DETH,						\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(UD_SEND_ONLY_WITH_IMMEDIATE, SROCE_QPT_UD,		\
			 SROCE_HDRM_DETH | SROCE_HDRM_IMMDT,				\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	/* XRC: RC with an XRCETH in requests */					\
	SROCE_OPCODE_ROW(XRC_SEND_FIRST, SROCE_QPT_XRC_TGT,				\
			 SROCE_HDRM_XRCETH,						\
			 SROCE__SEND_FIRST,						\
			 SROCE_OPK_SEND, SROCE_NEXT_SEND_RC)				\
	SROCE_OPCODE_ROW(XRC_SEND_MIDDLE, SROCE_QPT_XRC_TGT,				\
			 SROCE_HDRM_XRCETH,						\
			 SROCE__SEND_MIDDLE,						\
			 SROCE_OPK_SEND, SROCE_NEXT_SEND_RC)				\
	SROCE_OPCODE_ROW(XRC_SEND_LAST, SROCE_QPT_XRC_TGT,				\
			 SROCE_HDRM_XRCETH,						\
			 SROCE__SEND_LAST,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(XRC_SEND_LAST_WITH_IMMEDIATE, SROCE_QPT_XRC_TGT,		\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_IMMDT,				\
			 SROCE__SEND_LAST,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(XRC_SEND_ONLY, SROCE_QPT_XRC_TGT,				\
			 SROCE_HDRM_XRCETH,						\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(XRC_SEND_ONLY_WITH_IMMEDIATE, SROCE_QPT_XRC_TGT,		\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_IMMDT,				\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(XRC_RDMA_WRITE_FIRST, SROCE_QPT_XRC_TGT,			\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_RETH,				\
			 SROCE__WRITE_FIRST,						\
			 SROCE_OPK_WRITE, SROCE_NEXT_WRITE)				\
	SROCE_OPCODE_ROW(XRC_RDMA_WRITE_MIDDLE, SROCE_QPT_XRC_TGT,			\
			 SROCE_HDRM_XRCETH,						\
			 SROCE__WRITE_MIDDLE,						\
			 SROCE_OPK_WRITE, SROCE_NEXT_WRITE)				\
	SROCE_OPCODE_ROW(XRC_RDMA_WRITE_LAST, SROCE_QPT_XRC_TGT,			\
			 SROCE_HDRM_XRCETH,						\
			 SROCE__WRITE_LAST,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(XRC_RDMA_WRITE_LAST_WITH_IMMEDIATE, SROCE_QPT_XRC_TGT,		\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_IMMDT,				\
			 SROCE__WRITE_LAST_IMM,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(XRC_RDMA_WRITE_ONLY, SROCE_QPT_XRC_TGT,			\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_RETH,				\
			 SROCE__WRITE_ONLY,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(XRC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, SROCE_QPT_XRC_TGT,		\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_RETH | SROCE_HDRM_IMMDT,	\
			 SROCE__WRITE_ONLY_IMM,						\
			 SROCE_OPK_WRITE, 0)						\
	SROCE_OPCODE_ROW(XRC_RDMA_READ_REQUEST, SROCE_QPT_XRC_TGT,			\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_RETH,				\
			 SROCE_OPF_ONLY | SROCE_OPF_REQ,				\
			 SROCE_OPK_READ_REQ, 0)						\
	SROCE_OPCODE_ROW(XRC_RDMA_READ_RESPONSE_FIRST, SROCE_QPT_XRC_INI,		\
			 SROCE_HDRM_AETH,						\
			 SROCE__READ_RESP(SROCE_OPF_FIRST),				\
			 SROCE_OPK_READ_RESP, SROCE_NEXT_READ_RESP)			\
	SROCE_OPCODE_ROW(XRC_RDMA_READ_RESPONSE_MIDDLE, SROCE_QPT_XRC_INI,		\
			 0,								\
			 SROCE__READ_RESP(SROCE_OPF_MIDDLE),				\
			 SROCE_OPK_READ_RESP, SROCE_NEXT_READ_RESP)			\
	SROCE_OPCODE_ROW(XRC_RDMA_READ_RESPONSE_LAST, SROCE_QPT_XRC_INI,		\
			 SROCE_HDRM_AETH,						\
			 SROCE__READ_RESP(SROCE_OPF_LAST),				\
			 SROCE_OPK_READ_RESP, 0)					\
	SROCE_OPCODE_ROW(XRC_RDMA_READ_RESPONSE_ONLY, SROCE_QPT_XRC_INI,		\
			 SROCE_HDRM_AETH,						\
			 SROCE__READ_RESP(SROCE_OPF_ONLY),				\
			 SROCE_OPK_READ_RESP, 0)					\
	SROCE_OPCODE_ROW(XRC_ACKNOWLEDGE, SROCE_QPT_XRC_INI,				\
			 SROCE_HDRM_AETH,						\
			 SROCE_OPF_ONLY | SROCE_OPF_RESP,				\
			 SROCE_OPK_ACK, 0)						\
	SROCE_OPCODE_ROW(XRC_ATOMIC_ACKNOWLEDGE, SROCE_QPT_XRC_INI,			\
			 SROCE_HDRM_AETH | SROCE_HDRM_ATMACK,				\
			 SROCE_OPF_ONLY | SROCE_OPF_RESP,				\
			 SROCE_OPK_ATOMIC_ACK, 0)					\
	SROCE_OPCODE_ROW(XRC_COMPARE_SWAP, SROCE_QPT_XRC_TGT,				\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_ATMETH,				\
			 SROCE_OPF_ONLY | SROCE_OPF_REQ,				\
			 SROCE_OPK_ATOMIC, 0)						\
	SROCE_OPCODE_ROW(XRC_FETCH_ADD, SROCE_QPT_XRC_TGT,				\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_ATMETH,				\
			 SROCE_OPF_ONLY | SROCE_OPF_REQ,				\
			 SROCE_OPK_ATOMIC, 0)						\
	SROCE_OPCODE_ROW(XRC_SEND_LAST_WITH_INVALIDATE, SROCE_QPT_XRC_TGT,		\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_IETH,				\
			 SROCE__SEND_LAST,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(XRC_SEND_ONLY_WITH_INVALIDATE, SROCE_QPT_XRC_TGT,		\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_IETH,				\
			 SROCE__SEND_ONLY,						\
			 SROCE_OPK_SEND, 0)						\
	SROCE_OPCODE_ROW(XRC_ATOMIC_WRITE, SROCE_QPT_XRC_TGT,			\
			 SROCE_HDRM_XRCETH | SROCE_HDRM_RETH,				\
			 SROCE__WRITE_ONLY,						\
			 SROCE_OPK_ATOMIC_WRITE, 0)					\
	/* RoCEv2 congestion notification (annex A17.9.3) */				\
	SROCE_OPCODE_ROW(CNP, SROCE_QPT_ANY,					\
			 SROCE_HDRM_CNP,						\
			 SROCE_OPF_ONLY,						\
			 SROCE_OPK_CNP, 0)						\
}

struct sroce_opcode_info {
	const char	*name;		/* NULL: not a valid opcode */
	__u16		flags;		/* SROCE_OPF_* */
	__u16		hdrs;		/* SROCE_HDRM_* */
	__u8		kind;		/* enum sroce_op_kind */
	__u8		qp_types;	/* SROCE_QPT_* */
	__u8		hdr_len;	/* BTH + extension headers */
	__u8		offset[SROCE_HDR_COUNT];	/* from BTH start; 0: absent */
	__u32		next;		/* SROCE_OPBIT()s that may follow */
};

/* One row of the table as an initializer, valid in C and C++20. */
#define SROCE_OPCODE_INFO(_name, _qpt, _hdrs, _flags, _kind, _next)	\
	{								\
		.name = (_name),					\
		.flags = (_flags),					\
		.hdrs = (_hdrs),					\
		.kind = (_kind),					\
		.qp_types = (_qpt),					\
		.hdr_len = SROCE_HDRS_LEN(_hdrs),			\
		.offset = {						\
			SROCE_HDR_OFFSET(_hdrs, SROCE_HDR_DETH),	\
			SROCE_HDR_OFFSET(_hdrs, SROCE_HDR_XRCETH),	\
			SROCE_HDR_OFFSET(_hdrs, SROCE_HDR_RETH),	\
			SROCE_HDR_OFFSET(_hdrs, SROCE_HDR_ATMETH),	\
			SROCE_HDR_OFFSET(_hdrs, SROCE_HDR_AETH),	\
			SROCE_HDR_OFFSET(_hdrs, SROCE_HDR_ATMACK),	\
			SROCE_HDR_OFFSET(_hdrs, SROCE_HDR_IMMDT),	\
			SROCE_HDR_OFFSET(_hdrs, SROCE_HDR_IETH),	\
			SROCE_HDR_OFFSET(_hdrs, SROCE_HDR_CNP),		\
		},							\
		.next = (_next),					\
	}

#if defined(__cplusplus) && !defined(__KERNEL__)
/* Userspace C++: the same rows, indexed at compile time. */
struct sroce_opcode_table {
	struct sroce_opcode_info op[SROCE_NUM_OPCODES];
};

constexpr sroce_opcode_table sroce_build_opcode_table()
{
	struct row {
		unsigned int opcode;
		struct sroce_opcode_info info;
	};
#define SROCE_OPCODE_ROW(name, qpt, hdrs, flags, kind, next)		\
	{ SROCE_OP_##name, SROCE_OPCODE_INFO(#name, qpt, hdrs, flags, kind, next) },
	constexpr row rows[] = SROCE_OPCODES;
#undef SROCE_OPCODE_ROW
	sroce_opcode_table t{};

	for (unsigned int i = 0; i < sizeof(rows) / sizeof(row); i++)
		t.op[rows[i].opcode] = rows[i].info;
	return t;
}

inline constexpr sroce_opcode_table sroce_opcode_table_v = sroce_build_opcode_table();
inline constexpr const struct sroce_opcode_info *sroce_opcodes = sroce_opcode_table_v.op;
#else
/* Kernel: defined in opcode.c. */
extern const struct sroce_opcode_info sroce_opcodes[SROCE_NUM_OPCODES];
#endif

/* ---- lookups --------------------------------------------------------------- */

static inline const struct sroce_opcode_info *sroce_opcode_info(__u8 opcode)
{
	return &sroce_opcodes[opcode];
}

static inline bool sroce_opcode_valid(__u8 opcode)
{
	return sroce_opcodes[opcode].name;
}

static inline bool sroce_opcode_has(__u8 opcode, enum sroce_hdr hdr)
{
	return sroce_opcodes[opcode].hdrs & SROCE_HDRM(hdr);
}

/* Offset of @hdr from the start of the BTH; 0 if @opcode does not carry it. */
static inline unsigned int sroce_hdr_offset(__u8 opcode, enum sroce_hdr hdr)
{
	return sroce_opcodes[opcode].offset[hdr];
}

/* BTH + extension headers; 0 for an invalid opcode. */
static inline unsigned int sroce_hdr_len(__u8 opcode)
{
	return sroce_opcodes[opcode].hdr_len;
}

/* Does this packet start a message (FIRST or ONLY)? */
static inline bool sroce_opcode_starts_message(__u8 opcode)
{
	return sroce_opcodes[opcode].flags & SROCE_OPF_FIRST;
}

/*
 * May @next follow @prev on the same QP and direction?  Inside a message
 * (after a FIRST or MIDDLE) only the continuations listed for @prev may
 * come, on the same transport; after a packet that ends a message, any
 * packet that starts one.  Whether a broken sequence is an error (RC) or
 * silently drops the message (UC) is the caller's policy.
 */
static inline bool sroce_opcode_may_follow(__u8 prev, __u8 next)
{
	const struct sroce_opcode_info *p = &sroce_opcodes[prev];

	if (!p->name || (p->flags & SROCE_OPF_LAST))
		return sroce_opcode_valid(next) && sroce_opcode_starts_message(next);
	return (prev >> 5) == (next >> 5) && (p->next & SROCE_OPBIT(next));
}

#endif /* SROCE_OPCODE_H */
