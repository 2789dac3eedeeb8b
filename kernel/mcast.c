// SPDX-License-Identifier: GPL-2.0-only
/*
 * mcast.c - multicast groups of UD QPs; see mcast.h.
 */
#include <linux/if_vlan.h>
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>

#include "mcast.h"
#include "pkt.h"
#include "qp.h"

struct sroce_mcg {
	struct list_head node;		/* in sdev->mcg_list */
	union ib_gid mgid;
	unsigned int nqp;
	struct sroce_qp *qp[SROCE_MAX_MCAST_QP];
};

/* A multicast GID sroce can join: IPv4-mapped 224/4 or IPv6 ff00::/8. */
static bool sroce_mgid_ok(const union ib_gid *gid)
{
	if (ipv6_addr_v4mapped((const struct in6_addr *)gid->raw))
		return ipv4_is_multicast(*(const __be32 *)(gid->raw + 12));
	return gid->raw[0] == 0xff;
}

/*
 * Join or leave the IP group on the netdev, so the IP layer accepts the
 * group's packets (and the NIC filters let them in).  The kernel counts
 * memberships, so rdma_cm's own IGMP join for the same group is harmless.
 * Process context; takes RTNL.
 */
static int sroce_mcast_ip(struct sroce_dev *sdev, const union ib_gid *gid,
			  bool join)
{
	struct net_device *ndev = sdev->ndev;
	int err = 0;

	rtnl_lock();
	if (ipv6_addr_v4mapped((const struct in6_addr *)gid->raw)) {
		struct in_device *in_dev = __in_dev_get_rtnl(ndev);
		__be32 group = *(const __be32 *)(gid->raw + 12);

		if (!in_dev)
			err = -ENODEV;
		else if (join)
			ip_mc_inc_group(in_dev, group);
		else
			ip_mc_dec_group(in_dev, group);
	} else if (IS_ENABLED(CONFIG_IPV6)) {
		const struct in6_addr *group = (const struct in6_addr *)gid->raw;

		if (join)
			err = ipv6_dev_mc_inc(ndev, group);
		else
			err = ipv6_dev_mc_dec(ndev, group);
	} else {
		err = -EAFNOSUPPORT;
	}
	rtnl_unlock();
	return err;
}

static struct sroce_mcg *sroce_mcg_find(struct sroce_dev *sdev,
					const union ib_gid *gid)
{
	struct sroce_mcg *mcg;

	lockdep_assert_held(&sdev->mcg_lock);
	list_for_each_entry(mcg, &sdev->mcg_list, node)
		if (!memcmp(&mcg->mgid, gid, sizeof(*gid)))
			return mcg;
	return NULL;
}

static int sroce_mcg_index(const struct sroce_mcg *mcg,
			   const struct sroce_qp *qp)
{
	unsigned int i;

	for (i = 0; i < mcg->nqp; i++)
		if (mcg->qp[i] == qp)
			return i;
	return -1;
}

/*
 * Attach and detach run in process context.  A new group is joined on
 * the netdev before it is published; sroce_mcast_mutex keeps a concurrent
 * attach from creating the same group twice and orders joins and leaves.
 */
static DEFINE_MUTEX(sroce_mcast_mutex);

int sroce_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcg *mcg, *new = NULL;
	int err = 0;

	if (ibqp->qp_type != IB_QPT_UD || !sroce_mgid_ok(gid))
		return -EINVAL;

	mutex_lock(&sroce_mcast_mutex);
	spin_lock_bh(&sdev->mcg_lock);
	mcg = sroce_mcg_find(sdev, gid);
	spin_unlock_bh(&sdev->mcg_lock);

	if (!mcg) {
		if (sdev->num_mcg >= SROCE_MAX_MCAST_GRP) {
			err = -ENOMEM;
			goto out;
		}
		new = kzalloc(sizeof(*new), GFP_KERNEL);
		if (!new) {
			err = -ENOMEM;
			goto out;
		}
		new->mgid = *gid;
		err = sroce_mcast_ip(sdev, gid, true);
		if (err) {
			ibdev_dbg(&sdev->ibdev, "cannot join %pI6 on %s: %d\n",
				  gid->raw, netdev_name(sdev->ndev), err);
			kfree(new);
			goto out;
		}
		mcg = new;
	}

	spin_lock_bh(&sdev->mcg_lock);
	/* Attaching twice is not an error (as on other devices). */
	if (sroce_mcg_index(mcg, qp) < 0) {
		if (mcg->nqp < SROCE_MAX_MCAST_QP)
			mcg->qp[mcg->nqp++] = qp;
		else
			err = -ENOMEM;
	}
	if (new && !err) {
		list_add_tail(&new->node, &sdev->mcg_list);
		sdev->num_mcg++;
	}
	spin_unlock_bh(&sdev->mcg_lock);

	if (new && err) {
		sroce_mcast_ip(sdev, gid, false);
		kfree(new);
	}
out:
	mutex_unlock(&sroce_mcast_mutex);
	return err;
}

int sroce_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_qp *qp = to_sqp(ibqp);
	struct sroce_mcg *mcg, *gone = NULL;
	int i, err = 0;

	mutex_lock(&sroce_mcast_mutex);
	spin_lock_bh(&sdev->mcg_lock);
	mcg = sroce_mcg_find(sdev, gid);
	i = mcg ? sroce_mcg_index(mcg, qp) : -1;
	if (i < 0) {
		err = -EINVAL;
	} else {
		mcg->qp[i] = mcg->qp[--mcg->nqp];
		if (!mcg->nqp) {
			list_del(&mcg->node);
			sdev->num_mcg--;
			gone = mcg;
		}
	}
	spin_unlock_bh(&sdev->mcg_lock);

	if (gone) {
		sroce_mcast_ip(sdev, &gone->mgid, false);
		kfree(gone);
	}
	mutex_unlock(&sroce_mcast_mutex);
	return err;
}

void sroce_mcast_cleanup(struct sroce_dev *sdev)
{
	struct sroce_mcg *mcg, *tmp;

	/* The core detached every QP before it destroyed it. */
	WARN_ON(!list_empty(&sdev->mcg_list));
	list_for_each_entry_safe(mcg, tmp, &sdev->mcg_list, node) {
		list_del(&mcg->node);
		kfree(mcg);
	}
}

/* The destination address of a received packet as a GID. */
static void sroce_pkt_dgid(const struct sk_buff *skb, union ib_gid *gid)
{
	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)gid->raw);
	else
		memcpy(gid->raw, &ipv6_hdr(skb)->daddr, sizeof(gid->raw));
}

bool sroce_mcast_rcv(struct sroce_dev *sdev, struct sk_buff *skb,
		     void (*deliver)(struct sroce_qp *qp, struct sk_buff *skb))
{
	struct sroce_qp *qps[SROCE_MAX_MCAST_QP];
	struct sroce_mcg *mcg;
	unsigned int i, n = 0;
	union ib_gid dgid;
	struct sk_buff *copy;

	sroce_pkt_dgid(skb, &dgid);
	spin_lock_bh(&sdev->mcg_lock);
	mcg = sroce_mcg_find(sdev, &dgid);
	for (i = 0; mcg && i < mcg->nqp; i++)
		if (refcount_inc_not_zero(&mcg->qp[i]->ref))
			qps[n++] = mcg->qp[i];
	spin_unlock_bh(&sdev->mcg_lock);
	/* No group, or only members being destroyed: the caller counts it. */
	if (!n)
		return false;

	/* Every QP but the last gets a clone; the data is only read. */
	for (i = 0; i < n; i++) {
		copy = i + 1 < n ? skb_clone(skb, GFP_ATOMIC) : skb;
		if (copy)
			deliver(qps[i], copy);
		else
			sroce_rx_drop_no_mem(sdev);
		sroce_qp_put(qps[i]);
	}
	return true;
}
