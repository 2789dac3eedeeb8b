// SPDX-License-Identifier: GPL-2.0-only
/*
 * rds_test: RDS over RDMA (net/rds, module rds_rdma), a kernel ULP that
 * runs its own rdma_cm connections, RC QPs, fast registration (FRWR, with
 * zero-based virtual addresses) and RDMA READ and WRITE on behalf of
 * AF_RDS sockets, checked byte for byte and status for status.
 *
 *   rds_test -a IP_A -b IP_B [-n MESSAGES] [-T SECONDS] [-l]
 *
 * Two RDS sockets in this process, bound to IP_A and IP_B (addresses of
 * two sroce devices, or two addresses of one), with the transport forced
 * to RDS/IB (SO_RDS_TRANSPORT) so that RDS cannot fall back to TCP or its
 * loopback transport.  Checked:
 *   - messages of 1 B to 1 MiB (RDS's largest) arrive whole, from the
 *     right address and port, both ways;
 *   - a stream of MESSAGES messages of 1 B to 16 KiB each way at once
 *     arrives complete and in order (RDS is reliable and ordered per
 *     connection);
 *   - an RDMA WRITE into an MR the peer registered (RDS_CMSG_RDMA_MAP) lands
 *     before the message that carries it, and completes with
 *     RDS_RDMA_SUCCESS and the caller's token; an RDMA READ brings the
 *     peer's bytes back;
 *   - an RDMA with a wrong R_Key, or past the end of the peer's MR, fails
 *     with RDS_RDMA_REMOTE_ERROR (the responder's NAK: remote access
 *     error), the peer's memory is untouched, and RDS's reconnection then
 *     carries messages again.  With -l (the path drops packets) these two
 *     are skipped: the responder's QP is in the error state once it sent
 *     its NAK, so if the NAK is lost the requester's resends go unanswered
 *     until it runs out of retries (RDS_RDMA_OTHER_ERROR), as on any RC
 *     transport.  Which status comes back depends on the loss, not sroce.
 * RDS's atomics are always masked atomics (IB_WR_MASKED_ATOMIC_*), which
 * sroce does not implement (neither does rdma_rxe): not tested.
 * Each test is one forked child (kselftest harness); the output is KTAP.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/rds.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define MAX_MSG		(1u << 20)	/* RDS_MAX_MSG_SIZE */
#define STREAM_MAX	16384
#define MR_SZ		(256u * 1024)
#define SOCK_BUF	(8 << 20)

static struct in_addr opt_ip[2];
static int opt_msgs = 2000;
static int opt_timeout = 60;	/* seconds a receive may wait */
static bool opt_lossy;		/* -l: the path drops packets */

/* An R_Key error's status is the NAK's only if it arrives: see the top. */
static const char lossy_skip[] =
	"the path drops packets: a lost NAK makes the status retry exceeded, not remote error";

/* Byte @i of message @seq: depends on both, so a misplaced byte shows. */
static inline uint8_t pattern(uint32_t seq, size_t i)
{
	return (uint8_t)(seq * 131 + i * 7 + (i >> 8));
}

static void fill(uint8_t *p, size_t len, uint32_t seq)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(seq, i);
}

/* First i in [@from, @to) where @p[i] is not byte i of @seq, or -1. */
static long mismatch_at(const uint8_t *p, size_t from, size_t to, uint32_t seq)
{
	for (size_t i = from; i < to; i++)
		if (p[i] != pattern(seq, i))
			return (long)i;
	return -1;
}

static long mismatch(const uint8_t *p, size_t len, uint32_t seq)
{
	return mismatch_at(p, 0, len, seq);
}

/* The first of @len bytes at @p that is not @v, or -1. */
static long byte_other_than(const uint8_t *p, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

static int rds_socket(struct in_addr ip, uint16_t *port)
{
	int fd, trans = RDS_TRANS_IB, buf = SOCK_BUF;
	struct timeval tv = { .tv_sec = opt_timeout };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = ip };

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0)
		return -1;
	/* Before bind: RDS/IB or nothing, no quiet fall-back to TCP. */
	if (setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &trans, sizeof(trans)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)))
		goto fail;
	/* A port of this process's own: tests run one after another. */
	for (int tries = 0; tries < 100; tries++) {
		*port = (uint16_t)(20000 + (getpid() * 7 + tries * 131) % 40000);
		sin.sin_port = htons(*port);
		if (!bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
			return fd;
		if (errno != EADDRINUSE)
			break;
	}
fail:
	close(fd);
	return -1;
}

FIXTURE(rds) {
	int fd[2];
	uint16_t port[2];
	struct sockaddr_in addr[2];
	uint8_t *sbuf, *rbuf;
};

FIXTURE_SETUP(rds)
{
	for (int i = 0; i < 2; i++) {
		self->fd[i] = rds_socket(opt_ip[i], &self->port[i]);
		ASSERT_LE(0, self->fd[i]) {
			TH_LOG("RDS/IB socket on %s: %s (is rds_rdma loaded, is the address an RDMA device's?)",
			       inet_ntoa(opt_ip[i]), strerror(errno));
		}
		self->addr[i] = (struct sockaddr_in){
			.sin_family = AF_INET,
			.sin_addr = opt_ip[i],
			.sin_port = htons(self->port[i]),
		};
	}
	self->sbuf = malloc(MAX_MSG);
	self->rbuf = malloc(MAX_MSG + 1);
	ASSERT_NE(NULL, self->sbuf);
	ASSERT_NE(NULL, self->rbuf);
}

FIXTURE_TEARDOWN(rds)
{
	close(self->fd[0]);
	close(self->fd[1]);
	free(self->sbuf);
	free(self->rbuf);
}

/* sendmsg of @len bytes from side @from to the other side, with @cmsg. */
static ssize_t send_to(FIXTURE_DATA(rds) *self, int from, const void *buf,
		       size_t len, void *cmsg, size_t cmsg_len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = &self->addr[!from],
		.msg_namelen = sizeof(self->addr[0]),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cmsg,
		.msg_controllen = cmsg_len,
	};

	return sendmsg(self->fd[from], &msg, 0);
}

/*
 * One message for side @to, into @buf (@cap bytes); its source in @src.
 * Returns its length (flags MSG_TRUNC in @trunc), or -1 with errno.
 */
static ssize_t recv_on(FIXTURE_DATA(rds) *self, int to, void *buf, size_t cap,
		       struct sockaddr_in *src, bool *trunc)
{
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	char ctl[256];
	struct msghdr msg = {
		.msg_name = src,
		.msg_namelen = sizeof(*src),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl,
		.msg_controllen = sizeof(ctl),
	};
	ssize_t n = recvmsg(self->fd[to], &msg, 0);

	*trunc = msg.msg_flags & MSG_TRUNC;
	return n;
}

/*
 * The RDMA completion notification RDS queues on side @on for a
 * NOTIFY_ME operation: its status, or -1 if none came (with @token set).
 */
static int wait_notify(FIXTURE_DATA(rds) *self, int on, uint64_t *token)
{
	char ctl[CMSG_SPACE(sizeof(struct rds_rdma_notify)) + 64];
	struct msghdr msg = { .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct rds_rdma_notify note;
	struct cmsghdr *c;

	if (recvmsg(self->fd[on], &msg, 0) < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_RDS || c->cmsg_type != RDS_CMSG_RDMA_STATUS)
			continue;
		memcpy(&note, CMSG_DATA(c), sizeof(note));
		*token = note.user_token;
		return note.status;
	}
	errno = ENOMSG;
	return -1;
}

/* A message of @len bytes (pattern @seq) from @from arrives whole. */
static void one_message(struct __test_metadata *_metadata,
			FIXTURE_DATA(rds) *self, int from, size_t len, uint32_t seq)
{
	struct sockaddr_in src;
	bool trunc;
	ssize_t n;
	long bad;

	fill(self->sbuf, len, seq);
	ASSERT_EQ((ssize_t)len, send_to(self, from, self->sbuf, len, NULL, 0)) {
		TH_LOG("sendmsg of %zu bytes: %s", len, strerror(errno));
	}
	n = recv_on(self, !from, self->rbuf, MAX_MSG + 1, &src, &trunc);
	ASSERT_EQ((ssize_t)len, n) {
		TH_LOG("recvmsg for %zu bytes: %zd (%s)", len, n,
		       n < 0 ? strerror(errno) : "wrong length");
	}
	EXPECT_FALSE(trunc);
	EXPECT_EQ(self->addr[from].sin_addr.s_addr, src.sin_addr.s_addr);
	EXPECT_EQ(self->addr[from].sin_port, src.sin_port);
	bad = mismatch(self->rbuf, len, seq);
	EXPECT_EQ(-1, bad) {
		TH_LOG("%zu-byte message differs at byte %ld", len, bad);
	}
}

/*
 * Side @on registers @len bytes at @buf for its peer and tells it so, as
 * RDS applications do: a message with an RDS_CMSG_RDMA_MAP control
 * message registers the memory (fast registration on the connection's QP;
 * RDS_GET_MR, which has no connection, cannot use FRWR) and carries the
 * cookie in its header, which the peer receives as RDS_CMSG_RDMA_DEST.
 * Returns 0 with the cookie both sides saw, or -1 (errno, @why).
 */
static int map_for_peer(FIXTURE_DATA(rds) *self, int on, void *buf, size_t len,
			rds_rdma_cookie_t *cookie, rds_rdma_cookie_t *peer_cookie,
			const char **why)
{
	rds_rdma_cookie_t mine = 0;
	struct rds_get_mr_args args = {
		.vec = { .addr = (uintptr_t)buf, .bytes = len },
		.cookie_addr = (uintptr_t)&mine,
	};
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_get_mr_args))];
		struct cmsghdr align;
	} u = { 0 };
	char ctl[256], note[16];
	struct iovec iov = { .iov_base = note, .iov_len = sizeof(note) };
	struct sockaddr_in src;
	struct msghdr msg = {
		.msg_name = &src,
		.msg_namelen = sizeof(src),
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = ctl,
		.msg_controllen = sizeof(ctl),
	};
	struct cmsghdr *c = &u.align;

	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_MAP;
	c->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(c), &args, sizeof(args));
	if (send_to(self, on, "mr", 3, u.buf, sizeof(u.buf)) != 3) {
		*why = "sendmsg with RDS_CMSG_RDMA_MAP";
		return -1;
	}
	if (recvmsg(self->fd[!on], &msg, 0) != 3) {
		*why = "the peer's recvmsg of the map message";
		return -1;
	}
	*peer_cookie = 0;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_RDS && c->cmsg_type == RDS_CMSG_RDMA_DEST)
			memcpy(peer_cookie, CMSG_DATA(c), sizeof(*peer_cookie));
	*cookie = mine;
	if (!*peer_cookie) {
		errno = ENOMSG;
		*why = "no RDS_CMSG_RDMA_DEST with the map message";
		return -1;
	}
	return 0;
}

/*
 * As map_for_peer() for side 1 (B), for side 0 (A) to use: the cookie A
 * received, after checking it is the one B was given.
 */
static rds_rdma_cookie_t b_maps(struct __test_metadata *_metadata,
				FIXTURE_DATA(rds) *self, void *buf, size_t len)
{
	rds_rdma_cookie_t cookie = 0, peer = 0;
	const char *why = "";

	/* The connection must be up: FRWR posts on its QP. */
	one_message(_metadata, self, 0, 64, 3);
	one_message(_metadata, self, 1, 64, 4);
	EXPECT_EQ(0, map_for_peer(self, 1, buf, len, &cookie, &peer, &why)) {
		TH_LOG("%s: %s", why, strerror(errno));
	}
	EXPECT_EQ(cookie, peer);
	return peer;
}

/*
 * Side @from sends @note (a short message) to the other side with an RDMA
 * operation on the other side's MR @cookie at @remote_off: a WRITE of
 * @len bytes from @local if @write, else a READ into @local.  Returns
 * sendmsg()'s result.
 */
static ssize_t send_rdma(FIXTURE_DATA(rds) *self, int from, bool write,
			 rds_rdma_cookie_t cookie, uint64_t remote_off,
			 void *local, size_t len, uint64_t token, const char *note)
{
	struct rds_iovec local_vec = { .addr = (uintptr_t)local, .bytes = len };
	union {
		char buf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
		struct cmsghdr align;
	} u = { 0 };
	struct cmsghdr *c = &u.align;
	struct rds_rdma_args args = {
		.cookie = cookie,
		.remote_vec = { .addr = remote_off, .bytes = len },
		.local_vec_addr = (uintptr_t)&local_vec,
		.nr_local = 1,
		.flags = RDS_RDMA_NOTIFY_ME | (write ? RDS_RDMA_READWRITE : 0),
		.user_token = token,
	};

	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_ARGS;
	c->cmsg_len = CMSG_LEN(sizeof(args));
	memcpy(CMSG_DATA(c), &args, sizeof(args));
	return send_to(self, from, note, strlen(note) + 1, u.buf, sizeof(u.buf));
}

TEST_F_TIMEOUT(rds, message_sizes, 600)
{
	static const size_t sizes[] = {
		1, 63, 1000, 4095, 4096, 4097, 8192, 8193, 65536, 262143,
		MAX_MSG,
	};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		one_message(_metadata, self, 0, sizes[i], (uint32_t)i);
		one_message(_metadata, self, 1, sizes[i], (uint32_t)i + 100);
	}
}

/* A message RDS refuses: larger than RDS_MAX_MSG_SIZE. */
TEST_F(rds, message_too_large)
{
	uint8_t *big = malloc(MAX_MSG + 1);

	ASSERT_NE(NULL, big);
	EXPECT_EQ(-1, send_to(self, 0, big, MAX_MSG + 1, NULL, 0));
	EXPECT_EQ(EMSGSIZE, errno);
	free(big);
}

struct stream {
	FIXTURE_DATA(rds) *self;
	int from;
	uint8_t *buf;
	int errors;
	char why[160];
};

static size_t stream_len(uint32_t seq)
{
	return 1 + (seq * 7919u) % STREAM_MAX;
}

/* Sends opt_msgs messages: the sequence number in the first 4 bytes. */
static void *stream_send(void *arg)
{
	struct stream *st = arg;

	for (uint32_t seq = 0; seq < (uint32_t)opt_msgs; seq++) {
		size_t len = stream_len(seq);

		fill(st->buf, len, seq);
		if (len >= 4)
			memcpy(st->buf, &seq, 4);
		if (send_to(st->self, st->from, st->buf, len, NULL, 0) != (ssize_t)len) {
			snprintf(st->why, sizeof(st->why), "send %u: %s", seq, strerror(errno));
			st->errors++;
			break;
		}
	}
	return NULL;
}

/* Receives them: each once, in order, whole. */
static void *stream_recv(void *arg)
{
	struct stream *st = arg;
	struct sockaddr_in src;
	bool trunc;
	long bad;

	for (uint32_t seq = 0; seq < (uint32_t)opt_msgs; seq++) {
		size_t len = stream_len(seq);
		ssize_t n = recv_on(st->self, !st->from, st->buf, STREAM_MAX + 1, &src, &trunc);
		uint32_t got = seq;

		if (n < 0) {
			snprintf(st->why, sizeof(st->why), "receive %u: %s", seq, strerror(errno));
			st->errors++;
			break;
		}
		if (n >= 4)
			memcpy(&got, st->buf, 4);
		if ((size_t)n != len || got != seq || trunc) {
			snprintf(st->why, sizeof(st->why),
				 "message %u: %zd bytes, sequence %u (expected %zu, %u)",
				 seq, n, got, len, seq);
			st->errors++;
			break;
		}
		/* The first 4 bytes are the sequence number, checked above. */
		bad = mismatch_at(st->buf, len >= 4 ? 4 : 0, len, seq);
		if (bad >= 0) {
			snprintf(st->why, sizeof(st->why),
				 "message %u differs at byte %ld", seq, bad);
			st->errors++;
			break;
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(rds, stream_both_ways, 1800)
{
	struct stream st[4];
	pthread_t t[4];

	for (int i = 0; i < 4; i++) {
		st[i] = (struct stream){ .self = self, .from = i & 1 };
		st[i].buf = malloc(STREAM_MAX + 1);
		ASSERT_NE(NULL, st[i].buf);
	}
	/* 0, 1: senders from A and from B; 2, 3: their receivers. */
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, i < 2 ? stream_send : stream_recv, &st[i]));
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 4; i++) {
		EXPECT_EQ(0, st[i].errors) {
			TH_LOG("%s %s: %s", i & 1 ? "B->A" : "A->B",
			       i < 2 ? "sender" : "receiver", st[i].why);
		}
		free(st[i].buf);
	}
	TH_LOG("%d messages of 1 B to %d KiB each way", opt_msgs, STREAM_MAX / 1024);
}

/* B's MR for A's RDMA: page-aligned, so offset 0 of the cookie is byte 0. */
static uint8_t *mr_buf(void)
{
	void *p = NULL;

	return posix_memalign(&p, 4096, MR_SZ) ? NULL : p;
}

TEST_F_TIMEOUT(rds, rdma_write, 300)
{
	uint8_t *target = mr_buf(), *src = mr_buf();
	rds_rdma_cookie_t cookie = 0;
	struct sockaddr_in from;
	uint64_t token = 0;
	bool trunc;
	long bad;

	ASSERT_NE(NULL, target);
	ASSERT_NE(NULL, src);
	memset(target, 0xee, MR_SZ);
	cookie = b_maps(_metadata, self, target, MR_SZ);
	ASSERT_NE(0, cookie);
	fill(src, MR_SZ, 7);
	/* Whole region, then a piece at an odd offset. */
	ASSERT_LT(0, send_rdma(self, 0, true, cookie, 0, src, MR_SZ, 0x1111, "written")) {
		TH_LOG("sendmsg with RDMA WRITE: %s", strerror(errno));
	}
	ASSERT_LT(0, recv_on(self, 1, self->rbuf, MAX_MSG, &from, &trunc));
	EXPECT_STREQ("written", (char *)self->rbuf);
	/* The message follows the WRITE on the same QP: the data is there. */
	bad = mismatch(target, MR_SZ, 7);
	EXPECT_EQ(-1, bad) {
		TH_LOG("written region differs at byte %ld", bad);
	}
	EXPECT_EQ(RDS_RDMA_SUCCESS, wait_notify(self, 0, &token));
	EXPECT_EQ(0x1111, token);

	fill(src, 1000, 9);
	ASSERT_LT(0, send_rdma(self, 0, true, cookie, 5001, src, 1000, 0x2222, "again"));
	ASSERT_LT(0, recv_on(self, 1, self->rbuf, MAX_MSG, &from, &trunc));
	EXPECT_EQ(-1, mismatch(target + 5001, 1000, 9));
	/* and nothing around it */
	EXPECT_EQ(-1, mismatch_at(target, 0, 5001, 7));
	EXPECT_EQ(-1, mismatch_at(target, 6001, MR_SZ, 7));
	EXPECT_EQ(RDS_RDMA_SUCCESS, wait_notify(self, 0, &token));
	EXPECT_EQ(0x2222, token);
	free(target);
	free(src);
}

TEST_F_TIMEOUT(rds, rdma_read, 300)
{
	uint8_t *exposed = mr_buf(), *dst = mr_buf();
	rds_rdma_cookie_t cookie = 0;
	struct sockaddr_in from;
	uint64_t token = 0;
	bool trunc;
	long bad;

	ASSERT_NE(NULL, exposed);
	ASSERT_NE(NULL, dst);
	fill(exposed, MR_SZ, 11);
	memset(dst, 0, MR_SZ);
	cookie = b_maps(_metadata, self, exposed, MR_SZ);
	ASSERT_NE(0, cookie);
	ASSERT_LT(0, send_rdma(self, 0, false, cookie, 0, dst, MR_SZ, 0x3333, "read"));
	EXPECT_EQ(RDS_RDMA_SUCCESS, wait_notify(self, 0, &token));
	EXPECT_EQ(0x3333, token);
	bad = mismatch(dst, MR_SZ, 11);
	EXPECT_EQ(-1, bad) {
		TH_LOG("read region differs at byte %ld", bad);
	}
	ASSERT_LT(0, recv_on(self, 1, self->rbuf, MAX_MSG, &from, &trunc));
	EXPECT_STREQ("read", (char *)self->rbuf);
	free(exposed);
	free(dst);
}

/*
 * After a failed RDMA, RDS drops the connection (the QPs are in error) and
 * makes a new one once the old one is shut down; the shutdown waits until
 * every work request RDS posted has completed (sroce flushes them) and no
 * MR registered on the old connection is in use.  The sockets' MRs go
 * with the sockets: close both, open two new ones, and messages must get
 * through again, both ways.
 */
static void after_error(struct __test_metadata *_metadata,
			FIXTURE_DATA(rds) *self)
{
	for (int i = 0; i < 2; i++) {
		close(self->fd[i]);
		self->fd[i] = rds_socket(opt_ip[i], &self->port[i]);
		ASSERT_LE(0, self->fd[i]);
		self->addr[i].sin_port = htons(self->port[i]);
	}
	one_message(_metadata, self, 0, 3000, 41);
	one_message(_metadata, self, 1, 3000, 42);
}

TEST_F_TIMEOUT(rds, rdma_write_bad_rkey, 600)
{
	uint8_t *target, *src;
	rds_rdma_cookie_t cookie = 0;
	uint64_t token = 0;

	if (opt_lossy)
		SKIP(return, "%s", lossy_skip);

	target = mr_buf();
	src = mr_buf();
	ASSERT_NE(NULL, target);
	ASSERT_NE(NULL, src);
	memset(target, 0xee, MR_SZ);
	cookie = b_maps(_metadata, self, target, MR_SZ);
	ASSERT_NE(0, cookie);
	fill(src, 4096, 13);
	/* The cookie's low 32 bits are the R_Key: name another key. */
	ASSERT_LT(0, send_rdma(self, 0, true, cookie ^ 0x5a5a5a00u, 0, src, 4096,
			       0x4444, "never"));
	EXPECT_EQ(RDS_RDMA_REMOTE_ERROR, wait_notify(self, 0, &token));
	EXPECT_EQ(0x4444, token);
	/* -1: no byte of the MR changed. */
	EXPECT_EQ(-1, byte_other_than(target, MR_SZ, 0xee));
	after_error(_metadata, self);
	free(target);
	free(src);
}

TEST_F_TIMEOUT(rds, rdma_read_past_mr, 600)
{
	uint8_t *exposed, *dst;
	rds_rdma_cookie_t cookie = 0;
	uint64_t token = 0;

	if (opt_lossy)
		SKIP(return, "%s", lossy_skip);

	exposed = mr_buf();
	dst = mr_buf();
	ASSERT_NE(NULL, exposed);
	ASSERT_NE(NULL, dst);
	fill(exposed, MR_SZ, 17);
	memset(dst, 0, MR_SZ);
	/* Register the first half: the READ asks for 4 KiB past its end. */
	cookie = b_maps(_metadata, self, exposed, MR_SZ / 2);
	ASSERT_NE(0, cookie);
	ASSERT_LT(0, send_rdma(self, 0, false, cookie, MR_SZ / 2 - 4096, dst, 8192,
			       0x5555, "never"));
	EXPECT_EQ(RDS_RDMA_REMOTE_ERROR, wait_notify(self, 0, &token));
	EXPECT_EQ(0x5555, token);
	/*
	 * The responder checks the whole range before it answers: not even
	 * the 4 KiB inside the MR came back (-1: no byte of the READ's
	 * target was written).
	 */
	EXPECT_EQ(-1, byte_other_than(dst, 8192, 0));
	after_error(_metadata, self);
	free(exposed);
	free(dst);
}

/* The connection A->B is an RDS/IB one (the kernel's own list of them). */
TEST_F(rds, connection_is_rdma)
{
	struct rds_info_rdma_connection *c;
	char src[INET_ADDRSTRLEN], dst[INET_ADDRSTRLEN];
	socklen_t len = 0;
	bool found = false;
	char *buf;
	int each;

	one_message(_metadata, self, 0, 100, 1);
	/* A zero length asks for the length: ENOSPC and the length needed. */
	each = getsockopt(self->fd[0], SOL_RDS, RDS_INFO_IB_CONNECTIONS, NULL, &len);
	ASSERT_EQ(-1, each);
	ASSERT_EQ(ENOSPC, errno);
	ASSERT_LT(0, len);
	len *= 4;	/* room for connections made meanwhile */
	buf = malloc(len);
	ASSERT_NE(NULL, buf);
	each = getsockopt(self->fd[0], SOL_RDS, RDS_INFO_IB_CONNECTIONS, buf, &len);
	ASSERT_EQ((int)sizeof(*c), each);
	for (c = (void *)buf; (char *)(c + 1) <= buf + len; c++) {
		inet_ntop(AF_INET, &c->src_addr, src, sizeof(src));
		inet_ntop(AF_INET, &c->dst_addr, dst, sizeof(dst));
		TH_LOG("RDS/IB connection %s -> %s, %u send WRs, %u receive WRs",
		       src, dst, c->max_send_wr, c->max_recv_wr);
		if (c->src_addr == opt_ip[0].s_addr && c->dst_addr == opt_ip[1].s_addr)
			found = true;
	}
	EXPECT_TRUE(found);
	free(buf);
}

int main(int argc, char **argv)
{
	int opt, have = 0;

	while ((opt = getopt(argc, argv, "a:b:n:T:lh")) != -1) {
		switch (opt) {
		case 'a':
		case 'b':
			if (inet_pton(AF_INET, optarg, &opt_ip[opt - 'a']) != 1) {
				fprintf(stderr, "rds_test: '%s' is not an IPv4 address\n", optarg);
				return 2;
			}
			have |= 1 << (opt - 'a');
			break;
		case 'n':
			opt_msgs = atoi(optarg);
			break;
		case 'T':
			opt_timeout = atoi(optarg);
			break;
		case 'l':
			opt_lossy = true;
			break;

		default:
			fprintf(stderr, "usage: %s -a IP_A -b IP_B [-n MESSAGES] [-T SECONDS] [-l]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (have != 3 || opt_msgs <= 0 || opt_timeout <= 0) {
		fprintf(stderr, "rds_test: -a IP_A and -b IP_B are required; -n and -T are positive\n");
		return 2;
	}
	return test_harness_run(argc, argv);
}
