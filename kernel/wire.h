/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RoCEv2 wire format: the InfiniBand transport headers carried in a UDP
 * datagram to port 4791, followed by the payload and the 4-byte ICRC.
 *
 *   IPv4/IPv6 | UDP | BTH | extension headers | payload | pad | ICRC
 *
 * This header is the single definition of those headers.  It is included by
 * the kernel module and by userspace C and C++ (the provider's host unit
 * tests, the malformed-packet generator), so it uses only <linux/types.h>
 * types, no bitfields (their layout is implementation defined) and no
 * kernel-only helpers outside the small shim below.  Every struct is packed
 * because extension headers sit at arbitrary 4-byte offsets in a packet and
 * AtomicETH has 64-bit fields at offset 12; the size of each is checked at
 * compile time in both languages.
 *
 * Field names follow the IBTA specification (volume 1, chapter 9, and the
 * RoCEv2 annex A17).  Sub-byte fields are reached only through the one-line
 * helpers at the end of this file.
 */
#ifndef SROCE_WIRE_H
#define SROCE_WIRE_H

#include <linux/types.h>

/* ---- kernel / userspace shim ------------------------------------------- */
#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <asm/byteorder.h>

#define sroce_be16_to_cpu(x)	be16_to_cpu(x)
#define sroce_be32_to_cpu(x)	be32_to_cpu(x)
#define sroce_be64_to_cpu(x)	be64_to_cpu(x)
#define sroce_cpu_to_be16(x)	cpu_to_be16(x)
#define sroce_cpu_to_be32(x)	cpu_to_be32(x)
#define sroce_cpu_to_be64(x)	cpu_to_be64(x)
#else /* userspace: C11 or C++, no feature-test macros needed */
#include <assert.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif
#define SROCE__ATTR(a)	__attribute__((a))
#ifndef __packed
#define __packed SROCE__ATTR(__packed__)
#endif
#ifndef __force
#define __force
#endif
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define sroce_be16_to_cpu(x)	((__u16)__builtin_bswap16((__force __u16)(x)))
#define sroce_be32_to_cpu(x)	((__u32)__builtin_bswap32((__force __u32)(x)))
#define sroce_be64_to_cpu(x)	((__u64)__builtin_bswap64((__force __u64)(x)))
#else
#define sroce_be16_to_cpu(x)	((__force __u16)(x))
#define sroce_be32_to_cpu(x)	((__force __u32)(x))
#define sroce_be64_to_cpu(x)	((__force __u64)(x))
#endif
#define sroce_cpu_to_be16(x)	((__force __be16)sroce_be16_to_cpu(x))
#define sroce_cpu_to_be32(x)	((__force __be32)sroce_be32_to_cpu(x))
#define sroce_cpu_to_be64(x)	((__force __be64)sroce_be64_to_cpu(x))
#endif

/*
 * Compile-time size check: static_assert is a keyword in C++ and a macro in
 * kernel C (<linux/build_bug.h>) and userspace C11 (<assert.h>).
 */
#define SROCE_WIRE_SIZE(type, size) \
	static_assert(sizeof(type) == (size), #type " must be " #size " bytes")

/* ---- constants ---------------------------------------------------------- */

/* IANA-assigned UDP destination port of RoCEv2. */
#define SROCE_UDP_PORT		4791
#define SROCE_UDP_HDR_LEN	8

#define SROCE_BTH_TVER		0	/* transport header version */
#define SROCE_DEFAULT_PKEY	0xffff	/* full-member default partition */
#define SROCE_GSI_QKEY		0x80010000
#define SROCE_ICRC_LEN		4

/* 24-bit fields: QPN, PSN, MSN, source QP. */
#define SROCE_QPN_MASK		0x00ffffffU
#define SROCE_MAX_QPN		SROCE_QPN_MASK

/* Header lengths, checked against the structs below. */
#define SROCE_BTH_LEN		12
#define SROCE_RETH_LEN		16
#define SROCE_AETH_LEN		4
#define SROCE_ATMETH_LEN	28
#define SROCE_ATMACK_LEN	8
#define SROCE_IMMDT_LEN		4
#define SROCE_IETH_LEN		4
#define SROCE_DETH_LEN		8
#define SROCE_XRCETH_LEN	4
#define SROCE_CNP_LEN		16

/* ---- Base Transport Header (every packet) ------------------------------- */
struct sroce_bth {
	__u8	opcode;
	__u8	flags;		/* SE:1 MigReq:1 PadCnt:2 TVer:4 */
	__be16	pkey;
	__be32	qpn;		/* FECN:1 BECN:1 resv6:6 DestQP:24 */
	__be32	psn;		/* AckReq:1 resv7:7 PSN:24 */
} __packed;
SROCE_WIRE_SIZE(struct sroce_bth, SROCE_BTH_LEN);

#define SROCE_BTH_SE		0x80	/* in flags */
#define SROCE_BTH_MIG		0x40
#define SROCE_BTH_PAD_MASK	0x30
#define SROCE_BTH_PAD_SHIFT	4
#define SROCE_BTH_TVER_MASK	0x0f
#define SROCE_BTH_FECN		0x80000000U	/* in qpn */
#define SROCE_BTH_BECN		0x40000000U
#define SROCE_BTH_RESV8A_MASK	0xff000000U	/* FECN+BECN+resv6: ICRC-masked */
#define SROCE_BTH_ACKREQ	0x80000000U	/* in psn */

/* ---- RDMA Extended Transport Header (write first/only, read request) --- */
struct sroce_reth {
	__be64	va;
	__be32	rkey;
	__be32	dma_len;
} __packed;
SROCE_WIRE_SIZE(struct sroce_reth, SROCE_RETH_LEN);

/* ---- ACK Extended Transport Header (ACK, read responses) ---------------- */
struct sroce_aeth {
	__be32	syn_msn;	/* Syndrome:8 MSN:24 */
} __packed;
SROCE_WIRE_SIZE(struct sroce_aeth, SROCE_AETH_LEN);

/*
 * AETH syndrome: the top 3 bits say what kind of acknowledgment this is,
 * the low 5 bits carry a credit count (ACK), an RNR timer code (RNR NAK) or
 * a NAK code.
 */
#define SROCE_AETH_TYPE_MASK	0xe0
#define SROCE_AETH_VALUE_MASK	0x1f
#define SROCE_AETH_ACK		0x00	/* value: encoded credit count */
#define SROCE_AETH_RNR_NAK	0x20	/* value: RNR timer code */
#define SROCE_AETH_NAK		0x60	/* value: enum sroce_nak_code */
#define SROCE_AETH_CREDIT_INVALID 0x1f	/* ACK without end-to-end credits */

enum sroce_nak_code {
	SROCE_NAK_PSN_SEQ_ERR		= 0,
	SROCE_NAK_INVALID_REQ		= 1,
	SROCE_NAK_REM_ACCESS_ERR	= 2,
	SROCE_NAK_REM_OP_ERR		= 3,
	SROCE_NAK_INVALID_RD_REQ	= 4,
};

/* ---- Atomic Extended Transport Header (compare&swap, fetch&add) --------- */
struct sroce_atmeth {
	__be64	va;
	__be32	rkey;
	__be64	swap_add;	/* swap value, or the addend of fetch&add */
	__be64	compare;
} __packed;
SROCE_WIRE_SIZE(struct sroce_atmeth, SROCE_ATMETH_LEN);

/* ---- Atomic ACK Extended Transport Header ------------------------------- */
struct sroce_atmack {
	__be64	orig;		/* value at the target before the operation */
} __packed;
SROCE_WIRE_SIZE(struct sroce_atmack, SROCE_ATMACK_LEN);

/* ---- Immediate Data ------------------------------------------------------ */
struct sroce_immdt {
	__be32	imm;
} __packed;
SROCE_WIRE_SIZE(struct sroce_immdt, SROCE_IMMDT_LEN);

/* ---- Invalidate Extended Transport Header (send with invalidate) -------- */
struct sroce_ieth {
	__be32	rkey;
} __packed;
SROCE_WIRE_SIZE(struct sroce_ieth, SROCE_IETH_LEN);

/* ---- Datagram Extended Transport Header (UD) ---------------------------- */
struct sroce_deth {
	__be32	qkey;
	__be32	sqp;		/* resv8:8 SrcQP:24 */
} __packed;
SROCE_WIRE_SIZE(struct sroce_deth, SROCE_DETH_LEN);

/*
 * ---- XRC Extended Transport Header (IBA vol 1 9.3.5; XRC requests) ------
 * Right after the BTH of every XRC request packet (opcodes 0xa0-0xb7 sent
 * by an XRC initiator): the XRC SRQ at the target that receives the
 * message, and whose PD governs its memory accesses.  XRC responses (ACK,
 * READ response, atomic ACK) carry none.
 */
struct sroce_xrceth {
	__be32	srqn;		/* resv8:8 XRCSRQ:24 */
} __packed;
SROCE_WIRE_SIZE(struct sroce_xrceth, SROCE_XRCETH_LEN);

/*
 * ---- Congestion Notification Packet (annex A17.9.3) ---------------------
 * BTH with opcode 0x81, BECN set, DestQP = the QP whose packets were marked,
 * PSN 0; then 16 reserved bytes and the ICRC.
 */
struct sroce_cnp {
	__u8	reserved[16];
} __packed;
SROCE_WIRE_SIZE(struct sroce_cnp, SROCE_CNP_LEN);

/* ---- packed sub-field helpers -------------------------------------------- */

static inline __u32 sroce_bth_qpn(const struct sroce_bth *bth)
{
	return sroce_be32_to_cpu(bth->qpn) & SROCE_QPN_MASK;
}

/* Sets DestQP and clears FECN/BECN/resv6 (transmitted as 0). */
static inline void sroce_bth_set_qpn(struct sroce_bth *bth, __u32 qpn)
{
	bth->qpn = sroce_cpu_to_be32(qpn & SROCE_QPN_MASK);
}

static inline bool sroce_bth_becn(const struct sroce_bth *bth)
{
	return sroce_be32_to_cpu(bth->qpn) & SROCE_BTH_BECN;
}

static inline bool sroce_bth_fecn(const struct sroce_bth *bth)
{
	return sroce_be32_to_cpu(bth->qpn) & SROCE_BTH_FECN;
}

static inline void sroce_bth_set_becn(struct sroce_bth *bth)
{
	bth->qpn |= sroce_cpu_to_be32(SROCE_BTH_BECN);
}

static inline __u32 sroce_bth_psn(const struct sroce_bth *bth)
{
	return sroce_be32_to_cpu(bth->psn) & SROCE_QPN_MASK;
}

/* Sets PSN and AckReq together; resv7 is transmitted as 0. */
static inline void sroce_bth_set_psn(struct sroce_bth *bth, __u32 psn, bool ackreq)
{
	bth->psn = sroce_cpu_to_be32((psn & SROCE_QPN_MASK) | (ackreq ? SROCE_BTH_ACKREQ : 0));
}

static inline bool sroce_bth_ackreq(const struct sroce_bth *bth)
{
	return sroce_be32_to_cpu(bth->psn) & SROCE_BTH_ACKREQ;
}

/* The flags byte: SE, MigReq, PadCnt (0..3), TVer 0. */
static inline __u8 sroce_bth_flags(bool se, bool mig, unsigned int pad)
{
	return (se ? SROCE_BTH_SE : 0) | (mig ? SROCE_BTH_MIG : 0) |
	       (pad & 3) << SROCE_BTH_PAD_SHIFT;
}

static inline bool sroce_bth_se(const struct sroce_bth *bth)
{
	return bth->flags & SROCE_BTH_SE;
}

static inline bool sroce_bth_mig(const struct sroce_bth *bth)
{
	return bth->flags & SROCE_BTH_MIG;
}

static inline unsigned int sroce_bth_pad(const struct sroce_bth *bth)
{
	return (bth->flags & SROCE_BTH_PAD_MASK) >> SROCE_BTH_PAD_SHIFT;
}

static inline unsigned int sroce_bth_tver(const struct sroce_bth *bth)
{
	return bth->flags & SROCE_BTH_TVER_MASK;
}

static inline __u8 sroce_aeth_syndrome(const struct sroce_aeth *aeth)
{
	return sroce_be32_to_cpu(aeth->syn_msn) >> 24;
}

static inline __u32 sroce_aeth_msn(const struct sroce_aeth *aeth)
{
	return sroce_be32_to_cpu(aeth->syn_msn) & SROCE_QPN_MASK;
}

static inline void sroce_aeth_set(struct sroce_aeth *aeth, __u8 syndrome, __u32 msn)
{
	aeth->syn_msn = sroce_cpu_to_be32((__u32)syndrome << 24 | (msn & SROCE_QPN_MASK));
}

static inline __u32 sroce_deth_sqp(const struct sroce_deth *deth)
{
	return sroce_be32_to_cpu(deth->sqp) & SROCE_QPN_MASK;
}

static inline void sroce_deth_set_sqp(struct sroce_deth *deth, __u32 sqp)
{
	deth->sqp = sroce_cpu_to_be32(sqp & SROCE_QPN_MASK);
}

static inline __u32 sroce_xrceth_srqn(const struct sroce_xrceth *xrceth)
{
	return sroce_be32_to_cpu(xrceth->srqn) & SROCE_QPN_MASK;
}

static inline void sroce_xrceth_set_srqn(struct sroce_xrceth *xrceth, __u32 srqn)
{
	xrceth->srqn = sroce_cpu_to_be32(srqn & SROCE_QPN_MASK);
}

/* ---- encoded values carried in AETH --------------------------------------- */

/*
 * RNR NAK timer: the 5-bit code in an RNR NAK (and in the QP attribute
 * min_rnr_timer) is the time the requester must wait before retrying, in
 * microseconds.  Code 0 is the largest value (655.36 ms).
 */
static inline __u32 sroce_rnr_timer_usec(unsigned int code)
{
	static const __u32 usec[32] = {
		655360,     10,     20,     30,     40,     60,     80,    120,
		   160,    240,    320,    480,    640,    960,   1280,   1920,
		  2560,   3840,   5120,   7680,  10240,  15360,  20480,  30720,
		 40960,  61440,  81920, 122880, 163840, 245760, 327680, 491520,
	};

	return usec[code & SROCE_AETH_VALUE_MASK];
}

/*
 * End-to-end credit count of an ACK syndrome: codes 0..30 encode 0..32768
 * receive WQEs (1, 1.5, 2 times powers of two); 31 means "no credit
 * information" and returns -1.
 */
static inline int sroce_aeth_credits(unsigned int code)
{
	static const int credits[32] = {
		    0,     1,     2,     3,     4,     6,     8,    12,
		   16,    24,    32,    48,    64,    96,   128,   192,
		  256,   384,   512,   768,  1024,  1536,  2048,  3072,
		 4096,  6144,  8192, 12288, 16384, 24576, 32768,    -1,
	};

	return credits[code & SROCE_AETH_VALUE_MASK];
}

#endif /* SROCE_WIRE_H */
