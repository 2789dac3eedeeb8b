// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_ktest.ko - a kernel verbs consumer that exercises what kernel ULPs
 * (nvme-rdma, NFS/RDMA, iSER) use and userspace cannot: fast-registration
 * MRs (ib_alloc_mr, ib_map_mr_sg, IB_WR_REG_MR), IB_WR_LOCAL_INV and
 * SEND_WITH_INV, and IB_WR_ATOMIC_WRITE, through the same datapath as
 * every other QP.  Not part
 * of sroce.ko; selftests/frwr.sh loads it:
 *
 *   insmod sroce_ktest.ko dev=sroce0 gid_index=1
 *
 * Two kernel RC QPs of the device talk to each other (loopback).  Each
 * case gets a fresh QP pair, since the error cases end in the error state.
 * Results are KTAP lines in the kernel log; the load fails with -EIO if a
 * case failed, so insmod's exit status is the verdict.  The module
 * unloads right away (init returns an error or the module does nothing
 * after init).
 */
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "../compat.h"

static char *dev = "sroce0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test");
static int gid_index = 1;
module_param(gid_index, int, 0444);
MODULE_PARM_DESC(gid_index, "RoCE v2 GID index of the device to use");

#define KT_PAGES	2
#define KT_LEN		6000		/* crosses the page boundary */
#define KT_OFF		100		/* into the first page */
#define KT_WAIT_MS	5000

struct kt {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq[2];
	struct ib_qp *qp[2];
	struct ib_mr *mr;
	struct page *page[KT_PAGES];
	struct scatterlist sg[KT_PAGES];
	u8 *src;			/* B's local buffer, KT_LEN bytes */
	u8 *dst;			/* A's receive buffer */
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	int failed;
	int n;
};

static void kt_result(struct kt *t, bool ok, const char *name)
{
	t->n++;
	if (!ok)
		t->failed++;
	pr_info("sroce_ktest: %sok %d %s\n", ok ? "" : "not ", t->n, name);
}

#define KT_CHECK(t, cond, fmt, ...) ({					\
	bool __ok = (cond);						\
	if (!__ok)							\
		pr_info("sroce_ktest: # %s:%d: " fmt "\n", __func__,	\
			__LINE__, ##__VA_ARGS__);			\
	__ok;								\
})

/* The next completion of @cq within KT_WAIT_MS: 0 or -ETIMEDOUT. */
static int kt_poll(struct ib_cq *cq, struct ib_wc *wc)
{
	int i;

	for (i = 0; i < KT_WAIT_MS; i++) {
		if (ib_poll_cq(cq, 1, wc) == 1)
			return 0;
		usleep_range(500, 1000);
	}
	return -ETIMEDOUT;
}

/* One completion on side @s: @wr_id with @status (and @opcode if ok). */
static bool kt_expect(struct kt *t, int s, u64 wr_id, enum ib_wc_status status,
		      int opcode)
{
	struct ib_wc wc;

	if (!KT_CHECK(t, !kt_poll(t->cq[s], &wc), "side %c: no completion for wr_id %llu",
		      'A' + s, wr_id))
		return false;
	if (!KT_CHECK(t, wc.wr_id == wr_id && wc.status == status,
		      "side %c: wr_id %llu status %s, expected wr_id %llu %s",
		      'A' + s, wc.wr_id, ib_wc_status_msg(wc.status), wr_id,
		      ib_wc_status_msg(status)))
		return false;
	if (status == IB_WC_SUCCESS && opcode >= 0 &&
	    !KT_CHECK(t, wc.opcode == opcode, "side %c: opcode %d, expected %d",
		      'A' + s, wc.opcode, opcode))
		return false;
	return true;
}

static void kt_qps_destroy(struct kt *t)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (t->qp[i])
			ib_destroy_qp(t->qp[i]);
		t->qp[i] = NULL;
	}
}

static int kt_qp_connect(struct kt *t, struct ib_qp *qp, u32 dqpn)
{
	int access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		     IB_ACCESS_REMOTE_READ;
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = access,
	};
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0x100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &t->gid, 0, gid_index, 64, 0);
	/* Kernel consumers pass a resolved destination MAC: our own. */
	memcpy(a.ah_attr.roce.dmac, t->mac, ETH_ALEN);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 3;
	a.rnr_retry = 7;
	a.sq_psn = 0x100;
	a.max_rd_atomic = 4;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* A fresh pair of connected QPs: A (0) owns the MR, B (1) uses its rkey. */
static int kt_qps_create(struct kt *t)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = 16,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};
	int i, err;

	kt_qps_destroy(t);
	for (i = 0; i < 2; i++) {
		init.send_cq = t->cq[i];
		init.recv_cq = t->cq[i];
		t->qp[i] = ib_create_qp(t->pd, &init);
		if (IS_ERR(t->qp[i])) {
			err = PTR_ERR(t->qp[i]);
			t->qp[i] = NULL;
			return err;
		}
	}
	err = kt_qp_connect(t, t->qp[0], t->qp[1]->qp_num);
	return err ?: kt_qp_connect(t, t->qp[1], t->qp[0]->qp_num);
}

/* Map the pages into the MR and post REG_MR on A under a new key byte. */
static int kt_post_reg(struct kt *t, u64 wr_id, int access)
{
	struct ib_reg_wr wr = {
		.wr = {
			.opcode = IB_WR_REG_MR,
			.wr_id = wr_id,
			.send_flags = IB_SEND_SIGNALED,
		},
		.mr = t->mr,
		.key = 0,
		.access = access,
	};
	int n;

	n = ib_map_mr_sg(t->mr, t->sg, KT_PAGES, NULL, PAGE_SIZE);
	if (n != KT_PAGES)
		return n < 0 ? n : -EINVAL;
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey));
	wr.key = t->mr->rkey;
	return ib_post_send(t->qp[0], &wr.wr, NULL);
}

static int kt_post_rdma(struct kt *t, int s, u64 wr_id, enum ib_wr_opcode op,
			void *buf, u32 len, u64 raddr, u32 rkey)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf,	/* no DMA device: virtual addresses */
		.length = len,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = {
			.opcode = op,
			.wr_id = wr_id,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = raddr,
		.rkey = rkey,
	};

	return ib_post_send(t->qp[s], &wr.wr, NULL);
}

static int kt_post_local_inv(struct kt *t, u64 wr_id, u32 rkey)
{
	struct ib_send_wr wr = {
		.opcode = IB_WR_LOCAL_INV,
		.wr_id = wr_id,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = rkey,
	};

	return ib_post_send(t->qp[0], &wr, NULL);
}

/* Are the KT_LEN bytes at KT_OFF of the MR's pages those of @want? */
static bool kt_mr_holds(struct kt *t, const u8 *want)
{
	u32 i;

	for (i = 0; i < KT_LEN; i++) {
		u32 off = KT_OFF + i;
		u8 *p = page_address(t->page[off / PAGE_SIZE]);

		if (p[off % PAGE_SIZE] != want[i]) {
			pr_info("sroce_ktest: # MR byte %u: %#x, expected %#x\n",
				i, p[off % PAGE_SIZE], want[i]);
			return false;
		}
	}
	return true;
}

static void kt_pattern(u8 *p, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 7 + (i >> 9);
}

#define KT_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
		   IB_ACCESS_REMOTE_READ)

/*
 * REG_MR, then B writes through the rkey across the page boundary and
 * reads it back; a SEND_WITH_INV invalidates the rkey at A (A's receive
 * says so), after which a write through it is a remote access error.
 */
static bool kt_case_reg_write_read_send_inv(struct kt *t)
{
	struct ib_sge rsge = {
		.addr = (uintptr_t)t->dst, .length = 64,
		.lkey = t->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = { .wr_id = 50, .sg_list = &rsge, .num_sge = 1 };
	struct ib_send_wr swr = {
		.opcode = IB_WR_SEND_WITH_INV, .wr_id = 51,
		.send_flags = IB_SEND_SIGNALED,
	};
	struct ib_wc wc;
	u64 raddr;
	u32 rkey;

	if (!KT_CHECK(t, !kt_qps_create(t), "QP pair") ||
	    !KT_CHECK(t, !kt_post_reg(t, 1, KT_ACCESS), "post REG_MR") ||
	    !kt_expect(t, 0, 1, IB_WC_SUCCESS, IB_WC_REG_MR))
		return false;
	rkey = t->mr->rkey;
	raddr = t->mr->iova + KT_OFF;
	if (!KT_CHECK(t, t->mr->length == KT_PAGES * PAGE_SIZE, "MR length %llu",
		      t->mr->length))
		return false;

	kt_pattern(t->src, KT_LEN, 1);
	if (!KT_CHECK(t, !kt_post_rdma(t, 1, 2, IB_WR_RDMA_WRITE, t->src, KT_LEN,
				       raddr, rkey), "post WRITE") ||
	    !kt_expect(t, 1, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE) ||
	    !kt_mr_holds(t, t->src))
		return false;
	memset(t->src, 0, KT_LEN);
	if (!KT_CHECK(t, !kt_post_rdma(t, 1, 3, IB_WR_RDMA_READ, t->src, KT_LEN,
				       raddr, rkey), "post READ") ||
	    !kt_expect(t, 1, 3, IB_WC_SUCCESS, IB_WC_RDMA_READ) ||
	    !kt_mr_holds(t, t->src))
		return false;

	swr.ex.invalidate_rkey = rkey;
	if (!KT_CHECK(t, !ib_post_recv(t->qp[0], &rwr, NULL), "post recv") ||
	    !KT_CHECK(t, !ib_post_send(t->qp[1], &swr, NULL), "post SEND_WITH_INV") ||
	    !kt_expect(t, 1, 51, IB_WC_SUCCESS, IB_WC_SEND))
		return false;
	if (!KT_CHECK(t, !kt_poll(t->cq[0], &wc), "no receive completion") ||
	    !KT_CHECK(t, wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_RECV &&
		      (wc.wc_flags & IB_WC_WITH_INVALIDATE) &&
		      wc.ex.invalidate_rkey == rkey,
		      "receive: status %s opcode %d flags %#x inv %#x (rkey %#x)",
		      ib_wc_status_msg(wc.status), wc.opcode, wc.wc_flags,
		      wc.ex.invalidate_rkey, rkey))
		return false;

	/* The rkey is gone: IBA 9.7.5.2.8 Remote Access Error. */
	return KT_CHECK(t, !kt_post_rdma(t, 1, 4, IB_WR_RDMA_WRITE, t->src, 16,
					 raddr, rkey), "post WRITE") &&
	       kt_expect(t, 1, 4, IB_WC_REM_ACCESS_ERR, -1);
}

/* LOCAL_INV of the valid rkey, then a write through it fails remotely. */
static bool kt_case_local_inv(struct kt *t)
{
	u32 rkey;

	if (!KT_CHECK(t, !kt_qps_create(t), "QP pair") ||
	    !KT_CHECK(t, !kt_post_reg(t, 10, KT_ACCESS), "post REG_MR") ||
	    !kt_expect(t, 0, 10, IB_WC_SUCCESS, IB_WC_REG_MR))
		return false;
	rkey = t->mr->rkey;
	kt_pattern(t->src, KT_LEN, 2);
	if (!KT_CHECK(t, !kt_post_rdma(t, 1, 11, IB_WR_RDMA_WRITE, t->src, KT_LEN,
				       t->mr->iova + KT_OFF, rkey), "post WRITE") ||
	    !kt_expect(t, 1, 11, IB_WC_SUCCESS, IB_WC_RDMA_WRITE) ||
	    !kt_mr_holds(t, t->src))
		return false;
	if (!KT_CHECK(t, !kt_post_local_inv(t, 12, rkey), "post LOCAL_INV") ||
	    !kt_expect(t, 0, 12, IB_WC_SUCCESS, IB_WC_LOCAL_INV))
		return false;
	return KT_CHECK(t, !kt_post_rdma(t, 1, 13, IB_WR_RDMA_WRITE, t->src, 16,
					 t->mr->iova + KT_OFF, rkey), "post WRITE") &&
	       kt_expect(t, 1, 13, IB_WC_REM_ACCESS_ERR, -1);
}

/*
 * IBTA 1.5 ATOMIC WRITE from a kernel consumer (kernel verbs name it from
 * 6.2 on): the 8 bytes at the SGE land at an aligned address of the MR,
 * exactly those, and the completion says IB_WC_ATOMIC_WRITE; a misaligned
 * one is an invalid request.  The MR is left invalidated, as the case
 * before left it.
 */
static bool kt_case_atomic_write(struct kt *t)
{
#if SROCE_KERNEL_ATOMIC_WRITE
	const u64 val = 0x1122334455667788ull;
	u8 *page = page_address(t->page[0]);
	u64 raddr, got;
	u32 rkey;

	if (!KT_CHECK(t, !kt_qps_create(t), "QP pair") ||
	    !KT_CHECK(t, !kt_post_reg(t, 30, KT_ACCESS), "post REG_MR") ||
	    !kt_expect(t, 0, 30, IB_WC_SUCCESS, IB_WC_REG_MR))
		return false;
	rkey = t->mr->rkey;
	raddr = t->mr->iova + PAGE_SIZE - sizeof(val);
	memset(page + PAGE_SIZE - 16, 0x5a, 16);
	memcpy(t->src, &val, sizeof(val));
	if (!KT_CHECK(t, !kt_post_rdma(t, 1, 31, IB_WR_ATOMIC_WRITE, t->src,
				       sizeof(val), raddr, rkey),
		      "post ATOMIC_WRITE") ||
	    !kt_expect(t, 1, 31, IB_WC_SUCCESS, IB_WC_ATOMIC_WRITE))
		return false;
	memcpy(&got, page + PAGE_SIZE - sizeof(val), sizeof(got));
	if (!KT_CHECK(t, got == val && page[PAGE_SIZE - 9] == 0x5a,
		      "word %#llx, expected %#llx; byte before %#x", got, val,
		      page[PAGE_SIZE - 9]))
		return false;

	if (!KT_CHECK(t, !kt_post_rdma(t, 1, 32, IB_WR_ATOMIC_WRITE, t->src,
				       sizeof(val), raddr - 4, rkey),
		      "post ATOMIC_WRITE") ||
	    !kt_expect(t, 1, 32, IB_WC_REM_INV_REQ_ERR, -1))
		return false;
	return KT_CHECK(t, !kt_qps_create(t), "QP pair") &&
	       KT_CHECK(t, !kt_post_local_inv(t, 33, rkey), "post LOCAL_INV") &&
	       kt_expect(t, 0, 33, IB_WC_SUCCESS, IB_WC_LOCAL_INV);
#else
	return true;
#endif
}

/*
 * The IB errors: LOCAL_INV of a key whose key byte is not the valid one
 * is a local protection error; REG_MR of an MR that is still valid is a
 * memory window bind error; a write through the key the MR had before
 * its last registration is a remote access error.
 */
static bool kt_case_errors(struct kt *t)
{
	u32 old, rkey;

	if (!KT_CHECK(t, !kt_qps_create(t), "QP pair"))
		return false;
	old = t->mr->rkey;		/* invalid since the previous case */
	if (!KT_CHECK(t, !kt_post_reg(t, 20, KT_ACCESS), "post REG_MR") ||
	    !kt_expect(t, 0, 20, IB_WC_SUCCESS, IB_WC_REG_MR))
		return false;
	rkey = t->mr->rkey;
	if (!KT_CHECK(t, !kt_post_rdma(t, 1, 21, IB_WR_RDMA_WRITE, t->src, 16,
				       t->mr->iova + KT_OFF, old), "post WRITE") ||
	    !kt_expect(t, 1, 21, IB_WC_REM_ACCESS_ERR, -1))
		return false;
	/* That error ended the pair; the MR is still valid under @rkey. */
	if (!KT_CHECK(t, !kt_qps_create(t), "QP pair") ||
	    !KT_CHECK(t, !kt_post_local_inv(t, 22, ib_inc_rkey(rkey)), "post LOCAL_INV") ||
	    !kt_expect(t, 0, 22, IB_WC_LOC_PROT_ERR, -1))
		return false;

	/* The MR stayed valid: registering it again is refused. */
	if (!KT_CHECK(t, !kt_qps_create(t), "QP pair") ||
	    !KT_CHECK(t, !kt_post_reg(t, 23, KT_ACCESS), "post REG_MR"))
		return false;
	return kt_expect(t, 0, 23, IB_WC_MW_BIND_ERR, -1);
}

static int kt_setup(struct kt *t)
{
	const struct ib_gid_attr *gattr;
	int i, err;

	t->ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!t->ibdev)
		return -ENODEV;
	if (!(t->ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS))
		return -EOPNOTSUPP;
	gattr = rdma_get_gid_attr(t->ibdev, 1, gid_index);
	if (IS_ERR(gattr))
		return PTR_ERR(gattr);
	t->gid = gattr->gid;
	err = rdma_read_gid_l2_fields(gattr, NULL, t->mac);
	rdma_put_gid_attr(gattr);
	if (err)
		return err;

	t->pd = ib_alloc_pd(t->ibdev, 0);
	if (IS_ERR(t->pd))
		return PTR_ERR(t->pd);
	for (i = 0; i < 2; i++) {
		t->cq[i] = ib_alloc_cq(t->ibdev, NULL, 64, 0, IB_POLL_DIRECT);
		if (IS_ERR(t->cq[i]))
			return PTR_ERR(t->cq[i]);
	}
	t->mr = ib_alloc_mr(t->pd, IB_MR_TYPE_MEM_REG, KT_PAGES);
	if (IS_ERR(t->mr))
		return PTR_ERR(t->mr);
	sg_init_table(t->sg, KT_PAGES);
	for (i = 0; i < KT_PAGES; i++) {
		t->page[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!t->page[i])
			return -ENOMEM;
		sg_set_page(&t->sg[i], t->page[i], PAGE_SIZE, 0);
	}
	if (ib_dma_map_sg(t->ibdev, t->sg, KT_PAGES, DMA_BIDIRECTIONAL) != KT_PAGES)
		return -EIO;
	t->src = kzalloc(KT_LEN, GFP_KERNEL);
	t->dst = kzalloc(64, GFP_KERNEL);
	return t->src && t->dst ? 0 : -ENOMEM;
}

static void kt_teardown(struct kt *t)
{
	int i;

	kt_qps_destroy(t);
	if (t->mr && !IS_ERR(t->mr))
		ib_dereg_mr(t->mr);
	if (t->page[0] && t->page[KT_PAGES - 1])
		ib_dma_unmap_sg(t->ibdev, t->sg, KT_PAGES, DMA_BIDIRECTIONAL);
	for (i = 0; i < KT_PAGES; i++)
		if (t->page[i])
			__free_page(t->page[i]);
	for (i = 0; i < 2; i++)
		if (t->cq[i] && !IS_ERR(t->cq[i]))
			ib_free_cq(t->cq[i]);
	if (t->pd && !IS_ERR(t->pd))
		ib_dealloc_pd(t->pd);
	if (t->ibdev)
		ib_device_put(t->ibdev);
	kfree(t->src);
	kfree(t->dst);
}

static int __init sroce_ktest_init(void)
{
	struct kt *t = kzalloc(sizeof(*t), GFP_KERNEL);
	int err;

	if (!t)
		return -ENOMEM;
	err = kt_setup(t);
	if (err) {
		pr_info("sroce_ktest: setup on %s, GID %d failed: %d\n", dev,
			gid_index, err);
		t->failed++;
	} else {
		kt_result(t, kt_case_reg_write_read_send_inv(t),
			  "frwr_reg_write_read_send_with_inv");
		kt_result(t, kt_case_local_inv(t), "frwr_local_inv");
		kt_result(t, kt_case_atomic_write(t),
			  SROCE_KERNEL_ATOMIC_WRITE ? "atomic_write" :
			  "atomic_write # SKIP kernel verbs name it from 6.2");
		kt_result(t, kt_case_errors(t), "frwr_errors");
	}
	kt_teardown(t);
	pr_info("sroce_ktest: %d of %d failed\n", t->failed, t->n);
	err = t->failed ? -EIO : 0;
	kfree(t);
	return err;
}

static void __exit sroce_ktest_exit(void)
{
}

module_init(sroce_ktest_init);
module_exit(sroce_ktest_exit);
MODULE_DESCRIPTION("sroce kernel verbs test: fast registration and invalidation");
MODULE_LICENSE("GPL");
