/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * ah.h - address handles: the destination of UD work requests.
 *
 * Each AH gets a number (sdev->ah_xa, IRQ lock) that user UD WQEs carry
 * (sroce_send_wqe.wr.ud.ah_num, returned in sroce_create_ah_resp); kernel
 * UD work requests name the ib_ah directly.  The address is translated
 * once, at creation, into a struct sroce_av (transmit.h).
 */
#ifndef SROCE_AH_H
#define SROCE_AH_H

#include <rdma/ib_verbs.h>

#include "sroce.h"
#include "transmit.h"

struct sroce_ah {
	struct ib_ah ibah;
	struct sroce_av av;
	struct rdma_ah_attr attr;	/* for query_ah; no sgid_attr */
	u32 ah_num;
};

static inline struct sroce_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct sroce_ah, ibah);
}

int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata);
int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags);

/*
 * Datapath (process or softirq context): copy the address of AH @ah_num into @av if it
 * exists and belongs to @pd (a QP may only use AHs of its own PD).
 * Returns 0 or -ENOENT.
 */
int sroce_ah_lookup(struct sroce_dev *sdev, u32 ah_num, struct ib_pd *pd,
		    struct sroce_av *av);

#endif /* SROCE_AH_H */
