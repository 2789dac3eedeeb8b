// SPDX-License-Identifier: GPL-2.0-only
/*
 * pd.c - protection domains.  A PD carries no state of its own in sroce:
 * objects point at their ib_pd and the datapath compares pointers.
 */
#include "sroce.h"

int sroce_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);

	if (!sroce_res_get(&sdev->num_pd, sdev->attr.max_pd)) {
		ibdev_dbg(&sdev->ibdev, "PD limit (%d) reached\n",
			  sdev->attr.max_pd);
		return -ENOMEM;
	}
	return 0;
}

int sroce_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibpd->device);

	atomic_dec(&sdev->num_pd);
	return 0;
}
