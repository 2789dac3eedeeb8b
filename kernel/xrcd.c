// SPDX-License-Identifier: GPL-2.0-only
/*
 * xrcd.c - XRC domains.  Like a PD, an XRCD carries no state of its own:
 * XRC SRQs and XRC target QPs point at their ib_xrcd, and the receive path
 * compares those pointers (an XRC request may only land in an SRQ of its
 * target QP's domain; see sroce_resp_xrc_srq() in responder.c).  The core
 * counts the users of a domain and shares one between processes that open
 * it through the same file.
 */
#include "sroce.h"

int sroce_alloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibxrcd->device);

	if (!sroce_res_get(&sdev->num_xrcd, SROCE_MAX_XRCD)) {
		ibdev_dbg(&sdev->ibdev, "XRCD limit (%d) reached\n",
			  SROCE_MAX_XRCD);
		return -ENOMEM;
	}
	return 0;
}

int sroce_dealloc_xrcd(struct ib_xrcd *ibxrcd, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibxrcd->device);

	atomic_dec(&sdev->num_xrcd);
	return 0;
}
