// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Memory regions.  The kernel pins the pages (ib_umem) and hands back the
// keys; ibv_cmd_reg_mr fills in the verbs_mr, which libibverbs later reads
// (mr_type, access) in ibv_dereg_mr/ibv_rereg_mr.
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include "sroce.h"

namespace sroce {

ibv_mr *reg_mr(ibv_pd *pd, void *addr, size_t length, uint64_t hca_va,
	       int access)
{
	auto *vmr = static_cast<verbs_mr *>(calloc(1, sizeof(verbs_mr)));
	sroce_cmd_reg_mr cmd;
	ib_uverbs_reg_mr_resp resp;
	int ret;

	if (!vmr)
		return nullptr;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return nullptr;
	}
	return &vmr->ibv_mr;
}

int rereg_mr(verbs_mr *vmr, int flags, ibv_pd *pd, void *addr, size_t length,
	     int access)
{
	sroce_cmd_rereg_mr cmd;
	ib_uverbs_rereg_mr_resp resp;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	// The IO virtual address of a user MR is its user address.
	return ibv_cmd_rereg_mr(vmr, static_cast<uint32_t>(flags), addr, length,
				reinterpret_cast<uintptr_t>(addr), access, pd,
				&cmd, sizeof(cmd), &resp, sizeof(resp));
}

int dereg_mr(verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (ret)
		return ret;
	free(vmr);
	return 0;
}

// ibv_import_mr(): keys and length from the kernel; the address is the
// owner's and stays unknown here (rdma-core leaves it null).
ibv_mr *import_mr(ibv_pd *pd, uint32_t mr_handle)
{
	auto *vmr = static_cast<verbs_mr *>(calloc(1, sizeof(verbs_mr)));

	if (!vmr)
		return nullptr;
	if (int ret = ibv_cmd_query_mr(pd, vmr, mr_handle)) {
		free(vmr);
		errno = ret;
		return nullptr;
	}
	return &vmr->ibv_mr;
}

// The kernel MR stays: its owner deregisters it.
void unimport_mr(ibv_mr *mr)
{
	static_assert(offsetof(verbs_mr, ibv_mr) == 0);
	free(reinterpret_cast<verbs_mr *>(mr));
}

} // namespace sroce
