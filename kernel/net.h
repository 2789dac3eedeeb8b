/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * net.h - RoCEv2 UDP sockets, one IPv4 and one IPv6 socket bound to port
 * 4791 per network namespace, shared by all sroce devices of that namespace.
 */
#ifndef SROCE_NET_H
#define SROCE_NET_H

#include <linux/skbuff.h>
#include <net/net_namespace.h>
#include <rdma/ib_verbs.h>

struct sroce_dev;

/*
 * Per-namespace socket state.  Devices hold a "user" reference from newlink
 * to dealloc_driver.  The sockets are opened by the first user and closed
 * by the last one, or by the namespace's pernet exit if a device outlives
 * it (its netdev moved away and its unregistration is still queued); the
 * structure itself lives until its last user is gone.
 */
struct sroce_net {
	struct net *net;		/* not refcounted, see above */
	struct socket *sock4;
	struct socket *sock6;		/* NULL when IPv6 is disabled */
	unsigned int users;		/* protected by sroce_net_mutex */
	bool closed;			/* sockets closed by pernet exit */
	atomic64_t rx_no_dev;		/* 4791 packets for no sroce device */
};

int sroce_net_init(void);
void sroce_net_exit(void);

/* Returns an ERR_PTR (e.g. -EADDRINUSE when rdma_rxe holds the port). */
struct sroce_net *sroce_net_get(struct net *net);
void sroce_net_put(struct sroce_net *snet);
/* The GIDs of netdevs in other namespaces hold one (ib_device_ops). */
int sroce_add_gid(const struct ib_gid_attr *attr, void **context);
int sroce_del_gid(const struct ib_gid_attr *attr, void **context);
/* Does sroce hold UDP port 4791 in @net?  Under rcu_read_lock(). */
bool sroce_net_receives(struct net *net);

/*
 * sroce_rcv - receive hook of the packet pipeline (recv.c).
 *
 * Called from the UDP encap_rcv callback in softirq context, under RCU,
 * for every packet that arrived on UDP port 4791 on the netdev of @sdev.
 * skb->data points at the UDP header; the IP header is at
 * skb_network_header(skb).  The caller holds a reference on @sdev for
 * the duration of the call only: anything kept longer (a queued skb) must
 * take its own references.  sroce_rcv() always consumes @skb.
 */
void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb);

/*
 * Drop @skb, which reached sroce malformed below its RoCEv2 headers (a
 * segment of a split aggregate, rx_hook.c), as sroce_rcv() drops a bad
 * header: counted in rx_bad_header and rx_dropped, traced.
 */
void sroce_rx_drop_malformed(struct sroce_dev *sdev, struct sk_buff *skb);

#endif /* SROCE_NET_H */
