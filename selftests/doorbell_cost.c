// SPDX-License-Identifier: GPL-2.0-only
/*
 * doorbell_cost - what one send doorbell costs on a device, beside the
 * cheapest system calls (scripts/doorbell-cost runs it in a guest).
 *
 *   doorbell_cost DEVICE [CALLS [ROUNDS]]
 *
 * On a UD QP in RTS with an empty send queue, so that only the doorbell is
 * timed and nothing is sent, it times CALLS calls (default 200000) of:
 *
 *   uverbs    a POST_SEND command without work requests written to the
 *             command fd: the doorbell of sroce's provider on kernels
 *             without the doorbell file, and what rdma_rxe's post_send
 *             writes (with its work requests) on every post
 *   file      a write() of the QPN to an sroce doorbell file (sroce-abi.h;
 *             "-" on a device without one)
 *   devnull   a write() of as many bytes to /dev/null: a system call that
 *             does nothing with what it is given
 *   getppid   the cheapest system call
 *
 * ROUNDS times (default 5), and prints one line per round and kind,
 * "round KIND NS_PER_CALL", then "median KIND NS_PER_CALL".  Exit 1 with a
 * message when a call fails (the doorbell of an RTS QP must be accepted).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "doorbell_test.h"
#include "sroce-abi.h"

enum { UVERBS, FILE_DB, DEVNULL, GETPPID, KINDS, MAX_ROUNDS = 99 };
static const char *const kind_name[KINDS] = {
	"uverbs", "file", "devnull", "getppid"
};

struct post_send_cmd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_send core;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

/* A UD QP in RTS on a PD and CQ of its own. */
static struct ibv_qp *new_ud_qp_rts(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);

	return pd && cq ? ud_qp_rts(pd, cq) : NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Nanoseconds per call of @kind, or -1 after printing why one failed. */
static double time_calls(int kind, long calls, int cmd_fd, int db_fd,
			 int null_fd, const struct post_send_cmd *cmd,
			 uint32_t qpn)
{
	double t = now_ns();
	ssize_t r = 0;

	for (long i = 0; i < calls; i++) {
		switch (kind) {
		case UVERBS:
			r = write(cmd_fd, cmd, sizeof(*cmd)) - sizeof(*cmd);
			break;
		case FILE_DB:
			r = write(db_fd, &qpn, sizeof(qpn)) - sizeof(qpn);
			break;
		case DEVNULL:
			r = write(null_fd, cmd, sizeof(*cmd)) - sizeof(*cmd);
			break;
		case GETPPID:
			r = syscall(SYS_getppid) > 0 ? 0 : -1;
			break;
		}
		if (r) {
			fprintf(stderr, "doorbell_cost: %s: call %ld failed: %s\n",
				kind_name[kind], i, strerror(errno));
			return -1;
		}
	}
	return (now_ns() - t) / calls;
}

int main(int argc, char **argv)
{
	static double ns[KINDS][MAX_ROUNDS];
	struct ib_uverbs_post_send_resp resp;
	struct post_send_cmd cmd;
	struct ibv_context *ctx;
	struct ibv_qp *qp;
	long calls = argc > 2 ? atol(argv[2]) : 200000;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	int db_fd, null_fd;

	if (argc < 2 || argc > 4 || calls < 1 || rounds < 1 ||
	    rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: doorbell_cost DEVICE [CALLS [ROUNDS (1-%d)]]\n",
			MAX_ROUNDS);
		return 2;
	}
	ctx = open_by_name(argv[1]);
	if (!ctx) {
		fprintf(stderr, "doorbell_cost: cannot open device %s\n", argv[1]);
		return 1;
	}
	qp = new_ud_qp_rts(ctx);
	if (!qp) {
		fprintf(stderr, "doorbell_cost: %s: no UD QP in RTS: %s\n",
			argv[1], strerror(errno));
		return 1;
	}
	db_fd = open_doorbell_file(ctx);
	null_fd = open("/dev/null", O_WRONLY);

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core.response = (uintptr_t)&resp;
	cmd.core.qp_handle = qp->handle;
	cmd.core.wqe_size = sizeof(struct ibv_send_wr);

	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < KINDS; k++) {
			if (k == FILE_DB && db_fd < 0) {
				printf("round %s -\n", kind_name[k]);
				continue;
			}
			ns[k][r] = time_calls(k, calls, ctx->cmd_fd, db_fd,
					      null_fd, &cmd, qp->qp_num);
			if (ns[k][r] < 0)
				return 1;
			printf("round %s %.0f\n", kind_name[k], ns[k][r]);
		}
	}
	for (int k = 0; k < KINDS; k++) {
		if (k == FILE_DB && db_fd < 0) {
			printf("median %s -\n", kind_name[k]);
			continue;
		}
		qsort(ns[k], rounds, sizeof(double), cmp_double);
		printf("median %s %.0f\n", kind_name[k], ns[k][rounds / 2]);
	}
	return 0;
}
