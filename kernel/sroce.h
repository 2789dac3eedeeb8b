/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sroce.h - the device object and the limits sroce advertises and enforces.
 *
 * Object ownership, top down:
 *
 *   struct sroce_dev     allocated by ib_alloc_device() in newlink, owned
 *                        by the RDMA core from ib_register_device() on; the
 *                        core calls sroce_dealloc_driver() once, after the
 *                        last object of the device was destroyed and before
 *                        it frees the memory.  The datapath reaches it only
 *                        through ib_device_get_by_netdev(), which fails once
 *                        unregistration started and whose reference blocks
 *                        unregistration until it is dropped.
 *   ->ndev               one netdev reference (ndev_tracker), dropped in
 *                        sroce_dealloc_driver().
 *   ->snet               one user reference on the per-netns UDP sockets,
 *                        dropped in sroce_dealloc_driver().
 *   PD, ucontext, CQ, QP memory for these is allocated and freed by the core
 *                        (INIT_RDMA_OBJ_SIZE); the driver only initialises
 *                        and tears down what it adds.
 *   MR                   allocated by the driver (mr.c), refcounted for the
 *                        datapath, see mr.h.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/atomic.h>
#include <linux/idr.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "cc.h"
#include "uapi/sroce-abi.h"

#define SROCE_DRV_NAME		"sroce"

/*
 * Limits reported by query_device and enforced by the verbs: none below
 * what rdma_rxe advertises (its rxe_param.h), so that no application that
 * runs on rdma_rxe is refused here.  The object counts are ceilings of the
 * module parameters of the same names (device.c), which the tests use to
 * check the enforcement without creating a million objects; what really
 * bounds them is memory (an idle RC QP with its CQ costs about 70 KiB,
 * Documentation/performance.rst).  Every counter, xarray range and ring
 * size below is sized for them.
 */
#define SROCE_MAX_UCONTEXT	4096
#define SROCE_MAX_PD		BIT(20)
/*
 * MRs and memory windows share the key index space (24 bits wide, see
 * mr.c) and one count: up to BIT(20) in all, as many as rdma_rxe's
 * separate 2^19 - 1 MRs and 2^19 - 1 windows together.
 */
#define SROCE_MAX_MR		BIT(20)
#define SROCE_MAX_MR_SIZE	U64_MAX		/* ranges checked for wrap */
#define SROCE_MAX_QP		BIT(20)
#define SROCE_MAX_QP_WR		BIT(20)		/* ring indices are u32 */
#define SROCE_FIRST_QPN		16		/* 0 and 1 are special, keep a gap */
#define SROCE_LAST_QPN		0xfffffe	/* QPNs are 24 bits ... */
#define SROCE_MCAST_QPN		0xffffff	/* ... this one means multicast */
#define SROCE_MAX_SGE		32
#define SROCE_MAX_SGE_RD	32
#define SROCE_MAX_INLINE_DATA	512
#define SROCE_MAX_CQ		BIT(20)
#define SROCE_MAX_CQE		65535
/*
 * Outstanding READ/atomic per QP.  As rdma_rxe: perftest's ib_read_bw
 * sets max_rd_atomic to the peer's max_qp_rd_atom, so with less an sroce
 * requester could not connect to an rdma_rxe responder.  Costs a
 * 128-entry responder resource cache per QP (responder.h).
 */
#define SROCE_MAX_QP_RD_ATOM	128
#define SROCE_MAX_RES_RD_ATOM	(SROCE_MAX_QP * SROCE_MAX_QP_RD_ATOM)

/*
 * Memory a process has the module allocate for it in proportion to sizes
 * it chooses (a ring's pages, a send queue's shadow, an MR's page array):
 * charged to its memory cgroup, and when a limit (the cgroup's or the
 * machine's) is reached the request fails with ENOMEM instead of waking
 * the OOM killer or warning in the kernel log.
 */
#define SROCE_GFP_SIZED		(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | \
				 __GFP_NOWARN)

#define SROCE_MAX_AH		32768
#define SROCE_MAX_MCAST_GRP	8192		/* groups per device */
#define SROCE_MAX_MCAST_QP	56		/* QPs attached to one group */
#define SROCE_MAX_SRQ		BIT(20)
#define SROCE_MAX_SRQ_WR	BIT(20)
#define SROCE_MAX_XRCD		65536
/*
 * The port's P_Key table has SROCE_MAX_PKEYS slots (rdma_rxe advertises as
 * many partitions) of which only slot 0 holds a P_Key, the default
 * full-member 0xffff: RoCE has no subnet manager to fill the others, so
 * they read 0, the IB encoding of an empty slot, and a QP may name slot 0
 * only.
 */
#define SROCE_MAX_PKEYS		64
#define SROCE_GID_TBL_LEN	1024
#define SROCE_MAX_MSG_SIZE	0x80000000U	/* 2 GiB, the IB limit */
#define SROCE_LOCAL_CA_ACK_DELAY 15
#define SROCE_VENDOR_ID		0xffffff	/* no IEEE OUI */

/*
 * Bytes a RoCEv2 packet adds around its payload in the worst case: IPv6
 * header (40), UDP (8), BTH (12), the largest extension combination that
 * carries payload (RETH 16 + ImmDt 4) and the ICRC (4).  The active IB MTU
 * is the largest IB MTU whose payload plus this fits the netdev MTU:
 * 1500 -> 1024, 9000 -> 4096.
 */
#define SROCE_MAX_PKT_OVERHEAD	(40 + 8 + 12 + 16 + 4 + 4)

struct sroce_net;

/*
 * Counters of one device; the datapath bumps them locklessly.  Grouped by
 * the pipeline stage that owns them.  Each one must also be listed in
 * stats.c, which exports them as port hw counters.  Packet and byte
 * counters count RoCE packets from the BTH to the ICRC (no UDP/IP
 * headers) in both directions, so that one side's tx equals its peer's rx
 * on a lossless link.
 */
struct sroce_stats {
	/* recv.c */
	atomic64_t rx_packets;
	atomic64_t rx_hooked;		/* of those, taken before the IP stack */
	atomic64_t rx_hook_deferred;	/* left to it for netfilter, IPsec */
	atomic64_t rx_bytes;
	atomic64_t rx_dropped;		/* sum of the reasons below */
	atomic64_t rx_bad_header;
	atomic64_t rx_bad_opcode;
	atomic64_t rx_bad_icrc;
	atomic64_t rx_icrc_trusted;	/* never crossed a wire: not checked */
	atomic64_t rx_no_qp;
	atomic64_t rx_bad_qp_type;
	atomic64_t rx_bad_state;
	atomic64_t rx_bad_addr;
	atomic64_t rx_bad_pkey;
	atomic64_t rx_no_mem;		/* a copy or split failed to allocate */
	atomic64_t rx_cnp;		/* congestion notifications received */
	atomic64_t rx_ecn_ce;		/* packets marked CE (congestion) */
	/* transmit.c */
	atomic64_t tx_packets;
	atomic64_t tx_bytes;
	atomic64_t tx_dropped;
	atomic64_t tx_cnp;		/* congestion notifications sent */
	atomic64_t tx_batches;		/* batches of 2+ packets (pkt.h) */
	atomic64_t tx_icrc_skipped;	/* for sroce in this host: no ICRC */
	/* requester.c */
	atomic64_t req_retransmits;
	atomic64_t req_timeouts;
	atomic64_t req_probes;		/* first stage of the retransmit timer */
	atomic64_t req_empty_resends;	/* resends whose bytes were gone */
	atomic64_t req_retry_exceeded;
	atomic64_t req_rnr_retry_exceeded;
	/* sq_poll.c */
	atomic64_t sq_poll_runs;	/* SQ pollers a doorbell started */
	atomic64_t sq_poll_kicks;	/* new WQEs a poller found and sent */
	atomic64_t sq_poll_yields;	/* pollers that left their CPU to a task */
	atomic64_t sq_poll_backoffs;	/* ... having found no post: doorbells */
	/* cc.c */
	atomic64_t cc_rate_cuts;	/* DCQCN rate cuts (CNPs acted on) */
	/* completer.c */
	atomic64_t comp_out_of_order;
	atomic64_t comp_held;		/* READ responses past a gap, kept */
	atomic64_t comp_patience_raised; /* a QP learned deeper reordering */
	atomic64_t comp_naks_seq;
	atomic64_t comp_naks_fatal;
	atomic64_t comp_rnr_naks;
	atomic64_t comp_fault_waits;	/* a response met ODP pages faulting in */
	atomic64_t comp_duplicates;
	atomic64_t comp_ghosts;
	atomic64_t comp_dropped;
	/* responder.c */
	atomic64_t resp_seq_naks;
	atomic64_t resp_rnr_naks;
	atomic64_t resp_fatal_naks;
	atomic64_t resp_duplicates;
	atomic64_t resp_read_in_flight;	/* a READ asked again for responses
					 * still on their way: ignored
					 */
	atomic64_t resp_bad_key;	/* R_Key or MR check failed: NAKed */
	atomic64_t resp_no_recv;	/* UC/UD: no receive posted, dropped
					 * (RC answers with an RNR NAK)
					 */
	atomic64_t resp_held;		/* RC: past a gap, kept until it fills */
	atomic64_t resp_dropped;
	atomic64_t resp_xrc_bad_srq;	/* XRCETH names no XRC SRQ of the
					 * target QP's domain: NAKed
					 */
	/* cq.c */
	atomic64_t cq_overflows;
	/* odp.c */
	atomic64_t odp_faults;		/* fault work items run */
	atomic64_t odp_fault_errors;	/* ... that could not map the range */
	atomic64_t odp_invalidations;	/* MMU notifier calls on ODP MRs */
};

struct sroce_dev {
	struct ib_device ibdev;		/* first: ib_alloc_device() */
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	bool rx_hooked;			/* rx_hook_ops on ndev: rx_hook.c */
	struct nf_hook_ops rx_hook_ops;
	struct sroce_net *snet;
	struct ib_device_attr attr;	/* constant after newlink */

	/* Last port state announced to the core; changed under RTNL only. */
	enum ib_port_state port_state;

	/* Memory keys: index (key >> 8) -> struct sroce_mr, see mr.c. */
	struct xarray mr_xa;
	u32 mr_next;			/* cyclic allocation cursor */
	spinlock_t mw_lock;		/* window binding state, see mw.h */
	atomic_t key_tag;		/* low 8 bits of new keys */

	/* QP numbers: qpn -> struct sroce_qp, see qp.c; BH-safe lock. */
	struct xarray qp_xa;
	u32 qp_next;			/* cyclic allocation cursor */
	struct ida srq_ida;		/* SRQ numbers */
	/* XRC SRQs by number, for XRCETHs: srq_num -> sroce_srq (srq.c). */
	struct xarray xrc_srq_xa;
	/*
	 * XRC target QPs from creation to the end of their destroy, after
	 * the last user of qp->xrc_srq: what an XRC SRQ's destroy walks
	 * (qp.c).  qp_xa loses a QP at the start of its destroy.
	 */
	spinlock_t xrc_tgt_lock;
	struct list_head xrc_tgt_list;

	/* rdma counter ids -> struct sroce_counter (counter.c). */
	struct xarray counter_xa;

	/* Address handle numbers: ah_num -> struct sroce_ah (ah.c). */
	struct xarray ah_xa;
	u32 ah_next;

	/* Multicast groups with attached QPs: struct sroce_mcg (mcast.c). */
	spinlock_t mcg_lock;
	struct list_head mcg_list;
	unsigned int num_mcg;

	/*
	 * Object counts, checked against the limits in attr (the module
	 * parameters, at most SROCE_MAX_*).
	 */
	atomic_t num_ucontext;
	atomic_t num_pd;
	atomic_t num_mr;
	atomic_t num_odp_mr;		/* of them on-demand paged (odp.c) */
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_srq;
	atomic_t num_xrcd;
	atomic_t num_ah;

	/*
	 * Truesize held past a gap by all QPs: RC requests (responder.h),
	 * READ responses (completer.h).
	 */
	atomic_t resp_held_bytes;
	atomic_t comp_held_bytes;

	/* Congestion control parameters (cc.h), sysfs ports/1/cc/. */
	struct sroce_cc_params cc;

	struct sroce_stats stats;
};

struct sroce_ucontext {
	struct ib_ucontext ibuc;
};

struct sroce_pd {
	struct ib_pd ibpd;
};

struct sroce_xrcd {
	struct ib_xrcd ibxrcd;
};

static inline struct sroce_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct sroce_dev, ibdev);
}

static inline struct sroce_pd *to_spd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct sroce_pd, ibpd);
}

static inline struct sroce_ucontext *to_suc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct sroce_ucontext, ibuc);
}

/*
 * Take one unit of a limited resource; false when @max are in use.
 * Release with atomic_dec().
 */
static inline bool sroce_res_get(atomic_t *count, int max)
{
	if (atomic_inc_return(count) <= max)
		return true;
	atomic_dec(count);
	return false;
}

/* A received packet dropped for want of memory (one reason of rx_dropped). */
static inline void sroce_rx_drop_no_mem(struct sroce_dev *sdev)
{
	atomic64_inc(&sdev->stats.rx_no_mem);
	atomic64_inc(&sdev->stats.rx_dropped);
}

/* device.c */
int sroce_dev_add(const char *ibdev_name, struct net_device *ndev);
void sroce_dev_port_update(struct sroce_dev *sdev);
enum ib_mtu sroce_active_mtu(unsigned int netdev_mtu);

/* stats.c */
struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port);
int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index);
const char *sroce_stat_name(const struct sroce_stats *stats,
			    const atomic64_t *counter);
void sroce_stats_read(struct rdma_hw_stats *hw, const struct sroce_stats *s);

/* counter.c: per-QP counters (`rdma statistic qp`) */
struct rdma_hw_stats *sroce_counter_alloc_stats(struct rdma_counter *counter);
int sroce_counter_update_stats(struct rdma_counter *counter);
int sroce_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp);
int sroce_counter_unbind_qp(struct ib_qp *ibqp);
int sroce_counter_dealloc(struct rdma_counter *counter);

/* restrack.c: `rdma resource show ... -dd` */
int sroce_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int sroce_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int sroce_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);

/* pd.c */
int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata);
extern const struct uapi_definition sroce_pd_uapi_defs[];

int sroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);
int sroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata);

/* ucontext.c */
int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata);
void sroce_dealloc_ucontext(struct ib_ucontext *ibuc);
int sroce_query_ucontext(struct ib_ucontext *ibuc,
			 struct uverbs_attr_bundle *attrs);
extern const struct uapi_definition sroce_ucontext_uapi_defs[];
void sroce_disassociate_ucontext(struct ib_ucontext *ibuc);
int sroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void sroce_mmap_free(struct rdma_user_mmap_entry *rentry);
struct sroce_ring_pages;
struct rdma_user_mmap_entry *sroce_mmap_insert(struct ib_ucontext *ibuc,
					       struct sroce_ring_pages *pages,
					       u64 *offset);

#endif /* SROCE_H */
