/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mr.h - memory regions and their keys.
 *
 * A key is (index << 8) | tag: the index names the slot in sdev->mr_xa, the
 * tag (a per-device counter) makes a stale key that names a reused slot
 * fail the lookup.  lkey and rkey are equal; what a key may be used for is
 * decided by the MR's access flags.
 *
 * Lifetime: the MR starts with one reference owned by its verbs object.
 * The datapath looks MRs up with sroce_mr_get() (RCU + refcount) and drops
 * them with sroce_mr_put().  Deregistration removes the key from the
 * xarray, drops the verbs reference, waits until the datapath dropped its
 * references, then unpins the memory and frees the MR after an RCU grace
 * period (lookups may still be reading it).
 */
#ifndef SROCE_MR_H
#define SROCE_MR_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>

#include "sroce.h"

enum sroce_mr_type {
	SROCE_MR_DMA,		/* kernel virtual addresses, whole space */
	SROCE_MR_USER,		/* pinned user pages */
	SROCE_MR_FAST_REG,	/* kernel page list, registered by REG_MR */
	SROCE_MR_MW,		/* a memory window (mw.h): a key, no memory */
	SROCE_MR_ODP,		/* user pages on demand, not pinned (odp.h) */
};

/* Longest page list of a fast-registration MR. */
#define SROCE_MAX_FRMR_PAGES	512

struct sroce_mr {
	struct ib_mr ibmr;		/* lkey, rkey, iova, length, pd */
	/*
	 * The key the datapath accepts (lkey == rkey).  Not ibmr.lkey: a
	 * ULP rewrites that with ib_update_fast_reg_key() before it posts
	 * the REG_MR that makes the new key valid.
	 */
	u32 key;
	enum sroce_mr_type type;
	int access;			/* IB_ACCESS_* */
	struct ib_umem *umem;		/* SROCE_MR_USER, an ib_umem_odp's: ODP */
	struct page **pages;		/* SROCE_MR_USER, one per PAGE_SIZE */
	unsigned long npages;
	unsigned int first_offset;	/* offset of ibmr.iova in pages[0] */
	u64 *page_list;			/* SROCE_MR_FAST_REG: kernel VAs ... */
	u32 max_pages;			/* ... room for this many ... */
	u32 nmapped;			/* ... of which map_mr_sg filled these */
	/*
	 * May the keys be used?  Always for DMA and user MRs; for a
	 * fast-registration MR from REG_MR until LOCAL_INV (or an
	 * invalidating SEND).  Written with WRITE_ONCE by the requester or
	 * responder that executes those, read by sroce_mr_check().
	 */
	bool valid;
	/*
	 * Memory windows (mw.h), under sdev->mw_lock.  An MR counts the
	 * windows bound to it; a window has a type (1 or 2), the MR it is
	 * bound to (ibmr.iova/length/pd and access describe the window),
	 * and for type 2 the QP it was bound through.
	 */
	u32 num_mw;
	u8 mw_type;
	bool mw_dead;		/* window deallocated: binds refused */
	u32 mw_qpn;
	struct sroce_mr *parent;
	/*
	 * SROCE_MR_ODP (odp.c): odp_lock orders datapath copies against
	 * the MMU notifier's invalidation, and guards the range the fault
	 * work item is asked to fault in next, and the pages its last
	 * fault could not map (while fault_err; from bad_start[w] to
	 * bad_end[w], where w is whether the access was a write: a
	 * read-only page is bad for a write only).
	 */
	spinlock_t odp_lock;
	struct work_struct odp_work;
	u64 fault_start, fault_end;
	bool fault_write;
	bool fault_err;
	u64 bad_start[2], bad_end[2];
	refcount_t ref;
	struct completion released;	/* ref reached zero */
	struct rcu_head rcu;
};

static inline struct sroce_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct sroce_mr, ibmr);
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata);
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata);
int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg);
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset);

/*
 * Local memory operations, executed by the requester (IB_WR_REG_MR, kernel
 * QPs only: see SROCE_WR_REG_MR in qp.h; IB_WR_LOCAL_INV) and the
 * responder (SEND_WITH_INV).  @pd is the QP's PD.  Return 0 or -EINVAL;
 * the caller completes the WQE with IB_WC_MW_BIND_ERR (REG_MR) or
 * IB_WC_LOC_PROT_ERR (LOCAL_INV), or NAKs (SEND_WITH_INV).
 *
 * sroce_mr_fast_reg: make the fast-registration MR that was posted with
 * key @mr_key valid under @key with @access.  Only the low 8 bits (the
 * consumer's key byte) may differ between the two (IBA 10.6.3.4), the MR
 * must be in @pd, not valid, and its page list (ib_map_mr_sg()) must cover
 * ibmr.iova/length.
 * sroce_mr_invalidate: make the fast-registration MR whose valid key is
 * exactly @key invalid.  Invalidating an invalid MR is allowed.
 */
int sroce_mr_fast_reg(struct sroce_dev *sdev, struct ib_pd *pd, u32 mr_key,
		      u32 key, int access);
int sroce_mr_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 key);

/* For mw.c: a new MR object, its key, and its end. */
struct sroce_mr *sroce_mr_new(struct sroce_dev *sdev, enum sroce_mr_type type,
			      int access);
int sroce_mr_publish(struct sroce_dev *sdev, struct sroce_mr *mr);
void sroce_mr_release(struct sroce_dev *sdev, struct sroce_mr *mr);

/* Datapath. */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key);
void sroce_mr_put(struct sroce_mr *mr);
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access);

enum sroce_copy_dir {
	SROCE_TO_MR,
	SROCE_FROM_MR,
};

/*
 * The datapath's access to MR memory.  0, or for an ODP MR -EAGAIN while
 * its pages are faulted in and -EFAULT when they cannot be (odp.h); the
 * other MR types always succeed.
 */
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir);
int sroce_mr_store_u64(struct sroce_mr *mr, u64 iova, u64 val);
int sroce_odp_ready(struct sroce_mr *mr, u64 iova, u64 len, bool write);

/*
 * Before a request uses [@iova, @iova + @len) of @mr (checked): present,
 * or being faulted in (-EAGAIN) for an ODP MR.  Other MRs always are.
 */
static inline int sroce_mr_ready(struct sroce_mr *mr, u64 iova, u64 len,
				 bool write)
{
	if (likely(mr->type != SROCE_MR_ODP))
		return 0;
	return sroce_odp_ready(mr, iova, len, write);
}

/*
 * Start the fault of [@iova, @iova + @len) ahead of its use, if that range
 * is an ODP MR's for @pd with the access asked (otherwise the use meets
 * whatever error it has): 0 when present, -EAGAIN while being faulted in,
 * another error when it cannot be mapped.
 */
static inline int sroce_mr_prefault(struct sroce_mr *mr, struct ib_pd *pd,
				    u64 iova, u64 len, bool write)
{
	if (likely(mr->type != SROCE_MR_ODP) ||
	    sroce_mr_check(mr, pd, iova, len,
			   write ? IB_ACCESS_LOCAL_WRITE : 0))
		return 0;
	return sroce_odp_ready(mr, iova, len, write);
}

struct page *sroce_mr_user_page(struct sroce_mr *mr, u64 iova,
				unsigned int *poff);

#endif /* SROCE_MR_H */
