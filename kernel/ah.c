// SPDX-License-Identifier: GPL-2.0-only
/*
 * ah.c - address handles; see ah.h.
 */
#include "ah.h"

static void sroce_ah_erase(struct sroce_dev *sdev, u32 ah_num)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	__xa_erase(&sdev->ah_xa, ah_num);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
}

/*
 * The RDMA core may call create_ah and destroy_ah with interrupts off: ib_cm
 * creates and destroys the AH of each MAD it sends under a spin_lock_irqsave()
 * (cm_alloc_msg(), cm_free_msg()), without RDMA_CREATE_AH_SLEEPABLE.  So
 * ah_xa's lock is an IRQ lock, taken with irqsave, and nothing here
 * re-enables bottom halves (local_bh_enable() with interrupts off may run
 * softirqs and has lockdep complain).
 */
int sroce_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
		    struct ib_udata *udata)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ?
		    GFP_KERNEL : GFP_ATOMIC;
	struct sroce_ah *ah = to_sah(ibah);
	unsigned long flags;
	u32 ah_num;
	int err;

	/* RoCEv2: a GRH with a RoCEv2 source GID (the core resolved it). */
	err = sroce_av_set(&ah->av, init->ah_attr);
	if (err)
		return err;
	if (!sroce_res_get(&sdev->num_ah, SROCE_MAX_AH)) {
		err = -ENOMEM;
		goto err_av;
	}

	ah->attr = *init->ah_attr;
	ah->attr.grh.sgid_attr = NULL;	/* the core holds the reference */

	/*
	 * Reserve the number; the AH is published once it is complete.  A
	 * sleepable caller has interrupts on: __xa_alloc_cyclic() may then
	 * drop the lock (with xa_unlock_irq()) to allocate with GFP_KERNEL.
	 */
	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc_cyclic(&sdev->ah_xa, &ah_num, NULL,
				XA_LIMIT(1, SROCE_MAX_AH), &sdev->ah_next, gfp);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	if (err < 0)
		goto err_count;
	ah->ah_num = ah_num;

	if (udata) {
		struct sroce_create_ah_resp resp = { .ah_num = ah_num };

		err = -EINVAL;
		if (udata->outlen < sizeof(resp))
			goto err_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_num;
	}

	/* The reserved slot exists: storing allocates nothing. */
	xa_lock_irqsave(&sdev->ah_xa, flags);
	__xa_store(&sdev->ah_xa, ah_num, ah, GFP_ATOMIC);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	return 0;

err_num:
	sroce_ah_erase(sdev, ah_num);
err_count:
	atomic_dec(&sdev->num_ah);
err_av:
	sroce_av_release(&ah->av);
	return err;
}

int sroce_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	*attr = to_sah(ibah)->attr;
	return 0;
}

/*
 * After the erase no lookup finds the AH, and none is still reading it.
 * A copy of its AV taken before may still be sending: the namespace it
 * names is freed only after an RCU grace period, which that send, in a
 * bottom-half-disabled section, holds off.
 */
int sroce_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct sroce_dev *sdev = to_sdev(ibah->device);
	struct sroce_ah *ah = to_sah(ibah);

	sroce_ah_erase(sdev, ah->ah_num);
	sroce_av_release(&ah->av);
	atomic_dec(&sdev->num_ah);
	return 0;
}

int sroce_ah_lookup(struct sroce_dev *sdev, u32 ah_num, struct ib_pd *pd,
		    struct sroce_av *av)
{
	unsigned long flags;
	struct sroce_ah *ah;
	int err = -ENOENT;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	ah = xa_load(&sdev->ah_xa, ah_num);
	if (ah && ah->ibah.pd == pd) {
		*av = ah->av;
		err = 0;
	}
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	return err;
}
