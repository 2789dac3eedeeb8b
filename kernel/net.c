// SPDX-License-Identifier: GPL-2.0-only
/*
 * net.c - per-network-namespace RoCEv2 UDP sockets.
 *
 * RoCEv2 traffic is UDP to port 4791.  A port can be bound once per
 * namespace, so all sroce devices of a namespace share one IPv4 and one
 * IPv6 socket (two devices with one socket each would collide).  The
 * sockets live in the namespace of the netdev, which is what makes a device
 * usable inside a container, and they are tunnel sockets: the UDP layer
 * hands every datagram to sroce_udp_encap_rcv() instead of queueing it.
 * A device also holds the sockets of each namespace one of its GIDs'
 * netdevs was moved to (a container's macvlan or ipvlan), for as long as
 * the GID exists (sroce_add_gid()).
 *
 * Kernel sockets do not pin their namespace, so the pernet exit closes the
 * sockets of a dying namespace even if a device (whose netdev was moved to
 * another namespace) still holds a reference; that device then just drops
 * its reference later.
 */
#include <linux/netdevice.h>
#include <net/ipv6.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_cache.h>

#include "sroce.h"
#include "net.h"

struct sroce_net_slot {
	struct sroce_net *snet;
};

static unsigned int sroce_net_id __read_mostly;
static DEFINE_MUTEX(sroce_net_mutex);

static struct sroce_net_slot *sroce_net_slot(struct net *net)
{
	return net_generic(net, sroce_net_id);
}

static int sroce_net_lower_ibdev(struct net_device *lower,
				 struct netdev_nested_priv *priv)
{
	struct ib_device **ibdev = priv->data;

	*ibdev = ib_device_get_by_netdev(lower, SROCE_DRIVER_ID);
	return *ibdev ? 1 : 0;	/* found: stop the walk */
}

/*
 * The sroce device of the netdev a packet came in on: the netdev's own,
 * or, for a device stacked on sroce's netdev (a VLAN, macvlan or ipvlan,
 * whose addresses the core makes GIDs of sroce's device), that of the
 * netdev below.  Called under RCU (the UDP receive path).  The reference
 * taken by ib_device_get_by_netdev() keeps the device registered
 * (unregistration waits for it) while the packet is processed.
 */
static struct ib_device *sroce_net_ibdev(struct net_device *ndev)
{
	struct ib_device *ibdev;
	struct netdev_nested_priv priv = { .data = &ibdev };

	ibdev = ib_device_get_by_netdev(ndev, SROCE_DRIVER_ID);
	if (!ibdev)
		netdev_walk_all_lower_dev_rcu(ndev, sroce_net_lower_ibdev,
					      &priv);
	return ibdev;
}

static int sroce_udp_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct ib_device *ibdev = sroce_net_ibdev(skb->dev);

	if (!ibdev) {
		struct sroce_net_slot *slot = sroce_net_slot(sock_net(sk));
		struct sroce_net *snet = READ_ONCE(slot->snet);

		if (snet)
			atomic64_inc(&snet->rx_no_dev);
		kfree_skb(skb);
		return 0;
	}

	sroce_rcv(to_sdev(ibdev), skb);
	ib_device_put(ibdev);
	return 0;
}

/*
 * Are RoCEv2 packets to @net's addresses received by sroce?  Its sockets
 * hold UDP port 4791 there from the moment slot->snet is set until it is
 * cleared (nobody else can bind the port meanwhile).  Only the pointer is
 * read, never the structure, so RCU on @net is enough.
 */
bool sroce_net_receives(struct net *net)
{
	return READ_ONCE(sroce_net_slot(net)->snet);
}

static int sroce_sock_open(struct net *net, bool ipv6, struct socket **sockp)
{
	struct udp_tunnel_sock_cfg tcfg = {};
	struct udp_port_cfg cfg = {};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.local_ip6 = in6addr_any;
		cfg.ipv6_v6only = 1;
	} else {
		cfg.family = AF_INET;
		cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}
	cfg.local_udp_port = htons(ROCE_V2_UDP_DPORT);

	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return err;

	tcfg.encap_type = 1;
	tcfg.encap_rcv = sroce_udp_encap_rcv;
	setup_udp_tunnel_sock(net, sock, &tcfg);
	*sockp = sock;
	return 0;
}

static void sroce_net_close(struct sroce_net *snet)
{
	/* udp_tunnel_sock_release() waits for running encap_rcv calls. */
	if (snet->sock6)
		udp_tunnel_sock_release(snet->sock6);
	if (snet->sock4)
		udp_tunnel_sock_release(snet->sock4);
	snet->sock6 = NULL;
	snet->sock4 = NULL;
}

static int sroce_net_open(struct sroce_net *snet)
{
	int err;

	err = sroce_sock_open(snet->net, false, &snet->sock4);
	if (err) {
		pr_err("%s: cannot bind UDP port %d (IPv4) in this network namespace: %d%s\n",
		       SROCE_DRV_NAME, ROCE_V2_UDP_DPORT, err,
		       err == -EADDRINUSE ?
		       " (port in use: is rdma_rxe loaded in this namespace?)" : "");
		return err;
	}

	err = sroce_sock_open(snet->net, true, &snet->sock6);
	if (err == -EAFNOSUPPORT) {
		/* IPv6 disabled: run IPv4 only. */
		snet->sock6 = NULL;
	} else if (err) {
		pr_err("%s: cannot bind UDP port %d (IPv6) in this network namespace: %d\n",
		       SROCE_DRV_NAME, ROCE_V2_UDP_DPORT, err);
		sroce_net_close(snet);
		return err;
	}
	return 0;
}

struct sroce_net *sroce_net_get(struct net *net)
{
	struct sroce_net_slot *slot = sroce_net_slot(net);
	struct sroce_net *snet;
	int err;

	mutex_lock(&sroce_net_mutex);
	snet = slot->snet;
	if (snet) {
		snet->users++;
		goto out;
	}

	snet = kzalloc(sizeof(*snet), GFP_KERNEL);
	if (!snet) {
		snet = ERR_PTR(-ENOMEM);
		goto out;
	}
	snet->net = net;
	snet->users = 1;
	err = sroce_net_open(snet);
	if (err) {
		kfree(snet);
		snet = ERR_PTR(err);
		goto out;
	}
	WRITE_ONCE(slot->snet, snet);
out:
	mutex_unlock(&sroce_net_mutex);
	return snet;
}

void sroce_net_put(struct sroce_net *snet)
{
	mutex_lock(&sroce_net_mutex);
	if (--snet->users == 0) {
		if (!snet->closed) {
			/* The namespace is alive: its exit has not run yet. */
			WRITE_ONCE(sroce_net_slot(snet->net)->snet, NULL);
			sroce_net_close(snet);
		}
		kfree(snet);
	}
	mutex_unlock(&sroce_net_mutex);
}

/*
 * A GID of an upper netdev (macvlan, ipvlan, VLAN) that lives in another
 * namespace than the device's netdev: a container's, the netdev moved
 * there.  Its packets arrive through that namespace's IP stack and UDP
 * port 4791, so sroce holds the port there too, for as long as the core
 * has the GID: the GID entry keeps a user reference on that namespace's
 * sockets in @context.  A GID sroce cannot receive on (rdma_rxe holds the
 * port there) is refused, as a NIC refuses a GID it cannot program.
 * Called by the core in process context, under its GID table mutex.
 */
int sroce_add_gid(const struct ib_gid_attr *attr, void **context)
{
	struct sroce_dev *sdev = to_sdev(attr->device);
	struct net_device *ndev;
	struct sroce_net *snet;
	struct net *net;

	*context = NULL;
	/* Not rdma_read_gid_attr_ndev_rcu(): the entry is not valid yet. */
	rcu_read_lock();
	ndev = rcu_dereference(attr->ndev);
	/* NULL for a namespace on its way out; held, so its exit waits. */
	net = ndev ? maybe_get_net(dev_net(ndev)) : NULL;
	rcu_read_unlock();
	if (!net)
		return -ENODEV;
	snet = NULL;
	if (!net_eq(net, dev_net(sdev->ndev)))
		snet = sroce_net_get(net);
	put_net(net);
	if (IS_ERR(snet))
		return PTR_ERR(snet);
	*context = snet;
	return 0;
}

int sroce_del_gid(const struct ib_gid_attr *attr, void **context)
{
	struct sroce_net *snet = *context;

	if (snet)
		sroce_net_put(snet);
	*context = NULL;
	return 0;
}

static void __net_exit sroce_pernet_exit(struct net *net)
{
	struct sroce_net_slot *slot = sroce_net_slot(net);
	struct sroce_net *snet;

	mutex_lock(&sroce_net_mutex);
	snet = slot->snet;
	if (snet) {
		WRITE_ONCE(slot->snet, NULL);
		sroce_net_close(snet);
		snet->closed = true;
	}
	mutex_unlock(&sroce_net_mutex);
}

static struct pernet_operations sroce_pernet_ops = {
	.exit = sroce_pernet_exit,
	.id = &sroce_net_id,
	.size = sizeof(struct sroce_net_slot),
};

int sroce_net_init(void)
{
	return register_pernet_subsys(&sroce_pernet_ops);
}

void sroce_net_exit(void)
{
	unregister_pernet_subsys(&sroce_pernet_ops);
}
