// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Memory windows.  The kernel owns them (alloc/dealloc are commands); a
// bind is a send queue WQE like any other (opcode IBV_WR_BIND_MW), whether
// the consumer posted it (type 2) or called ibv_bind_mw() (type 1, flagged
// SROCE_BIND_VERB): the kernel executes it in order with the QP's other
// work and completes it with IBV_WC_BIND_MW.
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "sroce.h"

namespace sroce {

ibv_mw *alloc_mw(ibv_pd *pd, ibv_mw_type type)
{
	auto *mw = static_cast<ibv_mw *>(calloc(1, sizeof(ibv_mw)));
	sroce_cmd_alloc_mw cmd;
	ib_uverbs_alloc_mw_resp resp;
	int ret;

	if (!mw)
		return nullptr;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return nullptr;
	}
	return mw;
}

int dealloc_mw(ibv_mw *mw)
{
	int ret = ibv_cmd_dealloc_mw(mw);

	if (ret)
		return ret;
	free(mw);
	return 0;
}

// ibv_bind_mw(): type 1 only (libibverbs checks that too); the window's
// next key is its key with the key byte incremented, as the verb defines.
int bind_mw(ibv_qp *qp, ibv_mw *mw, ibv_mw_bind *mw_bind)
{
	const ibv_mw_bind_info &info = mw_bind->bind_info;
	ibv_send_wr wr{};
	ibv_send_wr *bad;
	int ret;

	if (mw->type != IBV_MW_TYPE_1 || (info.length && !info.mr))
		return EINVAL;
	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = info;
	ret = post_send_bind(qp, &wr, &bad, true);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

} // namespace sroce
