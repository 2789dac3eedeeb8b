// SPDX-License-Identifier: GPL-2.0-only
/*
 * rx_hook.c - RoCEv2 packets taken off the netdev before the IP stack.
 *
 * Without this hook a packet reaches sroce the way it reaches rdma_rxe:
 * through ip_rcv(), the receive route lookup, netfilter's INPUT hooks, the
 * UDP socket lookup and the tunnel socket's encap_rcv (net.c).  While the
 * module parameter fast_rx is set (the default) when a device is created,
 * its netdev gets a netfilter ingress hook instead, as a RoCE NIC takes
 * RoCE packets off the wire: a unicast IPv4 or IPv6 datagram to UDP port
 * 4791 and one of the netdev's own addresses, without IP options, IPv6
 * extension headers or fragmentation and with no UDP checksum (RoCEv2
 * senders send none, over IPv6 too; one left to fill in, CHECKSUM_PARTIAL,
 * is not one yet: recv.c), goes straight to sroce_rcv(); anything else,
 * VLAN-tagged traffic included, goes on to the IP stack.  The IP header is
 * checked here as ip_rcv() or ipv6_rcv() would (version, lengths, the
 * IPv4 checksum, no multicast, broadcast, zero or loopback source; the
 * reverse path filter is not applied, as a RoCE NIC applies none);
 * sroce_rcv() checks the rest.
 *
 * The hook takes only what nothing in the IP stack would look at: while
 * the netdev's namespace has a netfilter hook (an iptables or nftables
 * rule, conntrack) where input of the packet's family passes, or an
 * inbound IPsec policy, its packets go on to the IP stack, so turning the
 * hook on never lets a packet around a firewall (sroce_rx_hook_policed()).
 *
 * Why an ingress hook and not the netdev's rx_handler: a netdev has one
 * rx_handler, the one a bridge, bond, team, macvlan or ipvlan takes, so
 * holding it would make those fail with EBUSY.  Ingress hooks are a list,
 * and this one runs last of them (an nftables netdev chain sees RoCE
 * packets first), after the taps (tcpdump sees every packet) and tc
 * ingress, before any rx_handler.  A packet it takes is addressed to the
 * netdev's own address and MAC, one no bridge or macvlan on top would
 * have passed elsewhere.
 *
 * Lifetime: the hook's priv points at the sroce_dev.  The hook is attached
 * before ib_register_device(), while nothing else can reach the device (a
 * packet meanwhile finds it unregistered and goes on to the IP stack), and
 * removed under RTNL when the netdev unregisters or, at the latest, in
 * dealloc_driver before the device's tables are destroyed;
 * nf_unregister_net_hook() does not wait for a hook still running on
 * another CPU, synchronize_net() does.  Each packet takes a device
 * reference, as the socket path does, so nothing reaches a device that is
 * not (or no longer) registered.
 */
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/netfilter.h>
#include <linux/xfrm.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/udp_tunnel.h>

#include "compat.h"
#include "sroce.h"
#include "net.h"
#include "rx_hook.h"

static bool fast_rx = true;
module_param(fast_rx, bool, 0644);
MODULE_PARM_DESC(fast_rx,
		 "take RoCEv2 packets off the netdev before the IP stack, for devices created while set (default on; see Documentation/admin-guide.rst)");

/* After every other ingress hook (nftables' netdev chains). */
#define SROCE_RX_HOOK_PRIORITY	INT_MAX

/*
 * The UDP header of a datagram whose IP header, @hlen bytes, is at
 * skb->data, and NULL unless both are in the linear part.  A pull may
 * reallocate the head, which must not happen to an skb a tap still
 * shares: sroce_rx_hook() unshares only what it takes, so a shared one
 * with its headers out of the linear part is the IP stack's (which
 * unshares it first).
 */
static const struct udphdr *sroce_rx_hook_pull(struct sk_buff *skb,
					       unsigned int hlen)
{
	unsigned int len = hlen + sizeof(struct udphdr);

	if (skb_headlen(skb) < len &&
	    (skb_shared(skb) || !pskb_may_pull(skb, len)))
		return NULL;
	return (const struct udphdr *)(skb->data + hlen);
}

/*
 * RoCEv2 in a UDP datagram that fills the @iplen bytes the IP header
 * gives it and carries no checksum to verify.
 */
static bool sroce_rx_hook_udp_ok(const struct sk_buff *skb,
				 const struct udphdr *uh, unsigned int iplen)
{
	return uh->dest == htons(ROCE_V2_UDP_DPORT) &&
	       (!uh->check || skb->ip_summed == CHECKSUM_PARTIAL) &&
	       ntohs(uh->len) == iplen;
}

/* Is @daddr one of @ndev's IPv4 addresses?  (A netdev has a few.) */
static bool sroce_rx_hook_for_us4(struct net_device *ndev, __be32 daddr)
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

static unsigned int sroce_rx_hook_wants4(struct sk_buff *skb)
{
	const struct udphdr *uh = sroce_rx_hook_pull(skb, sizeof(struct iphdr));
	const struct iphdr *iph = ip_hdr(skb);
	unsigned int len;

	if (!uh || iph->version != 4 || iph->ihl != 5 ||
	    iph->protocol != IPPROTO_UDP || ip_is_fragment(iph))
		return 0;
	len = ntohs(iph->tot_len);
	if (len > skb->len || len < sizeof(*iph) ||
	    !sroce_rx_hook_udp_ok(skb, uh, len - sizeof(*iph)))
		return 0;
	if (ip_fast_csum(iph, iph->ihl) ||
	    !sroce_rx_hook_for_us4(skb->dev, iph->daddr))
		return 0;
	/* Martian sources, which the receive route lookup drops. */
	if (ipv4_is_multicast(iph->saddr) || ipv4_is_lbcast(iph->saddr) ||
	    ipv4_is_zeronet(iph->saddr) || ipv4_is_loopback(iph->saddr))
		return 0;
	return sizeof(*iph);
}

/*
 * A UDP header right after the IPv6 header (any extension header, a
 * fragment header included, is the IP stack's), to an address of this
 * netdev that is not tentative (ipv6_chk_addr(), strict: on this netdev,
 * whatever its scope).  ipv6_rcv() drops a multicast source, and a
 * loopback one from anything but lo: those, too, are left to it.
 */
static unsigned int sroce_rx_hook_wants6(struct sk_buff *skb)
{
#if IS_ENABLED(CONFIG_IPV6)
	const struct udphdr *uh = sroce_rx_hook_pull(skb, sizeof(struct ipv6hdr));
	const struct ipv6hdr *ip6h = ipv6_hdr(skb);
	unsigned int len;

	if (!uh || ip6h->version != 6 || ip6h->nexthdr != IPPROTO_UDP ||
	    ipv6_addr_is_multicast(&ip6h->saddr) ||
	    ipv6_addr_loopback(&ip6h->saddr))
		return 0;
	len = ntohs(ip6h->payload_len);
	if (sizeof(*ip6h) + len > skb->len ||
	    !sroce_rx_hook_udp_ok(skb, uh, len))
		return 0;
	if (!ipv6_chk_addr(dev_net(skb->dev), &ip6h->daddr, skb->dev, 1))
		return 0;
	return sizeof(*ip6h);
#else
	return 0;
#endif
}

/*
 * The length of the IP header of a packet the hook may take, data at that
 * header, or 0 to leave the packet to the IP stack.
 */
static unsigned int sroce_rx_hook_wants(struct sk_buff *skb)
{
	if (skb->pkt_type != PACKET_HOST)
		return 0;
	/*
	 * A tag the core has not matched to a VLAN netdev yet (it does so,
	 * and marks the packet as not for this host if there is none, only
	 * after the ingress hooks ran) is the IP stack's, and so is any
	 * aggregate of several datagrams but a fraglist one (a transmit
	 * batch, pkt.h), which sroce_rx_hook_split() splits as the UDP socket
	 * would.
	 */
	if (skb_vlan_tag_present(skb) ||
	    (skb_is_gso(skb) && skb_shinfo(skb)->gso_type !=
	     (SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST)))
		return 0;
	if (skb->protocol == htons(ETH_P_IP))
		return sroce_rx_hook_wants4(skb);
	if (skb->protocol == htons(ETH_P_IPV6))
		return sroce_rx_hook_wants6(skb);
	return 0;
}

/*
 * Would the IP stack do more with a packet to this host than route and
 * deliver it?  A netfilter hook of the packet's family at PRE_ROUTING or
 * LOCAL_IN (any table, of any user: iptables, nftables, conntrack, IPVS),
 * or an inbound IPsec policy of any family (xfrm4/6_policy_check() in the
 * UDP input, before the tunnel socket's encap_rcv).  The core keeps these
 * pointers NULL and the count 0 while there are none, so it costs two
 * loads and a counter read.
 */
static bool sroce_rx_hook_policed(const struct sk_buff *skb)
{
	const struct net *net = dev_net(skb->dev);

#if IS_ENABLED(CONFIG_NETFILTER)
	struct nf_hook_entries __rcu *const *hooks =
		skb->protocol == htons(ETH_P_IP) ? net->nf.hooks_ipv4 :
						   net->nf.hooks_ipv6;

	if (rcu_access_pointer(hooks[NF_INET_PRE_ROUTING]) ||
	    rcu_access_pointer(hooks[NF_INET_LOCAL_IN]))
		return true;
#endif
#if IS_ENABLED(CONFIG_XFRM)
	if (READ_ONCE(net->xfrm.policy_count[XFRM_POLICY_IN]))
		return true;
#endif
	return false;
}

/*
 * One datagram, checked by sroce_rx_hook_wants(), data at its IP header of
 * @hlen bytes; the UDP length is the IP one's (checked there).
 */
static void sroce_rx_hook_one(struct sroce_dev *sdev, struct sk_buff *skb,
			      unsigned int hlen)
{
	const struct udphdr *uh = (const struct udphdr *)(skb->data + hlen);

	if (pskb_trim_rcsum(skb, hlen + ntohs(uh->len))) {
		sroce_rx_drop_no_mem(sdev);
		kfree_skb(skb);
		return;
	}
	__skb_pull(skb, hlen);
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
	unsigned int hlen;

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
		hlen = sroce_rx_hook_wants(skb);
		if (hlen) {
			sroce_rx_hook_one(sdev, skb, hlen);
		} else {
			/* Malformed below the UDP payload, too late for IP. */
			sroce_rx_drop_malformed(sdev, skb);
		}
	}
}

static unsigned int sroce_rx_hook(void *priv, struct sk_buff *skb,
				  const struct nf_hook_state *state)
{
	struct sroce_dev *sdev = priv;	/* valid: sroce_rx_hook_detach() */
	unsigned int hlen;

	hlen = sroce_rx_hook_wants(skb);
	if (!hlen)
		return NF_ACCEPT;
	if (sroce_rx_hook_policed(skb)) {
		atomic64_inc(&sdev->stats.rx_hook_deferred);
		return NF_ACCEPT;
	}
	if (!ib_device_try_get(&sdev->ibdev))
		return NF_ACCEPT;		/* going away: as without us */

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
		sroce_rx_hook_one(sdev, skb, hlen);
out:
	ib_device_put(&sdev->ibdev);
	return NF_STOLEN;
}

void sroce_rx_hook_attach(struct sroce_dev *sdev)
{
	struct nf_hook_ops *ops = &sdev->rx_hook_ops;
	int err = -EOPNOTSUPP;

	if (!READ_ONCE(fast_rx))
		return;
	ops->hook = sroce_rx_hook;
	ops->priv = sdev;
	ops->dev = sdev->ndev;
	ops->pf = NFPROTO_NETDEV;
	ops->hooknum = NF_NETDEV_INGRESS;
	ops->priority = SROCE_RX_HOOK_PRIORITY;
	rtnl_lock();
#if IS_ENABLED(CONFIG_NETFILTER_INGRESS)
	err = nf_register_net_hook(dev_net(sdev->ndev), ops);
#endif
	sdev->rx_hooked = !err;
	rtnl_unlock();
	if (err)
		pr_info("%s: fast_rx: no ingress hook on %s (%d): using the socket path\n",
			SROCE_DRV_NAME, netdev_name(sdev->ndev), err);
}

void sroce_rx_hook_detach_locked(struct sroce_dev *sdev)
{
	ASSERT_RTNL();
	if (!sdev->rx_hooked)
		return;
#if IS_ENABLED(CONFIG_NETFILTER_INGRESS)
	nf_unregister_net_hook(dev_net(sdev->ndev), &sdev->rx_hook_ops);
#endif
	synchronize_net();	/* no CPU still in sroce_rx_hook() */
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
