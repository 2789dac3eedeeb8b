/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mw.h - memory windows, type 1 and type 2 (IBA 10.6.7).
 *
 * A window is a remote-access key onto a range of an MR that has
 * IB_ACCESS_MW_BIND.  Its key lives in the MR key space (sdev->mr_xa), so
 * an rkey from the wire finds MRs and windows alike: the window's state is
 * a struct sroce_mr of type SROCE_MR_MW, allocated by us (the core frees
 * struct sroce_mw right after dealloc_mw, while a lookup may still read
 * the window under RCU).
 *
 *   type 1   bound with ibv_bind_mw() (posted as a BIND_MW WQE flagged
 *            SROCE_BIND_VERB), rebound at will, "invalidated" by a bind
 *            of length 0; LOCAL_INV and SEND_WITH_INV may not name it.
 *   type 2   bound by a BIND_MW work request while it is free (not bound),
 *            to the QP that posted it (type 2B): only that QP's peer may
 *            use the rkey; freed by LOCAL_INV, SEND_WITH_INV or dealloc.
 *
 * While a window is bound, its MR counts it (sroce_mr.num_mw) and cannot
 * be deregistered or re-registered (-EBUSY), so the window's pointer to
 * it stays valid.  sdev->mw_lock (BH) covers binding state: a window's
 * valid/parent/range/access/key and every MR's num_mw.
 *
 * Errors are the IB-defined ones: a bind that is not allowed completes
 * with IB_WC_MW_BIND_ERR; a LOCAL_INV of a key that cannot be invalidated
 * with IB_WC_LOC_PROT_ERR; a SEND_WITH_INV of one is an invalid request.
 */
#ifndef SROCE_MW_H
#define SROCE_MW_H

#include <rdma/ib_verbs.h>

#include "mr.h"

struct sroce_qp;

struct sroce_mw {
	struct ib_mw ibmw;
	struct sroce_mr *win;
};

static inline struct sroce_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct sroce_mw, ibmw);
}

int sroce_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int sroce_dealloc_mw(struct ib_mw *ibmw);

/* A BIND_MW WQE of @qp (requester, under req.lock). */
enum ib_wc_status sroce_mw_bind(struct sroce_qp *qp, u32 new_key,
				u32 mr_lkey, u64 addr, u64 length, int access,
				bool by_verb);

/*
 * LOCAL_INV (@remote false) or SEND_WITH_INV (true) of @key on @qp: a
 * fast-registration MR or a bound type 2 window.  0 or -EINVAL.
 */
int sroce_key_invalidate(struct sroce_qp *qp, u32 key, bool remote);

/*
 * Remote access through @rkey by a request that arrived on @qp: the MR
 * to copy from or to, with a reference (sroce_mr_put()), or NULL if the
 * key, its range or its rights do not allow it.  Resolves windows.
 */
struct sroce_mr *sroce_rkey_get(struct sroce_qp *qp, u32 rkey, u64 va,
				u64 len, int access);

#endif /* SROCE_MW_H */
