// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Opening a device: the context, the ops table, and the device/port queries
// (which are plain kernel commands).
#include <rdma/rdma_user_ioctl_cmds.h>
#include <sys/ioctl.h>
#include <unistd.h>

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

	if (ctx->doorbell_fd >= 0)
		close(ctx->doorbell_fd);
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

// The context's share of what the kernel answered at its open or import.
int set_context(Context *ctx, const sroce_alloc_ucontext_resp &drv)
{
	// A kernel speaking another sroce ABI lays out rings and WQEs
	// differently: refuse it rather than corrupt queues later.
	if (drv.abi_version != SROCE_ABI_VERSION)
		return EPROTO;
	ctx->max_inline_data = drv.max_inline_data;
	ctx->max_send_sge = drv.max_send_sge;
	ctx->max_recv_sge = drv.max_recv_sge;
	return 0;
}

// The doorbell file (sroce-abi.h, "The doorbell file"): one driver method
// on the command fd.  -1 when the kernel has no such method, or when the
// environment asks for the uverbs command (SROCE_UVERBS_DOORBELL=1, to
// compare the two): the doorbell is then the POST_SEND command.
int open_doorbell_file(int cmd_fd)
{
	const char *env = getenv("SROCE_UVERBS_DOORBELL");

	if (env && strcmp(env, "0") != 0)
		return -1;

	ib_uverbs_attr attr{};

	attr.attr_id = SROCE_ATTR_DOORBELL_ALLOC_FD;
	attr.flags = UVERBS_ATTR_F_MANDATORY;
	if (uverbs_ioctl(cmd_fd, SROCE_OBJECT_DOORBELL,
			 SROCE_METHOD_DOORBELL_ALLOC, &attr, 1))
		return -1;
	// The kernel wrote the new descriptor into the attribute's data.
	return static_cast<int>(attr.data);
}

// What the kernel told the provider that opened the context (sroce-abi.h,
// "Sharing a context"), checked as at an open.
int query_context_resp(Context *ctx)
{
	sroce_alloc_ucontext_resp drv{};
	ib_uverbs_attr attr{};

	attr.attr_id = SROCE_ATTR_QUERY_CONTEXT_RESP;
	attr.flags = UVERBS_ATTR_F_MANDATORY;
	attr.len = sizeof(drv);
	attr.data = reinterpret_cast<uintptr_t>(&drv);
	if (uverbs_ioctl(ctx->vctx.context.cmd_fd, UVERBS_OBJECT_DEVICE,
			 UVERBS_METHOD_QUERY_CONTEXT, &attr, 1))
		return errno;
	return set_context(ctx, drv);
}

// Slots left null fall back to libibverbs' dummies (EOPNOTSUPP).
constexpr verbs_context_ops make_ops()
{
	verbs_context_ops o{};

	o.advise_mr = ibv_cmd_advise_mr;
	o.alloc_mw = alloc_mw;
	o.alloc_parent_domain = alloc_parent_domain;
	o.alloc_pd = alloc_pd;
	o.alloc_td = alloc_td;
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
	o.dealloc_td = dealloc_td;
	o.dereg_mr = dereg_mr;
	o.destroy_ah = destroy_ah;
	o.destroy_cq = destroy_cq;
	o.destroy_qp = destroy_qp;
	o.destroy_srq = destroy_srq;
	o.detach_mcast = ibv_cmd_detach_mcast;
	o.free_context = free_context;
	o.get_srq_num = get_srq_num;
	o.import_mr = import_mr;
	o.import_pd = import_pd;
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
	o.unimport_mr = unimport_mr;
	o.unimport_pd = unimport_pd;
	return o;
}

constinit const verbs_context_ops ops = make_ops();

} // namespace

namespace {

// The two ways to a context, an open and an import, share their first
// steps and their last.  The allocation is zeroed, not constructed.
Context *context_new(ibv_device *ibdev, int cmd_fd)
{
	// Context::vctx is at offset 0, so the "offset pointer" is null.
	static_assert(offsetof(Context, vctx) == 0);
	auto *ctx = static_cast<Context *>(_verbs_init_and_alloc_context(
		ibdev, cmd_fd, sizeof(Context), nullptr, SROCE_DRIVER_ID));
	if (ctx)
		ctx->doorbell_fd = -1;
	return ctx;
}

// The kernel accepted the context: its own doorbell file, then the ops.
verbs_context *context_finish(Context *ctx)
{
	ctx->doorbell_fd = open_doorbell_file(ctx->vctx.context.cmd_fd);
	verbs_set_ops(&ctx->vctx, &ops);
	return &ctx->vctx;
}

// A failed open or import; as libibverbs expects, it consumes the command
// fd (verbs_uninit_context() closes it) and leaves @err in errno.
verbs_context *context_fail(Context *ctx, int err)
{
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = err;
	return nullptr;
}

} // namespace

verbs_context *context_alloc(ibv_device *ibdev, int cmd_fd, void *)
{
	Context *ctx = context_new(ibdev, cmd_fd);
	if (!ctx)
		return nullptr;

	sroce_cmd_get_context cmd;
	DrvResp<ib_uverbs_get_context_resp, sroce_alloc_ucontext_resp> resp;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	int err = ibv_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd),
				      resp.core(), sizeof(resp));
	if (!err)
		err = set_context(ctx, resp.drv());
	if (err)
		return context_fail(ctx, err);
	return context_finish(ctx);
}

// ibv_import_device(): the context another holder of the command fd
// opened, with a doorbell file of our own (sroce-abi.h, "Sharing a
// context").
verbs_context *context_import(ibv_device *ibdev, int cmd_fd)
{
	Context *ctx = context_new(ibdev, cmd_fd);
	if (!ctx)
		return nullptr;

	int err = ibv_cmd_query_context(&ctx->vctx.context, nullptr);
	if (!err)
		err = query_context_resp(ctx);
	if (err)
		return context_fail(ctx, err);
	return context_finish(ctx);
}

const verbs_context_ops *context_ops()
{
	return &ops;
}

} // namespace sroce
