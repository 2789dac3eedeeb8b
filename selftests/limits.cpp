// SPDX-License-Identifier: GPL-2.0-only
/*
 * limits: every verbs object past the maxima the device advertises.
 *
 *   limits -d DEV -g GIDX -k OBJ=N,... [-a] [-o OBJ,...]
 *
 * Sizes past ibv_query_device()'s max_cqe, max_qp_wr, max_sge,
 * max_srq_wr, max_mr_size (and zero or absurd ones) must fail with
 * EINVAL (or ENOMEM), never succeed and never crash.  Then objects are
 * created until the count the device advertises (max_cq, max_srq, max_ah,
 * max_pd, max_qp, max_mr): exactly as many as are left succeed, and the
 * next one fails with ENOMEM or EINVAL.  "Left" is the maximum less the
 * objects of that kind already on the device: this program's own PD and
 * CQ, and those of the kernel that -k gives (srq, ah, cq, pd, qp, mr; the
 * caller reads them from the device, see limits.sh).  Stopping one early
 * with ENOMEM is the error a leaked or miscounted object counter gives,
 * so it fails.  -a does every count; the default does the cheaper ones
 * (SRQ, CQ), -o picks.  Everything is released again and the caller then
 * checks the device still moves data.  Output is KTAP.
 */
#include <infiniband/verbs.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ktap.hpp"

namespace {

using ktap::n_failed;
using ktap::n_tests;
using ktap::result;

std::string err_str(int e)
{
	return e ? std::string(std::strerror(e)) : "success";
}

/* @what must fail with EINVAL or ENOMEM (errno), not succeed. */
void must_fail(const std::string &what, bool created, int err)
{
	bool ok = !created && (err == EINVAL || err == ENOMEM);

	result(ok, what + " refused", created ? "it was created" : "errno " + err_str(err));
}

ibv_context *ctx;
ibv_device_attr dev;
ibv_pd *pd;
ibv_cq *cq;
int gidx;

ibv_qp *make_qp(ibv_qp_cap cap, ibv_srq *srq = nullptr)
{
	ibv_qp_init_attr ia = {};

	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.srq = srq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap = cap;
	return ibv_create_qp(pd, &ia);
}

ibv_srq *make_srq(std::uint32_t wr, std::uint32_t sge)
{
	ibv_srq_init_attr sa = {};

	sa.attr.max_wr = wr;
	sa.attr.max_sge = sge;
	return ibv_create_srq(pd, &sa);
}

void sizes()
{
	ibv_cq *c;
	ibv_qp *q;
	ibv_srq *s;
	ibv_mr *m;

	errno = 0;
	c = ibv_create_cq(ctx, dev.max_cqe + 1, nullptr, nullptr, 0);
	must_fail("CQ of max_cqe + 1 (" + std::to_string(dev.max_cqe + 1) + ")", c, errno);
	if (c)
		ibv_destroy_cq(c);
	errno = 0;
	c = ibv_create_cq(ctx, 0x7fffffff, nullptr, nullptr, 0);
	must_fail("CQ of 2^31 - 1 entries", c, errno);
	if (c)
		ibv_destroy_cq(c);
	errno = 0;
	c = ibv_create_cq(ctx, -1, nullptr, nullptr, 0);
	must_fail("CQ of -1 entries", c, errno);
	if (c)
		ibv_destroy_cq(c);
	c = ibv_create_cq(ctx, dev.max_cqe, nullptr, nullptr, 0);
	result(c, "CQ of exactly max_cqe (" + std::to_string(dev.max_cqe) + ") created",
	       c ? "" : err_str(errno));
	if (c) {
		errno = 0;
		int e = ibv_resize_cq(c, dev.max_cqe + 1);
		result(e != 0, "resize CQ to max_cqe + 1 refused", err_str(e));
		ibv_destroy_cq(c);
	}

	const ibv_qp_cap ok_cap = { 16, 16, 1, 1, 0 };
	struct {
		const char *what;
		ibv_qp_cap cap;
	} bad_qps[] = {
		{ "QP max_send_wr = max_qp_wr + 1", { (std::uint32_t)dev.max_qp_wr + 1, 16, 1, 1, 0 } },
		{ "QP max_recv_wr = max_qp_wr + 1", { 16, (std::uint32_t)dev.max_qp_wr + 1, 1, 1, 0 } },
		{ "QP max_send_wr = 2^32 - 1", { 0xffffffffu, 16, 1, 1, 0 } },
		{ "QP max_recv_wr = 2^31", { 16, 0x80000000u, 1, 1, 0 } },
		{ "QP max_send_sge = max_sge + 1", { 16, 16, (std::uint32_t)dev.max_sge + 1, 1, 0 } },
		{ "QP max_recv_sge = max_sge + 1", { 16, 16, 1, (std::uint32_t)dev.max_sge + 1, 0 } },
		{ "QP max_send_sge = 2^32 - 1", { 16, 16, 0xffffffffu, 1, 0 } },
		{ "QP max_inline_data = 2^31", { 16, 16, 1, 1, 0x80000000u } },
		{ "QP max_inline_data = 1 MiB", { 16, 16, 1, 1, 1u << 20 } },
	};
	for (auto &b : bad_qps) {
		errno = 0;
		q = make_qp(b.cap);
		must_fail(b.what, q, errno);
		if (q)
			ibv_destroy_qp(q);
	}
	q = make_qp({ (std::uint32_t)dev.max_qp_wr, (std::uint32_t)dev.max_qp_wr, 1, 1, 0 });
	result(q, "QP of exactly max_qp_wr (" + std::to_string(dev.max_qp_wr) + ") send and receive WRs",
	       q ? "" : err_str(errno));
	if (q)
		ibv_destroy_qp(q);
	q = make_qp(ok_cap);
	result(q, "an ordinary QP after all that");
	if (q)
		ibv_destroy_qp(q);

	errno = 0;
	s = make_srq(dev.max_srq_wr + 1, 1);
	must_fail("SRQ max_wr = max_srq_wr + 1", s, errno);
	if (s)
		ibv_destroy_srq(s);
	errno = 0;
	s = make_srq(0xffffffffu, 1);
	must_fail("SRQ max_wr = 2^32 - 1", s, errno);
	if (s)
		ibv_destroy_srq(s);
	errno = 0;
	s = make_srq(16, dev.max_srq_sge + 1);
	must_fail("SRQ max_sge = max_srq_sge + 1", s, errno);
	if (s)
		ibv_destroy_srq(s);
	s = make_srq(16, 1);
	if (s) {
		ibv_srq_attr sa = {};

		sa.max_wr = dev.max_srq_wr + 1;
		int e = ibv_modify_srq(s, &sa, IBV_SRQ_MAX_WR);
		result(e != 0, "modify SRQ to max_srq_wr + 1 refused", err_str(e));
		sa.srq_limit = 100000;
		e = ibv_modify_srq(s, &sa, IBV_SRQ_LIMIT);
		result(e != 0, "SRQ limit above its size refused", err_str(e));
		ibv_destroy_srq(s);
	} else {
		result(false, "an ordinary SRQ", err_str(errno));
	}

	/* MRs: past max_mr_size, unmapped memory, overflowing ranges */
	if (dev.max_mr_size > SIZE_MAX - 4096) {
		/* As rdma_rxe: no length is past it; wrapping ranges below. */
		n_tests++;
		std::printf("ok %d MR of max_mr_size + 4 KiB refused # SKIP max_mr_size %#llx: no such size\n",
			    n_tests, (unsigned long long)dev.max_mr_size);
	} else {
		std::size_t big = dev.max_mr_size + 4096;
		void *resv = mmap(nullptr, big, PROT_NONE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		errno = 0;
		m = resv != MAP_FAILED ? ibv_reg_mr(pd, resv, big, IBV_ACCESS_LOCAL_WRITE) : nullptr;
		result(!m && errno, "MR of max_mr_size + 4 KiB refused", err_str(errno));
		if (m)
			ibv_dereg_mr(m);
		if (resv != MAP_FAILED)
			munmap(resv, big);
	}
	void *hole = mmap(nullptr, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	errno = 0;
	m = ibv_reg_mr(pd, hole, 1 << 20, IBV_ACCESS_LOCAL_WRITE);
	result(!m && errno, "MR of unreadable memory refused", err_str(errno));
	if (m)
		ibv_dereg_mr(m);
	munmap(hole, 1 << 20);
	errno = 0;
	m = ibv_reg_mr(pd, reinterpret_cast<void *>(~0xfffUL), 1 << 20, IBV_ACCESS_LOCAL_WRITE);
	result(!m && errno, "MR whose range wraps the address space refused", err_str(errno));
	if (m)
		ibv_dereg_mr(m);
	errno = 0;
	m = ibv_reg_mr(pd, &dev, sizeof(dev), IBV_ACCESS_REMOTE_WRITE);
	result(!m && errno, "MR with remote write but no local write refused", err_str(errno));
	if (m)
		ibv_dereg_mr(m);
}

/*
 * Create objects with @make until it fails or @left + 1 were made: exactly
 * @left (what @max, the device's maximum, leaves after the @held objects
 * already there) must succeed and the next one must fail cleanly.
 */
void count(const std::string &what, long max, long held, const std::function<void *()> &make,
	   const std::function<void(void *)> &destroy)
{
	long left = max - held;
	std::vector<void *> objs;
	auto t0 = std::chrono::steady_clock::now();
	int err = 0;

	objs.reserve(left > 0 ? left + 1 : 1);
	while ((long)objs.size() <= left) {
		errno = 0;
		void *o = make();

		if (!o) {
			err = errno;
			break;
		}
		objs.push_back(o);
	}
	long made = objs.size();
	/* ENOMEM/EINVAL: sroce's is ENOMEM (sroce_res_get), rdma_rxe's EINVAL */
	bool ok = made == left && (err == ENOMEM || err == EINVAL);
	for (void *o : objs)
		destroy(o);
	long ms = std::chrono::duration_cast<std::chrono::milliseconds>(
		std::chrono::steady_clock::now() - t0).count();
	result(ok, what + ": " + std::to_string(left) + " (max " + std::to_string(max) + " less " +
		   std::to_string(held) + " already on the device) created, the next refused",
	       std::to_string(made) + " created, " + (made > left ? "one more than expected" :
		   "next: " + err_str(err)) + ", " + std::to_string(ms) + " ms");
}

/* -k srq=N,cq=N,...: the kernel's objects on the device, by kind */
bool parse_held(const char *arg, std::map<std::string, long> &held)
{
	std::string s = arg;
	std::size_t pos = 0;

	while (pos < s.size()) {
		std::size_t end = s.find(',', pos), eq;
		std::string item = s.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
		char *tail;

		eq = item.find('=');
		if (eq == std::string::npos || eq == 0)
			return false;
		long n = std::strtol(item.c_str() + eq + 1, &tail, 10);
		if (*tail || tail == item.c_str() + eq + 1 || n < 0)
			return false;
		held[item.substr(0, eq)] = n;
		if (end == std::string::npos)
			break;
		pos = end + 1;
	}
	return true;
}

bool want(const std::string &list, const char *obj)
{
	return list.empty() || ("," + list + ",").find(std::string(",") + obj + ",") != std::string::npos;
}

} // namespace

int main(int argc, char **argv)
{
	const char *name = nullptr;
	std::string objs = "srq,cq";
	std::map<std::string, long> held;
	bool have_held = false;
	int opt;
	static const char usage[] =
		"usage: %s -d DEV -g GIDX -k srq=N,ah=N,cq=N,pd=N,qp=N,mr=N [-a] [-o srq,ah,cq,pd,qp,mr]\n"
		"  -k: the kernel's objects already on DEV, of each kind (every kind counted)\n";

	gidx = -1;
	while ((opt = getopt(argc, argv, "d:g:k:ao:")) != -1) {
		switch (opt) {
		case 'd': name = optarg; break;
		case 'g': gidx = std::atoi(optarg); break;
		case 'k':
			if (!parse_held(optarg, held)) {
				std::fprintf(stderr, usage, argv[0]);
				return 2;
			}
			have_held = true;
			break;
		case 'a': objs = ""; break;
		case 'o': objs = optarg; break;
		default:
			std::fprintf(stderr, usage, argv[0]);
			return 2;
		}
	}
	if (!name || gidx < 0 || !have_held) {
		std::fprintf(stderr, usage, argv[0]);
		return 2;
	}
	/* Every kind counted must be in -k: no silent default of 0. */
	for (const char *k : { "srq", "ah", "cq", "pd", "qp", "mr" })
		if (want(objs, k) && !held.count(k)) {
			std::fprintf(stderr, "%s: -k has no %s=N\n", argv[0], k);
			return 2;
		}
	std::printf("TAP version 13\n");
	ibv_device **list = ibv_get_device_list(nullptr);
	for (int i = 0; list && list[i]; i++)
		if (!std::strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (!ctx || ibv_query_device(ctx, &dev)) {
		std::printf("1..0 # SKIP cannot open %s\n", name);
		return 4;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, nullptr, nullptr, 0);
	if (!pd || !cq) {
		result(false, "PD and CQ");
		return 1;
	}
	std::printf("# %s: max_qp %d max_qp_wr %d max_sge %d max_cq %d max_cqe %d max_mr %d "
		    "max_mr_size 0x%llx max_pd %d max_ah %d max_srq %d max_srq_wr %d\n",
		    name, dev.max_qp, dev.max_qp_wr, dev.max_sge, dev.max_cq, dev.max_cqe, dev.max_mr,
		    (unsigned long long)dev.max_mr_size, dev.max_pd, dev.max_ah, dev.max_srq,
		    dev.max_srq_wr);

	sizes();

	union ibv_gid gid;
	ibv_query_gid(ctx, 1, gidx, &gid);
	static char page[4096] __attribute__((aligned(4096)));
	/*
	 * Counts are per device.  Already there: the kernel's objects (-k;
	 * on sroce ib_mad's PD, CQ and QP1, and the DMA MR of that PD) and
	 * our own PD and CQ, one each (sizes() released all it made).
	 */
	std::printf("# already on %s: kernel srq %ld ah %ld cq %ld pd %ld qp %ld mr %ld; "
		    "this program's cq 1 pd 1\n", name, held["srq"], held["ah"], held["cq"],
		    held["pd"], held["qp"], held["mr"]);
	if (want(objs, "srq"))
		count("SRQs", dev.max_srq, held["srq"], [] { return (void *)make_srq(1, 1); },
		      [](void *o) { ibv_destroy_srq((ibv_srq *)o); });
	if (want(objs, "ah"))
		count("AHs", dev.max_ah, held["ah"], [&] {
			ibv_ah_attr a = {};

			a.is_global = 1;
			a.grh.dgid = gid;
			a.grh.sgid_index = gidx;
			a.grh.hop_limit = 1;
			a.port_num = 1;
			return (void *)ibv_create_ah(pd, &a);
		}, [](void *o) { ibv_destroy_ah((ibv_ah *)o); });
	if (want(objs, "cq"))
		count("CQs", dev.max_cq, held["cq"] + 1, [] { return (void *)ibv_create_cq(ctx, 1, nullptr, nullptr, 0); },
		      [](void *o) { ibv_destroy_cq((ibv_cq *)o); });
	if (want(objs, "pd"))
		count("PDs", dev.max_pd, held["pd"] + 1, [] { return (void *)ibv_alloc_pd(ctx); },
		      [](void *o) { ibv_dealloc_pd((ibv_pd *)o); });
	if (want(objs, "qp"))
		count("QPs", dev.max_qp, held["qp"], [] { return (void *)make_qp({ 1, 1, 1, 1, 0 }); },
		      [](void *o) { ibv_destroy_qp((ibv_qp *)o); });
	if (want(objs, "mr"))
		count("MRs", dev.max_mr, held["mr"], [] { return (void *)ibv_reg_mr(pd, page, sizeof(page), IBV_ACCESS_LOCAL_WRITE); },
		      [](void *o) { ibv_dereg_mr((ibv_mr *)o); });

	ibv_qp *q = make_qp({ 16, 16, 1, 1, 0 });
	result(q, "device usable after the limits: a QP, CQ and MR again");
	if (q)
		ibv_destroy_qp(q);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	std::printf("1..%d\n", n_tests);
	return n_failed ? 1 : 0;
}
