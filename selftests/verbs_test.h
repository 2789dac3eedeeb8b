/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * verbs_test.h: what the verbs test programs (rc_verbs, ud_verbs,
 * xrc_verbs) share: the two sides of a test (a device each, or one device
 * twice), their options, the data pattern and its check, and waiting for
 * a completion with its exact status.
 *
 * Include after kselftest_harness.h, with BUF_SZ (bytes of each side's
 * registered buffer), WC_WAIT_MS (how long an expected completion may take)
 * and QUIET_MS ("no completion" means none in this long) defined.
 */
#ifndef SROCE_SELFTESTS_VERBS_TEST_H
#define SROCE_SELFTESTS_VERBS_TEST_H

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if !defined(BUF_SZ) || !defined(WC_WAIT_MS) || !defined(QUIET_MS)
#error "define BUF_SZ, WC_WAIT_MS and QUIET_MS before including verbs_test.h"
#endif

/* -d DEV -g GIDX [-D DEV2 -G GIDX2]: side A's device, side B's (or A's). */
static const char *opt_dev[2] = { "sroce0", NULL };
static int opt_gidx[2] = { 1, -1 };

/* One end of a test: a device context with a PD, a CQ and a buffer. */
struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *buf;
	struct ibv_mr *mr;
	struct ibv_mr *mr2;	/* memory window tests: an MR with MW_BIND */
	struct ibv_mw *mw;
	union ibv_gid gid;
	int gidx;
	struct ibv_device_attr dev;
	struct ibv_port_attr port;
	struct ibv_qp_cap cap;	/* what create_qp granted */
};

/* Takes one of the device options; false if @opt is not one of them. */
static inline bool device_opt(int opt, const char *arg)
{
	switch (opt) {
	case 'd': opt_dev[0] = arg; return true;
	case 'g': opt_gidx[0] = atoi(arg); return true;
	case 'D': opt_dev[1] = arg; return true;
	case 'G': opt_gidx[1] = atoi(arg); return true;
	}
	return false;
}

/* After the options: side B defaults to A's GID index. */
static inline void device_opts_done(void)
{
	if (opt_dev[1] && opt_gidx[1] < 0)
		opt_gidx[1] = opt_gidx[0];
}

static inline struct ibv_device *find_device(const char *name)
{
	static struct ibv_device **list;
	int i;

	if (!list)
		list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			return list[i];
	return NULL;
}

/* A pattern no two offsets of a 64 KiB span share (and no seed repeats). */
static inline void pattern(uint8_t *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 131 + (i >> 8) * 7);
}

/* Offset of the first differing byte, or -1 if equal. */
static inline long first_diff(const uint8_t *a, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a[i] != b[i])
			return (long)i;
	return -1;
}

static inline uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* One completion from @cq within @ms: 1, or 0 on timeout, <0 on error. */
static inline int poll_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	uint64_t end = now_ms() + ms;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		if (now_ms() > end)
			return 0;
		usleep(50);
	}
}

/* Poll one completion of CQ: it must be WR_ID with STATUS. */
#define EXPECT_WC(cq, wc, want_id, want_status) do { \
	int __n = poll_wc((cq), &(wc), WC_WAIT_MS); \
	ASSERT_EQ(1, __n) TH_LOG("%s: no completion in %d ms (expected wr_id %llu %s)", \
				 #cq, WC_WAIT_MS, (unsigned long long)(want_id), \
				 ibv_wc_status_str(want_status)); \
	EXPECT_EQ((want_status), (wc).status) \
		TH_LOG("%s wr_id %llu: expected status %s, got %s (vendor_err 0x%x)", #cq, \
		       (unsigned long long)(wc).wr_id, ibv_wc_status_str(want_status), \
		       ibv_wc_status_str((wc).status), (wc).vendor_err); \
	EXPECT_EQ((uint64_t)(want_id), (wc).wr_id) \
		TH_LOG("%s: expected wr_id %llu, got %llu (%s)", #cq, \
		       (unsigned long long)(want_id), (unsigned long long)(wc).wr_id, \
		       ibv_wc_status_str((wc).status)); \
} while (0)

/* CQ has no completion (waits QUIET_MS). */
#define EXPECT_NO_WC(cq) do { \
	struct ibv_wc __wc; \
	int __n = poll_wc((cq), &__wc, QUIET_MS); \
	EXPECT_EQ(0, __n) TH_LOG("%s: unexpected completion wr_id %llu status %s opcode %d", \
				 #cq, (unsigned long long)__wc.wr_id, \
				 ibv_wc_status_str(__wc.status), __wc.opcode); \
} while (0)

/*
 * Opens device @name for @s: port 1 ACTIVE, GID @gidx, a PD, a 256-entry CQ
 * and a zeroed BUF_SZ buffer registered with @access.
 */
static inline void side_open(struct __test_metadata *_metadata, struct side *s,
			     const char *name, int gidx, int access)
{
	struct ibv_device *dev = find_device(name);

	ASSERT_NE(NULL, dev) TH_LOG("device %s not found", name);
	s->ctx = ibv_open_device(dev);
	ASSERT_NE(NULL, s->ctx) TH_LOG("ibv_open_device(%s): %s", name, strerror(errno));
	ASSERT_EQ(0, ibv_query_device(s->ctx, &s->dev));
	ASSERT_EQ(0, ibv_query_port(s->ctx, 1, &s->port));
	ASSERT_EQ(IBV_PORT_ACTIVE, s->port.state) TH_LOG("%s port not ACTIVE", name);
	s->gidx = gidx;
	ASSERT_EQ(0, ibv_query_gid(s->ctx, 1, gidx, &s->gid)) TH_LOG("%s GID %d", name, gidx);
	s->pd = ibv_alloc_pd(s->ctx);
	ASSERT_NE(NULL, s->pd);
	s->cq = ibv_create_cq(s->ctx, 256, NULL, NULL, 0);
	ASSERT_NE(NULL, s->cq) TH_LOG("ibv_create_cq: %s", strerror(errno));
	s->buf = aligned_alloc(4096, BUF_SZ);
	ASSERT_NE(NULL, s->buf);
	memset(s->buf, 0, BUF_SZ);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_SZ, access);
	ASSERT_NE(NULL, s->mr) TH_LOG("ibv_reg_mr %u bytes: %s", (unsigned int)BUF_SZ,
				      strerror(errno));
}

/* Side A on the first device, side B on the second (or the first again). */
static inline void sides_open(struct __test_metadata *_metadata,
			      struct side *a, struct side *b, int access)
{
	side_open(_metadata, a, opt_dev[0], opt_gidx[0], access);
	side_open(_metadata, b, opt_dev[1] ? opt_dev[1] : opt_dev[0],
		  opt_dev[1] ? opt_gidx[1] : opt_gidx[0], access);
}

/* Undoes side_open() and whatever a test left in @s, users before owners. */
static inline void side_close(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mw)
		ibv_dealloc_mw(s->mw);
	if (s->mr2)
		ibv_dereg_mr(s->mr2);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	if (s->pd)
		ibv_dealloc_pd(s->pd);
	if (s->ctx)
		ibv_close_device(s->ctx);
	free(s->buf);
}

/*
 * A hw counter of S's device (sroce's names), or -1 where it has none.
 * sysfs shows a port's hw_counters only in the initial network namespace
 * (the RDMA core gives other namespaces compat devices without them), so
 * elsewhere ask rdma's netlink, which every namespace may use in the
 * shared netns mode: "link DEV/1 name value name value ...".
 */
static inline long long hw_counter(struct side *s, const char *name)
{
	const char *dev = ibv_get_device_name(s->ctx->device);
	char path[256], out[8192], *at;
	size_t n, len = strlen(name);
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 dev, name);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -1;
		fclose(f);
		return v;
	}
	snprintf(path, sizeof(path), "rdma statistic show link %s/1 2>/dev/null", dev);
	f = popen(path, "r");
	if (!f)
		return -1;
	n = fread(out, 1, sizeof(out) - 1, f);
	pclose(f);
	out[n] = 0;
	for (at = strstr(out, name); at; at = strstr(at + 1, name))
		if (at > out && at[-1] == ' ' && at[len] == ' ' &&
		    sscanf(at + len, "%lld", &v) == 1)
			return v;
	return -1;
}

#endif /* SROCE_SELFTESTS_VERBS_TEST_H */
