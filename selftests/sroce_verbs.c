// SPDX-License-Identifier: GPL-2.0-only
/*
 * sroce_verbs: userspace verbs selftest of one sroce device through its
 * provider (libibverbs, RDMAV_DRIVERS or the installed provider).
 *
 *   sroce_verbs [harness options]   run the tests (KTAP output)
 *   sroce_verbs --hold DEV          open DEV, allocate a PD and an MR, open
 *                                   a doorbell file and ring it for a QP in
 *                                   RTS, print "ready", then wait for the
 *                                   device to go away: exits 0 on
 *                                   IBV_EVENT_DEVICE_FATAL if the doorbell
 *                                   file then answers EIO, 3 on another
 *                                   error; SIGALRM after 60 s.
 *   sroce_verbs --hold DEV --linger  the same, but after the EIO it keeps
 *                                   the device open and prints
 *                                   "lingering"; on SIGUSR1 it calls
 *                                   ibv_close_device(), prints "closed"
 *                                   and waits for SIGTERM.
 *
 * Environment for the tests:
 *   SROCE_DEV          device name (default sroce0)
 *   SROCE_EXPECT_MTU   expected active MTU in bytes (default 1024)
 *   SROCE_EXPECT_IP4   an IPv4 address of the netdev: its GID must be listed
 *   SROCE_EXPECT_IP6   an IPv6 address of the netdev: its GID must be listed
 */
#include <arpa/inet.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "doorbell_test.h"
#include "sroce-abi.h"

#include "kselftest_harness.h"

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static struct ibv_device **dev_list;

/* Find a device by name; NULL if absent.  Keeps the list for the process. */
static struct ibv_device *find_device(const char *name)
{
	int i, n;

	if (!dev_list)
		dev_list = ibv_get_device_list(&n);
	if (!dev_list)
		return NULL;
	for (i = 0; dev_list[i]; i++)
		if (!strcmp(ibv_get_device_name(dev_list[i]), name))
			return dev_list[i];
	return NULL;
}

static enum ibv_mtu mtu_enum(int bytes)
{
	switch (bytes) {
	case 256: return IBV_MTU_256;
	case 512: return IBV_MTU_512;
	case 1024: return IBV_MTU_1024;
	case 2048: return IBV_MTU_2048;
	case 4096: return IBV_MTU_4096;
	}
	return 0;
}

/* Index of @gid in the port's table whose type is RoCE v2, or -1. */
static int find_gid(struct ibv_context *ctx, int tbl_len, const union ibv_gid *gid)
{
	struct ibv_gid_entry e;
	int i;

	for (i = 0; i < tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			continue;
		if (!memcmp(&e.gid, gid, sizeof(*gid)) && e.gid_type == IBV_GID_TYPE_ROCE_V2)
			return i;
	}
	return -1;
}

TEST(device_listed)
{
	const char *name = env_or("SROCE_DEV", "sroce0");
	struct ibv_device *dev = find_device(name);

	ASSERT_NE(NULL, dev) TH_LOG("%s not in ibv_get_device_list", name);
	EXPECT_EQ(IBV_NODE_CA, dev->node_type);
	EXPECT_EQ(IBV_TRANSPORT_IB, dev->transport_type);
}

TEST(open_unknown_device_fails)
{
	EXPECT_EQ(NULL, find_device("sroce_no_such_device"));
}

FIXTURE(dev) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_port_attr port;
};

FIXTURE_SETUP(dev)
{
	const char *name = env_or("SROCE_DEV", "sroce0");
	struct ibv_device *dev = find_device(name);

	ASSERT_NE(NULL, dev) TH_LOG("%s not found", name);
	self->ctx = ibv_open_device(dev);
	ASSERT_NE(NULL, self->ctx) TH_LOG("ibv_open_device(%s): %s", name, strerror(errno));
	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &self->port));
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd) TH_LOG("ibv_alloc_pd: %s", strerror(errno));
}

FIXTURE_TEARDOWN(dev)
{
	if (self->pd)
		EXPECT_EQ(0, ibv_dealloc_pd(self->pd));
	if (self->ctx)
		EXPECT_EQ(0, ibv_close_device(self->ctx));
}

TEST_F(dev, query_device)
{
	struct ibv_device_attr a;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &a));
	EXPECT_EQ(1, a.phys_port_cnt);
	EXPECT_EQ(ibv_get_device_guid(self->ctx->device), a.node_guid);
	EXPECT_NE(0, a.node_guid);
	EXPECT_LT(0, a.max_qp);
	EXPECT_LT(0, a.max_qp_wr);
	EXPECT_LT(0, a.max_cq);
	EXPECT_LT(0, a.max_cqe);
	EXPECT_LT(0, a.max_mr);
	EXPECT_LT(0, a.max_pd);
	EXPECT_LT(0, a.max_sge);
	EXPECT_LE(4096ULL, a.max_mr_size);
	TH_LOG("fw %s, vendor 0x%x part %u, max_qp %d max_cqe %d max_mr %d",
	       a.fw_ver, a.vendor_id, a.vendor_part_id, a.max_qp, a.max_cqe, a.max_mr);
}

TEST_F(dev, query_port)
{
	int mtu = atoi(env_or("SROCE_EXPECT_MTU", "1024"));
	struct ibv_port_attr *p = &self->port;

	EXPECT_EQ(IBV_PORT_ACTIVE, p->state);
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, p->link_layer);
	EXPECT_EQ(mtu_enum(mtu), p->active_mtu) TH_LOG("active_mtu %d, expected %d bytes",
						      p->active_mtu, mtu);
	EXPECT_LE(p->active_mtu, p->max_mtu);
	EXPECT_LT(1, p->gid_tbl_len);
	EXPECT_LT(0, p->max_msg_sz);
	EXPECT_EQ(5, p->phys_state) TH_LOG("phys_state %d, expected 5 (LinkUp)", p->phys_state);
}

TEST_F(dev, gid_default_link_local)
{
	struct ibv_gid_entry e;

	ASSERT_EQ(0, ibv_query_gid_ex(self->ctx, 1, 0, &e, 0));
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, e.gid_type);
	EXPECT_EQ(0xfe, e.gid.raw[0]);
	EXPECT_EQ(0x80, e.gid.raw[1]);
}

TEST_F(dev, gid_ipv4_mapped)
{
	const char *ip = getenv("SROCE_EXPECT_IP4");
	union ibv_gid gid = {};
	int idx;

	if (!ip)
		SKIP(return, "SROCE_EXPECT_IP4 not set");
	gid.raw[10] = 0xff;
	gid.raw[11] = 0xff;
	ASSERT_EQ(1, inet_pton(AF_INET, ip, &gid.raw[12]));
	idx = find_gid(self->ctx, self->port.gid_tbl_len, &gid);
	EXPECT_LE(1, idx) TH_LOG("no RoCE v2 GID for %s", ip);
}

TEST_F(dev, gid_ipv6)
{
	const char *ip = getenv("SROCE_EXPECT_IP6");
	union ibv_gid gid;
	int idx;

	if (!ip)
		SKIP(return, "SROCE_EXPECT_IP6 not set");
	ASSERT_EQ(1, inet_pton(AF_INET6, ip, gid.raw));
	idx = find_gid(self->ctx, self->port.gid_tbl_len, &gid);
	EXPECT_LE(1, idx) TH_LOG("no RoCE v2 GID for %s", ip);
}

TEST_F(dev, pd_alloc_many)
{
	struct ibv_pd *pd[16];
	int i;

	for (i = 0; i < 16; i++) {
		pd[i] = ibv_alloc_pd(self->ctx);
		ASSERT_NE(NULL, pd[i]) TH_LOG("PD %d: %s", i, strerror(errno));
	}
	for (i = 0; i < 16; i++)
		EXPECT_EQ(0, ibv_dealloc_pd(pd[i]));
}

TEST_F(dev, mr_reg_dereg)
{
	const size_t len = 4 * 4096;
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr, *mr2;
	void *buf;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 0xa5, len);
	mr = ibv_reg_mr(self->pd, buf, len, access);
	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	EXPECT_EQ(buf, mr->addr);
	EXPECT_EQ(len, mr->length);
	EXPECT_EQ(self->pd, mr->pd);
	/* An unaligned, odd-sized region of the same buffer, read-only. */
	mr2 = ibv_reg_mr(self->pd, (char *)buf + 1, 100, 0);
	ASSERT_NE(NULL, mr2) TH_LOG("ibv_reg_mr unaligned: %s", strerror(errno));
	EXPECT_EQ(100, mr2->length);
	EXPECT_NE(mr->lkey, mr2->lkey);
	EXPECT_NE(mr->rkey, mr2->rkey);
	EXPECT_EQ(0, ibv_dereg_mr(mr2));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(buf, len);
}

TEST_F(dev, mr_remote_write_needs_local_write)
{
	static char buf[4096];
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(self->pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE);
	EXPECT_EQ(NULL, mr);
	EXPECT_EQ(EINVAL, errno) TH_LOG("errno %d (%s), expected EINVAL", errno, strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

TEST_F(dev, mr_unmapped_address)
{
	struct ibv_mr *mr;
	void *hole;

	/* Map and unmap to get an address range that is certainly unmapped. */
	hole = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, hole);
	munmap(hole, 8192);
	errno = 0;
	mr = ibv_reg_mr(self->pd, hole, 8192, IBV_ACCESS_LOCAL_WRITE);
	EXPECT_EQ(NULL, mr);
	EXPECT_EQ(EFAULT, errno) TH_LOG("errno %d (%s), expected EFAULT", errno, strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

TEST_F(dev, dealloc_pd_with_mr_is_busy)
{
	static char buf[4096];
	struct ibv_mr *mr;

	mr = ibv_reg_mr(self->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr) TH_LOG("ibv_reg_mr: %s", strerror(errno));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(dev, close_with_live_objects)
{
	static char buf[4096];
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	/* A second context whose objects are left for close to clean up. */
	ctx = ibv_open_device(self->ctx->device);
	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	ASSERT_NE(NULL, ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(0, ibv_close_device(ctx));
}

static sigset_t usr1;	/* blocked from the start, for linger()'s sigwait */

/*
 * A disassociated process that has not closed the device: its provider's
 * doorbell file is still open, and keeps the module in (link.sh checks
 * that rmmod is refused until ibv_close_device()).
 */
static int linger(struct ibv_context *ctx)
{
	int sig;

	alarm(0);
	printf("lingering\n");
	fflush(stdout);
	if (sigwait(&usr1, &sig))
		return 3;
	if (ibv_close_device(ctx)) {
		perror("hold: ibv_close_device after the removal");
		return 3;
	}
	printf("closed\n");
	fflush(stdout);
	for (;;)
		pause();
}

static int hold(const char *name, bool lingers)
{
	static char buf[4096];
	struct ibv_async_event ev;
	struct ibv_device *dev = find_device(name);
	struct sroce_doorbell db;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int db_fd;

	if (!dev) {
		fprintf(stderr, "hold: no device %s\n", name);
		return 3;
	}
	ctx = ibv_open_device(dev);
	if (!ctx) {
		perror("hold: ibv_open_device");
		return 3;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd || !ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE)) {
		perror("hold: alloc_pd/reg_mr");
		return 3;
	}
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	qp = cq ? ud_qp_rts(pd, cq) : NULL;
	if (!qp) {
		perror("hold: a UD QP in RTS");
		return 3;
	}
	db_fd = open_doorbell_file(ctx);
	db.qpn = qp->qp_num;
	if (db_fd < 0 || write(db_fd, &db, sizeof(db)) != sizeof(db)) {
		perror("hold: open and ring a doorbell file");
		return 3;
	}
	printf("ready\n");
	fflush(stdout);
	alarm(60);
	for (;;) {
		if (ibv_get_async_event(ctx, &ev)) {
			perror("hold: ibv_get_async_event");
			return 3;
		}
		ibv_ack_async_event(&ev);
		if (ev.event_type == IBV_EVENT_DEVICE_FATAL) {
			printf("device fatal\n");
			/* The device is gone; the file is still open. */
			if (write(db_fd, &db, sizeof(db)) != -1 || errno != EIO) {
				perror("hold: doorbell file after the removal (want EIO)");
				return 3;
			}
			printf("doorbell file: EIO\n");
			close(db_fd);
			if (lingers)
				return linger(ctx);
			ibv_close_device(ctx);
			return 0;
		}
		printf("event %s\n", ibv_event_type_str(ev.event_type));
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	if ((argc == 3 || (argc == 4 && !strcmp(argv[3], "--linger"))) &&
	    !strcmp(argv[1], "--hold")) {
		sigemptyset(&usr1);
		sigaddset(&usr1, SIGUSR1);
		sigprocmask(SIG_BLOCK, &usr1, NULL);
		signal(SIGALRM, SIG_DFL);
		return hold(argv[2], argc == 4);
	}
	return test_harness_run(argc, argv);
}
