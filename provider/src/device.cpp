// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// How libibverbs recognises an sroce device: by the driver id the kernel
// reports over netlink (never by name, which the user picks freely with
// `rdma link add NAME type sroce`), and by the per-device uverbs ABI version.
#include <cstdlib>

#include "sroce.h"

namespace sroce {
namespace {

const verbs_match_ent match_table[] = {
	{ .driver_data = nullptr,
	  .u = { .driver_id = SROCE_DRIVER_ID },
	  .vendor = 0,
	  .device = 0,
	  .kind = VERBS_MATCH_DRIVER_ID },
	{}, // sentinel
};

verbs_device *alloc_device(verbs_sysfs_dev *sysfs_dev)
{
	// libibverbs fills in ops/refcount/sysfs and asserts _ops is zero.
	auto *dev = static_cast<Device *>(calloc(1, sizeof(Device)));

	if (!dev)
		return nullptr;
	dev->abi_version = sysfs_dev->abi_ver;
	return &dev->vdev;
}

void uninit_device(verbs_device *vdev)
{
	free(from_member<Device>(vdev));
}

const verbs_device_ops ops = {
	.name = "sroce",
	.match_min_abi_version = SROCE_ABI_VERSION,
	.match_max_abi_version = SROCE_ABI_VERSION,
	.match_table = match_table,
	.static_providers = nullptr,
	.match_device = nullptr,
	.alloc_context = context_alloc,
	.import_context = context_import,
	.alloc_device = alloc_device,
	.uninit_device = uninit_device,
};

} // namespace

const verbs_device_ops *device_ops()
{
	return &ops;
}

} // namespace sroce
