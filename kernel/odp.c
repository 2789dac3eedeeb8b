// SPDX-License-Identifier: GPL-2.0-only
/*
 * odp.c - on-demand paging (ODP) user MRs: memory registered without
 * being pinned (IB_ACCESS_ON_DEMAND), whose pages the datapath finds
 * present, or has faulted in, and which the kernel may take back at any
 * time (reclaim, munmap(), MADV_DONTNEED, fork's copy-on-write).
 *
 * The core's ib_umem_odp keeps the translation: for each page of the
 * range, an address with READ and WRITE permission bits, or 0 for a page
 * not present.  A software device's "DMA address" is the page's kernel
 * virtual address (ib_uses_virt_dma()), so the datapath copies through
 * it.  Three parties touch the list:
 *
 *  - the datapath (softirq, the posting thread, work items) reads it and
 *    copies under mr->odp_lock, after checking every page of the range;
 *  - the MMU notifier (sroce_odp_invalidate()) clears it under umem_mutex
 *    and odp_lock before the kernel frees or remaps the pages: once it
 *    returns, no copy uses them;
 *  - the fault work item fills it (ib_umem_odp_map_dma_and_lock(), which
 *    may sleep and so cannot run where packets are handled).
 *
 * A page the datapath needs and does not find is not waited for: the
 * fault is queued on the MR's work item and the caller tries again
 * later.  The responder answers the request with an RNR NAK, as RoCE NICs
 * do for a page fault, and the requester resends after the NAK's timer;
 * the requester retries its own WQE a tick later; the completer keeps a
 * READ response it cannot place and places it a tick later.
 * The requester faults a WQE's pages in before its first packet
 * (sroce_odp_prefault()), so that the last case is a race, not the rule.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <rdma/ib_umem_odp.h>

#include "mr.h"
#include "odp.h"

static struct ib_umem_odp *sroce_odp_umem(const struct sroce_mr *mr)
{
	return to_ib_umem_odp(mr->umem);
}

/* The user virtual address of @iova (already checked against the MR). */
static u64 sroce_odp_va(const struct sroce_mr *mr, u64 iova)
{
	return mr->umem->address + (iova - mr->ibmr.iova);
}

static u64 sroce_odp_bits(bool write)
{
	return write ? ODP_READ_ALLOWED_BIT | ODP_WRITE_ALLOWED_BIT :
		       ODP_READ_ALLOWED_BIT;
}

/*
 * Are all pages of [@va, @va + @len) present with the access a write (or
 * a read) needs?  Called under odp_lock for a copy; without it for a
 * check whose answer a later copy confirms.
 */
static bool sroce_odp_present(struct ib_umem_odp *odp, u64 va, u64 len,
			      bool write)
{
	u64 bits = sroce_odp_bits(write);
	unsigned long idx, last;

	if (!len)
		return true;
	idx = (va - ib_umem_start(odp)) >> odp->page_shift;
	last = (va + len - 1 - ib_umem_start(odp)) >> odp->page_shift;
	for (; idx <= last; idx++) {
		if ((READ_ONCE(odp->dma_list[idx]) & bits) != bits)
			return false;
	}
	return true;
}

/*
 * Ask the work item to fault [@va, @va + @len) in; ranges asked for
 * before it runs are merged.  Called under odp_lock.
 */
static void sroce_odp_queue_fault(struct sroce_mr *mr, u64 va, u64 len,
				  bool write)
{
	if (mr->fault_end == mr->fault_start) {
		mr->fault_start = va;
		mr->fault_end = va + len;
	} else {
		mr->fault_start = min(mr->fault_start, va);
		mr->fault_end = max(mr->fault_end, va + len);
	}
	mr->fault_write |= write;
	queue_work(system_unbound_wq, &mr->odp_work);
}

/*
 * The range must be present: 0, or -EAGAIN with its fault queued, or
 * -EFAULT when it holds pages the last fault could not map (an address
 * with no mapping, a write to a read-only one), given once: the next
 * call faults again.  A range clear of those pages is not failed for
 * them.
 */
static int sroce_odp_need(struct sroce_mr *mr, u64 va, u64 len, bool write)
{
	if (sroce_odp_present(sroce_odp_umem(mr), va, len, write))
		return 0;
	if (mr->fault_err && va < mr->bad_end[write] &&
	    va + len > mr->bad_start[write]) {
		mr->fault_err = false;
		return -EFAULT;
	}
	sroce_odp_queue_fault(mr, va, len, write);
	return -EAGAIN;
}

int sroce_odp_ready(struct sroce_mr *mr, u64 iova, u64 len, bool write)
{
	u64 va = sroce_odp_va(mr, iova);
	int err;

	/* Lockless first: the common case finds the pages there. */
	if (sroce_odp_present(sroce_odp_umem(mr), va, len, write))
		return 0;
	spin_lock_bh(&mr->odp_lock);
	err = sroce_odp_need(mr, va, len, write);
	spin_unlock_bh(&mr->odp_lock);
	return err;
}

int sroce_odp_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		   enum sroce_copy_dir dir)
{
	struct ib_umem_odp *odp = sroce_odp_umem(mr);
	u64 va = sroce_odp_va(mr, iova);
	int err;

	spin_lock_bh(&mr->odp_lock);
	err = sroce_odp_need(mr, va, len, dir == SROCE_TO_MR);
	while (!err && len) {
		unsigned long idx = (va - ib_umem_start(odp)) >> odp->page_shift;
		u32 poff = va & (BIT(odp->page_shift) - 1);
		u32 chunk = min_t(u64, len, BIT(odp->page_shift) - poff);
		void *page_va = (void *)(uintptr_t)(odp->dma_list[idx] &
						    ODP_DMA_ADDR_MASK);

		if (dir == SROCE_TO_MR)
			memcpy(page_va + poff, buf, chunk);
		else
			memcpy(buf, page_va + poff, chunk);
		buf += chunk;
		va += chunk;
		len -= chunk;
	}
	spin_unlock_bh(&mr->odp_lock);
	return err;
}

/*
 * Fault the range in, in process context: hmm_range_fault() on the
 * registering process's mm, as a CPU access would.  The range is the MR's
 * (checked by the datapath), so only the mm can refuse it.
 */
static int sroce_odp_fault(struct sroce_mr *mr, u64 va, u64 len, bool write,
			   bool fault)
{
	struct ib_umem_odp *odp = sroce_odp_umem(mr);
	int ret;

	ret = ib_umem_odp_map_dma_and_lock(odp, va, len,
					   sroce_odp_bits(write), fault);
	if (ret < 0)
		return ret;
	mutex_unlock(&odp->umem_mutex);
	return 0;
}

/*
 * The device of an ODP MR: the umem's, set before the MMU notifier can
 * call us (ibmr.device is set by the core only after the registration).
 */
static struct sroce_dev *sroce_odp_dev(struct ib_umem_odp *odp)
{
	return to_sdev(odp->umem.ibdev);
}

/* Widen [*@start, *@end) (empty when equal) to take in one page at @p. */
static void sroce_odp_add_bad(u64 *start, u64 *end, u64 p, u64 page)
{
	if (*start == *end)
		*start = p;
	*end = p + page;
}

/*
 * A fault of [@start, @end) failed: which pages cannot be mapped?  The
 * range may be several requests merged, some of them good: fault it page
 * by page, so that those are mapped and only a request that names a bad
 * page fails.  A merged fault asks for writing if one request did, so a
 * page that cannot be written is tried for reading too: a read-only page
 * fails only the writes that name it.  The first and last bad page bound
 * what is recorded, for each kind of access.
 */
static void sroce_odp_find_bad(struct sroce_mr *mr, u64 start, u64 end,
			       bool write)
{
	u64 page = BIT(sroce_odp_umem(mr)->page_shift);
	u64 bad_start[2] = {}, bad_end[2] = {}, p;

	for (p = ALIGN_DOWN(start, page); p < end; p += page) {
		cond_resched();
		if (!sroce_odp_fault(mr, p, page, write, true))
			continue;
		sroce_odp_add_bad(&bad_start[true], &bad_end[true], p, page);
		if (!write || sroce_odp_fault(mr, p, page, false, true))
			sroce_odp_add_bad(&bad_start[false], &bad_end[false],
					  p, page);
	}
	spin_lock_bh(&mr->odp_lock);
	mr->fault_err = bad_start[true] != bad_end[true];
	memcpy(mr->bad_start, bad_start, sizeof(bad_start));
	memcpy(mr->bad_end, bad_end, sizeof(bad_end));
	spin_unlock_bh(&mr->odp_lock);
}

static void sroce_odp_work(struct work_struct *work)
{
	struct sroce_mr *mr = container_of(work, struct sroce_mr, odp_work);
	struct sroce_dev *sdev = sroce_odp_dev(sroce_odp_umem(mr));
	u64 start, end;
	bool write;
	int err;

	spin_lock_bh(&mr->odp_lock);
	start = mr->fault_start;
	end = mr->fault_end;
	write = mr->fault_write;
	mr->fault_start = 0;
	mr->fault_end = 0;
	mr->fault_write = false;
	spin_unlock_bh(&mr->odp_lock);
	if (start == end)
		return;

	atomic64_inc(&sdev->stats.odp_faults);
	err = sroce_odp_fault(mr, start, end - start, write, true);
	if (err) {
		atomic64_inc(&sdev->stats.odp_fault_errors);
		ibdev_dbg(&sdev->ibdev,
			  "ODP MR %#x: fault of %#llx+%#llx failed: %d\n",
			  mr->key, start, end - start, err);
		/* -EBUSY (the mm kept changing) is worth another try. */
		if (err != -EBUSY)
			sroce_odp_find_bad(mr, start, end, write);
	}
}

/*
 * The kernel is about to unmap or change pages of the range (the MMU
 * notifier): forget them.  odp_lock waits out a copy in progress.
 */
static bool sroce_odp_invalidate(struct mmu_interval_notifier *mni,
				 const struct mmu_notifier_range *range,
				 unsigned long cur_seq)
{
	struct ib_umem_odp *odp = container_of(mni, struct ib_umem_odp,
					       notifier);
	struct sroce_mr *mr;
	u64 start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;

	mutex_lock(&odp->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	/*
	 * NULL while sroce_odp_init() has not stored it yet: then no page
	 * was mapped, as the MR is not published.
	 */
	mr = READ_ONCE(odp->private);
	if (mr) {
		start = max_t(u64, ib_umem_start(odp), range->start);
		end = min_t(u64, ib_umem_end(odp), range->end);
		spin_lock_bh(&mr->odp_lock);
		ib_umem_odp_unmap_dma_pages(odp, start, end);
		spin_unlock_bh(&mr->odp_lock);
	}
	mutex_unlock(&odp->umem_mutex);
	atomic64_inc(&sroce_odp_dev(odp)->stats.odp_invalidations);
	return true;
}

static const struct mmu_interval_notifier_ops sroce_odp_ops = {
	.invalidate = sroce_odp_invalidate,
};

int sroce_odp_init(struct sroce_mr *mr, struct ib_device *ibdev, u64 start,
		   u64 length, int access)
{
	struct ib_umem_odp *odp;

	spin_lock_init(&mr->odp_lock);
	INIT_WORK(&mr->odp_work, sroce_odp_work);
	/* Implicit ODP (the whole address space) is not offered. */
	if (!start && length == U64_MAX)
		return -EOPNOTSUPP;
	odp = ib_umem_odp_get(ibdev, start, length, access, &sroce_odp_ops);
	if (IS_ERR(odp))
		return PTR_ERR(odp);
	mutex_lock(&odp->umem_mutex);	/* against a notifier call now */
	WRITE_ONCE(odp->private, mr);
	mutex_unlock(&odp->umem_mutex);
	mr->umem = &odp->umem;
	return 0;
}

/*
 * Before the umem goes: no fault may still run.  The datapath has let go
 * of the MR (sroce_mr_release()), so none is queued after this.
 */
void sroce_odp_fini(struct sroce_mr *mr)
{
	cancel_work_sync(&mr->odp_work);
}

/*
 * A WQE about to send its first packet: fault in the local memory it
 * reads or writes.  0, or -EAGAIN while a fault runs (the requester tries
 * again a tick later), or the fault's error (a local protection error).
 * A range another key names is not an ODP MR's: those are left to the
 * copy, which checks everything again.
 */
int sroce_odp_prefault(struct sroce_dev *sdev, struct ib_pd *pd, u32 lkey,
		       u64 addr, u64 len, bool write)
{
	struct sroce_mr *mr;
	int err;

	mr = sroce_mr_get(sdev, lkey);
	if (!mr)
		return 0;
	err = sroce_mr_prefault(mr, pd, addr, len, write);
	sroce_mr_put(mr);
	return err;
}

/*
 * ibv_advise_mr(): prefetch the ranges of ODP MRs of @pd now, waiting for
 * them (IB_UVERBS_ADVISE_MR_FLAG_FLUSH asks for that; without it waiting
 * is allowed).  PREFETCH_NO_FAULT maps only what is already present.
 */
int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs)
{
	struct sroce_dev *sdev = to_sdev(pd->device);
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	u32 i;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;

	for (i = 0; i < num_sge; i++) {
		struct sroce_mr *mr = sroce_mr_get(sdev, sg_list[i].lkey);
		int err;

		if (!mr)
			return -ENOENT;
		err = mr->type != SROCE_MR_ODP ? -EINVAL :
		      sroce_mr_check(mr, pd, sg_list[i].addr, sg_list[i].length,
				     write ? IB_ACCESS_LOCAL_WRITE : 0);
		if (!err && sg_list[i].length)
			err = sroce_odp_fault(mr,
					      sroce_odp_va(mr, sg_list[i].addr),
					      sg_list[i].length, write, fault);
		sroce_mr_put(mr);
		if (err)
			return err;
	}
	return 0;
}
