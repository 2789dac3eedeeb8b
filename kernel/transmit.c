// SPDX-License-Identifier: GPL-2.0-only
/*
 * Build an skb for a packet, route it, send it (or loop it
 * back), alone or chained with the packets sent after it to the same
 * destination in one batch ("batches" below).
 *
 * A packet is built in one linear skb with room in front for the link,
 * IP and UDP headers (sroce_pkt_alloc()); the requester or responder fills
 * the extension headers and the payload; sroce_pkt_send() then adds, in
 * this order:
 *
 *   UDP    source port from the QPN pair (ECMP entropy, stable per QP so
 *          a QP's packets stay in order on a multipath fabric), checksum
 *          0: RoCEv2 allows it for IPv4 and IPv6, the ICRC protects the
 *          packet end to end, and rdma_rxe and RoCE NICs do the same;
 *   IP     built here rather than by udp_tunnel_xmit_skb(), because the
 *          ICRC covers the IP header (the IPv4 ID and lengths included)
 *          and so can only be computed once the header is final;
 *   ICRC   last, over the final headers; zero when the receiver is sroce
 *          in this host, which does not read it (sroce_tx_seal()).
 *
 * Local destinations.  When the route says the destination address is
 * local (the same device, another sroce device of the host, a QP on lo),
 * the IP stack would deliver the packet through lo, and the receive side
 * would see lo instead of the netdev of the target device.  So the packet
 * is handed to netif_rx() as a packet received by the netdev that owns
 * the address: it then takes the receive path of a packet from the wire
 * (IP, UDP, net.c, recv.c), and there is only one receive path to get
 * right.
 */
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/inet_ecn.h>
#include <net/ip6_checksum.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <net/sch_generic.h>
#include <net/udp.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "icrc.h"
#include "mr.h"
#include "pkt.h"
#include "net.h"
#include "qp.h"
#include "sroce.h"
#include "transmit.h"

/* The largest payload of one packet: the largest IB MTU. */
#define SROCE_MAX_PAYLOAD	4096

/* ---- address vectors ------------------------------------------------------ */

int sroce_av_set(struct sroce_av *av, const struct rdma_ah_attr *ah)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	struct sockaddr_storage src, dst;
	struct net_device *ndev;
	int err = 0;

	if (!(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr)
		return -EINVAL;

	/* RoCE v1 and IB GIDs name paths sroce has no way to send on. */
	switch (rdma_gid_attr_network_type(sgid_attr)) {
	case RDMA_NETWORK_IPV4:
	case RDMA_NETWORK_IPV6:
		break;
	default:
		return -EINVAL;
	}
	rdma_gid2ip((struct sockaddr *)&src, &sgid_attr->gid);
	rdma_gid2ip((struct sockaddr *)&dst, &grh->dgid);
	if (src.ss_family != dst.ss_family)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	av->family = src.ss_family;
	av->tos = grh->traffic_class;
	av->ttl = grh->hop_limit;
	av->flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;
	if (av->family == AF_INET) {
		av->saddr.v4 = ((struct sockaddr_in *)&src)->sin_addr.s_addr;
		av->daddr.v4 = ((struct sockaddr_in *)&dst)->sin_addr.s_addr;
	} else {
		av->saddr.v6 = ((struct sockaddr_in6 *)&src)->sin6_addr;
		av->daddr.v6 = ((struct sockaddr_in6 *)&dst)->sin6_addr;
	}
	/*
	 * The GID may belong to a VLAN, macvlan or ipvlan netdev on top of
	 * ours (the core adds their addresses to the GID table): route out
	 * of that netdev, so the packet is tagged or carries its MAC, and
	 * in its namespace, which is a container's when the netdev was
	 * moved there (net.c receives there too).
	 */
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(sgid_attr);
	if (!IS_ERR(ndev)) {
		av->ifindex = ndev->ifindex;
		if (!net_eq(dev_net(ndev),
			    dev_net(to_sdev(sgid_attr->device)->ndev))) {
			/* NULL for a namespace on its way out */
			av->net = maybe_get_net(dev_net(ndev));
			if (!av->net)
				err = -ENODEV;
		}
	}
	rcu_read_unlock();
	return err;
}

void sroce_av_release(struct sroce_av *av)
{
	if (av->net)
		put_net(av->net);
	av->net = NULL;
}

/*
 * RC and UC have no source QPN on the wire: the addresses are all that
 * ties a packet to the connection, so recv.c checks them.
 */
bool sroce_av_match(const struct sroce_av *av, const struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);

	if (iph->version == 4)
		return av->family == AF_INET && iph->saddr == av->daddr.v4 &&
		       iph->daddr == av->saddr.v4;
	if (iph->version == 6) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		return av->family == AF_INET6 &&
		       ipv6_addr_equal(&ip6h->saddr, &av->daddr.v6) &&
		       ipv6_addr_equal(&ip6h->daddr, &av->saddr.v6);
	}
	return false;
}

/* ---- building --------------------------------------------------------------- */

/*
 * Room in front of a packet's IP header for the link header of @ndev
 * and two VLAN tags.  A transmit batch (sroce_tx_batch_add()) leaves as
 * one skb, the later packets on its frag_list; where a lower device
 * cannot send that whole (no NETIF_F_GSO_FRAGLIST: virtio-net, say), the
 * kernel splits it there and pushes in front of every packet the head's
 * link header as it then is, with any VLAN tag that device inserts in
 * software (802.1Q over a netdev without tag offload, 802.1ad on top).
 * Only the head is given more room if it needs it.
 */
#define SROCE_TX_TAGS_LEN	(2 * VLAN_HLEN)

static unsigned int sroce_tx_link_room(const struct net_device *ndev)
{
	return LL_RESERVED_SPACE_EXTRA(ndev, SROCE_TX_TAGS_LEN);
}

/* Link header and tags (above), IP, UDP. */
static unsigned int sroce_tx_headroom(const struct net_device *ndev)
{
	return sroce_tx_link_room(ndev) + sizeof(struct ipv6hdr) +
	       sizeof(struct udphdr);
}

/*
 * An skb with @size bytes of linear area.  Its head is a page fragment,
 * as a NIC driver's receive buffers are, not a kmalloc() block: kmalloc()
 * zeroes every block on Debian's kernels (CONFIG_INIT_ON_ALLOC_DEFAULT_ON),
 * and that zeroing of a head that is about to be written whole was 5-10 %
 * of the busy CPU time under TCG (scripts/bench --profile, performance.rst,
 * session 29).  A fragment's page is zeroed when it is allocated, and
 * packets are freed as soon as they are received or sent, so the per-CPU
 * fragment cache mostly gets its page back whole and uses it again (a
 * packet held past a PSN gap, pkt.h, keeps its page in use meanwhile, as
 * a NIC driver's receive buffer does).
 * Where a head would not fit in a page, kmalloc() as before.  The skb
 * itself comes from the per-CPU cache that sroce_pkt_consume() fills
 * where that may be used (pkt.h), else from the slab.
 */
static struct sk_buff *sroce_pkt_skb_alloc(unsigned int size)
{
	unsigned int fragsz = SKB_DATA_ALIGN(size) +
			      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	bool napi = sroce_pkt_napi_cache_ok();
	struct sk_buff *skb;
	void *data;

	if (fragsz > PAGE_SIZE)
		return __alloc_skb(size, GFP_ATOMIC, napi ? SKB_ALLOC_NAPI : 0,
				   NUMA_NO_NODE);
	data = napi ? napi_alloc_frag(fragsz) : netdev_alloc_frag(fragsz);
	if (!data)
		return NULL;
	skb = napi ? napi_build_skb(data, fragsz) : build_skb(data, fragsz);
	if (!skb)
		skb_free_frag(data);
	return skb;
}

/*
 * The common part of both allocators: @linear payload bytes plus pad and
 * ICRC in the linear area (0 for a zero-copy packet, whose payload and
 * trailer come as page fragments).
 */
static struct sk_buff *sroce_pkt_alloc_common(struct sroce_qp *qp, u8 opcode,
					      u32 psn, u32 payload_len,
					      u32 flags, bool linear)
{
	struct net_device *ndev = qp->sdev->ndev;
	unsigned int hdr_len = sroce_hdr_len(opcode);
	unsigned int pad = -payload_len & 3;
	unsigned int len = hdr_len;
	struct sroce_bth *bth;
	struct sroce_pkt *pkt;
	struct sk_buff *skb;
	u8 *p;

	if (WARN_ON_ONCE(!hdr_len || payload_len > SROCE_MAX_PAYLOAD))
		return NULL;
	if (linear)
		len += payload_len + pad + SROCE_ICRC_LEN;

	skb = sroce_pkt_skb_alloc(sroce_tx_headroom(ndev) + len);
	if (!skb)
		return NULL;
	skb_reserve(skb, sroce_tx_headroom(ndev));
	skb->dev = ndev;
	p = skb_put(skb, len);
	memset(p, 0, hdr_len);
	if (linear)
		memset(p + hdr_len + payload_len, 0, pad + SROCE_ICRC_LEN);

	bth = (struct sroce_bth *)p;
	bth->opcode = opcode;
	bth->flags = sroce_bth_flags(flags & SROCE_PKT_SE, false, pad);
	bth->pkey = cpu_to_be16(SROCE_DEFAULT_PKEY);
	sroce_bth_set_qpn(bth, qp->attr.dest_qp_num);
	sroce_bth_set_psn(bth, psn, flags & SROCE_PKT_ACKREQ);

	pkt = SROCE_PKT(skb);
	memset(pkt, 0, sizeof(*pkt));
	pkt->sdev = qp->sdev;
	pkt->qp = qp;
	pkt->psn = psn & SROCE_QPN_MASK;
	pkt->qpn = qp->attr.dest_qp_num & SROCE_QPN_MASK;
	pkt->paylen = payload_len;
	pkt->opcode = opcode;
	pkt->hdr_len = hdr_len;
	pkt->pad = pad;
	pkt->flags = flags & (SROCE_PKT_ACKREQ | SROCE_PKT_SE);
	return skb;
}

struct sk_buff *sroce_pkt_alloc(struct sroce_qp *qp, u8 opcode, u32 psn,
				u32 payload_len, u32 flags)
{
	return sroce_pkt_alloc_common(qp, opcode, psn, payload_len, flags,
				      true);
}

/* ---- zero-copy payload ------------------------------------------------------ */

struct sk_buff *sroce_pkt_alloc_zc(struct sroce_qp *qp, u8 opcode, u32 psn,
				   u32 payload_len, u32 flags)
{
	return sroce_pkt_alloc_common(qp, opcode, psn, payload_len, flags,
				      false);
}

/*
 * One fragment is kept for the trailer.  The fragments are user pages
 * that the application may write to while the packet is in flight (a bug
 * of its own: the receiver then drops the packet on its ICRC and the
 * retransmission carries the new bytes); SKBFL_SHARED_FRAG tells the
 * stack not to trust them to stay put.
 */
int sroce_pkt_add_page(struct sk_buff *skb, struct page *page,
		       unsigned int off, unsigned int len)
{
	unsigned int nr = skb_shinfo(skb)->nr_frags;

	if (nr + 1 >= MAX_SKB_FRAGS)
		return -EMSGSIZE;
	get_page(page);
	skb_add_rx_frag(skb, nr, page, off, len, len);
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	return 0;
}

int sroce_pkt_add_mr(struct sk_buff *skb, struct sroce_mr *mr, u64 iova,
		     u32 len)
{
	int err = 0;

	while (len && !err) {
		unsigned int poff, n;
		struct page *page = sroce_mr_user_page(mr, iova, &poff);

		if (!page)
			return -EOPNOTSUPP;
		n = min_t(u32, len, PAGE_SIZE - poff);
		err = sroce_pkt_add_page(skb, page, poff, n);
		iova += n;
		len -= n;
	}
	return err;
}

/*
 * Pad and ICRC of a zero-copy packet, in a small fragment of the per-CPU
 * page fragment cache the network drivers use for receive buffers.
 */
int sroce_pkt_finish_zc(struct sk_buff *skb)
{
	unsigned int len = SROCE_PKT(skb)->pad + SROCE_ICRC_LEN;
	unsigned int nr = skb_shinfo(skb)->nr_frags;
	struct page *page;
	u8 *trailer;

	if (WARN_ON_ONCE(nr >= MAX_SKB_FRAGS))
		return -EMSGSIZE;
	trailer = netdev_alloc_frag(SMP_CACHE_BYTES);
	if (!trailer)
		return -ENOMEM;
	memset(trailer, 0, len);
	page = virt_to_head_page(trailer);
	skb_add_rx_frag(skb, nr, page, trailer - (u8 *)page_address(page), len,
			SMP_CACHE_BYTES);
	return 0;
}

static void sroce_tx_push_udp(struct sk_buff *skb, __be16 sport)
{
	struct udphdr *uh = skb_push(skb, sizeof(*uh));

	skb_reset_transport_header(skb);
	uh->source = sport;
	uh->dest = htons(SROCE_UDP_PORT);
	uh->len = htons(skb->len);
	uh->check = 0;
}

/*
 * IPv4 TOS / IPv6 traffic class: the path's DSCP, and ECT(0) when the
 * device marks (cc.h) so that an ECN-capable queue on the path marks CE
 * instead of dropping.
 */
static u8 sroce_tx_tos(const struct sroce_dev *sdev, const struct sroce_av *av)
{
	u8 ecn = sroce_cc_ecn_bits(&sdev->cc);

	return ecn ? (av->tos & ~INET_ECN_MASK) | ecn : av->tos;
}

static void sroce_tx_push_ipv4(struct net *net, struct sk_buff *skb,
			       const struct sroce_av *av, u8 tos, u8 ttl,
			       int batch_index)
{
	struct iphdr *iph = skb_push(skb, sizeof(*iph));

	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = tos;
	iph->tot_len = htons(skb->len);
	/* Never fragmented: the path MTU was chosen to fit the netdev. */
	iph->frag_off = htons(IP_DF);
	iph->ttl = ttl;
	iph->protocol = IPPROTO_UDP;
	iph->saddr = av->saddr.v4;
	iph->daddr = av->daddr.v4;
	if (batch_index < 0)
		ip_select_ident(net, skb, NULL);
	else
		iph->id = htons(batch_index);	/* see "batches" below */
	ip_send_check(iph);
	skb->protocol = htons(ETH_P_IP);
}

static void sroce_tx_push_ipv6(struct sk_buff *skb, const struct sroce_av *av,
			       u8 tclass, u8 hop_limit)
{
	struct ipv6hdr *ip6h = skb_push(skb, sizeof(*ip6h));

	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, tclass, htonl(av->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = hop_limit;
	ip6h->saddr = av->saddr.v6;
	ip6h->daddr = av->daddr.v6;
	skb->protocol = htons(ETH_P_IPV6);
}

/*
 * Does a packet sent out of @dev stay in this host's memory?  A veth
 * hands it to its peer, loopback to itself: no wire, no bit errors.
 * Other virtual devices (VLAN, bridge, macvlan) may lead to a wire and are
 * not asked about what lies below them.
 */
static bool sroce_tx_host_local(const struct net_device *dev)
{
	return (dev->flags & IFF_LOOPBACK) ||
	       (dev->rtnl_link_ops && !strcmp(dev->rtnl_link_ops->kind, "veth"));
}

/*
 * A packet that stays in this host is sent as the kernel sends its own UDP
 * and TCP there: CHECKSUM_PARTIAL, the UDP checksum left to whoever puts it
 * on a wire (a bridge or a route may still lead it to a NIC, which then
 * fills it in).  A receiver in this host takes that state as "never
 * crossed a wire" and skips the checksum; sroce's skips the ICRC check
 * (recv.c), and so reads each payload byte once, for the copy.  Elsewhere
 * the UDP checksum stays 0, as RoCEv2 senders send it.  Returns whether
 * the packet stays in this host.
 */
static bool sroce_tx_csum(struct sk_buff *skb, const struct net_device *local,
			  const struct net_device *dev)
{
	unsigned int ulen;

	if (!local && !sroce_tx_host_local(dev))
		return false;
	ulen = ntohs(udp_hdr(skb)->len);
	if (skb->protocol == htons(ETH_P_IP))
		udp_set_csum(false, skb, ip_hdr(skb)->saddr, ip_hdr(skb)->daddr,
			     ulen);
	else
		udp6_set_csum(false, skb, &ipv6_hdr(skb)->saddr,
			      &ipv6_hdr(skb)->daddr, ulen);
	return true;
}

/*
 * The ICRC of a packet that sroce in this host receives is never read, so
 * it is not computed either: on a veth between two namespaces, and in
 * loopback, computing it was the largest cost per payload byte left
 * (about a quarter of a 1 KiB packet's time under TCG, performance.rst).
 * It is the ICRC's equivalent of the UDP checksum a veth never fills in,
 * and like that checksum it shows as wrong (zero) in a capture on the
 * veth; the parameter below brings it back for those who read captures.
 *
 * The receiver is known to be sroce when the packet stays in this host
 * (sroce_tx_csum()) and goes either to a local address of the sending
 * namespace or through a veth whose far end delivers it to an address of
 * its own namespace, with nothing on that end that could send it on
 * elsewhere (no bridge, bond or macvlan above it, no XDP program), and
 * sroce holds UDP port 4791 in that namespace (so rdma_rxe cannot).  A
 * tc or netfilter rule redirecting RoCE packets in the far namespace is
 * not looked for.  Anything else, a NIC, rdma_rxe, a raw socket, gets a
 * computed ICRC as before.
 */
static bool tx_icrc_always;
module_param(tx_icrc_always, bool, 0644);
MODULE_PARM_DESC(tx_icrc_always,
		 "compute the ICRC also of packets that sroce in this host receives without reading it, for captures on a veth (default off)");

/*
 * Is the receiver of @skb, sent out of @dev to @av (@local: to a local
 * address), sure to be sroce in this host?  A veth that does not offload
 * the UDP checksum (ethtool -K ... tx off) has the kernel compute it
 * before the veth sees the packet, and IPsec transforms it: either way it
 * reaches the receiver as a packet from a wire would, its ICRC checked.
 * Under rcu_read_lock(), with the route attached to @skb.
 */
static bool sroce_tx_icrc_unread(const struct sk_buff *skb,
				 const struct sroce_av *av,
				 const struct net_device *local,
				 struct net_device *dev)
{
	struct net_device *peer;
	struct net *net;

	if (READ_ONCE(tx_icrc_always) || dst_xfrm(skb_dst(skb)))
		return false;
	if (local)
		return sroce_net_receives(dev_net(local));
	if (!dev->netdev_ops->ndo_get_peer_dev ||
	    !can_checksum_protocol(dev->features, skb->protocol))
		return false;
	peer = dev->netdev_ops->ndo_get_peer_dev(dev);
	if (!peer || netdev_master_upper_dev_get_rcu(peer) ||
	    dev_xdp_prog_count(peer) || rcu_access_pointer(peer->rx_handler))
		return false;
	net = dev_net(peer);
	if (!sroce_net_receives(net))
		return false;
	if (skb->protocol == htons(ETH_P_IP))
		return __ip_dev_find(net, av->daddr.v4, false);
#if IS_ENABLED(CONFIG_IPV6)
	return ipv6_dev_find(net, &av->daddr.v6, NULL);
#else
	return false;
#endif
}

/*
 * The last header steps of both families, once the IP header is final:
 * the UDP checksum state, then the ICRC, or zeros where nobody reads it.
 */
static int sroce_tx_seal(struct sroce_dev *sdev, struct sk_buff *skb,
			 const struct sroce_av *av,
			 const struct net_device *local, struct net_device *dev)
{
	static const u8 zero[SROCE_ICRC_LEN];

	/*
	 * IPsec may encrypt a packet in place, its fragments included
	 * (esp_output_head() when the trailer fits the head's tailroom),
	 * whatever SKBFL_SHARED_FRAG says: a zero-copy packet's fragments
	 * are the pages of a user's MR.  Such a packet is copied into its
	 * head first.
	 */
	if (dst_xfrm(skb_dst(skb)) && skb_has_shared_frag(skb) &&
	    skb_linearize(skb))
		return -ENOMEM;
	if (!sroce_tx_csum(skb, local, dev) ||
	    !sroce_tx_icrc_unread(skb, av, local, dev))
		return sroce_icrc_generate(skb);
	atomic64_inc(&sdev->stats.tx_icrc_skipped);
	return skb_store_bits(skb, skb->len - SROCE_ICRC_LEN, zero,
			      sizeof(zero));
}

/* ---- batches ---------------------------------------------------------------- */

/*
 * A batch (pkt.h) is sent as the skb of its first packet, the head, with
 * the others on the head's frag_list, marked SKB_GSO_UDP_L4 |
 * SKB_GSO_FRAGLIST.  A veth passes it on whole; the receiving UDP socket,
 * or the transmit path of a netdev that cannot take it, splits it with
 * skb_segment_list(), which hands out the chained skbs themselves.  What
 * the split rewrites, and how each packet is built so that its ICRC,
 * computed before, still holds:
 *
 *  - every packet keeps its own IP and UDP headers (only the link header
 *    is copied from the head); the IPv4 total length or IPv6 payload
 *    length is set to the packet's own, which it already was;
 *  - the IPv4 ID becomes the head's ID plus the packet's index in the
 *    batch, so each packet is built with its index as its ID (the ID of a
 *    DF packet without a socket is otherwise 0, ip_select_ident()); the
 *    header checksum is recomputed, and the ICRC masks it anyway;
 *  - the head's UDP length becomes the segment size, gso_size: the head's
 *    own, so a later packet may be shorter than the head, never longer.
 *
 * Until the split, the head's IP and UDP lengths cover the whole batch, as
 * the IP and UDP receive code expect.  A batch stays under 64 KiB (the
 * 16-bit IP lengths) and SROCE_TX_BATCH_MAX packets.  Its checksum state
 * is its packets' (sroce_tx_csum()): CHECKSUM_PARTIAL towards a veth, and
 * otherwise CHECKSUM_UNNECESSARY (RoCEv2 sends no UDP checksum), as a GSO
 * skb whose checksum is neither of the two is split before any netdev
 * sees it.
 *
 * Batches form only towards a device without a queueing discipline
 * (sroce_tx_unqueued()): a qdisc sees a batch as one packet.  netem delays
 * and drops it whole, a shaper releases it as one burst whose first
 * packet waits for the last (32 ms for 64 KiB at 2 MB/s, past a short
 * local ACK timeout: netem.sh's slow case), an AQM marks CE on one packet
 * of 32.  A wire, and a RoCE NIC, would show them every packet.
 */
#define SROCE_TX_BATCH_MAX	32

static bool tx_batch = true;
module_param(tx_batch, bool, 0644);
MODULE_PARM_DESC(tx_batch,
		 "send each requester pass's run of packets to one destination as one UDP GSO skb (default on)");

/*
 * Does @dev queue nothing on transmit?  Its root qdisc is noqueue: the
 * default of a veth, a bridge, a VLAN and most virtual devices; a NIC's
 * default (mq, pfifo_fast, fq_codel) and anything an administrator added
 * do queue.  Only the route's own device is asked, not a lower device
 * under a VLAN.  Called with bottom halves disabled, an RCU read side.
 */
static bool sroce_tx_unqueued(const struct net_device *dev)
{
	return !rcu_dereference_bh(dev->qdisc)->enqueue;
}

static int sroce_tx_output(struct net *net, struct sk_buff *skb)
{
	int err;

	if (skb->protocol == htons(ETH_P_IP)) {
		memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
		err = ip_local_out(net, NULL, skb);
	} else {
		memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
		err = ip6_local_out(net, NULL, skb);
	}
	/*
	 * A full queue (a qdisc's, or the backlog of a veth's peer) answers
	 * NET_XMIT_DROP or -ENOBUFS: backpressure, which the requester meets
	 * by sending again shortly.  Any other error is final for this
	 * packet (a netfilter drop's -EPERM, -EMSGSIZE for a packet above
	 * the route's MTU): a loss, which sending again at once would only
	 * repeat, pass after pass, until the retransmit timer ended the QP.
	 */
	if (err == NET_XMIT_DROP || err == -ENOBUFS)
		return -ENOBUFS;
	return err < 0 ? err : 0;
}

static int sroce_tx_batch_send(struct sroce_qp *qp,
			       struct sroce_tx_batch *batch)
{
	struct sk_buff *head = batch->head;
	unsigned int count = batch->count;
	unsigned int bytes = batch->bytes;
	u32 first_psn;
	int err;

	if (!head)
		return 0;
	/* sroce_tx_output() clears the cb for the IP layer: read it first. */
	first_psn = SROCE_PKT(head)->psn;
	sroce_tx_batch_init(batch);
	if (count > 1) {
		struct skb_shared_info *shinfo = skb_shinfo(head);
		struct udphdr *uh = udp_hdr(head);

		shinfo->gso_size = ntohs(uh->len) - sizeof(*uh);
		shinfo->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
		shinfo->gso_segs = count;
		uh->len = htons(head->len - skb_transport_offset(head));
		if (head->ip_summed != CHECKSUM_PARTIAL)
			head->ip_summed = CHECKSUM_UNNECESSARY;
	}
	/* The namespace the batch's route was looked up in. */
	err = sroce_tx_output(dev_net(skb_dst(head)->dev), head);
	if (err) {
		batch->lost_psn = first_psn;
		sroce_qp_stat_add(qp, tx_dropped, count);
		return err;
	}
	if (count > 1)
		sroce_qp_stat_inc(qp, tx_batches);
	sroce_qp_stat_add(qp, tx_packets, count);
	sroce_qp_stat_add(qp, tx_bytes, bytes);
	return 0;
}

/*
 * Make room for @skb (UDP header pushed, IP header not yet) in @batch, a
 * packet to a local address (@local) being sent on its own: send the
 * batch so far unless @skb can join it.  @index gets the index @skb is
 * to have in the batch, -1 for none.
 */
static int sroce_tx_batch_slot(struct sroce_qp *qp,
			       struct sroce_tx_batch *batch,
			       const struct sk_buff *skb, bool local, int *index)
{
	const struct sk_buff *head;
	bool may_join;
	int err;

	*index = -1;
	if (!batch)
		return 0;
	head = batch->head;
	/*
	 * A route through a device with a longer link header: alone.  So
	 * is a packet IPsec transforms: xfrm segments a list-GSO skb and
	 * encrypts the segments without completing their UDP checksums
	 * (CHECKSUM_PARTIAL, sroce_tx_csum()), and the receiver drops them.
	 */
	may_join = !local && READ_ONCE(tx_batch) &&
		   !dst_xfrm(skb_dst(skb)) &&
		   sroce_tx_unqueued(skb_dst(skb)->dev) &&
		   skb_headroom(skb) >= sizeof(struct ipv6hdr) +
			sroce_tx_link_room(skb_dst(skb)->dev);
	if (head && (!may_join || batch->count >= SROCE_TX_BATCH_MAX ||
		     skb->len > ntohs(udp_hdr(head)->len) ||
		     head->len + skb->len + sizeof(struct ipv6hdr) > U16_MAX)) {
		err = sroce_tx_batch_send(qp, batch);
		if (err)
			return err;
	}
	if (may_join)
		*index = batch->count;
	return 0;
}

/* @skb, IP header pushed and ICRC computed, joins @batch at its index. */
static void sroce_tx_batch_add(struct sroce_tx_batch *batch,
			       struct sk_buff *skb)
{
	struct sk_buff *head = batch->head;

	batch->count++;
	batch->bytes += skb->len - skb_transport_offset(skb) -
			sizeof(struct udphdr);
	if (!head) {
		batch->head = skb;
		batch->last = skb;
		return;
	}
	skb_dst_drop(skb);	/* the head's route is the batch's */
	if (head == batch->last)
		skb_shinfo(head)->frag_list = skb;
	else
		batch->last->next = skb;
	batch->last = skb;
	head->len += skb->len;
	head->data_len += skb->len;
	head->truesize += skb->truesize;
}

int sroce_tx_batch_flush(struct sroce_qp *qp, struct sroce_tx_batch *batch)
{
	return sroce_tx_batch_send(qp, batch);
}

/* ---- sending ---------------------------------------------------------------- */

/*
 * Deliver a finished packet to a local address as if @to, the netdev that
 * owns the address, had received it.  The local route the packet carries
 * stays attached: the IP layer then delivers it like a packet that came
 * through lo, without the input route lookup, whose source validation
 * would reject a packet from an address of this host arriving on a
 * device other than lo.  The checksum state is CHECKSUM_PARTIAL, as
 * through lo (sroce_tx_csum()).
 */
static int sroce_tx_loopback(struct sk_buff *skb, struct net_device *to)
{
	memset(skb->cb, 0, sizeof(skb->cb));
	skb->dev = to;
	skb->pkt_type = PACKET_HOST;
	skb_reset_mac_header(skb);
	skb->mac_len = 0;
	return netif_rx(skb) == NET_RX_SUCCESS ? 0 : -ENOBUFS;
}

/*
 * The last step of both per-family senders, once the headers and the ICRC
 * are final: into the local receive path, into @batch at @index (returns
 * 1: counted when the batch leaves), or out through the IP stack.
 */
static int sroce_tx_deliver(struct net *net, struct sk_buff *skb,
			    struct net_device *local,
			    struct sroce_tx_batch *batch, int index)
{
	if (local)
		return sroce_tx_loopback(skb, local);
	if (index >= 0) {
		sroce_tx_batch_add(batch, skb);
		return 1;
	}
	return sroce_tx_output(net, skb);
}

/*
 * The per-family senders below consume the skb in every case; the caller
 * holds rcu_read_lock() for the local-address lookups.  The route is
 * looked up in the netdev's namespace with the netdev as the output
 * interface.
 *
 * A connected QP sends every packet on the same path (qp->av), so its
 * route is kept in a dst_cache (qp->dst_cache, per CPU, as UDP tunnels
 * keep theirs): a route lookup costs about 4 us per packet under TCG
 * (scripts/bench --trace).  The cache drops a route the stack has
 * invalidated (route or address changes, the netdev going away) and qp.c
 * resets it when the path changes.  UD sends to a new address handle per
 * WQE and looks the route up every time.
 */
static struct rtable *sroce_tx_route_ipv4(struct net *net,
					  struct sroce_dev *sdev,
					  const struct sroce_av *av,
					  struct dst_cache *cache)
{
	struct flowi4 fl4 = {};
	struct rtable *rt;
	__be32 saddr;

	if (cache) {
		preempt_disable();	/* the cache is per CPU */
		rt = dst_cache_get_ip4(cache, &saddr);
		preempt_enable();
		if (rt)
			return rt;
	}
	fl4.flowi4_oif = av->ifindex ?: sdev->ndev->ifindex;
	fl4.flowi4_proto = IPPROTO_UDP;
	fl4.saddr = av->saddr.v4;
	fl4.daddr = av->daddr.v4;
	rt = ip_route_output_key(net, &fl4);
	if (!IS_ERR(rt) && cache) {
		preempt_disable();
		dst_cache_set_ip4(cache, &rt->dst, fl4.saddr);
		preempt_enable();
	}
	return rt;
}

static int sroce_tx_ipv4(struct sroce_qp *qp, const struct sroce_av *av,
			 struct dst_cache *cache, struct sk_buff *skb,
			 struct sroce_tx_batch *batch)
{
	struct sroce_dev *sdev = qp->sdev;
	struct net *net = av->net ?: dev_net(sdev->ndev);
	struct net_device *local = NULL;
	struct rtable *rt;
	int err, index;

	rt = sroce_tx_route_ipv4(net, sdev, av, cache);
	if (IS_ERR(rt)) {
		err = PTR_ERR(rt);
		goto drop;
	}
	skb_dst_set(skb, &rt->dst);
	if (rt->rt_type == RTN_LOCAL)
		local = __ip_dev_find(net, av->daddr.v4, false) ?: rt->dst.dev;
	err = sroce_tx_batch_slot(qp, batch, skb, local, &index);
	if (err)
		goto drop;

	sroce_tx_push_ipv4(net, skb, av, sroce_tx_tos(sdev, av),
			   av->ttl ?: ip4_dst_hoplimit(&rt->dst), index);
	err = sroce_tx_seal(sdev, skb, av, local, rt->dst.dev);
	if (err)
		goto drop;
	return sroce_tx_deliver(net, skb, local, batch, index);

drop:
	kfree_skb(skb);
	return err;
}

#if IS_ENABLED(CONFIG_IPV6)
static struct dst_entry *sroce_tx_route_ipv6(struct net *net,
					     struct sroce_dev *sdev,
					     const struct sroce_av *av,
					     struct dst_cache *cache)
{
	struct dst_entry *dst;
	struct flowi6 fl6 = {};
	struct in6_addr saddr;

	if (cache) {
		preempt_disable();	/* the cache is per CPU */
		dst = dst_cache_get_ip6(cache, &saddr);
		preempt_enable();
		if (dst)
			return dst;
	}
	fl6.flowi6_oif = av->ifindex ?: sdev->ndev->ifindex;
	fl6.flowi6_proto = IPPROTO_UDP;
	fl6.saddr = av->saddr.v6;
	fl6.daddr = av->daddr.v6;
	/* The stub fails cleanly when IPv6 is disabled at boot. */
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, NULL, &fl6, NULL);
	/* Failed routes (dst->error) are not kept: looked up again. */
	if (!IS_ERR(dst) && !dst->error && cache) {
		preempt_disable();
		dst_cache_set_ip6(cache, dst, &fl6.saddr);
		preempt_enable();
	}
	return dst;
}

static int sroce_tx_ipv6(struct sroce_qp *qp, const struct sroce_av *av,
			 struct dst_cache *cache, struct sk_buff *skb,
			 struct sroce_tx_batch *batch)
{
	struct sroce_dev *sdev = qp->sdev;
	struct net *net = av->net ?: dev_net(sdev->ndev);
	struct net_device *local = NULL;
	struct dst_entry *dst;
	int err, index;

	dst = sroce_tx_route_ipv6(net, sdev, av, cache);
	if (IS_ERR(dst)) {
		err = PTR_ERR(dst);
		goto drop;
	}
	skb_dst_set(skb, dst);
	err = dst->error;
	if (err)
		goto drop;
	if (dst_rt6_info(dst)->rt6i_flags & RTF_LOCAL)
		local = ipv6_dev_find(net, &av->daddr.v6, NULL) ?: dst->dev;
	err = sroce_tx_batch_slot(qp, batch, skb, local, &index);
	if (err)
		goto drop;

	sroce_tx_push_ipv6(skb, av, sroce_tx_tos(sdev, av),
			   av->ttl ?: ip6_dst_hoplimit(dst));
	err = sroce_tx_seal(sdev, skb, av, local, dst->dev);
	if (err)
		goto drop;
	return sroce_tx_deliver(net, skb, local, batch, index);

drop:
	kfree_skb(skb);
	return err;
}
#else
static int sroce_tx_ipv6(struct sroce_qp *qp, const struct sroce_av *av,
			 struct dst_cache *cache, struct sk_buff *skb,
			 struct sroce_tx_batch *batch)
{
	kfree_skb(skb);
	return -EAFNOSUPPORT;
}
#endif

/*
 * The per-family senders return 1 for a packet that joined @batch: it is
 * counted when the batch leaves (sroce_tx_batch_send()).
 */
static int sroce_pkt_send_path(struct sroce_qp *qp, const struct sroce_av *av,
			       struct dst_cache *cache, u32 dest_qpn,
			       struct sk_buff *skb,
			       struct sroce_tx_batch *batch)
{
	unsigned int len = skb->len;
	__be16 sport;
	int err;

	if (batch)
		batch->lost_psn = SROCE_PKT(skb)->psn;
	sport = htons(rdma_get_udp_sport(av->flow_label, qp->ibqp.qp_num,
					 dest_qpn));
	sroce_tx_push_udp(skb, sport);

	rcu_read_lock();
	if (av->family == AF_INET)
		err = sroce_tx_ipv4(qp, av, cache, skb, batch);
	else if (av->family == AF_INET6)
		err = sroce_tx_ipv6(qp, av, cache, skb, batch);
	else
		err = -EDESTADDRREQ;	/* no path: modify_qp never set one */
	rcu_read_unlock();

	if (err == -EDESTADDRREQ)
		kfree_skb(skb);
	if (err < 0) {
		sroce_qp_stat_inc(qp, tx_dropped);
		return err;
	}
	if (err > 0)
		return 0;
	sroce_qp_stat_inc(qp, tx_packets);
	sroce_qp_stat_add(qp, tx_bytes, len);
	return 0;
}

int sroce_pkt_send_av(struct sroce_qp *qp, const struct sroce_av *av,
		      u32 dest_qpn, struct sk_buff *skb)
{
	return sroce_pkt_send_path(qp, av, NULL, dest_qpn, skb, NULL);
}

/* A connected QP's packet, on a copy of its path (qp.h, av_lock). */
int sroce_pkt_send_batch(struct sroce_qp *qp, struct sroce_tx_batch *batch,
			 struct sk_buff *skb)
{
	struct sroce_av av;
	int err;

	rcu_read_lock();
	sroce_qp_av_read(qp, &av);
	err = sroce_pkt_send_path(qp, &av, &qp->dst_cache,
				  qp->attr.dest_qp_num, skb, batch);
	rcu_read_unlock();
	return err;
}

int sroce_pkt_send(struct sroce_qp *qp, struct sk_buff *skb)
{
	return sroce_pkt_send_batch(qp, NULL, skb);
}

/* ---- received payload ------------------------------------------------------- */

int sroce_pkt_copy_payload(struct sk_buff *skb, u32 offset, u32 len,
			   sroce_pkt_copy_fn fn, void *ctx)
{
	unsigned int from = SROCE_PKT(skb)->hdr_len + offset;
	struct skb_seq_state st;
	unsigned int consumed, n;
	const u8 *data;
	int err = 0;

	if (!len)
		return 0;
	if (from + len <= skb_headlen(skb))
		return fn(ctx, skb->data + from, len);

	skb_prepare_seq_read(skb, from, from + len, &st);
	for (consumed = 0; consumed < len; consumed += n) {
		n = skb_seq_read(consumed, &data, &st);
		if (!n) {
			err = -EINVAL;	/* recv.c checked the length */
			break;
		}
		n = min(n, len - consumed);
		err = fn(ctx, data, n);
		if (err)
			break;
	}
	skb_abort_seq_read(&st);
	return err;
}
