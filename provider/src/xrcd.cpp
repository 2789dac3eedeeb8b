// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// XRC domains: kernel objects only (the kernel's xrcd.c), opened by file
// so that processes can share one; libibverbs' helper does the command.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sroce.h"

namespace sroce {

ibv_xrcd *open_xrcd(ibv_context *ctx, ibv_xrcd_init_attr *attr)
{
	auto *xrcd = static_cast<verbs_xrcd *>(calloc(1, sizeof(verbs_xrcd)));
	sroce_cmd_open_xrcd cmd;
	ib_uverbs_open_xrcd_resp resp;
	int ret;

	if (!xrcd)
		return nullptr;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_open_xrcd(ctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return nullptr;
	}
	return &xrcd->xrcd;
}

int close_xrcd(ibv_xrcd *ibxrcd)
{
	auto *xrcd = from_member<verbs_xrcd>(ibxrcd);
	int ret = ibv_cmd_close_xrcd(xrcd);

	if (!ret)
		free(xrcd);
	return ret;
}

} // namespace sroce
