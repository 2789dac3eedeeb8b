// SPDX-License-Identifier: GPL-2.0-only
/*
 * main.c - module entry points: the "sroce" rdma link type and the netdev
 * notifier that ties a device's life and port state to its netdev.
 *
 * Teardown.  A device goes away in one of three ways, all ending in the
 * core's __ib_unregister_device():
 *   - `rdma link delete`: the core (IBK_ALLOW_USER_UNREG);
 *   - the netdev is unregistered (deleted, its namespace deleted, or moved
 *     to another namespace): NETDEV_UNREGISTER ->
 *     ib_unregister_device_queued(), asynchronous because the notifier runs
 *     under RTNL; the netdev core waits (netdev_wait_allrefs) until the
 *     device dropped its netdev reference in sroce_dealloc_driver();
 *   - rmmod: refused while a process has a device open (every user
 *     context holds a module reference, see ucontext.c); otherwise
 *     ib_unregister_driver(SROCE_DRIVER_ID), synchronous.
 * The core then, in order: stops new users (ib_device_try_get() fails, so
 * the receive path no longer finds the device) and waits for current ones;
 * removes its clients: uverbs destroys every user object through our
 * destroy verbs and disassociates open contexts (open file descriptors stay
 * valid but fail every call), rdma_cm/ULPs destroy theirs; calls
 * sroce_dealloc_driver(), which puts the UDP sockets and the netdev; frees
 * the device.
 *
 * Module exit order: stop creation of new devices (link ops), unregister
 * all devices (which destroys every QP, so no requester work is left),
 * stop netdev events, close the sockets of every namespace, destroy the
 * responder and requester workqueues.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <rdma/rdma_netlink.h>

#include "net.h"
#include "requester.h"
#include "responder.h"
#include "rx_hook.h"
#include "sroce.h"

static int sroce_newlink(const char *ibdev_name, struct net_device *ndev)
{
	return sroce_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops sroce_link_ops = {
	.type = SROCE_LINK_TYPE,
	.newlink = sroce_newlink,
};

static int sroce_netdev_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct ib_device *ibdev;
	struct sroce_dev *sdev;

	ibdev = ib_device_get_by_netdev(ndev, SROCE_DRIVER_ID);
	if (!ibdev)
		return NOTIFY_DONE;
	sdev = to_sdev(ibdev);

	switch (event) {
	case NETDEV_UNREGISTER:
		ibdev_info(ibdev, "%s is going away, removing the device\n",
			   netdev_name(ndev));
		sroce_rx_hook_detach_locked(sdev);
		ib_unregister_device_queued(ibdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		sroce_dev_port_update(sdev);
		break;
	case NETDEV_CHANGEMTU:
		ibdev_info(ibdev, "%s MTU %u: active MTU %d\n",
			   netdev_name(ndev), ndev->mtu,
			   ib_mtu_enum_to_int(sroce_active_mtu(ndev->mtu)));
		break;
	default:
		break;
	}

	ib_device_put(ibdev);
	return NOTIFY_OK;
}

static struct notifier_block sroce_netdev_notifier = {
	.notifier_call = sroce_netdev_event,
};

static int __init sroce_init(void)
{
	int err;

	err = sroce_requester_module_init();
	if (err)
		return err;

	err = sroce_responder_module_init();
	if (err)
		goto err_requester;

	err = sroce_net_init();
	if (err)
		goto err_responder;

	err = register_netdevice_notifier(&sroce_netdev_notifier);
	if (err)
		goto err_net;

	rdma_link_register(&sroce_link_ops);
	pr_info("%s: loaded, ABI %d\n", SROCE_DRV_NAME, SROCE_ABI_VERSION);
	return 0;

err_net:
	sroce_net_exit();
err_responder:
	sroce_responder_module_exit();
err_requester:
	sroce_requester_module_exit();
	return err;
}

static void __exit sroce_exit(void)
{
	rdma_link_unregister(&sroce_link_ops);
	ib_unregister_driver(SROCE_DRIVER_ID);
	unregister_netdevice_notifier(&sroce_netdev_notifier);
	sroce_net_exit();
	sroce_responder_module_exit();
	sroce_requester_module_exit();
	pr_info("%s: unloaded\n", SROCE_DRV_NAME);
}

module_init(sroce_init);
module_exit(sroce_exit);

MODULE_DESCRIPTION("Software RoCEv2 RDMA device");
MODULE_LICENSE("GPL");
MODULE_ALIAS_RDMA_LINK(SROCE_LINK_TYPE);
