// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Opening a device: the context, the ops table, and the device/port queries
// (which are plain kernel commands).
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sroce.h"

namespace sroce {
namespace {

void free_context(ibv_context *ibctx)
{
	Context *ctx = from_ctx(ibctx);

	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

int query_device_ex(ibv_context *ctx, const ibv_query_device_ex_input *input,
		    ibv_device_attr_ex *attr, size_t attr_size)
{
	ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	ret = ibv_cmd_query_device_any(ctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	// The kernel reports fw_ver as a u64; show it as major.minor.sub,
	// the way ib_core's sysfs fw_ver and rxe do.
	uint64_t fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%" PRIu64 ".%" PRIu64 ".%" PRIu64, fw >> 32,
		 (fw >> 16) & 0xffff, fw & 0xffff);
	return 0;
}

int query_port(ibv_context *ctx, uint8_t port, ibv_port_attr *attr)
{
	sroce_cmd_query_port cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_port(ctx, port, attr, &cmd, sizeof(cmd));
}

// Slots left null fall back to libibverbs' dummies (EOPNOTSUPP).
constexpr verbs_context_ops make_ops()
{
	verbs_context_ops o{};

	o.alloc_mw = alloc_mw;
	o.alloc_pd = alloc_pd;
	o.bind_mw = bind_mw;
	o.close_xrcd = close_xrcd;
	o.attach_mcast = ibv_cmd_attach_mcast;
	o.create_ah = create_ah;
	o.create_cq = create_cq;
	o.create_cq_ex = create_cq_ex;
	o.create_qp = create_qp;
	o.create_qp_ex = create_qp_ex;
	o.create_srq = create_srq;
	o.create_srq_ex = create_srq_ex;
	o.dealloc_mw = dealloc_mw;
	o.dealloc_pd = dealloc_pd;
	o.dereg_mr = dereg_mr;
	o.destroy_ah = destroy_ah;
	o.destroy_cq = destroy_cq;
	o.destroy_qp = destroy_qp;
	o.destroy_srq = destroy_srq;
	o.detach_mcast = ibv_cmd_detach_mcast;
	o.free_context = free_context;
	o.get_srq_num = get_srq_num;
	o.modify_qp = modify_qp;
	o.modify_srq = modify_srq;
	o.open_qp = open_qp;
	o.open_xrcd = open_xrcd;
	o.poll_cq = poll_cq;
	o.post_recv = post_recv;
	o.post_send = post_send;
	o.post_srq_recv = post_srq_recv;
	o.query_device_ex = query_device_ex;
	o.query_port = query_port;
	o.query_qp = query_qp;
	o.query_srq = query_srq;
	o.reg_mr = reg_mr;
	o.req_notify_cq = ibv_cmd_req_notify_cq;
	o.rereg_mr = rereg_mr;
	o.resize_cq = resize_cq;
	return o;
}

constinit const verbs_context_ops ops = make_ops();

} // namespace

verbs_context *context_alloc(ibv_device *ibdev, int cmd_fd, void *)
{
	// Context::vctx is at offset 0, so the "offset pointer" is null.
	static_assert(offsetof(Context, vctx) == 0);
	auto *ctx = static_cast<Context *>(_verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(Context), nullptr, SROCE_DRIVER_ID));
	if (!ctx)
		return nullptr;

	sroce_cmd_get_context cmd;
	DrvResp<ib_uverbs_get_context_resp, sroce_alloc_ucontext_resp> resp;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	if (ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), resp.core(),
				sizeof(resp)))
		goto err;

	{
		sroce_alloc_ucontext_resp drv = resp.drv();

		// A kernel speaking another sroce ABI lays out rings and WQEs
		// differently: refuse it rather than corrupt queues later.
		if (drv.abi_version != SROCE_ABI_VERSION) {
			errno = EPROTO;
			goto err;
		}
		ctx->max_inline_data = drv.max_inline_data;
		ctx->max_send_sge = drv.max_send_sge;
		ctx->max_recv_sge = drv.max_recv_sge;
	}

	verbs_set_ops(&ctx->vctx, &ops);
	return &ctx->vctx;

err:
	{
		int saved = errno;

		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = saved;
	}
	return nullptr;
}

const verbs_context_ops *context_ops()
{
	return &ops;
}

} // namespace sroce
