// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Address handles live in the kernel (it resolves the GID to a MAC and a
// route); UD send WQEs refer to one by the ah_num the kernel returned.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sroce.h"

namespace sroce {

ibv_ah *create_ah(ibv_pd *pd, ibv_ah_attr *attr)
{
	auto *ah = static_cast<Ah *>(calloc(1, sizeof(Ah)));
	DrvResp<ib_uverbs_create_ah_resp, sroce_create_ah_resp> resp;
	int ret;

	if (!ah)
		return nullptr;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_ah(pd, &ah->ibah, attr, resp.core(), sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return nullptr;
	}
	ah->ah_num = resp.drv().ah_num;
	return &ah->ibah;
}

int destroy_ah(ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (ret)
		return ret;
	free(from_ah(ibah));
	return 0;
}

} // namespace sroce
