/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * sroce kernel <-> provider ABI.
 *
 * This is the only definition of the interface between sroce.ko and
 * libsroce-rdmav34.so: driver-private command and response data appended to
 * the uverbs commands, the mmap offsets handed out for shared rings, and the
 * layout of those rings and of the work queue entries written into them.
 * Both the module and the provider include this file; nothing here may
 * depend on kernel-internal or libibverbs-internal headers.
 *
 * Everything is little endian (x86_64, the host byte order of both sides)
 * and naturally aligned, so that the layout is the same for the kernel and
 * for C and C++ userspace compilers.  Sizes are checked at compile time by
 * both sides (see sroce_abi_checks.h users).
 */
#ifndef SROCE_ABI_H
#define SROCE_ABI_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/*
 * Bumped on any incompatible change.  The kernel reports it as the uverbs
 * ABI version of the device; the provider accepts exactly this value.
 */
#define SROCE_ABI_VERSION	2

/*
 * Driver id reported by the kernel device (ib_device_ops.driver_id) and
 * passed back by the provider on every command.  It is deliberately outside
 * enum rdma_driver_id so it never collides with an in-tree driver: 'S' 'R'.
 */
#define SROCE_DRIVER_ID		0x5352

/* The rdma link type: `rdma link add NAME type sroce netdev DEV`. */
#define SROCE_LINK_TYPE		"sroce"

/* -------------------------------------------------------------------------
 * Shared rings
 *
 * A ring is a header of SROCE_RING_HDR_SIZE bytes followed by
 * 2^log2_entries slots of entry_size bytes each (entry_size is a power of
 * two, at least 64), at @offset (a multiple of SROCE_RING_ALIGN) in one
 * mmap()ed, page-aligned region.  A CQ's or SRQ's ring is alone in its
 * region, at offset 0.  A QP's send and receive rings share one region
 * (one mmap() per QP): the send ring at 0, the receive ring right after
 * it; both sroce_ring_info carry the same mmap_offset and mmap_size.  Indices are
 * free-running 32-bit counters; slot = index & (2^log2_entries - 1); the ring
 * is empty when producer == consumer and full when
 * producer - consumer == 2^log2_entries.
 *
 * Each index has one writer: the producer publishes slots with a release
 * store of @producer after writing them, the consumer frees slots with a
 * release store of @consumer after reading them; each side reads the other
 * side's index with an acquire load.  The kernel never trusts an index it
 * reads from a ring: it keeps its own copy of the index it owns and checks
 * that the other one is within one ring size of it.
 *
 *   ring         producer         consumer
 *   send queue   provider         kernel
 *   recv queue   provider         kernel
 *   completion   kernel           provider
 */
#define SROCE_RING_HDR_SIZE	256
#define SROCE_RING_ALIGN	64

struct sroce_ring_hdr {
	__u32 producer;
	__u32 pad0[15];			/* producer and consumer on separate cache lines */
	__u32 consumer;
	__u32 pad1[15];
	/*
	 * Written by the kernel only.  Send rings of a QP: SROCE_SQ_FLAG_*;
	 * receive rings of a QP: SROCE_RQ_FLAG_*; other rings: reserved,
	 * zero.
	 */
	__u32 flags;
	__u32 pad2[31];
};

/*
 * The QP is in the error state: receives posted now must complete with
 * IBV_WC_WR_FLUSH_ERR, and only the kernel can write that completion.  After
 * publishing receives the provider issues a full memory barrier, reads this
 * flag and, when set, rings the send doorbell, on which the kernel flushes
 * the receive queue.  (The kernel sets the flag, issues a full barrier and
 * then flushes, so a receive is either seen by that flush or sees the flag.)
 */
#define SROCE_RQ_FLAG_FLUSH	(1U << 0)

/*
 * A kernel poller watches the send ring's producer index (the module
 * parameter sq_poll_us, Documentation/admin-guide.rst): WQEs published now
 * will be sent without a doorbell.  After publishing send WQEs the provider
 * issues a full memory barrier and reads this flag; only when it is clear
 * does it ring the doorbell.  (The poller clears the flag, issues a full
 * barrier and then reads the producer index once more, so a WQE is either
 * seen by the poller or sees the flag clear.)  The RQ flush doorbell above
 * is rung whatever this flag says.
 */
#define SROCE_SQ_FLAG_POLLED	(1U << 0)

/* Where and how big a ring is; returned by the create commands. */
struct sroce_ring_info {
	__aligned_u64 mmap_offset;	/* offset to pass to mmap() on the cmd fd */
	__u32 mmap_size;		/* bytes to map: the whole region */
	__u32 log2_entries;
	__u32 entry_size;
	__u32 offset;			/* of the ring's header in the region */
};

/* -------------------------------------------------------------------------
 * Work queue entries
 */

/* A scatter/gather element, as posted in work requests. */
struct sroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* sroce_send_wqe.flags: the IB send flags we implement (same bits as IB_SEND_*). */
enum sroce_send_flags {
	SROCE_SEND_FENCE	= 1 << 0,
	SROCE_SEND_SIGNALED	= 1 << 1,
	SROCE_SEND_SOLICITED	= 1 << 2,
	SROCE_SEND_INLINE	= 1 << 3,
};

/*
 * sroce_send_wqe.wr.bind_mw.bind_flags.  A BIND_MW WQE binds a type 2
 * window (IBV_WR_BIND_MW posted by the consumer) or, with SROCE_BIND_VERB,
 * a type 1 window (ibv_bind_mw(), which the provider posts the same way).
 * The window is the one whose key index is that of @mw_rkey.
 */
enum sroce_bind_flags {
	SROCE_BIND_VERB		= 1 << 0,
};

/*
 * IBTA 1.5 ATOMIC WRITE: IB_UVERBS_WR_ATOMIC_WRITE (IBV_WR_ATOMIC_WRITE) and
 * its completion opcode IB_UVERBS_WC_ATOMIC_WRITE (IBV_WC_ATOMIC_WRITE),
 * which the uapi headers of kernels before 6.2 lack.
 */
#define SROCE_WR_ATOMIC_WRITE	15
#define SROCE_WC_ATOMIC_WRITE	9

/*
 * Send queue slot.  @opcode is an enum ib_uverbs_wr_opcode value (the values
 * of IBV_WR_* in libibverbs).  Following the fixed part are either @num_sge
 * sroce_sge elements or, with SROCE_SEND_INLINE, @inline_len bytes of data.
 */
struct sroce_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 num_sge;
	__u16 flags;
	__u32 inline_len;
	union {
		__be32 imm_data;	/* *_WITH_IMM */
		__u32 invalidate_rkey;	/* SEND_WITH_INV, LOCAL_INV */
	} ex;
	__u32 xrc_srqn;			/* XRC send QPs: the remote XRC SRQ */
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
			__u8 data[8];	/* written at remote_addr as they are */
		} atomic_write;		/* SROCE_WR_ATOMIC_WRITE, no SGEs */
		struct {
			__u32 ah_num;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mw_rkey;		/* the new rkey of the window */
			__u32 mr_lkey;		/* the MR the window is bound to */
			__u32 access;		/* IB_ACCESS_* / IBV_ACCESS_* */
			__u32 bind_flags;	/* SROCE_BIND_* */
		} bind_mw;
		__u8 pad[40];
	} wr;
	/* struct sroce_sge sge[num_sge] or __u8 inline_data[inline_len] */
};

/* Receive queue (and SRQ) slot; @num_sge sroce_sge elements follow. */
struct sroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	/* struct sroce_sge sge[num_sge] */
};

/*
 * Completion ring slot: exactly struct ib_uverbs_wc from
 * <rdma/ib_user_verbs.h> (48 bytes, the layout of struct ibv_wc), so that the
 * provider can hand it to ibv_poll_cq() callers without translation.
 */
#define SROCE_CQE_SIZE		64

/*
 * wc_flags of a CQE carry the values userspace sees (enum ibv_wc_flags),
 * because the provider copies CQEs out unchanged.  Beware: the kernel's
 * IB_WC_WITH_INVALIDATE is 1 << 2, which libibverbs reads as
 * IBV_WC_IP_CSUM_OK; use these instead of IB_WC_* when filling the ring.
 */
enum sroce_wc_flags {
	SROCE_WC_GRH		= 1 << 0,
	SROCE_WC_WITH_IMM	= 1 << 1,
	SROCE_WC_WITH_INV	= 1 << 3,
};

/* -------------------------------------------------------------------------
 * Driver data appended to uverbs commands and responses
 */

struct sroce_alloc_ucontext_resp {
	__u32 abi_version;		/* SROCE_ABI_VERSION */
	__u32 max_inline_data;
	__u32 max_send_sge;
	__u32 max_recv_sge;
};

struct sroce_create_cq_resp {
	struct sroce_ring_info cq;
};

struct sroce_resize_cq_resp {
	struct sroce_ring_info cq;
};

/*
 * create_qp's command data, optional: a shorter command (an older provider
 * sends none) reads as zeros, a longer one must be zero beyond this.
 * sq_poll_us: poll this QP's send queue from another CPU for this long
 * after its last post (kernel/sq_poll.c), at most the module parameter
 * sq_poll_max_us, at least the module parameter sq_poll_us.  An older
 * kernel ignores the field: the provider learns whether a poller runs
 * from SROCE_SQ_FLAG_POLLED only, never from this.
 */
struct sroce_create_qp_cmd {
	__u32 sq_poll_us;
	__u32 reserved;			/* 0 */
};

/* Both rings in one region (see "Shared rings"). */
struct sroce_create_qp_resp {
	struct sroce_ring_info sq;
	struct sroce_ring_info rq;	/* zeroed when the QP uses an SRQ */
};

struct sroce_create_srq_resp {
	struct sroce_ring_info rq;
	__u32 srq_num;
	__u32 reserved;
};

struct sroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/* -------------------------------------------------------------------------
 * The doorbell file
 *
 * The send doorbell is a write() of one struct sroce_doorbell, the QPN of
 * a QP of this context, to a file the provider opens once per context with
 * the driver method below (RDMA_VERBS_IOCTL on the command fd, driver id
 * SROCE_DRIVER_ID): object SROCE_OBJECT_DOORBELL, method
 * SROCE_METHOD_DOORBELL_ALLOC, one mandatory attribute
 * SROCE_ATTR_DOORBELL_ALLOC_FD (an FD attribute, length 0) in whose data the
 * kernel returns the new file descriptor (close-on-exec).  The write()
 * does what an IB_USER_VERBS_CMD_POST_SEND with no work requests does
 * (the send doorbell, and in the error state the RQ flush of
 * SROCE_RQ_FLAG_FLUSH) at a fraction of its cost; it returns
 * sizeof(struct sroce_doorbell) or fails with EINVAL (wrong length, no
 * such QP in this context, or the QP cannot send in its state) or EIO (the
 * context is closed or the device is gone).  A kernel without the method
 * answers the ioctl with EPROTONOSUPPORT (or EOPNOTSUPP): the provider
 * then keeps using the uverbs command.
 */
enum sroce_uverbs_objects {
	SROCE_OBJECT_DOORBELL = 1U << UVERBS_ID_NS_SHIFT,
};

enum sroce_doorbell_methods {
	SROCE_METHOD_DOORBELL_ALLOC = 1U << UVERBS_ID_NS_SHIFT,
};

enum sroce_doorbell_alloc_attrs {
	SROCE_ATTR_DOORBELL_ALLOC_FD = 1U << UVERBS_ID_NS_SHIFT,
};

struct sroce_doorbell {
	__u32 qpn;
};

/* -------------------------------------------------------------------------
 * Sharing a context: ibv_import_device(), ibv_import_pd(), ibv_import_mr()
 *
 * Another process (or another part of this one) that was handed a dup of
 * the command fd opens the same uverbs context.  Its provider learns what
 * sroce_alloc_ucontext_resp told the first one from UVERBS_METHOD_QUERY_CONTEXT
 * (object UVERBS_OBJECT_DEVICE) with the driver attribute
 * SROCE_ATTR_QUERY_CONTEXT_RESP, a PTR_OUT of struct
 * sroce_alloc_ucontext_resp (at least its size: what is longer comes back
 * zeroed).  A PD handle is checked with the driver method
 * SROCE_METHOD_PD_QUERY on UVERBS_OBJECT_PD, whose one mandatory attribute
 * SROCE_ATTR_QUERY_PD_HANDLE (an IDR attribute, read access) names a PD of
 * the context; it answers 0, or an error for any other handle.  An MR is
 * imported with the core's UVERBS_METHOD_QUERY_MR.  A kernel without these
 * answers EPROTONOSUPPORT (or EOPNOTSUPP): the import then fails.
 */
enum sroce_query_context_attrs {
	SROCE_ATTR_QUERY_CONTEXT_RESP = 1U << UVERBS_ID_NS_SHIFT,
};

enum sroce_pd_methods {
	SROCE_METHOD_PD_QUERY = 1U << UVERBS_ID_NS_SHIFT,
};

enum sroce_query_pd_attrs {
	SROCE_ATTR_QUERY_PD_HANDLE = 1U << UVERBS_ID_NS_SHIFT,
};

#endif /* SROCE_ABI_H */
