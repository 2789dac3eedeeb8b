// SPDX-License-Identifier: GPL-2.0-only
/*
 * mw.c - memory windows: allocation, binding, invalidation, and the rkey
 * lookup that resolves a window to the memory it grants.  See mw.h.
 */
#include "mw.h"
#include "qp.h"

/* Rights a window may grant (IBA 10.6.7.2.3); no zero-based windows. */
#define SROCE_MW_ACCESS	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_ATOMIC)

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mw *mw = to_smw(ibmw);
	struct sroce_mr *win;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	win = sroce_mr_new(sdev, SROCE_MR_MW, 0);
	if (IS_ERR(win))
		return PTR_ERR(win);
	win->mw_type = ibmw->type == IB_MW_TYPE_1 ? 1 : 2;
	win->ibmr.pd = ibmw->pd;
	err = sroce_mr_publish(sdev, win);
	if (err) {
		sroce_mr_release(sdev, win);
		return err;
	}
	mw->win = win;
	ibmw->rkey = win->key;
	return 0;
}

/* Unbind @win, under mw_lock. */
static void sroce_mw_unbind_locked(struct sroce_mr *win)
{
	if (win->parent) {
		win->parent->num_mw--;
		win->parent = NULL;
	}
	WRITE_ONCE(win->valid, false);
}

int sroce_dealloc_mw(struct ib_mw *ibmw)
{
	struct sroce_dev *sdev = to_sdev(ibmw->device);
	struct sroce_mr *win = to_smw(ibmw)->win;

	/*
	 * A bind that looked the window up before us may take mw_lock after
	 * us: mw_dead refuses it, or the MR would count a window that no
	 * longer exists and could never be deregistered.
	 */
	spin_lock_bh(&sdev->mw_lock);
	sroce_mw_unbind_locked(win);
	win->mw_dead = true;
	spin_unlock_bh(&sdev->mw_lock);
	sroce_mr_release(sdev, win);
	return 0;
}

/*
 * The bind rules of IBA 10.6.7.2: the window and the MR exist, in the
 * QP's PD; the MR may have windows bound (IB_ACCESS_MW_BIND), is valid,
 * and contains the range; remote write or atomic rights need local write
 * on the MR; only the key byte of the window's key changes; a type 1
 * window is bound through the verb, a type 2 window by a work request
 * and only while it is free.  Under mw_lock.
 */
static enum ib_wc_status sroce_mw_bind_locked(struct sroce_qp *qp,
					      struct sroce_mr *win,
					      struct sroce_mr *mr, u32 new_key,
					      u64 addr, u64 length, int access,
					      bool by_verb)
{
	struct ib_pd *pd = qp->ibqp.pd;
	bool type1 = win->mw_type == 1;

	if (win->mw_dead || win->ibmr.pd != pd || type1 != by_verb)
		return IB_WC_MW_BIND_ERR;
	if (win->mw_type == 2 && win->valid)
		return IB_WC_MW_BIND_ERR;
	if ((new_key >> 8) != (win->key >> 8))
		return IB_WC_MW_BIND_ERR;
	/*
	 * A window grants remote rights only; local write means nothing
	 * for it, but consumers (rdma-core's own tests) pass it along.
	 */
	access &= ~IB_ACCESS_LOCAL_WRITE;
	if (access & ~SROCE_MW_ACCESS)
		return IB_WC_MW_BIND_ERR;

	/* Type 1, length 0: unbind (the way to invalidate a type 1 window). */
	if (win->mw_type == 1 && !length) {
		sroce_mw_unbind_locked(win);
		WRITE_ONCE(win->key, new_key);
		return IB_WC_SUCCESS;
	}
	if (!mr || mr->type == SROCE_MR_MW || mr->type == SROCE_MR_DMA ||
	    !READ_ONCE(mr->valid) || mr->ibmr.pd != pd ||
	    !(mr->access & IB_ACCESS_MW_BIND))
		return IB_WC_MW_BIND_ERR;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return IB_WC_MW_BIND_ERR;
	if (addr < mr->ibmr.iova || addr + length < addr ||
	    addr + length > mr->ibmr.iova + mr->ibmr.length)
		return IB_WC_MW_BIND_ERR;

	sroce_mw_unbind_locked(win);
	mr->num_mw++;
	win->parent = mr;
	win->ibmr.iova = addr;
	win->ibmr.length = length;
	win->access = access;
	win->mw_qpn = qp->ibqp.qp_num;
	WRITE_ONCE(win->key, new_key);
	WRITE_ONCE(win->valid, true);
	return IB_WC_SUCCESS;
}

enum ib_wc_status sroce_mw_bind(struct sroce_qp *qp, u32 new_key,
				u32 mr_lkey, u64 addr, u64 length, int access,
				bool by_verb)
{
	struct sroce_dev *sdev = qp->sdev;
	enum ib_wc_status status = IB_WC_MW_BIND_ERR;
	struct sroce_mr *win, *mr;

	/* The window is named by the index of its new key. */
	rcu_read_lock();
	win = xa_load(&sdev->mr_xa, new_key >> 8);
	if (win && (win->type != SROCE_MR_MW ||
		    !refcount_inc_not_zero(&win->ref)))
		win = NULL;
	rcu_read_unlock();
	if (!win)
		return IB_WC_MW_BIND_ERR;
	mr = length ? sroce_mr_get(sdev, mr_lkey) : NULL;

	spin_lock_bh(&sdev->mw_lock);
	status = sroce_mw_bind_locked(qp, win, mr, new_key, addr, length,
				      access, by_verb);
	spin_unlock_bh(&sdev->mw_lock);

	if (mr)
		sroce_mr_put(mr);
	sroce_mr_put(win);
	return status;
}

int sroce_key_invalidate(struct sroce_qp *qp, u32 key, bool remote)
{
	struct sroce_dev *sdev = qp->sdev;
	struct sroce_mr *win;
	int err = -EINVAL;

	win = sroce_mr_get(sdev, key);
	if (!win)
		return -EINVAL;
	if (win->type != SROCE_MR_MW) {
		sroce_mr_put(win);
		return sroce_mr_invalidate(sdev, sroce_qp_pd(qp), key);
	}
	/*
	 * Only a bound type 2 window of the QP's PD; from the wire, only
	 * one bound through this very QP.
	 */
	spin_lock_bh(&sdev->mw_lock);
	if (win->mw_type == 2 && win->valid && win->key == key &&
	    win->ibmr.pd == sroce_qp_pd(qp) &&
	    (!remote || win->mw_qpn == qp->ibqp.qp_num)) {
		sroce_mw_unbind_locked(win);
		err = 0;
	}
	spin_unlock_bh(&sdev->mw_lock);
	sroce_mr_put(win);
	return err;
}

/*
 * Access through window @win, found by @rkey: its MR with a reference, or
 * NULL.  The key is compared again under mw_lock: a re-bind between the
 * lookup and here changed it, and the old key must not use the new
 * binding (IBA 10.6.7).
 */
static struct sroce_mr *sroce_mw_resolve(struct sroce_qp *qp,
					 struct sroce_mr *win, u32 rkey,
					 u64 va, u64 len, int access)
{
	struct sroce_mr *mr = NULL;

	spin_lock_bh(&qp->sdev->mw_lock);
	if (!win->valid || win->key != rkey ||
	    win->ibmr.pd != sroce_qp_pd(qp) ||
	    (win->mw_type == 2 && win->mw_qpn != qp->ibqp.qp_num) ||
	    (win->access & access) != access)
		goto out;
	if (va < win->ibmr.iova || va + len < va ||
	    va + len > win->ibmr.iova + win->ibmr.length)
		goto out;
	/* Bound: the MR is alive (num_mw keeps it registered). */
	mr = win->parent;
	if (!READ_ONCE(mr->valid) || !refcount_inc_not_zero(&mr->ref))
		mr = NULL;
out:
	spin_unlock_bh(&qp->sdev->mw_lock);
	return mr;
}

struct sroce_mr *sroce_rkey_get(struct sroce_qp *qp, u32 rkey, u64 va,
				u64 len, int access)
{
	struct sroce_mr *mr = sroce_mr_get(qp->sdev, rkey);
	struct sroce_mr *target;

	if (!mr)
		return NULL;
	if (mr->type == SROCE_MR_MW) {
		target = sroce_mw_resolve(qp, mr, rkey, va, len, access);
		sroce_mr_put(mr);
		return target;
	}
	if (sroce_mr_check(mr, sroce_qp_pd(qp), va, len, access)) {
		sroce_mr_put(mr);
		return NULL;
	}
	return mr;
}
