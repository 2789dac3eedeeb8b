/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * odp.h - on-demand paging MRs (odp.c).  Each datapath access of an ODP
 * MR's memory may answer -EAGAIN: the pages are being faulted in, try
 * again later (the responder with an RNR NAK).
 */
#ifndef SROCE_ODP_H
#define SROCE_ODP_H

#include "mr.h"

/* Registration and teardown of an SROCE_MR_ODP MR (mr.c). */
int sroce_odp_init(struct sroce_mr *mr, struct ib_device *ibdev, u64 start,
		   u64 length, int access);
void sroce_odp_fini(struct sroce_mr *mr);

/*
 * sroce_odp_ready() (mr.h): [@iova, @iova + @len) of @mr (checked with
 * sroce_mr_check()) present for a read or a write: 0, -EAGAIN (a fault
 * was queued) or -EFAULT (the last fault failed: no such mapping, or not
 * writable).
 */
/* sroce_mr_copy() of an ODP MR: 0 or sroce_odp_ready()'s errors. */
int sroce_odp_copy(struct sroce_mr *mr, u64 iova, void *buf, u32 len,
		   enum sroce_copy_dir dir);
int sroce_odp_prefault(struct sroce_dev *sdev, struct ib_pd *pd, u32 lkey,
		       u64 addr, u64 len, bool write);

int sroce_advise_mr(struct ib_pd *pd, enum ib_uverbs_advise_mr_advice advice,
		    u32 flags, struct ib_sge *sg_list, u32 num_sge,
		    struct uverbs_attr_bundle *attrs);

#endif /* SROCE_ODP_H */
