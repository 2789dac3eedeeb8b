// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// What libibverbs sees when it looks at the provider: the device ops, the
// match table (driver id only: the device name is the user's choice), and
// the context ops table.
#include <gtest/gtest.h>

#include <cstring>

#include "sroce.h"

namespace {

TEST(DeviceOps, IdentityAndAbiRange)
{
	const verbs_device_ops *ops = sroce::device_ops();

	ASSERT_NE(ops, nullptr);
	EXPECT_STREQ(ops->name, "sroce");
	EXPECT_EQ(ops->match_min_abi_version, 2u); // 2: a QP's rings in one region
	EXPECT_EQ(ops->match_max_abi_version, 2u);
	EXPECT_EQ(ops->match_min_abi_version, static_cast<uint32_t>(SROCE_ABI_VERSION));
	EXPECT_EQ(ops->match_device, nullptr);   // the table alone decides
	EXPECT_NE(ops->import_context, nullptr); // ibv_import_device()
	EXPECT_EQ(ops->static_providers, nullptr);
	EXPECT_NE(ops->alloc_context, nullptr);
	EXPECT_NE(ops->alloc_device, nullptr);
	EXPECT_NE(ops->uninit_device, nullptr);
}

TEST(DeviceOps, MatchTableIsDriverIdOnly)
{
	const verbs_match_ent *m = sroce::device_ops()->match_table;

	ASSERT_NE(m, nullptr);
	EXPECT_EQ(m[0].kind, VERBS_MATCH_DRIVER_ID);
	EXPECT_EQ(m[0].u.driver_id, 0x5352u);
	EXPECT_EQ(m[0].u.driver_id, static_cast<uint64_t>(SROCE_DRIVER_ID));
	EXPECT_EQ(m[0].driver_data, nullptr);
	// Nothing else: no name or modalias entries a renamed device could miss
	// or a foreign device could hit.
	EXPECT_EQ(m[1].kind, VERBS_MATCH_SENTINEL);
	EXPECT_EQ(m[1].u.driver_id, 0u);
}

TEST(DeviceOps, AllocDeviceIsZeroedAndBigEnough)
{
	verbs_sysfs_dev sysfs;
	memset(&sysfs, 0, sizeof(sysfs));
	sysfs.abi_ver = SROCE_ABI_VERSION;
	strcpy(sysfs.ibdev_name, "anything-the-user-chose");
	sysfs.driver_id = SROCE_DRIVER_ID;

	const verbs_device_ops *ops = sroce::device_ops();
	verbs_device *vdev = ops->alloc_device(&sysfs);
	ASSERT_NE(vdev, nullptr);
	// libibverbs asserts these are NULL and then fills ops/sysfs itself.
	EXPECT_EQ(vdev->device._ops._dummy1, nullptr);
	EXPECT_EQ(vdev->device._ops._dummy2, nullptr);
	EXPECT_EQ(vdev->ops, nullptr);
	EXPECT_EQ(vdev->sysfs, nullptr);
	EXPECT_EQ(sroce::from_member<sroce::Device>(vdev)->abi_version, 2u);
	EXPECT_GE(sizeof(sroce::Device), sizeof(verbs_device));
	ops->uninit_device(vdev);
}

TEST(ContextOps, MandatorySlotsAreSet)
{
	const verbs_context_ops *o = sroce::context_ops();

	EXPECT_NE(o->query_device_ex, nullptr); // ibv_query_device routes here
	EXPECT_NE(o->query_port, nullptr);
	EXPECT_NE(o->alloc_pd, nullptr);
	EXPECT_NE(o->dealloc_pd, nullptr);
	EXPECT_NE(o->reg_mr, nullptr);
	EXPECT_NE(o->dereg_mr, nullptr);
	EXPECT_NE(o->free_context, nullptr);
	// The data path and the objects it needs.
	for (const void *op : { (const void *)o->create_cq, (const void *)o->create_cq_ex,
				(const void *)o->poll_cq, (const void *)o->req_notify_cq,
				(const void *)o->resize_cq, (const void *)o->destroy_cq,
				(const void *)o->create_qp, (const void *)o->create_qp_ex,
				(const void *)o->modify_qp, (const void *)o->query_qp,
				(const void *)o->destroy_qp, (const void *)o->post_send,
				(const void *)o->post_recv, (const void *)o->create_srq,
				(const void *)o->modify_srq, (const void *)o->query_srq,
				(const void *)o->destroy_srq, (const void *)o->post_srq_recv,
				(const void *)o->create_ah, (const void *)o->destroy_ah,
				(const void *)o->attach_mcast, (const void *)o->detach_mcast })
		EXPECT_NE(op, nullptr);
	EXPECT_EQ(o->req_notify_cq, &ibv_cmd_req_notify_cq);
	// Sharing a context (ibv_import_device()) and its PDs and MRs.
	for (const void *op : { (const void *)o->import_pd, (const void *)o->unimport_pd,
				(const void *)o->import_mr, (const void *)o->unimport_mr })
		EXPECT_NE(op, nullptr);
	EXPECT_EQ(o->import_dm, nullptr); // no device memory
	// Not implemented: left NULL so libibverbs' dummies return EOPNOTSUPP.
	EXPECT_EQ(o->alloc_dm, nullptr);
	EXPECT_EQ(o->create_flow, nullptr);
	// Parent and thread domains (pd.cpp).
	EXPECT_NE(o->alloc_parent_domain, nullptr);
	EXPECT_NE(o->alloc_td, nullptr);
	EXPECT_NE(o->dealloc_td, nullptr);
}

TEST(ContextOps, FromCtxInvertsTheEmbedding)
{
	sroce::Context c;
	memset(&c, 0, sizeof(c));
	EXPECT_EQ(sroce::from_ctx(&c.vctx.context), &c);
}

} // namespace
