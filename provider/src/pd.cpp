// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Protection domains, parent domains and thread domains.  A kernel PD has
// no state of ours beyond its ibv_pd; a parent domain is ours alone: it
// stands for a kernel PD (its handle is that PD's, so every command sees
// the PD) and carries a thread domain, whose promise elides the locks of
// the queues created under it (QueueLock).
#include <rdma/ib_user_ioctl_cmds.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "sroce.h"

namespace sroce {

namespace {

// calloc()ed like every provider object, then constructed in place: the
// atomics need their constructor to have run.
template <typename T>
T *zalloc()
{
	void *p = calloc(1, sizeof(T));

	return p ? new (p) T{} : nullptr;
}

template <typename T>
void zfree(T *p)
{
	p->~T();
	free(p);
}

Pd *pd_alloc()
{
	Pd *pd = zalloc<Pd>();

	if (pd)
		pd->refs.store(1, std::memory_order_relaxed);
	return pd;
}

// Drop a reference to a kernel PD's struct (Pd::refs).
void pd_put(Pd *pd)
{
	if (pd->refs.fetch_sub(1, std::memory_order_acq_rel) == 1)
		zfree(pd);
}

} // namespace

ibv_pd *alloc_pd(ibv_context *ctx)
{
	auto *pd = pd_alloc();
	sroce_cmd_alloc_pd cmd;
	ib_uverbs_alloc_pd_resp resp;
	int ret;

	if (!pd)
		return nullptr;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_alloc_pd(ctx, &pd->ibpd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		zfree(pd);
		errno = ret;
		return nullptr;
	}
	return &pd->ibpd;
}

// ibv_dealloc_pd() of either kind.  A kernel PD that parent domains still
// name stays (EBUSY), as a thread domain does: the parent domain's users
// would otherwise hold a handle the kernel may give to another object.
int dealloc_pd(ibv_pd *ibpd)
{
	Pd *pd = from_pd(ibpd);

	if (pd->protection) {
		pd_put(pd->protection);
		if (pd->td)
			pd->td->users.fetch_sub(1, std::memory_order_relaxed);
		zfree(pd);
		return 0;
	}
	if (pd->refs.load(std::memory_order_relaxed) > 1)
		return EBUSY;
	if (int ret = ibv_cmd_dealloc_pd(ibpd))
		return ret;
	zfree(pd);
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

	auto *pd = pd_alloc();
	if (!pd)
		return nullptr;
	pd->ibpd.context = ctx;
	pd->ibpd.handle = pd_handle;
	return &pd->ibpd;
}

// The kernel PD stays: its owner deallocates it.  Unimporting cannot
// refuse, so a parent domain still naming the PD keeps our struct until
// that parent domain goes.
void unimport_pd(ibv_pd *pd)
{
	pd_put(from_pd(pd));
}

ibv_pd *alloc_parent_domain(ibv_context *ctx,
			    ibv_parent_domain_init_attr *attr)
{
	constexpr uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
				   IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;

	if (attr->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return nullptr;
	}
	// A kernel PD of this context (not another parent domain), and a
	// thread domain of this context if any.
	if (!attr->pd || attr->pd->context != ctx ||
	    from_pd(attr->pd)->protection ||
	    (attr->td && attr->td->context != ctx) ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return nullptr;
	}

	auto *pd = pd_alloc();
	if (!pd)
		return nullptr;
	pd->ibpd.context = ctx;
	pd->ibpd.handle = attr->pd->handle;
	pd->protection = from_pd(attr->pd);
	pd->protection->refs.fetch_add(1, std::memory_order_relaxed);
	if (attr->td) {
		pd->td = from_td(attr->td);
		pd->td->users.fetch_add(1, std::memory_order_relaxed);
	}
	return &pd->ibpd;
}

ibv_td *alloc_td(ibv_context *ctx, ibv_td_init_attr *attr)
{
	if (attr->comp_mask) {
		errno = EINVAL;
		return nullptr;
	}
	auto *td = zalloc<Td>();
	if (!td)
		return nullptr;
	td->ibtd.context = ctx;
	return &td->ibtd;
}

int dealloc_td(ibv_td *ibtd)
{
	Td *td = from_td(ibtd);

	if (td->users.load(std::memory_order_relaxed))
		return EBUSY;
	zfree(td);
	return 0;
}

} // namespace sroce
