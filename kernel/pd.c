// SPDX-License-Identifier: GPL-2.0-only
/*
 * pd.c - protection domains.  A PD carries no state of its own in sroce:
 * objects point at their ib_pd and the datapath compares pointers.
 */
#include <rdma/uverbs_ioctl.h>

#define UVERBS_MODULE_NAME sroce_ib
#include <rdma/uverbs_named_ioctl.h>

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

/*
 * SROCE_METHOD_PD_QUERY (ibv_import_pd()): uverbs has already looked the
 * handle up as a PD of the caller's context, or failed the call; there is
 * nothing else a provider needs to know of a PD.
 */
static int UVERBS_HANDLER(SROCE_METHOD_PD_QUERY)(struct uverbs_attr_bundle *attrs)
{
	return 0;
}

DECLARE_UVERBS_NAMED_METHOD(SROCE_METHOD_PD_QUERY,
			    UVERBS_ATTR_IDR(SROCE_ATTR_QUERY_PD_HANDLE,
					    UVERBS_OBJECT_PD,
					    UVERBS_ACCESS_READ, UA_MANDATORY));

ADD_UVERBS_METHODS(sroce_pd_methods, UVERBS_OBJECT_PD,
		   &UVERBS_METHOD(SROCE_METHOD_PD_QUERY));

const struct uapi_definition sroce_pd_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_PD, &sroce_pd_methods),
	{},
};
