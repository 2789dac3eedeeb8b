// SPDX-License-Identifier: GPL-2.0-only
/*
 * device.c - the ib_device: creation on `rdma link add`, the ops table,
 * device and port attributes, and port state tracking.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>

#include "sroce.h"
#include "ah.h"
#include "compat.h"
#include "cq.h"
#include "doorbell.h"
#include "mcast.h"
#include "mr.h"
#include "odp.h"
#include "mw.h"
#include "net.h"
#include "rx_hook.h"
#include "qp.h"
#include "srq.h"

/*
 * Object counts per device, at most (and by default) the SROCE_MAX_*
 * ceilings of sroce.h; read when a device is created.  Lower values are
 * for tests that check the enforcement (selftests/limits.sh) without
 * creating a million objects.
 */
static unsigned int max_qp = SROCE_MAX_QP;
module_param(max_qp, uint, 0444);
MODULE_PARM_DESC(max_qp, "QPs per device (default and ceiling 1048576)");
static unsigned int max_cq = SROCE_MAX_CQ;
module_param(max_cq, uint, 0444);
MODULE_PARM_DESC(max_cq, "CQs per device (default and ceiling 1048576)");
static unsigned int max_srq = SROCE_MAX_SRQ;
module_param(max_srq, uint, 0444);
MODULE_PARM_DESC(max_srq, "SRQs per device (default and ceiling 1048576)");
static unsigned int max_pd = SROCE_MAX_PD;
module_param(max_pd, uint, 0444);
MODULE_PARM_DESC(max_pd, "PDs per device (default and ceiling 1048576)");
static unsigned int max_mr = SROCE_MAX_MR;
module_param(max_mr, uint, 0444);
MODULE_PARM_DESC(max_mr, "MRs and memory windows per device (default and ceiling 1048576)");

/* Serialises the "one sroce device per netdev" check with registration. */
static DEFINE_MUTEX(sroce_add_mutex);

enum ib_mtu sroce_active_mtu(unsigned int netdev_mtu)
{
	enum ib_mtu mtu;

	for (mtu = IB_MTU_4096; mtu > IB_MTU_256; mtu--)
		if (ib_mtu_enum_to_int(mtu) + SROCE_MAX_PKT_OVERHEAD <= netdev_mtu)
			break;
	return mtu;
}

static enum ib_port_state sroce_netdev_port_state(struct net_device *ndev)
{
	return netif_running(ndev) && netif_carrier_ok(ndev) ?
		IB_PORT_ACTIVE : IB_PORT_DOWN;
}

static int sroce_query_device(struct ib_device *ibdev,
			      struct ib_device_attr *attr,
			      struct ib_udata *udata)
{
	if (udata->inlen || udata->outlen)
		return -EINVAL;

	*attr = to_sdev(ibdev)->attr;
	return 0;
}

static int sroce_query_port(struct ib_device *ibdev, u32 port,
			    struct ib_port_attr *attr)
{
	struct net_device *ndev = to_sdev(ibdev)->ndev;

	/* The core zeroed *attr. */
	attr->state = sroce_netdev_port_state(ndev);
	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (netif_running(ndev))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	else
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = sroce_active_mtu(READ_ONCE(ndev->mtu));
	attr->gid_tbl_len = SROCE_GID_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SROCE_MAX_MSG_SIZE;
	attr->pkey_tbl_len = SROCE_MAX_PKEYS;
	attr->max_vl_num = 1;
	attr->init_type_reply = 0;

	/*
	 * Fails once the core detached the netdev (during unregistration);
	 * the port is down then and any speed will do.
	 */
	if (ib_get_eth_speed(ibdev, port, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_speed = IB_SPEED_SDR;
		attr->active_width = IB_WIDTH_1X;
	}
	return 0;
}

static int sroce_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			    u16 *pkey)
{
	if (index >= SROCE_MAX_PKEYS)
		return -EINVAL;
	*pkey = index ? 0 : IB_DEFAULT_PKEY_FULL;	/* see SROCE_MAX_PKEYS */
	return 0;
}

static int sroce_get_port_immutable(struct ib_device *ibdev, u32 port,
				    struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = SROCE_MAX_PKEYS;
	immutable->gid_tbl_len = SROCE_GID_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer sroce_get_link_layer(struct ib_device *ibdev,
						 u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

/*
 * Last op the core calls on a device, after every object is gone (also on
 * a failed registration, from ib_dealloc_device()): release what newlink
 * took.  Fields may be unset when newlink failed half way.
 */
static void sroce_dealloc_driver(struct ib_device *ibdev)
{
	struct sroce_dev *sdev = to_sdev(ibdev);

	sroce_rx_hook_detach(sdev);
	WARN_ON(!xa_empty(&sdev->mr_xa));
	xa_destroy(&sdev->mr_xa);
	WARN_ON(!xa_empty(&sdev->qp_xa));
	xa_destroy(&sdev->qp_xa);
	ida_destroy(&sdev->srq_ida);
	WARN_ON(!xa_empty(&sdev->xrc_srq_xa));
	xa_destroy(&sdev->xrc_srq_xa);
	WARN_ON(!list_empty(&sdev->xrc_tgt_list));
	WARN_ON(!xa_empty(&sdev->ah_xa));
	xa_destroy(&sdev->ah_xa);
	/* A counter goes with its last QP. */
	WARN_ON(!xa_empty(&sdev->counter_xa));
	xa_destroy(&sdev->counter_xa);
	sroce_mcast_cleanup(sdev);
	if (sdev->snet)
		sroce_net_put(sdev->snet);
	if (sdev->ndev)
		netdev_put(sdev->ndev, &sdev->ndev_tracker);
}

/* sysfs: /sys/class/infiniband/<dev>/parent names the netdev. */
static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct sroce_dev *sdev =
		rdma_device_to_drv_device(device, struct sroce_dev, ibdev);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(parent);

static struct attribute *sroce_dev_attributes[] = {
	&dev_attr_parent.attr,
	NULL
};

static const struct attribute_group sroce_dev_attr_group = {
	.attrs = sroce_dev_attributes,
};

/*
 * The driver's additions to uverbs: its own doorbell object, and what a
 * process importing a context, a PD or an MR needs (ucontext.c, pd.c).
 */
static const struct uapi_definition sroce_uapi_defs[] = {
	UAPI_DEF_CHAIN(sroce_doorbell_uapi_defs),
	UAPI_DEF_CHAIN(sroce_ucontext_uapi_defs),
	UAPI_DEF_CHAIN(sroce_pd_uapi_defs),
	{},
};

static const struct ib_device_ops sroce_dev_ops = {
	.owner = THIS_MODULE,
	.port_groups = sroce_cc_port_groups,
	.driver_id = SROCE_DRIVER_ID,
	.uverbs_abi_ver = SROCE_ABI_VERSION,

	.alloc_hw_port_stats = sroce_alloc_hw_port_stats,
	.add_gid = sroce_add_gid,
	.advise_mr = sroce_advise_mr,
	.alloc_mr = sroce_alloc_mr,
	.alloc_mw = sroce_alloc_mw,
	.alloc_pd = sroce_alloc_pd,
	.alloc_ucontext = sroce_alloc_ucontext,
	.alloc_xrcd = sroce_alloc_xrcd,
	.attach_mcast = sroce_attach_mcast,
	.counter_alloc_stats = sroce_counter_alloc_stats,
	.counter_bind_qp = sroce_counter_bind_qp,
	.counter_dealloc = sroce_counter_dealloc,
	.counter_unbind_qp = sroce_counter_unbind_qp,
	.counter_update_stats = sroce_counter_update_stats,
	.create_ah = sroce_create_ah,
	.create_cq = sroce_create_cq,
	.create_qp = sroce_create_qp,
	.create_srq = sroce_create_srq,
	.create_user_ah = sroce_create_ah,
	.dealloc_driver = sroce_dealloc_driver,
	.dealloc_mw = sroce_dealloc_mw,
	.dealloc_pd = sroce_dealloc_pd,
	.dealloc_ucontext = sroce_dealloc_ucontext,
	.dealloc_xrcd = sroce_dealloc_xrcd,
	.del_gid = sroce_del_gid,
	.dereg_mr = sroce_dereg_mr,
	.destroy_ah = sroce_destroy_ah,
	.destroy_cq = sroce_destroy_cq,
	.destroy_qp = sroce_destroy_qp,
	.destroy_srq = sroce_destroy_srq,
	.detach_mcast = sroce_detach_mcast,
	.device_group = &sroce_dev_attr_group,
	.disassociate_ucontext = sroce_disassociate_ucontext,
	.fill_res_cq_entry = sroce_fill_res_cq_entry,
	.fill_res_mr_entry = sroce_fill_res_mr_entry,
	.fill_res_qp_entry = sroce_fill_res_qp_entry,
	.get_dma_mr = sroce_get_dma_mr,
	.get_hw_stats = sroce_get_hw_stats,
	.get_link_layer = sroce_get_link_layer,
	.get_port_immutable = sroce_get_port_immutable,
	.map_mr_sg = sroce_map_mr_sg,
	.mmap = sroce_mmap,
	.mmap_free = sroce_mmap_free,
	.modify_qp = sroce_modify_qp,
	.modify_srq = sroce_modify_srq,
	.poll_cq = sroce_poll_cq,
	.post_recv = sroce_post_recv,
	.post_send = sroce_post_send,
	.post_srq_recv = sroce_post_srq_recv,
	.query_ah = sroce_query_ah,
	.query_device = sroce_query_device,
	.query_pkey = sroce_query_pkey,
	.query_port = sroce_query_port,
	.query_qp = sroce_query_qp,
	.query_srq = sroce_query_srq,
	.query_ucontext = sroce_query_ucontext,
	.reg_user_mr = sroce_reg_user_mr,
	.req_notify_cq = sroce_req_notify_cq,
	.rereg_user_mr = sroce_rereg_user_mr,
	.resize_cq = sroce_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, sroce_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sroce_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, sroce_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, sroce_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sroce_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, sroce_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sroce_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, sroce_xrcd, ibxrcd),
};

static void sroce_init_attr(struct sroce_dev *sdev)
{
	struct ib_device_attr *attr = &sdev->attr;

	attr->fw_ver = 1;
	attr->sys_image_guid = sdev->ibdev.node_guid;
	attr->max_mr_size = SROCE_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = SROCE_VENDOR_ID;
	attr->vendor_part_id = SROCE_DRIVER_ID;
	attr->max_qp = min_t(u32, max_qp, SROCE_MAX_QP);
	attr->max_qp_wr = SROCE_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 /*
				  * Fast registration, local invalidate and
				  * send with invalidate: what kernel ULPs
				  * (nvme-rdma, NFS/RDMA, iSER) look for.
				  */
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 /* Memory windows, type 1 and 2B (mw.c). */
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 /* XRC domains, SRQs and QPs (xrcd.c). */
				 IB_DEVICE_XRC |
				 /* IBTA 1.5 ATOMIC WRITE (responder.c). */
				 SROCE_DEVICE_ATOMIC_WRITE;
	attr->max_mw = min_t(u32, max_mr, SROCE_MAX_MR); /* shared with MRs */
	attr->max_fast_reg_page_list_len = SROCE_MAX_FRMR_PAGES;
	/*
	 * On-demand paging (odp.c): RC in every role; UD as a sender (a
	 * UD receive into pages not present is dropped, as a NIC's is).
	 */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_ON_DEMAND_PAGING;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT;
	attr->odp_caps.per_transport_caps.rc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
	attr->max_send_sge = SROCE_MAX_SGE;
	attr->max_recv_sge = SROCE_MAX_SGE;
	attr->max_sge_rd = SROCE_MAX_SGE_RD;
	attr->max_cq = min_t(u32, max_cq, SROCE_MAX_CQ);
	attr->max_cqe = SROCE_MAX_CQE;
	attr->max_mr = min_t(u32, max_mr, SROCE_MAX_MR);
	attr->max_pd = min_t(u32, max_pd, SROCE_MAX_PD);
	attr->max_qp_rd_atom = SROCE_MAX_QP_RD_ATOM;
	attr->max_qp_init_rd_atom = SROCE_MAX_QP_RD_ATOM;
	attr->max_res_rd_atom = SROCE_MAX_RES_RD_ATOM;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = SROCE_MAX_AH;
	attr->max_mcast_grp = SROCE_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SROCE_MAX_MCAST_QP;
	attr->max_total_mcast_qp_attach = SROCE_MAX_MCAST_GRP *
					  SROCE_MAX_MCAST_QP;
	attr->max_srq = min_t(u32, max_srq, SROCE_MAX_SRQ);
	attr->max_srq_wr = SROCE_MAX_SRQ_WR;
	attr->max_srq_sge = SROCE_MAX_SGE;
	attr->max_pkeys = SROCE_MAX_PKEYS;
	attr->local_ca_ack_delay = SROCE_LOCAL_CA_ACK_DELAY;
}

static int sroce_check_netdev(struct net_device *ndev)
{
	if (ndev->flags & IFF_LOOPBACK) {
		pr_err("%s: %s is a loopback device; RoCE needs an Ethernet netdev (e.g. a veth pair)\n",
		       SROCE_DRV_NAME, netdev_name(ndev));
		return -EINVAL;
	}
	/*
	 * The RDMA core fills the GID table of a RoCE device from its netdev
	 * and the VLAN netdevs on top of it, not from a VLAN netdev's own
	 * addresses: a device on a VLAN netdev would have no usable GID.
	 */
	if (is_vlan_dev(ndev)) {
		pr_err("%s: %s is a VLAN netdev; create the device on %s: the VLAN's addresses become its GIDs and their traffic is tagged\n",
		       SROCE_DRV_NAME, netdev_name(ndev),
		       netdev_name(vlan_dev_real_dev(ndev)));
		return -EINVAL;
	}
	if (ndev->type != ARPHRD_ETHER || ndev->addr_len != ETH_ALEN) {
		pr_err("%s: %s is not an Ethernet netdev (type %u)\n",
		       SROCE_DRV_NAME, netdev_name(ndev), ndev->type);
		return -EINVAL;
	}
	return 0;
}

/*
 * xa_init_flags() is inline, so every xarray initialised in this file
 * would share one lockdep class.  mr_xa's and counter_xa's locks are
 * taken only in process context with BH on (lookups are RCU); qp_xa's and
 * xrc_srq_xa's with BH off, also from the receive softirq; ah_xa's with
 * interrupts off (ah.c: ib_cm creates AHs under an IRQ spinlock).  One
 * class for all of them made lockdep report an inconsistent
 * {SOFTIRQ-ON-W} -> {IN-SOFTIRQ-W} lock state (and switch itself off) the
 * first time a packet looked up a QP.
 */
static struct lock_class_key sroce_mr_xa_key;
static struct lock_class_key sroce_qp_xa_key;
static struct lock_class_key sroce_xrc_srq_xa_key;
static struct lock_class_key sroce_ah_xa_key;
static struct lock_class_key sroce_counter_xa_key;

static int sroce_dev_create(const char *ibdev_name, struct net_device *ndev)
{
	struct sroce_dev *sdev;
	struct ib_device *ibdev;
	int err;

	sdev = ib_alloc_device(sroce_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	ibdev = &sdev->ibdev;
	/* From here on errors go through ib_dealloc_device(), which calls
	 * sroce_dealloc_driver().
	 */
	ib_set_device_ops(ibdev, &sroce_dev_ops);
	ibdev->driver_def = sroce_uapi_defs;
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	lockdep_set_class(&sdev->mr_xa.xa_lock, &sroce_mr_xa_key);
	spin_lock_init(&sdev->mw_lock);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_BH);
	lockdep_set_class(&sdev->qp_xa.xa_lock, &sroce_qp_xa_key);
	ida_init(&sdev->srq_ida);
	xa_init_flags(&sdev->xrc_srq_xa, XA_FLAGS_LOCK_BH);
	lockdep_set_class(&sdev->xrc_srq_xa.xa_lock, &sroce_xrc_srq_xa_key);
	spin_lock_init(&sdev->xrc_tgt_lock);
	INIT_LIST_HEAD(&sdev->xrc_tgt_list);
	xa_init_flags(&sdev->counter_xa, XA_FLAGS_ALLOC1);
	lockdep_set_class(&sdev->counter_xa.xa_lock, &sroce_counter_xa_key);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	lockdep_set_class(&sdev->ah_xa.xa_lock, &sroce_ah_xa_key);
	spin_lock_init(&sdev->mcg_lock);
	INIT_LIST_HEAD(&sdev->mcg_list);

	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);

	sdev->snet = sroce_net_get(dev_net(ndev));
	if (IS_ERR(sdev->snet)) {
		err = PTR_ERR(sdev->snet);
		sdev->snet = NULL;
		goto err_dealloc;
	}

	addrconf_addr_eui48((u8 *)&ibdev->node_guid, ndev->dev_addr);
	sroce_init_attr(sdev);
	sroce_cc_dev_init(sdev);
	sdev->port_state = sroce_netdev_port_state(ndev);

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	strscpy(ibdev->node_desc, "sroce", sizeof(ibdev->node_desc));
	/*
	 * The core allows the object commands by default; add the commands
	 * the provider issues as system calls: the send doorbell and CQ
	 * notification arming.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);

	err = ib_device_set_netdev(ibdev, ndev, 1);
	if (err) {
		pr_err("%s: cannot attach %s: %d\n", SROCE_DRV_NAME,
		       netdev_name(ndev), err);
		goto err_dealloc;
	}

	/*
	 * Before registering: once registered, a netdev unregistration may
	 * free the device at any time (rx_hook.c).
	 */
	sroce_rx_hook_attach(sdev);

	/* No DMA device: the core then uses virtual addresses as DMA addresses. */
	err = ib_register_device(ibdev, ibdev_name, NULL);
	if (err) {
		pr_err("%s: registering RDMA device %s on %s failed: %d%s\n",
		       SROCE_DRV_NAME, ibdev_name, netdev_name(ndev), err,
		       err == -ENFILE ? " (name already in use)" : "");
		goto err_dealloc;
	}

	/*
	 * Not ibdev_info(): once registered, the device is the core's, and
	 * a concurrent unregistration (the netdev going away) may free it.
	 * The name and the netdev are our caller's.
	 */
	pr_info("%s: %s attached to %s, active MTU %d\n", SROCE_DRV_NAME,
		ibdev_name, netdev_name(ndev),
		ib_mtu_enum_to_int(sroce_active_mtu(READ_ONCE(ndev->mtu))));
	return 0;

err_dealloc:
	ib_dealloc_device(ibdev);
	return err;
}

/* rdma_link_ops.newlink: `rdma link add NAME type sroce netdev NDEV`. */
/*
 * The core would refuse a taken name with -ENFILE ("Too many open files in
 * system"); say what is wrong instead.  A device of another driver may still
 * take the name before we register, and then the core's answer stands.
 */
static int sroce_check_name(const char *ibdev_name)
{
	struct ib_device *existing;

	existing = ib_device_get_by_name(ibdev_name, RDMA_DRIVER_UNKNOWN);
	if (!existing)
		return 0;
	pr_err("%s: an RDMA device named %s already exists\n", SROCE_DRV_NAME,
	       ibdev_name);
	ib_device_put(existing);
	return -EEXIST;
}

int sroce_dev_add(const char *ibdev_name, struct net_device *ndev)
{
	struct ib_device *existing;
	int err;

	err = sroce_check_netdev(ndev);
	if (err)
		return err;

	mutex_lock(&sroce_add_mutex);
	existing = ib_device_get_by_netdev(ndev, SROCE_DRIVER_ID);
	if (existing) {
		pr_err("%s: %s already has sroce device %s\n", SROCE_DRV_NAME,
		       netdev_name(ndev), dev_name(&existing->dev));
		ib_device_put(existing);
		err = -EEXIST;
	} else {
		err = sroce_check_name(ibdev_name);
		if (!err)
			err = sroce_dev_create(ibdev_name, ndev);
	}
	mutex_unlock(&sroce_add_mutex);
	return err;
}

/*
 * The netdev's running/carrier state changed (called under RTNL): announce
 * the port state change to the core and its clients.
 */
void sroce_dev_port_update(struct sroce_dev *sdev)
{
	enum ib_port_state state = sroce_netdev_port_state(sdev->ndev);
	struct ib_event event = {
		.device = &sdev->ibdev,
		.element.port_num = 1,
	};

	ASSERT_RTNL();
	if (state == sdev->port_state)
		return;
	sdev->port_state = state;
	event.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR;
	ibdev_dbg(&sdev->ibdev, "port %s\n",
		  state == IB_PORT_ACTIVE ? "active" : "down");
	ib_dispatch_event(&event);
}
