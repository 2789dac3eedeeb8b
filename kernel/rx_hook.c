// SPDX-License-Identifier: GPL-2.0-only
/*
 * rx_hook.c - RoCEv2 packets taken off the netdev before the IP stack.
 *
 * By default a packet reaches sroce the way it reaches rdma_rxe: through
 * ip_rcv(), the receive route lookup, netfilter's INPUT hooks, the UDP
 * socket lookup and the tunnel socket's encap_rcv (net.c).  With the module
 * parameter fast_rx set when a device is created, its netdev gets an
 * rx_handler instead, as a RoCE NIC takes RoCE packets off the wire: a
 * unicast IPv4 datagram to UDP port 4791 and one of the netdev's own
 * addresses, without IP options or fragmentation and with no UDP checksum
 * (RoCEv2 senders send none; one left to fill in, CHECKSUM_PARTIAL, is not
 * one yet: recv.c), goes straight to sroce_rcv(); anything else,
 * IPv6 and VLAN-tagged traffic included, goes on to the IP stack as before.
 * The IP header is checked here as ip_rcv() would (version, length,
 * checksum); sroce_rcv() checks the rest.
 *
 * The hook takes only what nothing in the IP stack would look at: while
 * the netdev's namespace has a netfilter hook (an iptables or nftables
 * rule, conntrack) where IPv4 input passes, or an inbound IPsec policy,
 * its packets go on to the IP stack, so turning the hook on never lets a
 * packet around a firewall (sroce_rx_hook_policed()).
 *
 * What it costs: a netdev has one rx_handler, so while the hook is
 * attached the netdev cannot become a bridge, bond or team port or the
 * lower device of a macvlan or ipvlan (those fail with EBUSY); a netdev
 * that already has an rx_handler keeps it and the device uses the socket
 * path.  Hence off by default.  Packet capture (tcpdump) still sees every
 * packet: taps run before the rx_handler.
 *
 * Lifetime: rx_handler_data points at the sroce_dev.  The hook is attached
 * before ib_register_device(), while nothing else can reach the device (a
 * packet meanwhile finds it unregistered and goes on to the IP stack), and
 * removed under RTNL when the netdev unregisters or, at the latest, in
 * dealloc_driver before the device's tables are destroyed;
 * netdev_rx_handler_unregister() waits for running handlers.  Each packet
 * takes a device reference, as the socket path does, so nothing reaches a
 * device that is not (or no longer) registered.
 */
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/xfrm.h>
#include <net/ip.h>
#include <net/udp_tunnel.h>

#include "compat.h"
#include "sroce.h"
#include "net.h"
#include "rx_hook.h"
#include "trace.h"

static bool fast_rx;
module_param(fast_rx, bool, 0644);
MODULE_PARM_DESC(fast_rx,
		 "take RoCEv2 packets off the netdev before the IP stack, for devices created while set (default off; see Documentation/admin-guide.rst)");

/* Is @daddr one of @ndev's IPv4 addresses?  (A netdev has a few.) */
static bool sroce_rx_hook_for_us(struct net_device *ndev, __be32 daddr)
{
	struct in_device *in_dev = __in_dev_get_rcu(ndev);
	const struct in_ifaddr *ifa;

	if (!in_dev)
		return false;
	in_dev_for_each_ifa_rcu(ifa, in_dev)
		if (ifa->ifa_local == daddr)
			return true;
	return false;
}

/* A packet the hook may take, or false to leave it to the IP stack. */
static bool sroce_rx_hook_wants(struct sk_buff *skb)
{
	const struct udphdr *uh;
	const struct iphdr *iph;
	unsigned int len;

	if (skb->protocol != htons(ETH_P_IP) || skb->pkt_type != PACKET_HOST)
		return false;
	/*
	 * A tag the core has not matched to a VLAN netdev yet (it marks such
	 * packets as not for this host only after the rx_handler ran) is the
	 * IP stack's, and so is any aggregate of several datagrams but a
	 * fraglist one (a transmit batch, pkt.h), which sroce_rx_hook_split()
	 * splits as the UDP socket would.
	 */
	if (skb_vlan_tag_present(skb) ||
	    (skb_is_gso(skb) && skb_shinfo(skb)->gso_type !=
	     (SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST)))
		return false;
	/*
	 * A pull may reallocate the head, which must not happen to an skb a
	 * tap still shares: sroce_rx_hook() unshares only what it takes, so
	 * a shared one with its headers out of the linear part is the IP
	 * stack's (ip_rcv() unshares it first).
	 */
	if (skb_headlen(skb) < sizeof(*iph) + sizeof(*uh) &&
	    (skb_shared(skb) || !pskb_may_pull(skb, sizeof(*iph) + sizeof(*uh))))
		return false;
	iph = ip_hdr(skb);
	uh = (const struct udphdr *)(iph + 1);
	if (iph->version != 4 || iph->ihl != 5 ||
	    iph->protocol != IPPROTO_UDP || ip_is_fragment(iph) ||
	    uh->dest != htons(ROCE_V2_UDP_DPORT) ||
	    (uh->check && skb->ip_summed != CHECKSUM_PARTIAL))
		return false;
	len = ntohs(iph->tot_len);
	if (len > skb->len || ntohs(uh->len) != len - sizeof(*iph))
		return false;
	if (ip_fast_csum(iph, iph->ihl))
		return false;
	return sroce_rx_hook_for_us(skb->dev, iph->daddr);
}

/*
 * Would the IP stack do more with an IPv4 packet to this host than route
 * and deliver it?  A netfilter hook at PRE_ROUTING or LOCAL_IN (any table,
 * of any user: iptables, nftables, conntrack, IPVS), or an inbound IPsec
 * policy (xfrm4_policy_check() in the UDP input, before the tunnel
 * socket's encap_rcv).  The core keeps these pointers NULL and the count 0
 * while there are none, so it costs two loads and a counter read.
 */
static bool sroce_rx_hook_policed(const struct net *net)
{
#if IS_ENABLED(CONFIG_NETFILTER)
	if (rcu_access_pointer(net->nf.hooks_ipv4[NF_INET_PRE_ROUTING]) ||
	    rcu_access_pointer(net->nf.hooks_ipv4[NF_INET_LOCAL_IN]))
		return true;
#endif
#if IS_ENABLED(CONFIG_XFRM)
	if (READ_ONCE(net->xfrm.policy_count[XFRM_POLICY_IN]))
		return true;
#endif
	return false;
}

/* One datagram, checked by sroce_rx_hook_wants(), data at its IP header. */
static void sroce_rx_hook_one(struct sroce_dev *sdev, struct sk_buff *skb)
{
	if (pskb_trim_rcsum(skb, ntohs(ip_hdr(skb)->tot_len))) {
		sroce_rx_drop_no_mem(sdev);
		kfree_skb(skb);
		return;
	}
	__skb_pull(skb, sizeof(struct iphdr));
	skb_reset_transport_header(skb);
	atomic64_inc(&sdev->stats.rx_hooked);
	sroce_rcv(sdev, skb);
}

/*
 * A fraglist aggregate, data at the IP header of its first datagram: split
 * it as the UDP socket does (udp_rcv_segment()), which hands back the
 * chained skbs with their IP headers made whole, and take each datagram
 * that passes the checks the hook makes of any other.
 */
static void sroce_rx_hook_split(struct sroce_dev *sdev, struct sk_buff *skb)
{
	struct sk_buff *segs, *next;

	segs = __skb_gso_segment(skb, NETIF_F_SG, false);
	if (IS_ERR_OR_NULL(segs)) {
		/* One count for the aggregate: its packets are not known. */
		sroce_rx_drop_no_mem(sdev);
		kfree_skb(skb);
		return;
	}
	consume_skb(skb);	/* the split took a reference of its own */
	skb_list_walk_safe(segs, skb, next) {
		skb_mark_not_on_list(skb);
		__skb_pull(skb, skb_network_offset(skb));
		if (sroce_rx_hook_wants(skb)) {
			sroce_rx_hook_one(sdev, skb);
		} else {
			/* Malformed below the UDP payload, too late for IP. */
			atomic64_inc(&sdev->stats.rx_bad_header);
			atomic64_inc(&sdev->stats.rx_dropped);
			/* nothing parsed: no QP, no PSN, as recv.c's first checks */
			trace_sroce_drop(&sdev->ibdev, 0, 0, "rx_bad_header");
			kfree_skb(skb);
		}
	}
}

static rx_handler_result_t sroce_rx_hook(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb;
	struct sroce_dev *sdev;

	if (!sroce_rx_hook_wants(skb))
		return RX_HANDLER_PASS;
	/* Valid while the handler is attached: sroce_rx_hook_detach(). */
	sdev = rcu_dereference(skb->dev->rx_handler_data);
	if (sroce_rx_hook_policed(dev_net(skb->dev))) {
		atomic64_inc(&sdev->stats.rx_hook_deferred);
		return RX_HANDLER_PASS;
	}
	if (!ib_device_try_get(&sdev->ibdev))
		return RX_HANDLER_PASS;		/* going away: as without us */

	/* A tap (tcpdump) may share the skb: ours to change from here on. */
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb) {
		sroce_rx_drop_no_mem(sdev);
		goto out;
	}
	/* As ip_rcv() does: the sender's socket has no say here. */
	skb_orphan(skb);
	if (skb_is_gso(skb))
		sroce_rx_hook_split(sdev, skb);
	else
		sroce_rx_hook_one(sdev, skb);
out:
	ib_device_put(&sdev->ibdev);
	return RX_HANDLER_CONSUMED;
}

bool sroce_rx_hook_or_none(const struct net_device *ndev)
{
	rx_handler_func_t *handler = rcu_dereference(ndev->rx_handler);

	return !handler || handler == sroce_rx_hook;
}

void sroce_rx_hook_attach(struct sroce_dev *sdev)
{
	int err;

	if (!READ_ONCE(fast_rx))
		return;
	rtnl_lock();
	err = netdev_rx_handler_register(sdev->ndev, sroce_rx_hook, sdev);
	sdev->rx_hooked = !err;
	rtnl_unlock();
	if (err)
		pr_info("%s: fast_rx: %s already has a receive handler (bridge, bond, macvlan...): using the socket path\n",
			SROCE_DRV_NAME, netdev_name(sdev->ndev));
}

void sroce_rx_hook_detach_locked(struct sroce_dev *sdev)
{
	ASSERT_RTNL();
	if (!sdev->rx_hooked)
		return;
	netdev_rx_handler_unregister(sdev->ndev);
	sdev->rx_hooked = false;
}

void sroce_rx_hook_detach(struct sroce_dev *sdev)
{
	/* Set only at creation; cleared under RTNL: recheck there. */
	if (!READ_ONCE(sdev->rx_hooked))
		return;
	rtnl_lock();
	sroce_rx_hook_detach_locked(sdev);
	rtnl_unlock();
}
