// SPDX-License-Identifier: GPL-2.0-only
/*
 * scale_verbs: what many objects and many QPs cost on one RDMA device
 * (issue 12).  A measuring program for scripts/scale, not a test: it prints
 * figures and fails only when a verb fails.
 *
 *   scale_verbs objects DEV COUNT
 *	Creates COUNT CQs (256 entries) each with an RC QP (128 send and
 *	128 receive WRs, one SGE), then destroys them; then registers COUNT
 *	4 KiB MRs (each on its own page, allocated and touched beforehand)
 *	and deregisters them.  Prints one line per phase:
 *	  objects PHASE count N create_us X per_obj_us X destroy_us X
 *	          per_destroy_us X mem_kib X slab_kib X vmalloc_kib X
 *	          pagetables_kib X
 *	          create_first_med_us X create_last_med_us X
 *	          destroy_first_med_us X destroy_last_med_us X
 *	          create_ref_first_med_us X create_ref_last_med_us X
 *	          destroy_ref_first_med_us X destroy_ref_last_med_us X
 *	          create_med_us X destroy_med_us X destroy_max_us X
 *	          [cq_create_med_us X qp_create_med_us X
 *	           qp_destroy_med_us X cq_destroy_med_us X]
 *	mem_kib is the drop in MemFree while the objects exist, less the
 *	growth of this process's anonymous memory (what libibverbs and the
 *	provider allocate in userspace): the kernel's share.  slab_kib,
 *	vmalloc_kib and pagetables_kib are the growth of those /proc/meminfo
 *	lines.  All are per object.  The *_med_us figures are medians of the
 *	time of each object (a QP with its CQ) or of each verb: on a loaded
 *	host a preempted guest CPU inflates a few calls by milliseconds, which
 *	moves the means (per_obj_us, per_destroy_us) but not the medians;
 *	destroy_max_us is the slowest single teardown.  *_first_med_us and
 *	*_last_med_us are the medians of the first and the last tenth of the
 *	objects, in the order they were created (and destroyed: the same
 *	order): whether an object costs more when many others exist, measured
 *	within one run.  *_ref_* are the same medians of a fixed piece of
 *	work timed after each object (see ref_sample()): how fast the guest
 *	ran in those tenths.  With SCALE_TIMES=FILE every call's time is appended
 *	to FILE as "VERB INDEX US" lines, in call order.
 *
 *   scale_verbs traffic DEV_A GID_A DEV_B GID_B NQPS SIZE SECONDS [DEPTH]
 *	One process, both devices: NQPS RC QP pairs connected directly
 *	(A -> B, the GID indices name the RoCE v2 GIDs of the peers' IP
 *	addresses).  Each QP keeps DEPTH (default 8, or 2 from 64 QPs on)
 *	RDMA WRITEs of SIZE bytes outstanding, refilled as they complete;
 *	after a warm-up in which every QP completes one, it counts
 *	completions for SECONDS or three warm-ups, whichever is longer
 *	(see cmd_traffic()); every completion is checked for success.  Path MTU
 *	1024, or 4096 with SCALE_MTU=4096.
 *	Prints:
 *	  traffic qps N size S depth D warmup_s W seconds T msgs M MBps X
 *	          kmsgps X min_qp_ratio X max_qp_ratio X stalled_qps N
 *	          user_s X sys_s X nvcsw N nivcsw N
 *	          cpu_busy B0,B1,... cpu_softirq S0,S1,... cpu_seen C0,C1,...
 *	min_qp_ratio: the slowest QP's messages over the mean per QP
 *	(fairness: 1 is perfectly fair).  user_s and sys_s are this
 *	process's CPU time in the window (sys_s includes the bottom halves
 *	that ran in its system calls), nvcsw and nivcsw its voluntary and
 *	involuntary context switches: how much of the window the poster
 *	had the CPU, and how often it gave it up.  cpu_busy and cpu_softirq:
 *	each CPU's share of its accounted time not idle, and in softirqs
 *	(ksoftirqd included): where the work ran; cpu_seen: the accounted
 *	time over the window, below 1 when the host took the vCPU away
 *	(see cpu_times_print()).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include <infiniband/verbs.h>

#define QP_WR		128
#define CQ_ENTRIES	256
#define MR_SIZE		4096

static void die(const char *what, int err)
{
	fprintf(stderr, "scale_verbs: %s: %s\n", what, strerror(err));
	exit(1);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Microseconds since *@t, which becomes now. */
static double lap(double *t)
{
	double now = now_us(), d = now - *t;

	*t = now;
	return d;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		die("ibv_get_device_list", errno);
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "scale_verbs: no device %s (or it cannot be opened)\n", name);
		exit(1);
	}
	return ctx;
}

/* ---- memory accounting -------------------------------------------------- */

struct mem {
	long free_kib, slab_kib, vmalloc_kib, pagetables_kib, anon_kib;
};

static long field_kib(const char *path, const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		die(path, errno);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static void mem_read(struct mem *m)
{
	/* Let freed objects (RCU, deferred work) settle first. */
	usleep(200000);
	m->free_kib = field_kib("/proc/meminfo", "MemFree");
	m->slab_kib = field_kib("/proc/meminfo", "Slab");
	m->vmalloc_kib = field_kib("/proc/meminfo", "VmallocUsed");
	m->pagetables_kib = field_kib("/proc/meminfo", "PageTables");
	m->anon_kib = field_kib("/proc/self/status", "RssAnon");
}

/* ---- per-call times --------------------------------------------------- */

/* The time of each call of one kind, in microseconds. */
struct times {
	double *us;
	int n;
};

static void times_init(struct times *t, int n)
{
	t->us = calloc(n, sizeof(*t->us));
	t->n = 0;
	if (!t->us)
		die("calloc", ENOMEM);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sorts the samples; the median (0.5) or the largest (1.0) of them. */
static double times_quantile(struct times *t, double q)
{
	int i;

	if (!t->n)
		return 0;
	qsort(t->us, t->n, sizeof(*t->us), cmp_double);
	i = (int)(q * (t->n - 1) + 0.5);
	return t->us[i];
}

/*
 * The median of the calls [@from, @from + @count) in call order (@t not
 * yet sorted): the cost of an object at a given number of live objects.
 */
static double times_slice_median(const struct times *t, int from, int count)
{
	struct times s;
	double med;

	if (count < 1 || from < 0 || from + count > t->n)
		return 0;
	times_init(&s, count);
	memcpy(s.us, t->us + from, count * sizeof(*s.us));
	s.n = count;
	med = times_quantile(&s, 0.5);
	free(s.us);
	return med;
}

/*
 * The guest's speed beside each object: under TCG on a shared host it moves
 * in steps of 25% and more within seconds (the host takes the vCPU away),
 * and the first and the last tenth of a 10,000-object run are seconds
 * apart.  A fixed piece of work (a few system calls and a walk over 32 KiB)
 * timed after each object says how fast the guest ran then; it is not part
 * of the object's time nor of the phase's total.
 */
static double ref_total_us;

static void ref_sample(struct times *ref, double *t)
{
	static unsigned long buf[4096];
	static volatile unsigned long sink;
	double t0 = now_us(), d;
	int i;

	for (i = 0; i < 8; i++)
		getppid();
	for (i = 0; i < 4096; i++)
		sink += buf[(i * 97) & 4095]++;
	d = now_us() - t0;
	ref->us[ref->n++] = d;
	ref_total_us += d;
	*t = now_us();
}

/* Element-wise a + b into a (both as long). */
static void times_add(struct times *a, const struct times *b)
{
	int i;

	for (i = 0; i < a->n && i < b->n; i++)
		a->us[i] += b->us[i];
}

static void report(const char *phase, int n, double t_create, double t_destroy,
		   const struct mem *a, const struct mem *b,
		   struct times *create, struct times *destroy,
		   const struct times *ref_create, const struct times *ref_destroy)
{
	double kern = (a->free_kib - b->free_kib) - (b->anon_kib - a->anon_kib);

	printf("objects %s count %d create_us %.0f per_obj_us %.1f destroy_us %.0f per_destroy_us %.1f mem_kib %.2f slab_kib %.2f vmalloc_kib %.2f pagetables_kib %.2f",
	       phase, n, t_create, t_create / n, t_destroy, t_destroy / n,
	       kern / n, (double)(b->slab_kib - a->slab_kib) / n,
	       (double)(b->vmalloc_kib - a->vmalloc_kib) / n,
	       (double)(b->pagetables_kib - a->pagetables_kib) / n);
	/*
	 * Objects are created and destroyed in the same order: the first
	 * tenth is created with at most n/10 objects alive and destroyed
	 * with at least 9n/10 alive, the last tenth the other way round.
	 * Both come from one run, seconds apart, so a change of the host's
	 * speed between two runs does not enter their ratio.
	 */
	printf(" create_first_med_us %.1f create_last_med_us %.1f destroy_first_med_us %.1f destroy_last_med_us %.1f",
	       times_slice_median(create, 0, n / 10),
	       times_slice_median(create, n - n / 10, n / 10),
	       times_slice_median(destroy, 0, n / 10),
	       times_slice_median(destroy, n - n / 10, n / 10));
	printf(" create_ref_first_med_us %.1f create_ref_last_med_us %.1f destroy_ref_first_med_us %.1f destroy_ref_last_med_us %.1f",
	       times_slice_median(ref_create, 0, n / 10),
	       times_slice_median(ref_create, n - n / 10, n / 10),
	       times_slice_median(ref_destroy, 0, n / 10),
	       times_slice_median(ref_destroy, n - n / 10, n / 10));
	printf(" create_med_us %.1f destroy_med_us %.1f destroy_max_us %.0f",
	       times_quantile(create, 0.5), times_quantile(destroy, 0.5),
	       times_quantile(destroy, 1.0));
}

/* SCALE_TIMES=FILE: every call's time, "KIND INDEX US" (unsorted). */
static void times_dump(const char *kind, const struct times *t)
{
	const char *path = getenv("SCALE_TIMES");
	FILE *f;
	int i;

	if (!path)
		return;
	f = fopen(path, "a");
	if (!f)
		die(path, errno);
	for (i = 0; i < t->n; i++)
		fprintf(f, "%s %d %.1f\n", kind, i, t->us[i]);
	fclose(f);
}

static int cmd_objects(const char *dev, int n)
{
	struct ibv_context *ctx = open_dev(dev);
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq **cqs = calloc(n, sizeof(*cqs));
	struct ibv_qp **qps = calloc(n, sizeof(*qps));
	struct ibv_mr **mrs = calloc(n, sizeof(*mrs));
	struct times cq_create, qp_create, qp_destroy, cq_destroy;
	struct times ref_create, ref_destroy;
	struct mem m0, m1;
	double t0, t1, t2, t;
	char *bufs;
	int i;

	if (!pd || !cqs || !qps || !mrs)
		die("setup", errno ?: ENOMEM);
	times_init(&cq_create, n);
	times_init(&qp_create, n);
	times_init(&qp_destroy, n);
	times_init(&cq_destroy, n);
	times_init(&ref_create, n);
	times_init(&ref_destroy, n);

	mem_read(&m0);
	ref_total_us = 0;
	t0 = now_us();
	t = t0;
	for (i = 0; i < n; i++) {
		struct ibv_qp_init_attr attr = {
			.qp_type = IBV_QPT_RC,
			.cap = { .max_send_wr = QP_WR, .max_recv_wr = QP_WR,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		cqs[i] = ibv_create_cq(ctx, CQ_ENTRIES, NULL, NULL, 0);
		if (!cqs[i]) {
			fprintf(stderr, "scale_verbs: after %d QPs: ", i);
			die("ibv_create_cq", errno);
		}
		cq_create.us[cq_create.n++] = lap(&t);
		attr.send_cq = attr.recv_cq = cqs[i];
		qps[i] = ibv_create_qp(pd, &attr);
		if (!qps[i]) {
			fprintf(stderr, "scale_verbs: after %d QPs: ", i);
			die("ibv_create_qp", errno);
		}
		qp_create.us[qp_create.n++] = lap(&t);
		ref_sample(&ref_create, &t);
	}
	t1 = t - ref_total_us;
	mem_read(&m1);
	ref_total_us = 0;
	t2 = now_us();
	t = t2;
	for (i = 0; i < n; i++) {
		if (ibv_destroy_qp(qps[i]))
			die("ibv_destroy_qp", errno);
		qp_destroy.us[qp_destroy.n++] = lap(&t);
		if (ibv_destroy_cq(cqs[i]))
			die("ibv_destroy_cq", errno);
		cq_destroy.us[cq_destroy.n++] = lap(&t);
		ref_sample(&ref_destroy, &t);
	}
	t -= ref_total_us;
	times_dump("cq_create", &cq_create);
	times_dump("qp_create", &qp_create);
	times_dump("qp_destroy", &qp_destroy);
	times_dump("cq_destroy", &cq_destroy);
	times_dump("ref_create", &ref_create);
	times_dump("ref_destroy", &ref_destroy);
	/* Per QP with its CQ, then per verb (the sums first: sorting). */
	{
		struct times create = cq_create, destroy = qp_destroy;

		times_init(&create, n);
		times_init(&destroy, n);
		memcpy(create.us, cq_create.us, n * sizeof(double));
		memcpy(destroy.us, qp_destroy.us, n * sizeof(double));
		create.n = destroy.n = n;
		times_add(&create, &qp_create);
		times_add(&destroy, &cq_destroy);
		report("qp+cq", n, t1 - t0, t - t2, &m0, &m1, &create, &destroy,
		       &ref_create, &ref_destroy);
		free(create.us);
		free(destroy.us);
	}
	printf(" cq_create_med_us %.1f qp_create_med_us %.1f qp_destroy_med_us %.1f cq_destroy_med_us %.1f\n",
	       times_quantile(&cq_create, 0.5), times_quantile(&qp_create, 0.5),
	       times_quantile(&qp_destroy, 0.5), times_quantile(&cq_destroy, 0.5));
	fflush(stdout);

	/* MRs: the pages exist (and are counted) before the baseline. */
	if (posix_memalign((void **)&bufs, MR_SIZE, (size_t)n * MR_SIZE))
		die("posix_memalign", ENOMEM);
	memset(bufs, 1, (size_t)n * MR_SIZE);
	/* The same arrays again: reg_mr and dereg_mr times. */
	cq_create.n = cq_destroy.n = 0;
	ref_create.n = ref_destroy.n = 0;
	mem_read(&m0);
	ref_total_us = 0;
	t0 = now_us();
	t = t0;
	for (i = 0; i < n; i++) {
		mrs[i] = ibv_reg_mr(pd, bufs + (size_t)i * MR_SIZE, MR_SIZE,
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ);
		if (!mrs[i]) {
			fprintf(stderr, "scale_verbs: after %d MRs: ", i);
			die("ibv_reg_mr", errno);
		}
		cq_create.us[cq_create.n++] = lap(&t);
		ref_sample(&ref_create, &t);
	}
	t1 = t - ref_total_us;
	mem_read(&m1);
	ref_total_us = 0;
	t2 = now_us();
	t = t2;
	for (i = 0; i < n; i++) {
		if (ibv_dereg_mr(mrs[i]))
			die("ibv_dereg_mr", errno);
		cq_destroy.us[cq_destroy.n++] = lap(&t);
		ref_sample(&ref_destroy, &t);
	}
	t -= ref_total_us;
	times_dump("mr_create", &cq_create);
	times_dump("mr_destroy", &cq_destroy);
	times_dump("mr_ref_create", &ref_create);
	times_dump("mr_ref_destroy", &ref_destroy);
	report("mr", n, t1 - t0, t - t2, &m0, &m1, &cq_create, &cq_destroy,
	       &ref_create, &ref_destroy);
	printf("\n");
	fflush(stdout);

	free(cq_create.us);
	free(qp_create.us);
	free(qp_destroy.us);
	free(cq_destroy.us);
	free(ref_create.us);
	free(ref_destroy.us);
	free(bufs);
	free(mrs);
	free(qps);
	free(cqs);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}

/* ---- many QPs moving data ------------------------------------------------ */

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	char *buf;
	union ibv_gid gid;
	int gid_index;
	uint8_t port;
};

static void side_open(struct side *s, const char *dev, int gid_index,
		      size_t buf_size, int cqe)
{
	s->ctx = open_dev(dev);
	s->port = 1;
	s->gid_index = gid_index;
	if (ibv_query_gid(s->ctx, s->port, gid_index, &s->gid))
		die("ibv_query_gid", errno);
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		die("ibv_alloc_pd", errno);
	s->cq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
	if (!s->cq)
		die("ibv_create_cq", errno);
	if (posix_memalign((void **)&s->buf, 4096, buf_size))
		die("posix_memalign", ENOMEM);
	memset(s->buf, 0x5a, buf_size);
	s->mr = ibv_reg_mr(s->pd, s->buf, buf_size, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE);
	if (!s->mr)
		die("ibv_reg_mr", errno);
}

static struct ibv_qp *qp_create(struct side *s, int depth)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = s->cq, .recv_cq = s->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = depth, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(s->pd, &attr);

	if (!qp)
		die("ibv_create_qp", errno);
	return qp;
}

static enum ibv_mtu path_mtu = IBV_MTU_1024;

static void qp_connect(struct ibv_qp *qp, struct side *self, struct side *peer,
		       uint32_t dest_qpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = self->port,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT", errno);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = path_mtu;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.sgid_index = self->gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = self->port;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR", errno);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS", errno);
}

static int all_done(const uint64_t *done, int nqps, uint64_t min)
{
	int i;

	for (i = 0; i < nqps; i++)
		if (done[i] < min)
			return 0;
	return 1;
}

/* Post one RDMA WRITE of @size on QP @q (wr_id = @q). */
static void post_write(struct ibv_qp *qp, uint64_t q, struct side *a,
		       struct side *b, size_t size)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)a->buf, .length = size, .lkey = a->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = q, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)b->buf + size * q,
			     .rkey = b->mr->rkey },
	}, *bad;

	if (ibv_post_send(qp, &wr, &bad))
		die("ibv_post_send", errno);
}

/* Busy and softirq jiffies of each CPU (/proc/stat), up to MAX_CPUS. */
#define MAX_CPUS	64

struct cpu_times {
	int n;
	unsigned long long busy[MAX_CPUS], softirq[MAX_CPUS], all[MAX_CPUS];
};

static void cpu_times_read(struct cpu_times *c)
{
	FILE *f = fopen("/proc/stat", "r");
	char line[512];

	c->n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && c->n < MAX_CPUS) {
		unsigned long long v[8] = {};
		int cpu, i;

		if (strncmp(line, "cpu", 3) || line[3] < '0' || line[3] > '9')
			continue;
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu",
			   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7]) < 8)
			continue;
		c->all[c->n] = 0;
		for (i = 0; i < 8; i++)
			c->all[c->n] += v[i];
		/* idle and iowait are the not-busy ones */
		c->busy[c->n] = c->all[c->n] - v[3] - v[4];
		c->softirq[c->n] = v[6];
		c->n++;
	}
	fclose(f);
}

/*
 * " cpu_busy B0,... cpu_softirq S0,... cpu_seen C0,...": each CPU's busy
 * and softirq share of the time it accounted, and that time over the
 * window (@us).  The guest accounts busy time by ticks and idle time by
 * the clock; ticks a vCPU does not get to run (the host descheduled its
 * thread) are lost, so cpu_seen below 1 is the host taking that CPU away.
 */
static void cpu_times_print(const struct cpu_times *a,
			    const struct cpu_times *b, double us)
{
	const char *key[] = { "cpu_busy", "cpu_softirq", "cpu_seen" };
	double hz = sysconf(_SC_CLK_TCK);
	int k, i;

	for (k = 0; k < 3; k++) {
		printf(" %s ", key[k]);
		for (i = 0; i < a->n && i < b->n; i++) {
			unsigned long long all = b->all[i] - a->all[i];
			double v = k == 1 ? b->softirq[i] - a->softirq[i] :
					    b->busy[i] - a->busy[i];

			if (k == 2)
				v = all / hz * 1e6 / us;
			else
				v = all ? v / all : 0;
			printf("%s%.2f", i ? "," : "", v);
		}
	}
}

static double tv_s(const struct timeval *tv)
{
	return tv->tv_sec + tv->tv_usec / 1e6;
}

/* The longest warm-up and measured window, in microseconds. */
#define MAX_PHASE_US	60e6

/*
 * Two phases.  Warm-up: until every QP has completed one write (every QP
 * had its turn; with hundreds of QPs one round can take seconds under
 * emulation).  Measurement: SECONDS, but at least three times the
 * warm-up, so that the window holds several rounds and a QP with no
 * completion in it is a starved QP, not one that waits for its turn.
 * Both phases end after at most MAX_PHASE_US (a stalled driver).
 */
static int cmd_traffic(char **argv, int argc)
{
	int nqps = atoi(argv[4]), depth;
	size_t size = strtoul(argv[5], NULL, 0);
	double seconds = atof(argv[6]);
	const char *mtu = getenv("SCALE_MTU");
	struct side a = {}, b = {};
	struct ibv_qp **qa, **qb;
	uint64_t *done, *base, total = 0, minq = UINT64_MAX, maxq = 0;
	int phase = 0, i, j, n, stalled = 0, outstanding;
	double t_start, t0 = 0, t_end = 0, t, window;
	struct rusage ru0 = {}, ru1;
	struct cpu_times ct0 = {}, ct1;
	struct ibv_wc wc[64];

	if (nqps < 1 || nqps > 65536 || !size || size > (1 << 20) || seconds <= 0) {
		fprintf(stderr, "scale_verbs traffic: bad NQPS, SIZE or SECONDS\n");
		return 2;
	}
	if (mtu && !strcmp(mtu, "4096"))
		path_mtu = IBV_MTU_4096;
	depth = argc > 7 ? atoi(argv[7]) : (nqps >= 64 ? 2 : 8);
	if (depth < 1 || depth > QP_WR) {
		fprintf(stderr, "scale_verbs traffic: DEPTH must be 1-%d\n", QP_WR);
		return 2;
	}
	/* Each QP writes into its own slice of B's buffer, from one of A's. */
	side_open(&a, argv[0], atoi(argv[1]), size, nqps * depth + 16);
	side_open(&b, argv[2], atoi(argv[3]), size * nqps, 16);
	qa = calloc(nqps, sizeof(*qa));
	qb = calloc(nqps, sizeof(*qb));
	done = calloc(nqps, sizeof(*done));
	base = calloc(nqps, sizeof(*base));
	if (!qa || !qb || !done || !base)
		die("calloc", ENOMEM);
	for (i = 0; i < nqps; i++) {
		qa[i] = qp_create(&a, depth);
		qb[i] = qp_create(&b, 1);
	}
	for (i = 0; i < nqps; i++) {
		qp_connect(qa[i], &a, &b, qb[i]->qp_num);
		qp_connect(qb[i], &b, &a, qa[i]->qp_num);
	}

	t_start = now_us();
	for (i = 0; i < nqps; i++)
		for (j = 0; j < depth; j++)
			post_write(qa[i], i, &a, &b, size);
	outstanding = nqps * depth;
	for (;;) {
		n = ibv_poll_cq(a.cq, 64, wc);
		if (n < 0)
			die("ibv_poll_cq", EIO);
		t = now_us();
		for (j = 0; j < n; j++) {
			uint64_t q = wc[j].wr_id;

			if (wc[j].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "scale_verbs: QP %" PRIu64 ": completion %s\n",
					q, ibv_wc_status_str(wc[j].status));
				return 1;
			}
			if (q >= (uint64_t)nqps) {
				fprintf(stderr, "scale_verbs: bad wr_id %" PRIu64 "\n", q);
				return 1;
			}
			done[q]++;
			post_write(qa[q], q, &a, &b, size);
		}
		if (phase == 0 && (all_done(done, nqps, 1) ||
				   t - t_start >= MAX_PHASE_US)) {
			phase = 1;
			t0 = t;
			window = 3 * (t0 - t_start);
			window = window > seconds * 1e6 ? window : seconds * 1e6;
			window = window < MAX_PHASE_US ? window : MAX_PHASE_US;
			t_end = t0 + window;
			memcpy(base, done, nqps * sizeof(*done));
			getrusage(RUSAGE_SELF, &ru0);
			cpu_times_read(&ct0);
		} else if (phase == 1 && t >= t_end) {
			break;
		}
	}
	t = now_us() - t0;
	getrusage(RUSAGE_SELF, &ru1);
	cpu_times_read(&ct1);
	for (i = 0; i < nqps; i++) {
		uint64_t d = done[i] - base[i];

		total += d;
		minq = d < minq ? d : minq;
		maxq = d > maxq ? d : maxq;
		stalled += !d;
	}
	printf("traffic qps %d size %zu depth %d warmup_s %.2f seconds %.2f msgs %" PRIu64 " MBps %.2f kmsgps %.3f min_qp_ratio %.2f max_qp_ratio %.2f stalled_qps %d",
	       nqps, size, depth, (t0 - t_start) / 1e6, t / 1e6, total,
	       total * (double)size / t / 1.048576, total / t * 1e3,
	       total ? (double)minq * nqps / total : 0,
	       total ? (double)maxq * nqps / total : 0, stalled);
	printf(" user_s %.2f sys_s %.2f nvcsw %ld nivcsw %ld",
	       tv_s(&ru1.ru_utime) - tv_s(&ru0.ru_utime),
	       tv_s(&ru1.ru_stime) - tv_s(&ru0.ru_stime),
	       ru1.ru_nvcsw - ru0.ru_nvcsw, ru1.ru_nivcsw - ru0.ru_nivcsw);
	cpu_times_print(&ct0, &ct1, t);
	printf("\n");
	fflush(stdout);
	/* Let the outstanding writes drain before the QPs go. */
	for (i = 0; i < 3000 && outstanding > 0; i++) {
		n = ibv_poll_cq(a.cq, 64, wc);
		if (n < 0)
			break;
		outstanding -= n;
		if (!n)
			usleep(1000);
	}
	for (i = 0; i < nqps; i++) {
		ibv_destroy_qp(qa[i]);
		ibv_destroy_qp(qb[i]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "objects")) {
		int n = atoi(argv[3]);

		if (n < 1 || n > 1000000) {
			fprintf(stderr, "scale_verbs objects: COUNT must be 1-1000000\n");
			return 2;
		}
		return cmd_objects(argv[2], n);
	}
	if ((argc == 9 || argc == 10) && !strcmp(argv[1], "traffic"))
		return cmd_traffic(argv + 2, argc - 2);
	fprintf(stderr, "usage: scale_verbs objects DEV COUNT\n"
			"       scale_verbs traffic DEV_A GID_A DEV_B GID_B NQPS SIZE SECONDS [DEPTH]\n");
	return 2;
}
