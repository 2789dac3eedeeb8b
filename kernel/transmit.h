/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where a QP's packets go: its address vector.
 *
 * RoCEv2 addresses are the GIDs of the path: the source GID table entry
 * (which also says IPv4 or IPv6) and the destination GID, both IP
 * addresses in disguise.  They are translated once, when the verbs set
 * the path (modify_qp with IB_QP_AV), into the IP-level form transmit.c
 * and recv.c use for every packet; the GID table entry itself is not
 * looked at again (the core may replace it meanwhile).
 */
#ifndef SROCE_TRANSMIT_H
#define SROCE_TRANSMIT_H

#include <linux/in6.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

union sroce_ip {
	__be32 v4;
	struct in6_addr v6;
};

struct sroce_av {
	u8 family;		/* AF_INET or AF_INET6; 0: no path set */
	u8 tos;			/* IPv4 TOS / IPv6 traffic class */
	u8 ttl;			/* IPv4 TTL / IPv6 hop limit; 0: route default */
	u32 flow_label;		/* 20 bits; 0: derived from the QPNs */
	union sroce_ip saddr;
	union sroce_ip daddr;
	int ifindex;		/* the source GID's netdev (a VLAN of ours) */
	/*
	 * The namespace of that netdev when it is not the device's (a
	 * macvlan or ipvlan moved into a container), held; NULL: the
	 * device's.  A copy of the AV (a UD WQE's) may use it only in the
	 * RCU read-side section it was copied in, with the owner's
	 * reference alive at the copy.
	 */
	struct net *net;
};

/*
 * Fill @av from @ah (process context, with ah->grh.sgid_attr held, as it
 * is during modify_qp).  Returns -EINVAL for a path sroce cannot use: no
 * GRH, or a GID that is not a RoCEv2 IPv4/IPv6 GID.
 */
int sroce_av_set(struct sroce_av *av, const struct rdma_ah_attr *ah);
/* Drop what sroce_av_set() took (the namespace); any context. */
void sroce_av_release(struct sroce_av *av);

/* Does a received packet come from @av's destination to its source? */
bool sroce_av_match(const struct sroce_av *av, const struct sk_buff *skb);

#endif /* SROCE_TRANSMIT_H */
