// SPDX-License-Identifier: GPL-2.0-only
/*
 * doorbell.c - the doorbell file: a cheaper way for a process to say
 * "look at this QP's send queue" than a uverbs command.
 *
 * The provider publishes send WQEs in the mapped ring and then needs the
 * kernel to run the requester.  The uverbs way is a POST_SEND command with
 * no work requests (sroce_post_send()): about 3.5 us a call in a TCG guest,
 * of which the command's parsing, its two allocations and the QP handle
 * lookup are most; a write() to /dev/null costs 0.8 us there.  So the
 * provider asks once per context, through a driver method on the command
 * fd (SROCE_METHOD_DOORBELL_ALLOC), for a file of its own, and writes the
 * QPN into it on every post.  uverbs owns the file as an FD object of the
 * context: it is destroyed (sroce_doorbell_destroy()) when the process
 * closes it, closes the device, or the device goes away
 * (disassociation), and after that every write() fails with -EIO while
 * the file itself may stay open.
 *
 * Never trusted: the writer (the credentials that opened the file, as
 * uverbs requires of its own write()), the length (one __u32), the QPN
 * (looked up and referenced like a received packet's, and only a QP of the
 * context that opened the file), the QP's state (as post_send checks it).
 */
#include <linux/fs.h>
#include <linux/rwsem.h>
#include <linux/uaccess.h>
#include <rdma/ib.h>
#include <rdma/uverbs_types.h>

#define UVERBS_MODULE_NAME sroce_ib
#include <rdma/uverbs_named_ioctl.h>

#include "doorbell.h"
#include "qp.h"

struct sroce_doorbell_file {
	struct ib_uobject uobj;		/* first: uverbs allocates it */
	/*
	 * Held for read by a write() while it uses @sdev, for write by the
	 * destroy that clears it: after the destroy returns no write() can
	 * reach the device, which may then go away.
	 */
	struct rw_semaphore lock;
	struct sroce_dev *sdev;		/* NULL once destroyed */
	struct ib_ucontext *ucontext;	/* only its QPs are rung */
};

static struct sroce_doorbell_file *to_doorbell(struct ib_uobject *uobj)
{
	return container_of(uobj, struct sroce_doorbell_file, uobj);
}

static int sroce_doorbell_ring(struct sroce_doorbell_file *db, u32 qpn)
{
	struct sroce_qp *qp;
	int err;

	qp = sroce_qp_get(db->sdev, qpn);
	if (!qp)
		return -EINVAL;
	/* Another process's QP (the file can be passed on): not ours. */
	if (qp->ucontext == db->ucontext)
		err = sroce_qp_doorbell(qp);
	else
		err = -EINVAL;
	sroce_qp_put(qp);
	return err;
}

static ssize_t sroce_doorbell_write(struct file *filp, const char __user *buf,
				    size_t len, loff_t *pos)
{
	struct sroce_doorbell_file *db = to_doorbell(filp->private_data);
	struct sroce_doorbell req;
	int err;

	/*
	 * As uverbs' own write(): only the credentials that opened the file
	 * (not a child after fork(), not a setuid program handed the fd).
	 */
	if (!ib_safe_file_access(filp))
		return -EACCES;
	if (len != sizeof(req))
		return -EINVAL;
	if (copy_from_user(&req, buf, sizeof(req)))
		return -EFAULT;

	down_read(&db->lock);
	err = db->sdev ? sroce_doorbell_ring(db, req.qpn) : -EIO;
	up_read(&db->lock);
	return err ?: sizeof(req);
}

static const struct file_operations sroce_doorbell_fops = {
	.owner = THIS_MODULE,
	.write = sroce_doorbell_write,
	.release = uverbs_uobject_fd_release,
};

static int UVERBS_HANDLER(SROCE_METHOD_DOORBELL_ALLOC)(struct uverbs_attr_bundle *attrs)
{
	struct ib_uobject *uobj =
		uverbs_attr_get_uobject(attrs, SROCE_ATTR_DOORBELL_ALLOC_FD);
	struct sroce_doorbell_file *db = to_doorbell(uobj);

	init_rwsem(&db->lock);
	db->ucontext = attrs->context;
	db->sdev = to_sdev(attrs->context->device);
	return 0;
}

/* Only called for a file whose alloc handler ran (uverbs aborts others). */
static void sroce_doorbell_destroy(struct ib_uobject *uobj,
				   enum rdma_remove_reason why)
{
	struct sroce_doorbell_file *db = to_doorbell(uobj);

	down_write(&db->lock);
	db->sdev = NULL;
	db->ucontext = NULL;
	up_write(&db->lock);
}

DECLARE_UVERBS_NAMED_METHOD(SROCE_METHOD_DOORBELL_ALLOC,
			    UVERBS_ATTR_FD(SROCE_ATTR_DOORBELL_ALLOC_FD,
					   SROCE_OBJECT_DOORBELL,
					   UVERBS_ACCESS_NEW, UA_MANDATORY));

DECLARE_UVERBS_NAMED_OBJECT(SROCE_OBJECT_DOORBELL,
			    UVERBS_TYPE_ALLOC_FD(sizeof(struct sroce_doorbell_file),
						 sroce_doorbell_destroy,
						 &sroce_doorbell_fops,
						 "[sroce_doorbell]", O_WRONLY),
			    &UVERBS_METHOD(SROCE_METHOD_DOORBELL_ALLOC));

const struct uapi_definition sroce_doorbell_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(SROCE_OBJECT_DOORBELL),
	{},
};
