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

// The doorbell file (sroce-abi.h, "The doorbell file"): one driver method
// on the command fd.  -1 when the kernel has no such method, or when the
// environment asks for the uverbs command (SROCE_UVERBS_DOORBELL=1, to
// compare the two): the doorbell is then the POST_SEND command.
int open_doorbell_file(int cmd_fd)
{
	const char *env = getenv("SROCE_UVERBS_DOORBELL");

	if (env && strcmp(env, "0") != 0)
		return -1;

	// ib_uverbs_ioctl_hdr ends in a flexible array: header and the one
	// attribute are laid out in a buffer, as the kernel reads them.
	alignas(8) uint8_t buf[sizeof(ib_uverbs_ioctl_hdr) + sizeof(ib_uverbs_attr)];
	ib_uverbs_ioctl_hdr hdr{};
	ib_uverbs_attr attr{};

	hdr.length = sizeof(buf);
	hdr.object_id = SROCE_OBJECT_DOORBELL;
	hdr.method_id = SROCE_METHOD_DOORBELL_ALLOC;
	hdr.num_attrs = 1;
	hdr.driver_id = SROCE_DRIVER_ID;
	attr.attr_id = SROCE_ATTR_DOORBELL_ALLOC_FD;
	attr.flags = UVERBS_ATTR_F_MANDATORY;
	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), &attr, sizeof(attr));
	if (ioctl(cmd_fd, RDMA_VERBS_IOCTL, buf))
		return -1;
	// The kernel wrote the new descriptor into the attribute's data.
	memcpy(&attr, buf + sizeof(hdr), sizeof(attr));
	return static_cast<int>(attr.data);
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
	ctx->doorbell_fd = -1; // the allocation is zeroed, not constructed

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
	ctx->doorbell_fd = open_doorbell_file(cmd_fd);

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
