/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * compat.h - the one place where sroce deals with differences between the
 * kernels it supports (Debian 12's 6.1 and 6.12).  No other file tests
 * LINUX_VERSION_CODE.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/* Built against upstream @maj.@min or later: the one version test. */
#define SROCE_KERNEL_AT_LEAST(maj, min) \
	(LINUX_VERSION_CODE >= KERNEL_VERSION(maj, min, 0))

/*
 * ib_device_ops.create_cq: 6.1 passes the driver udata, newer kernels
 * (upstream v6.10+) pass the whole uverbs attribute bundle, which is NULL
 * for kernel CQs.  sroce_create_cq() is declared with
 * SROCE_CREATE_CQ_LAST_ARG and gets its udata through sroce_cq_udata().
 */
#if SROCE_KERNEL_AT_LEAST(6, 10)
#define SROCE_CREATE_CQ_LAST_ARG struct uverbs_attr_bundle *attrs

static inline struct ib_udata *sroce_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SROCE_CREATE_CQ_LAST_ARG struct ib_udata *attrs

static inline struct ib_udata *sroce_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/* vm_flags became read-only outside mm in v6.3: vm_flags_set(). */
#if SROCE_KERNEL_AT_LEAST(6, 3)
static inline void sroce_vma_set_flags(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
	vm_flags_set(vma, flags);
}
#else
static inline void sroce_vma_set_flags(struct vm_area_struct *vma,
				       vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

/* __skb_gso_segment() moved from netdevice.h to net/gso.h in v6.5. */
#if SROCE_KERNEL_AT_LEAST(6, 5)
#include <net/gso.h>
#endif

/*
 * IBTA 1.5 ATOMIC WRITE got its names in v6.2: the opcode in
 * <rdma/ib_pack.h>, IB_WR_ATOMIC_WRITE for kernel verbs consumers and the
 * device capability.  Before, only userspace can post it (the provider
 * writes SROCE_WR_ATOMIC_WRITE), and the capability is the uverbs bit
 * (IB_UVERBS_DEVICE_ATOMIC_WRITE), which the core passes on unchanged.
 */
#if SROCE_KERNEL_AT_LEAST(6, 2)
#define SROCE_KERNEL_ATOMIC_WRITE	1
#define SROCE_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#else
#define SROCE_KERNEL_ATOMIC_WRITE	0
#define SROCE_DEVICE_ATOMIC_WRITE	BIT_ULL(40)
#define IB_OPCODE_ATOMIC_WRITE		0x1d
#define IB_OPCODE_RC_ATOMIC_WRITE	IB_OPCODE_ATOMIC_WRITE
#endif

#endif /* SROCE_COMPAT_H */
