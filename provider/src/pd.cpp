// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Protection domains: nothing of ours to keep, the kernel object is all.
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

} // namespace sroce
