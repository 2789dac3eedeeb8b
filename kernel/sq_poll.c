// SPDX-License-Identifier: GPL-2.0-only
/*
 * The send queue poller: a doorbell without a system call.
 *
 * A user QP's doorbell is a write() on the uverbs file, and the requester
 * then runs in that system call, on the poster's CPU: the transmit, and
 * (on a veth or loopback path, whose receive runs on the sending CPU) the
 * peer's whole receive.  A thread that posts small messages as fast as it
 * can thus pays for every step of every message on one CPU while the
 * others idle.  With the module parameter sq_poll_us set, or for a QP
 * whose creator asked (create_qp's sq_poll_us, within the parameter
 * sq_poll_max_us: the provider's SROCE_SQ_POLL_US), the doorbell of a QP
 * in RTS instead starts a poller on another CPU: a work item that
 * watches the SQ's producer index and runs the requester whenever it
 * moves, and tells the provider so through SROCE_SQ_FLAG_POLLED in the
 * ring header (uapi/sroce-abi.h), so that further posts cost no system
 * call at all.  The poller stops once the index has not moved for that
 * many microseconds, when the QP leaves RTS, when the parameters say 0,
 * or, while it has nothing to send, when another task wants its CPU; the
 * next doorbell starts it again, unless the poller that left had found no
 * post of its own (then the QP's doorbells run the requester themselves
 * for SROCE_SQ_POLL_BACKOFF).
 *
 * Why opt-in (0 by default), and why a QP's own request is bounded: the
 * poller keeps a CPU busy after the last post, in a kernel worker rather
 * than in the poster's task (and cgroup); it only helps when a CPU is
 * free to run it; and a poster that sleeps between posts pays the work
 * item's wake-up instead of running the requester itself.
 *
 * Stopping without losing a post: the poller clears the flag, issues a
 * full barrier and runs the requester once more, which reads the producer
 * index.  A provider that saw the flag set had published its WQE before
 * the flag was cleared, so that last pass sends it; one that saw it clear
 * rings the doorbell.  A doorbell that finds the poller still running
 * (SROCE_REQ_POLLING set) runs the requester itself, as without a poller.
 */
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/smp.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "qp.h"
#include "requester.h"
#include "ring.h"
#include "sq_poll.h"
#include "sroce.h"

/*
 * A poller that finds another task wanting its CPU leaves it at once: that
 * may be the peer's process polling its CQ there (a ping-pong), which the
 * poller would otherwise hold off a scheduler slice at a time.  If it had
 * found posts since the doorbell that started it, it saved their system
 * calls, and the task was as likely a kworker or a timer's process gone
 * by the next post: that post starts a poller again.  If it had found
 * none, it only moved the doorbell's requester pass to another CPU, as
 * every poller of a ping-pong does (the poster waits for the reply before
 * it posts again): the doorbells run the requester themselves for
 * SROCE_SQ_POLL_BACKOFF, so that a ping-pong pays one poller wake-up per
 * back-off, however slow its round trip.
 */
#define SROCE_SQ_POLL_BACKOFF	msecs_to_jiffies(20)

static unsigned int sq_poll_us;
module_param(sq_poll_us, uint, 0644);
MODULE_PARM_DESC(sq_poll_us,
		 "poll a user QP's send queue from another CPU for this many microseconds after its last post, so that posts need no system call (0: off, the default)");

/*
 * What a QP may ask for itself (create_qp's sq_poll_us, which any user
 * can set): its poller runs on a CPU and in a worker its process does not
 * pay for, so the administrator bounds it (0: such requests are ignored).
 */
static unsigned int sq_poll_max_us = 1000;
module_param(sq_poll_max_us, uint, 0644);
MODULE_PARM_DESC(sq_poll_max_us,
		 "the most a QP may ask to be polled for after its last post, in microseconds (create_qp's sq_poll_us; default 1000, 0: QPs may not ask)");

/* The poller never sleeps while it polls: keep it out of concurrency management. */
static struct workqueue_struct *sroce_sq_poll_wq;

int sroce_sq_poll_module_init(void)
{
	sroce_sq_poll_wq = alloc_workqueue("sroce_sq_poll", WQ_CPU_INTENSIVE,
					   0);
	return sroce_sq_poll_wq ? 0 : -ENOMEM;
}

void sroce_sq_poll_module_exit(void)
{
	destroy_workqueue(sroce_sq_poll_wq);
}

/*
 * How long this QP is polled after its last post, in microseconds: the
 * longer of sq_poll_us and what the QP asked for at creation within
 * sq_poll_max_us (a request adds polling, it never takes away what the
 * administrator set).  Read again at each use: either parameter may change.
 */
static unsigned int sroce_sq_poll_time_us(const struct sroce_qp *qp)
{
	return max(READ_ONCE(sq_poll_us),
		   min(qp->req.poll_us, READ_ONCE(sq_poll_max_us)));
}

/* Keep polling?  Only a live QP in RTS, and only while the parameters say so. */
static bool sroce_sq_poll_wanted(struct sroce_qp *qp)
{
	return sroce_sq_poll_time_us(qp) && !READ_ONCE(qp->req.dying) &&
	       sroce_qp_state(qp) == IB_QPS_RTS;
}

/* Another task wants the poller's CPU: see SROCE_SQ_POLL_BACKOFF. */
static void sroce_sq_poll_leave(struct sroce_qp *qp, bool found_posts)
{
	sroce_qp_stat_inc(qp, sq_poll_yields);
	if (!found_posts) {
		WRITE_ONCE(qp->req.poll_backoff,
			   jiffies + SROCE_SQ_POLL_BACKOFF);
		sroce_qp_stat_inc(qp, sq_poll_backoffs);
	}
}

/*
 * One requester pass.  The poller's idle time counts from its end: a pass
 * that carries a packet through a slow path (a debug kernel's, or the
 * peer's whole receive on a veth) must not use up the time it then has
 * to watch for the next post.
 */
static u64 sroce_sq_poll_pass(struct sroce_qp *qp)
{
	sroce_requester_kick(qp);
	return ktime_get_ns();
}

static void sroce_sq_poll_work(struct work_struct *work)
{
	struct sroce_requester *req =
		container_of(work, struct sroce_requester, poll_work);
	struct sroce_qp *qp = container_of(req, struct sroce_qp, req);
	u32 seen = sroce_ring_producer(&qp->sq);
	bool found_posts = false;
	u64 last;

	/* What the doorbell that started us announced. */
	last = sroce_sq_poll_pass(qp);
	while (sroce_sq_poll_wanted(qp)) {
		u32 producer = sroce_ring_producer(&qp->sq);
		u64 now = ktime_get_ns();

		if (producer != seen) {
			seen = producer;
			found_posts = true;
			sroce_qp_stat_inc(qp, sq_poll_kicks);
			last = sroce_sq_poll_pass(qp);
		} else if (READ_ONCE(req->over_budget)) {
			/* The pass left the rest to us (requester.c). */
			last = sroce_sq_poll_pass(qp);
		} else if (now - last >
			   (u64)sroce_sq_poll_time_us(qp) * NSEC_PER_USEC) {
			break;
		} else if (!single_task_running()) {
			sroce_sq_poll_leave(qp, found_posts);
			break;
		}
		cond_resched();
		cpu_relax();
	}

	sroce_ring_set_flags(&qp->sq, 0);
	smp_mb();	/* flag clear before the last look: see the top */
	clear_bit(SROCE_REQ_POLLING, &req->pending);
	sroce_requester_kick(qp);
}

/*
 * A CPU other than the poster's, or -1 if there is none: polling on the
 * poster's own CPU would only take time from it.
 */
static int sroce_sq_poll_cpu(void)
{
	int self = raw_smp_processor_id();
	int cpu = cpumask_next(self, cpu_online_mask);

	if (cpu >= nr_cpu_ids)
		cpu = cpumask_first(cpu_online_mask);
	return cpu == self || cpu >= nr_cpu_ids ? -1 : cpu;
}

/*
 * The doorbell of a user QP in RTS.  True if a poller was started (it
 * runs the requester); false if the caller must run it: polling is off,
 * there is no other CPU, or a poller runs already (it may be stopping).
 */
bool sroce_sq_poll_doorbell(struct sroce_qp *qp)
{
	struct sroce_requester *req = &qp->req;
	int cpu;

	if (!sroce_sq_poll_time_us(qp) || !qp->user ||
	    !sroce_ring_present(&qp->sq))
		return false;
	cpu = sroce_sq_poll_cpu();
	if (cpu < 0 || time_before(jiffies, READ_ONCE(req->poll_backoff)) ||
	    test_and_set_bit(SROCE_REQ_POLLING, &req->pending))
		return false;
	sroce_ring_set_flags(&qp->sq, SROCE_SQ_FLAG_POLLED);
	sroce_qp_stat_inc(qp, sq_poll_runs);
	queue_work_on(cpu, sroce_sq_poll_wq, &req->poll_work);
	return true;
}

/* create_qp's request, if any (uapi: struct sroce_create_qp_cmd). */
void sroce_sq_poll_set(struct sroce_qp *qp, u32 poll_us)
{
	qp->req.poll_us = poll_us;
}

void sroce_sq_poll_init(struct sroce_qp *qp)
{
	INIT_WORK(&qp->req.poll_work, sroce_sq_poll_work);
	qp->req.poll_backoff = jiffies;
}

/* At destroy, with req.dying set: the loop sees it and stops. */
void sroce_sq_poll_stop(struct sroce_qp *qp)
{
	cancel_work_sync(&qp->req.poll_work);
}
