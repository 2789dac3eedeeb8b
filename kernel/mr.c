// SPDX-License-Identifier: GPL-2.0-only
/*
 * mr.c - memory registration, key allocation and MR access for the
 * datapath.  See mr.h for the key format and the MR lifetime.
 */
#include <linux/highmem.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "mr.h"
#include "odp.h"

/* Access flags sroce implements; optional hints are ignored. */
#define SROCE_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND)

static int sroce_mr_check_access(struct sroce_dev *sdev, int access)
{
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~SROCE_MR_ACCESS) {
		ibdev_dbg(&sdev->ibdev, "unsupported MR access flags %#x\n",
			  access & ~SROCE_MR_ACCESS);
		return -EOPNOTSUPP;
	}
	/* IBA 10.6.3.1: remote write and atomic need local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

struct sroce_mr *sroce_mr_new(struct sroce_dev *sdev, enum sroce_mr_type type,
			      int access)
{
	struct sroce_mr *mr;

	if (!sroce_res_get(&sdev->num_mr, sdev->attr.max_mr))
		return ERR_PTR(-ENOMEM);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&sdev->num_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->type = type;
	mr->access = access & SROCE_MR_ACCESS;
	mr->valid = type != SROCE_MR_FAST_REG && type != SROCE_MR_MW;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->released);
	return mr;
}

/* Publish @mr under a fresh key; after this the datapath can find it. */
int sroce_mr_publish(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	u32 index, key;
	int err;

	err = xa_alloc_cyclic(&sdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, SROCE_MAX_MR), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0)
		return err;

	key = index << 8 | (u8)atomic_inc_return(&sdev->key_tag);
	mr->key = key;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	/* Store only once the key is set: lookups compare it. */
	xa_store(&sdev->mr_xa, index, mr, GFP_KERNEL);
	return 0;
}

static void sroce_mr_destroy(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	if (mr->type == SROCE_MR_ODP) {
		sroce_odp_fini(mr);
		if (mr->umem)
			atomic_dec(&sdev->num_odp_mr);
	}
	kvfree(mr->pages);
	kvfree(mr->page_list);
	if (mr->umem)
		ib_umem_release(mr->umem);
	atomic_dec(&sdev->num_mr);
	/* Not call_rcu(): no callback of ours may outlive the module. */
	kfree_rcu(mr, rcu);
}

struct ib_mr *sroce_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	err = sroce_mr_check_access(sdev, access);
	if (err)
		return ERR_PTR(err);

	mr = sroce_mr_new(sdev, SROCE_MR_DMA, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->ibmr.iova = 0;
	mr->ibmr.length = U64_MAX;

	err = sroce_mr_publish(sdev, mr);
	if (err) {
		sroce_mr_destroy(sdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int sroce_mr_collect_pages(struct sroce_mr *mr)
{
	struct sg_page_iter piter;
	unsigned long i = 0;

	mr->npages = ib_umem_num_pages(mr->umem);
	mr->pages = kvmalloc_array(mr->npages, sizeof(*mr->pages),
				   SROCE_GFP_SIZED);
	if (!mr->pages)
		return -ENOMEM;

	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &piter, 0) {
		if (WARN_ON_ONCE(i >= mr->npages))
			return -EFAULT;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	if (WARN_ON_ONCE(i != mr->npages))
		return -EFAULT;
	mr->first_offset = ib_umem_offset(mr->umem);
	return 0;
}

/* A user MR over [start, start + length), not yet visible to the datapath. */
static struct sroce_mr *sroce_user_mr_create(struct ib_pd *ibpd, u64 start,
					     u64 length, u64 iova, int access)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	/* On demand is a kind of user MR (odp.c), not an access right. */
	err = sroce_mr_check_access(sdev, access & ~IB_ACCESS_ON_DEMAND);
	if (err)
		return ERR_PTR(err);
	/* max_mr_size is U64_MAX: only a range that wraps is too long. */
	if (!length || iova + length < iova)
		return ERR_PTR(-EINVAL);

	if (access & IB_ACCESS_ON_DEMAND) {
		mr = sroce_mr_new(sdev, SROCE_MR_ODP, access);
		if (IS_ERR(mr))
			return mr;
		err = sroce_odp_init(mr, ibpd->device, start, length, access);
		if (err)
			goto err_destroy;
		atomic_inc(&sdev->num_odp_mr);
		goto done;
	}

	mr = sroce_mr_new(sdev, SROCE_MR_USER, access);
	if (IS_ERR(mr))
		return mr;

	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err_destroy;
	}
	err = sroce_mr_collect_pages(mr);
	if (err)
		goto err_destroy;
done:
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->ibmr.page_size = PAGE_SIZE;
	return mr;

err_destroy:
	sroce_mr_destroy(sdev, mr);
	return ERR_PTR(err);
}

struct ib_mr *sroce_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				u64 iova, int access, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	mr = sroce_user_mr_create(ibpd, start, length, iova, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	err = sroce_mr_publish(sdev, mr);
	if (err) {
		sroce_mr_destroy(sdev, mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/*
 * Re-registration keeps the keys (IBA 11.2.8.5 allows new ones, but work
 * requests already posted with the old lkey, receives above all, must keep
 * working, and applications such as rdma-core's own tests rely on it).
 *
 * A PD or access change is made in place (the core switches ibmr.pd; the
 * datapath reads mr->access once per check), unless it makes writable an
 * MR whose pages were pinned for reading only.  A translation change builds a
 * new MR and swaps it into the key's xarray slot: from then on lookups find
 * the new pages, while a packet still copying into the old MR keeps the old
 * pages until the core deregisters it.  No field of a published MR's memory
 * description ever changes under the datapath.
 */
struct ib_mr *sroce_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				  u64 length, u64 iova, int access,
				  struct ib_pd *pd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);
	struct sroce_mr *new;
	int err;

	if (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD |
		      IB_MR_REREG_ACCESS))
		return ERR_PTR(-EOPNOTSUPP);
	/* Neither re-registering an ODP MR nor making one of a pinned MR. */
	if (mr->type == SROCE_MR_ODP ||
	    ((flags & IB_MR_REREG_ACCESS) && (access & IB_ACCESS_ON_DEMAND)))
		return ERR_PTR(-EOPNOTSUPP);
	if (mr->type != SROCE_MR_USER)
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (!(flags & IB_MR_REREG_PD))
		pd = ibmr->pd;

	/* Bound windows point at this MR object and describe its pages. */
	spin_lock_bh(&sdev->mw_lock);
	err = mr->num_mw ? -EBUSY : 0;
	spin_unlock_bh(&sdev->mw_lock);
	if (err)
		return ERR_PTR(err);

	if (!(flags & IB_MR_REREG_TRANS)) {
		if (mr->umem->writable || !ib_access_writable(access)) {
			err = sroce_mr_check_access(sdev, access);
			if (err)
				return ERR_PTR(err);
			WRITE_ONCE(mr->access, access & SROCE_MR_ACCESS);
			return NULL;
		}
		/*
		 * Pages pinned for reading only (since 6.2 ib_umem_get() pins
		 * them without FOLL_WRITE: a read-only file mapping's
		 * page-cache pages) are pinned again for writing, as for a
		 * translation change over the same range: a read-only mapping
		 * then fails the pin.
		 */
		start = mr->umem->address;
		length = mr->umem->length;
		iova = ibmr->iova;
	}

	new = sroce_user_mr_create(pd, start, length, iova, access);
	if (IS_ERR(new))
		return ERR_CAST(new);
	new->key = mr->key;
	new->ibmr.lkey = ibmr->lkey;
	new->ibmr.rkey = ibmr->rkey;
	xa_store(&sdev->mr_xa, mr->key >> 8, new, GFP_KERNEL);
	return &new->ibmr;
}

/*
 * Take @mr out of the key space, wait for the datapath to let go of it,
 * free it.  The slot may hold a re-registration's successor instead.
 */
void sroce_mr_release(struct sroce_dev *sdev, struct sroce_mr *mr)
{
	xa_cmpxchg(&sdev->mr_xa, mr->key >> 8, mr, NULL, GFP_KERNEL);
	/* Wait for packets that are still copying to or from the MR. */
	sroce_mr_put(mr);
	wait_for_completion(&mr->released);
	sroce_mr_destroy(sdev, mr);
}

int sroce_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmr->device);
	struct sroce_mr *mr = to_smr(ibmr);

	/*
	 * Not while windows are bound to it (IBA 10.6.7.2.5).  Under
	 * mw_lock a bind sees the MR either counted-free and still valid
	 * (and counts itself first) or invalid.
	 */
	spin_lock_bh(&sdev->mw_lock);
	if (mr->num_mw) {
		spin_unlock_bh(&sdev->mw_lock);
		return -EBUSY;
	}
	WRITE_ONCE(mr->valid, false);
	spin_unlock_bh(&sdev->mw_lock);
	sroce_mr_release(sdev, mr);
	return 0;
}

struct ib_mr *sroce_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			     u32 max_num_sg)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);
	struct sroce_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SROCE_MAX_FRMR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = sroce_mr_new(sdev, SROCE_MR_FAST_REG, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->page_list = kvcalloc(max_num_sg, sizeof(u64), GFP_KERNEL);
	if (!mr->page_list) {
		err = -ENOMEM;
		goto err_destroy;
	}
	mr->max_pages = max_num_sg;

	err = sroce_mr_publish(sdev, mr);
	if (err)
		goto err_destroy;
	return &mr->ibmr;

err_destroy:
	sroce_mr_destroy(sdev, mr);
	return ERR_PTR(err);
}

static int sroce_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (mr->nmapped >= mr->max_pages)
		return -ENOMEM;
	mr->page_list[mr->nmapped++] = addr;
	return 0;
}

/*
 * Called by ib_map_mr_sg() with ibmr->page_size set, while the MR is not
 * valid (the ULP maps, then posts REG_MR).  The "DMA" addresses of a
 * device without a DMA device are kernel virtual addresses.
 */
int sroce_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		    unsigned int *sg_offset)
{
	struct sroce_mr *mr = to_smr(ibmr);

	if (!is_power_of_2(ibmr->page_size) || ibmr->page_size < SZ_4K)
		return -EINVAL;
	mr->nmapped = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      sroce_mr_set_page);
}

/* The fast-registration MR of @key's index in @pd, without a reference. */
static struct sroce_mr *sroce_frmr_find(struct sroce_dev *sdev,
					struct ib_pd *pd, u32 key)
{
	struct sroce_mr *mr = xa_load(&sdev->mr_xa, key >> 8);

	if (!mr || mr->type != SROCE_MR_FAST_REG || mr->ibmr.pd != pd)
		return NULL;
	return mr;
}

int sroce_mr_fast_reg(struct sroce_dev *sdev, struct ib_pd *pd, u32 mr_key,
		      u32 key, int access)
{
	struct sroce_mr *mr;
	u64 span;
	int err = -EINVAL;

	if ((key >> 8) != (mr_key >> 8))
		return -EINVAL;
	rcu_read_lock();
	mr = sroce_frmr_find(sdev, pd, mr_key);
	if (!mr || READ_ONCE(mr->valid) || sroce_mr_check_access(sdev, access))
		goto out;
	/* What the datapath may touch must lie in the mapped pages. */
	span = (mr->ibmr.iova & (mr->ibmr.page_size - 1)) + mr->ibmr.length;
	if (!mr->ibmr.page_size || span < mr->ibmr.length ||
	    mr->ibmr.iova + mr->ibmr.length < mr->ibmr.iova ||
	    span > (u64)mr->nmapped * mr->ibmr.page_size)
		goto out;
	WRITE_ONCE(mr->access, access & SROCE_MR_ACCESS);
	WRITE_ONCE(mr->key, key);
	/* Key and access before valid: pairs with sroce_mr_check(). */
	smp_store_release(&mr->valid, true);
	err = 0;
out:
	rcu_read_unlock();
	return err;
}

int sroce_mr_invalidate(struct sroce_dev *sdev, struct ib_pd *pd, u32 key)
{
	struct sroce_mr *mr;
	int err = -EINVAL;

	rcu_read_lock();
	mr = sroce_frmr_find(sdev, pd, key);
	if (mr && READ_ONCE(mr->key) == key) {
		WRITE_ONCE(mr->valid, false);
		err = 0;
	}
	rcu_read_unlock();
	return err;
}

/* Look up @key; on success the caller owns a reference (sroce_mr_put). */
struct sroce_mr *sroce_mr_get(struct sroce_dev *sdev, u32 key)
{
	struct sroce_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, key >> 8);
	if (mr && (READ_ONCE(mr->key) != key ||
		   !refcount_inc_not_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

void sroce_mr_put(struct sroce_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}

/*
 * May [@iova, @iova + @len) of @mr be accessed by a work request or packet
 * of @pd with @access (IB_ACCESS_* needed, 0 for a local read)?
 * Returns 0 or the negative errno the caller maps to its status.
 */
int sroce_mr_check(struct sroce_mr *mr, struct ib_pd *pd, u64 iova, u64 len,
		   int access)
{
	/* A window's key is only usable through sroce_rkey_get(). */
	if (mr->type == SROCE_MR_MW)
		return -EACCES;
	/* Valid before key and access: pairs with sroce_mr_fast_reg(). */
	if (!smp_load_acquire(&mr->valid) || mr->ibmr.pd != pd)
		return -EACCES;
	if ((READ_ONCE(mr->access) & access) != access)
		return -EACCES;
	if (iova < mr->ibmr.iova || iova + len < iova ||
	    iova + len > mr->ibmr.iova + mr->ibmr.length)
		return -ERANGE;
	return 0;
}

/*
 * The pinned page of a user MR that holds @iova (already checked against
 * the MR), and the offset of @iova in it; NULL for other MR types, whose
 * memory is not a list of pinned pages.
 */
struct page *sroce_mr_user_page(struct sroce_mr *mr, u64 iova,
				unsigned int *poff)
{
	u64 off;

	if (mr->type != SROCE_MR_USER)
		return NULL;
	off = iova - mr->ibmr.iova + mr->first_offset;
	*poff = offset_in_page(off);
	return mr->pages[off >> PAGE_SHIFT];
}

/*
 * Copy @len bytes between @buf and @mr at @iova.  The range must have been
 * validated with sroce_mr_check().
 */
int sroce_mr_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		  enum sroce_copy_dir dir)
{
	u64 off;

	if (mr->type == SROCE_MR_DMA) {
		void *va = (void *)(uintptr_t)iova;

		if (dir == SROCE_TO_MR)
			memcpy(va, buf, len);
		else
			memcpy(buf, va, len);
		return 0;
	}
	if (mr->type == SROCE_MR_ODP)
		return sroce_odp_copy(mr, iova, buf, len, dir);

	if (mr->type == SROCE_MR_FAST_REG) {
		u32 shift = ilog2(mr->ibmr.page_size);
		u64 base = mr->ibmr.iova >> shift;

		while (len) {
			u64 idx = (iova >> shift) - base;
			u32 poff = iova & (mr->ibmr.page_size - 1);
			u32 chunk = min_t(u32, len, mr->ibmr.page_size - poff);
			void *va;

			/* Within ibmr's range (checked), so within the list. */
			if (WARN_ON_ONCE(idx >= mr->nmapped))
				return 0;
			va = (void *)(uintptr_t)(mr->page_list[idx] + poff);
			if (dir == SROCE_TO_MR)
				memcpy(va, buf, chunk);
			else
				memcpy(buf, va, chunk);
			buf += chunk;
			iova += chunk;
			len -= chunk;
		}
		return 0;
	}

	off = iova - mr->ibmr.iova + mr->first_offset;
	while (len) {
		struct page *page = mr->pages[off >> PAGE_SHIFT];
		unsigned int poff = offset_in_page(off);
		u32 chunk = min_t(u32, len, PAGE_SIZE - poff);
		void *va = kmap_local_page(page);

		if (dir == SROCE_TO_MR)
			memcpy(va + poff, buf, chunk);
		else
			memcpy(buf, va + poff, chunk);
		kunmap_local(va);
		buf += chunk;
		off += chunk;
		len -= chunk;
	}
	return 0;
}

/*
 * Store @val at @iova (8-byte aligned) of @mr in one 64-bit store, after
 * every store before it (IBTA 1.5 ATOMIC WRITE): nobody reading the word
 * sees part of it.  The range must have been validated with
 * sroce_mr_check().  A user MR whose iova was chosen apart from its
 * buffer's alignment puts the word at an unaligned address, and a
 * fast-registration MR's pages are read by kernel consumers only: both
 * get a copy, as does an ODP MR (under the lock its invalidation takes).
 * Returns sroce_mr_copy()'s errors.
 */
int sroce_mr_store_u64(struct sroce_mr *mr, u64 iova, u64 val)
{
	unsigned int poff;
	struct page *page;
	void *va;

	if (mr->type == SROCE_MR_DMA) {
		/* After the stores before it; pairs with the reader's load. */
		smp_store_release((u64 *)(uintptr_t)iova, val);
		return 0;
	}
	page = sroce_mr_user_page(mr, iova, &poff);
	if (!page || !IS_ALIGNED(poff, sizeof(val))) {
		smp_mb();	/* the earlier stores first, as below */
		return sroce_mr_copy(mr, iova, &val, sizeof(val), SROCE_TO_MR);
	}
	va = kmap_local_page(page);
	/* After the stores before it; pairs with the reader's load. */
	smp_store_release((u64 *)(va + poff), val);
	kunmap_local(va);
	return 0;
}
