/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * mcast.h - multicast groups of UD QPs.
 *
 * A device keeps one struct sroce_mcg per multicast GID that has QPs
 * attached (sdev->mcg_list, sdev->mcg_lock, BH-safe).  The first attach
 * joins the IP group on the device's netdev (IGMP or MLD through the
 * kernel's own membership counting), the last detach leaves it.  A packet
 * for the multicast QPN (SROCE_MCAST_QPN) is delivered to every QP attached
 * to the group of its destination address.
 *
 * QP lifetime: the core counts attachments in ib_qp->usecnt and refuses to
 * destroy an attached QP, so a QP in a group is alive; delivery still takes
 * a reference of its own (the QP may be destroyed once detached).
 */
#ifndef SROCE_MCAST_H
#define SROCE_MCAST_H

#include <rdma/ib_verbs.h>

#include "sroce.h"

struct sroce_qp;

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);

/* Device teardown: every group must be gone (the core detached all QPs). */
void sroce_mcast_cleanup(struct sroce_dev *sdev);

/*
 * Receive (softirq): @skb passed the packet checks and is for
 * SROCE_MCAST_QPN.  Delivers it to the attached QPs; consumes @skb.
 * Returns false (and keeps @skb) if no group of this device matches, or
 * no QP of the group is still alive.
 */
bool sroce_mcast_rcv(struct sroce_dev *sdev, struct sk_buff *skb,
		     void (*deliver)(struct sroce_qp *qp, struct sk_buff *skb));

#endif /* SROCE_MCAST_H */
