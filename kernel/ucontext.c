// SPDX-License-Identifier: GPL-2.0-only
/*
 * ucontext.c - user contexts and the mmap of shared rings.
 *
 * Every region userspace maps is a vmalloc_user() buffer registered as an
 * rdma_user_mmap_entry: the core hands out the mmap offset, looks the entry
 * up on mmap() and calls sroce_mmap_free() once the driver removed the entry
 * (rdma_user_mmap_entry_remove() when the ring's owner is destroyed) and no
 * mmap() call is using it any more.  Ownership of the buffer moves to the
 * entry when it is inserted; sroce_mmap_free() frees both.
 *
 * remap_vmalloc_range() takes a reference on every page it maps, so a
 * process that keeps a ring mapped after its object was destroyed (or after
 * the device was disassociated) keeps only those pages alive: the kernel
 * never looks at them again and they are freed on munmap.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "sroce.h"

struct sroce_mmap_entry {
	struct rdma_user_mmap_entry rentry;
	void *vbuf;			/* vmalloc_user() memory, owned */
};

static struct sroce_mmap_entry *to_smentry(struct rdma_user_mmap_entry *rentry)
{
	return container_of(rentry, struct sroce_mmap_entry, rentry);
}

int sroce_alloc_ucontext(struct ib_ucontext *ibuc, struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibuc->device);
	struct sroce_alloc_ucontext_resp resp = {
		.abi_version = SROCE_ABI_VERSION,
		.max_inline_data = SROCE_MAX_INLINE_DATA,
		.max_send_sge = SROCE_MAX_SGE,
		.max_recv_sge = SROCE_MAX_SGE,
	};
	int err;

	if (!sroce_res_get(&sdev->num_ucontext, SROCE_MAX_UCONTEXT))
		return -ENOMEM;

	/* An older provider may ask for less; it gets a prefix. */
	if (udata->outlen) {
		err = ib_copy_to_udata(udata, &resp,
				       min(sizeof(resp), udata->outlen));
		if (err) {
			atomic_dec(&sdev->num_ucontext);
			return err;
		}
	}
	return 0;
}

void sroce_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	atomic_dec(&to_sdev(ibuc->device)->num_ucontext);
}

/*
 * Called by uverbs after it destroyed every object of the context because
 * the device is going away while the process still has it open.  Nothing
 * is left to do: the objects' destroy verbs already removed their mmap
 * entries and the mapped pages are refcounted (see the top of this file).
 * Having this op is what allows uverbs to disassociate instead of blocking
 * unregistration (and rmmod) until the process exits.
 */
void sroce_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Register @vbuf (vmalloc_user(), @size a multiple of PAGE_SIZE) for
 * mmap().  On success the entry owns @vbuf and *@offset is the value
 * userspace passes to mmap(); on failure the caller still owns @vbuf.
 */
struct rdma_user_mmap_entry *sroce_mmap_insert(struct ib_ucontext *ibuc,
					       void *vbuf, size_t size,
					       u64 *offset)
{
	struct sroce_mmap_entry *entry;
	int err;

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);

	entry->vbuf = vbuf;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rentry, size);
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

	err = remap_vmalloc_range(vma, to_smentry(rentry)->vbuf, 0);
	rdma_user_mmap_entry_put(rentry);
	return err;
}

void sroce_mmap_free(struct rdma_user_mmap_entry *rentry)
{
	struct sroce_mmap_entry *entry = to_smentry(rentry);

	vfree(entry->vbuf);
	kfree(entry);
}
