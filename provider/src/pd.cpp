// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Protection domains: nothing of ours to keep, the kernel object is all.
#include <rdma/ib_user_ioctl_cmds.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sroce.h"

namespace sroce {

ibv_pd *alloc_pd(ibv_context *ctx)
{
	auto *pd = static_cast<ibv_pd *>(calloc(1, sizeof(ibv_pd)));
	sroce_cmd_alloc_pd cmd;
	ib_uverbs_alloc_pd_resp resp;
	int ret;

	if (!pd)
		return nullptr;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_alloc_pd(ctx, pd, &cmd, sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return nullptr;
	}
	return pd;
}

int dealloc_pd(ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (ret)
		return ret;
	free(pd);
	return 0;
}

// ibv_import_pd(): the kernel checks that the handle is a PD of this
// context (sroce-abi.h, "Sharing a context"); the ibv_pd is ours alone.
ibv_pd *import_pd(ibv_context *ctx, uint32_t pd_handle)
{
	ib_uverbs_attr attr{};

	attr.attr_id = SROCE_ATTR_QUERY_PD_HANDLE;
	attr.flags = UVERBS_ATTR_F_MANDATORY;
	attr.data = pd_handle;
	if (uverbs_ioctl(ctx->cmd_fd, UVERBS_OBJECT_PD, SROCE_METHOD_PD_QUERY,
			 &attr, 1))
		return nullptr;

	auto *pd = static_cast<ibv_pd *>(calloc(1, sizeof(ibv_pd)));
	if (!pd)
		return nullptr;
	pd->context = ctx;
	pd->handle = pd_handle;
	return pd;
}

// The kernel PD stays: its owner deallocates it.
void unimport_pd(ibv_pd *pd)
{
	free(pd);
}

} // namespace sroce
