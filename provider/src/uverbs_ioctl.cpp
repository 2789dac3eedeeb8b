// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Calling a uverbs method by its ioctl, for what libibverbs has no command
// for: sroce's driver methods and driver attributes.  Needs nothing of
// libibverbs, so the hostile selftest links this file to make the same
// calls with every lie.
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>

#include <cerrno>
#include <cstring>

#include "sroce.h"

namespace sroce {

// A driver method (or a driver attribute of a core one) called directly:
// header and attributes laid out in one buffer as the kernel reads them
// (ib_uverbs_ioctl_hdr ends in a flexible array); the attributes are
// copied back, as the kernel writes results (an FD's number) into them.
int uverbs_ioctl(int cmd_fd, uint16_t object, uint16_t method,
		 ib_uverbs_attr *attrs, unsigned int num_attrs)
{
	constexpr unsigned int max_attrs = 4;
	alignas(8) uint8_t buf[sizeof(ib_uverbs_ioctl_hdr) +
			       max_attrs * sizeof(ib_uverbs_attr)];
	ib_uverbs_ioctl_hdr hdr{};
	size_t len = sizeof(hdr) + num_attrs * sizeof(ib_uverbs_attr);

	if (num_attrs > max_attrs) {
		errno = EINVAL;
		return -1;
	}
	hdr.length = static_cast<uint16_t>(len);
	hdr.object_id = object;
	hdr.method_id = method;
	hdr.num_attrs = static_cast<uint16_t>(num_attrs);
	hdr.driver_id = SROCE_DRIVER_ID;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), attrs, num_attrs * sizeof(ib_uverbs_attr));
	if (ioctl(cmd_fd, RDMA_VERBS_IOCTL, buf))
		return -1;
	memcpy(attrs, buf + sizeof(hdr), num_attrs * sizeof(ib_uverbs_attr));
	return 0;
}

} // namespace sroce
