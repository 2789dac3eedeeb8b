// SPDX-License-Identifier: GPL-2.0-only
/*
 * ucontext.c - user contexts and the mmap of shared rings.
 *
 * Every region userspace maps is a set of zeroed pages from
 * sroce_ring_pages_alloc() (ring.c) registered as an rdma_user_mmap_entry:
 * the core hands out the mmap offset, looks the entry up on mmap() and
 * calls sroce_mmap_free() once the driver removed the entry
 * (rdma_user_mmap_entry_remove() when the ring's owner is destroyed) and
 * no mmap() call is using it any more.  Ownership of the pages moves to
 * the entry when it is inserted; sroce_mmap_free() frees both.
 *
 * vm_insert_pages() takes a reference on every page it maps, so a process
 * that keeps a ring mapped after its object was destroyed (or after the
 * device was disassociated) keeps only those pages alive: the kernel never
 * looks at them again and they are freed on munmap.
 */
#include <linux/mm.h>
#include <linux/module.h>
#include <rdma/uverbs_ioctl.h>

#define UVERBS_MODULE_NAME sroce_ib
#include <rdma/uverbs_named_ioctl.h>

#include "compat.h"
#include "ring.h"
#include "sroce.h"

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rentry;
	struct sroce_ring_pages *pages;	/* owned */
};

/* Map all of a region (the core checked that the VMA has its size). */
static int sroce_mmap_pages(struct vm_area_struct *vma,
			    struct sroce_ring_pages *pages)
{
	unsigned long n = vma_pages(vma);
	int err;

	if (WARN_ON_ONCE(n != pages->count))
		return -EINVAL;
	/* As remap_vmalloc_range(): no mremap() growth, not in core dumps. */
	sroce_vma_set_flags(vma, VM_DONTEXPAND | VM_DONTDUMP);
	err = vm_insert_pages(vma, vma->vm_start, pages->page, &n);
	return err ?: (n ? -EFAULT : 0);
}

static struct sroce_mmap_entry *to_smentry(struct rdma_user_mmap_entry *rentry)
{
	return container_of(rentry, struct sroce_mmap_entry, rentry);
}

/* What a provider needs to know of a context, at its open or its import. */
static const struct sroce_alloc_ucontext_resp sroce_ucontext_resp = {
	.abi_version = SROCE_ABI_VERSION,
	.max_inline_data = SROCE_MAX_INLINE_DATA,
	.max_send_sge = SROCE_MAX_SGE,
	.max_recv_sge = SROCE_MAX_SGE,
};

int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibuc->device);
	struct sroce_alloc_ucontext_resp resp = sroce_ucontext_resp;
	int err;

	/*
	 * A process that has the device open pins the module: rmmod answers
	 * "in use" instead of tearing the device away under it.  Removing
	 * the device itself (rdma link delete, the netdev going away) still
	 * disassociates the process at once, and uverbs then calls
	 * sroce_dealloc_ucontext(), which drops the pin.
	 */
	if (!try_module_get(THIS_MODULE))
		return -ENODEV;
	if (!sroce_res_get(&sdev->num_ucontext, SROCE_MAX_UCONTEXT)) {
		err = -ENOMEM;
		goto out_put;
	}

	/* An older provider may ask for less; it gets a prefix. */
	if (udata->outlen) {
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err)
			goto out_dec;
	}
	return 0;

out_dec:
	atomic_dec(&sdev->num_ucontext);
out_put:
	module_put(THIS_MODULE);
	return err;
}

/*
 * UVERBS_METHOD_QUERY_CONTEXT: a process importing this context
 * (ibv_import_device() on a dup of the command fd) gets what the one that
 * opened it got.  The attribute is optional for uverbs, so a caller that
 * did not ask still gets the core's answers; a buffer longer than the
 * struct (a newer provider's) gets it followed by zeros, a shorter one
 * EINVAL.
 */
int sroce_query_ucontext(struct ib_ucontext *ibuc,
			 struct uverbs_attr_bundle *attrs)
{
	if (!uverbs_attr_is_valid(attrs, SROCE_ATTR_QUERY_CONTEXT_RESP))
		return 0;
	return uverbs_copy_to_struct_or_zero(attrs,
					     SROCE_ATTR_QUERY_CONTEXT_RESP,
					     &sroce_ucontext_resp,
					     sizeof(sroce_ucontext_resp));
}

#define SROCE_UCTX_RESP_SIZE sizeof(struct sroce_alloc_ucontext_resp)

ADD_UVERBS_ATTRIBUTES_SIMPLE(sroce_query_context, UVERBS_OBJECT_DEVICE,
			     UVERBS_METHOD_QUERY_CONTEXT,
			     UVERBS_ATTR_PTR_OUT(SROCE_ATTR_QUERY_CONTEXT_RESP,
						 UVERBS_ATTR_MIN_SIZE(SROCE_UCTX_RESP_SIZE),
						 UA_OPTIONAL));

const struct uapi_definition sroce_ucontext_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DEVICE, &sroce_query_context),
	{},
};

/*
 * The module_put() may let a waiting rmmod go on, but not past ib_core:
 * unregistering the device waits for this file's teardown to return.
 */
void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	atomic_dec(&to_sdev(ibuc->device)->num_ucontext);
	module_put(THIS_MODULE);
}

/*
 * Called by uverbs after it destroyed every object of the context because
 * the device is going away while the process still has it open.  Nothing
 * is left to do: the objects' destroy verbs already removed their mmap
 * entries and the mapped pages are refcounted (see the top of this file).
 * Having this op is what allows uverbs to disassociate instead of blocking
 * unregistration (rdma link delete, the netdev going away) until the
 * process exits; rmmod is refused earlier, by the module reference each
 * context holds.
 */
void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Register @pages (sroce_ring_pages_alloc()) for mmap().  On success the
 * entry owns them and *@offset is the value userspace passes to mmap(); on
 * failure the caller still owns them.
 */
struct rdma_user_mmap_entry *sroce_mmap_insert(struct ib_ucontext *ibuc,
					       struct sroce_ring_pages *pages,
					       u64 *offset)
{
	struct sroce_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);

	entry->pages = pages;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rentry,
					  (size_t)pages->count << PAGE_SHIFT);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	*offset = rdma_user_mmap_get_offset(&entry->rentry);
	return &entry->rentry;
}

int sroce_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rentry;
	int err;

	/* A private mapping would copy on write and hide the producer. */
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;

	/* The core also checks that the VMA size equals the entry size. */
	rentry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rentry)
		return -EINVAL;

	err = sroce_mmap_pages(vma, to_smentry(rentry)->pages);
	rdma_user_mmap_entry_put(rentry);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *rentry)
{
	struct sroce_mmap_entry *entry = to_smentry(rentry);

	sroce_ring_pages_free(entry->pages);
	kfree(entry);
}
