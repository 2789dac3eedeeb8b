// SPDX-License-Identifier: GPL-2.0-only
/*
 * Congestion control: ECN, CNPs and DCQCN (see cc.h for the roles and
 * Documentation/congestion-control.rst for the algorithm and parameters).
 *
 * Reaction point, per QP, as published (Zhu et al., SIGCOMM 2015):
 *
 *   CNP            Rt = Rc; Rc = Rc * (1 - alpha / 2);
 *                  alpha = (1 - g) * alpha + g;
 *                  both increase counters and their periods start over
 *   alpha timer    every K without a CNP: alpha = (1 - g) * alpha
 *   increase       every T (rate timer) and every B bytes sent (byte
 *                  counter) one step; with i = max(timer steps, byte
 *                  steps) and j = min(...):
 *                    i <= F       fast recovery    (Rt unchanged)
 *                    j <= F < i   additive         Rt += R_AI
 *                    F < j        hyper            Rt += R_HAI
 *                  then Rc = (Rt + Rc) / 2, at most the line rate
 *                  (sroce_cc_line()).
 *
 * The two timers are evaluated lazily: whenever the QP's state is looked
 * at (a CNP arrives, the requester asks for budget) the periods that
 * ended since the last look are applied in order.  The rate only matters
 * when the QP sends, so the trajectory is the one real timers would give,
 * without two timer interrupts per QP every few microseconds.  A QP idle
 * for more than SROCE_CC_MAX_STEPS rate periods is put back at line rate.
 *
 * Pacing: a paced QP may send when now >= next_send; each packet moves
 * next_send by its wire time at Rc.  Credit for time not used (a late
 * timer, an idle moment) is kept up to SROCE_CC_BURST bytes (a few
 * packets), so the average rate holds even though the pace timer is
 * coarse, without a burst that a shallow queue cannot take.  When the
 * requester has to wait, an hrtimer (softirq mode) kicks it at next_send.
 *
 * Locking: cc.lock covers the state; it is taken from the requester
 * (under req.lock, BHs off) and from the receive softirq, never the other
 * way round, and nothing but a tracepoint is called under it.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <net/inet_ecn.h>
#include <rdma/ib_sysfs.h>

#include "cc.h"
#include "pkt.h"
#include "qp.h"
#include "sroce.h"
#include "trace.h"

/*
 * Unused sending time kept as credit, in bytes at the current rate: about
 * four packets of 1 KB MTU.  A larger credit lets every sender burst it
 * into the bottleneck after a stall (a late timer, a preempted guest),
 * all at once: with 16 KB, two senders overflowed a 64 KB RED queue at
 * 2 Mbit/s (scripts/cc-bench).
 */
#define SROCE_CC_BURST		4096

/* Lazily applied timer periods beyond which the QP is reset/at rest. */
#define SROCE_CC_MAX_STEPS	256
#define SROCE_CC_MAX_DECAYS	4096

/* ---- parameters ----------------------------------------------------------- */

struct sroce_cc_param {
	struct ib_port_attribute attr;
	size_t offset;		/* in struct sroce_cc_params */
	u32 min;
	u32 max;
	u32 def;
};

static ssize_t sroce_cc_show(struct ib_device *ibdev, u32 port,
			     struct ib_port_attribute *attr, char *buf);
static ssize_t sroce_cc_store(struct ib_device *ibdev, u32 port,
			      struct ib_port_attribute *attr, const char *buf,
			      size_t count);

#define SROCE_CC_PARAM(_name, _min, _max, _def) {			\
	.attr = __ATTR(_name, 0644, sroce_cc_show, sroce_cc_store),	\
	.offset = offsetof(struct sroce_cc_params, _name),		\
	.min = (_min), .max = (_max), .def = (_def),			\
}

#define SROCE_CC_MAX_RATE	1000000000U	/* 1 Tbit/s in kbit/s */

/*
 * Where the first cut starts when rate_line_kbps is 0 ("the port's own
 * speed, not paced"): a 100 Gbit/s NIC.
 */
#define SROCE_CC_UNPACED_LINE	100000000U

/*
 * Defaults: g and K as in the DCQCN paper, the rate steps, T, B and the
 * minimum rate of common RoCE NIC firmware, no line rate (a QP at line
 * rate is not paced; see sroce_cc_line()).  A software fabric with small
 * bottlenecks wants smaller steps and a line rate equal to its port speed
 * (scripts/cc-bench sets them).
 */
static struct sroce_cc_param sroce_cc_params[] = {
	SROCE_CC_PARAM(ecn_mark, 0, 1, 1),
	SROCE_CC_PARAM(np_enable, 0, 1, 1),
	SROCE_CC_PARAM(cnp_interval_us, 0, 1000000, 50),
	SROCE_CC_PARAM(rp_enable, 0, 1, 1),
	SROCE_CC_PARAM(g, 1, 1024, 4),
	SROCE_CC_PARAM(alpha_timer_us, 1, 1000000, 55),
	SROCE_CC_PARAM(rate_timer_us, 1, 1000000, 300),
	SROCE_CC_PARAM(byte_counter, 1024, 1U << 30, 32768),
	SROCE_CC_PARAM(fast_recovery, 1, 64, 5),
	SROCE_CC_PARAM(rate_ai_kbps, 1, SROCE_CC_MAX_RATE, 5000),
	SROCE_CC_PARAM(rate_hai_kbps, 1, SROCE_CC_MAX_RATE, 50000),
	SROCE_CC_PARAM(rate_min_kbps, 1, SROCE_CC_MAX_RATE, 1000),
	SROCE_CC_PARAM(rate_line_kbps, 0, SROCE_CC_MAX_RATE, 0),
};

static struct attribute *sroce_cc_attrs[] = {
	&sroce_cc_params[0].attr.attr,
	&sroce_cc_params[1].attr.attr,
	&sroce_cc_params[2].attr.attr,
	&sroce_cc_params[3].attr.attr,
	&sroce_cc_params[4].attr.attr,
	&sroce_cc_params[5].attr.attr,
	&sroce_cc_params[6].attr.attr,
	&sroce_cc_params[7].attr.attr,
	&sroce_cc_params[8].attr.attr,
	&sroce_cc_params[9].attr.attr,
	&sroce_cc_params[10].attr.attr,
	&sroce_cc_params[11].attr.attr,
	&sroce_cc_params[12].attr.attr,
	NULL
};

static_assert(ARRAY_SIZE(sroce_cc_attrs) == ARRAY_SIZE(sroce_cc_params) + 1);
static_assert(ARRAY_SIZE(sroce_cc_params) * sizeof(u32) ==
	      sizeof(struct sroce_cc_params));

static const struct attribute_group sroce_cc_group = {
	.name = "cc",
	.attrs = sroce_cc_attrs,
};

const struct attribute_group *sroce_cc_port_groups[] = {
	&sroce_cc_group,
	NULL
};

static u32 *sroce_cc_field(struct sroce_cc_params *p,
			   const struct sroce_cc_param *param)
{
	return (u32 *)((u8 *)p + param->offset);
}

void sroce_cc_dev_init(struct sroce_dev *sdev)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sroce_cc_params); i++)
		*sroce_cc_field(&sdev->cc, &sroce_cc_params[i]) =
			sroce_cc_params[i].def;
}

static ssize_t sroce_cc_show(struct ib_device *ibdev, u32 port,
			     struct ib_port_attribute *attr, char *buf)
{
	struct sroce_cc_param *param =
		container_of(attr, struct sroce_cc_param, attr);

	return sysfs_emit(buf, "%u\n",
			  READ_ONCE(*sroce_cc_field(&to_sdev(ibdev)->cc, param)));
}

static DEFINE_MUTEX(sroce_cc_store_mutex);

static ssize_t sroce_cc_store(struct ib_device *ibdev, u32 port,
			      struct ib_port_attribute *attr, const char *buf,
			      size_t count)
{
	struct sroce_cc_param *param =
		container_of(attr, struct sroce_cc_param, attr);
	struct sroce_cc_params *p = &to_sdev(ibdev)->cc;
	ssize_t ret = count;
	u32 val;

	if (kstrtou32(buf, 0, &val) || val < param->min || val > param->max)
		return -EINVAL;

	/* The one relation between two parameters: min <= line. */
	mutex_lock(&sroce_cc_store_mutex);
	if ((param->offset == offsetof(struct sroce_cc_params, rate_min_kbps) &&
	     READ_ONCE(p->rate_line_kbps) && val > READ_ONCE(p->rate_line_kbps)) ||
	    (param->offset == offsetof(struct sroce_cc_params, rate_line_kbps) &&
	     val && val < READ_ONCE(p->rate_min_kbps)))
		ret = -EINVAL;
	else
		WRITE_ONCE(*sroce_cc_field(p, param), val);
	mutex_unlock(&sroce_cc_store_mutex);
	return ret;
}

/* ---- per-QP state ----------------------------------------------------------- */

/*
 * The line rate: rate_line_kbps is the port speed sroce emulates, and a
 * QP is paced to it from the start (when the reaction point is on), as a
 * NIC's port limits it.  0 means the netdev's own speed: QPs at line rate
 * are not paced at all, and DCQCN starts from SROCE_CC_UNPACED_LINE.
 */
static u32 sroce_cc_line(const struct sroce_cc_params *p)
{
	return READ_ONCE(p->rate_line_kbps) ?: SROCE_CC_UNPACED_LINE;
}

/* Is the QP paced while it sends at line rate? */
static bool sroce_cc_line_paced(const struct sroce_cc_params *p)
{
	return READ_ONCE(p->rate_line_kbps) && READ_ONCE(p->rp_enable);
}

static bool sroce_cc_qp_connected(const struct sroce_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_RC || qp->ibqp.qp_type == IB_QPT_UC ||
	       qp->ibqp.qp_type == IB_QPT_XRC_INI ||
	       qp->ibqp.qp_type == IB_QPT_XRC_TGT;
}

static enum hrtimer_restart sroce_cc_pace_expired(struct hrtimer *timer)
{
	struct sroce_cc_qp *cc = container_of(timer, struct sroce_cc_qp,
					      pace_timer);

	sroce_requester_kick(container_of(cc, struct sroce_qp, cc));
	return HRTIMER_NORESTART;
}

/* Line rate, alpha 1 (the paper's initial value). */
static void sroce_cc_qp_start(struct sroce_qp *qp)
{
	struct sroce_cc_qp *cc = &qp->cc;
	u32 line = sroce_cc_line(&qp->sdev->cc);

	WRITE_ONCE(cc->paced, sroce_cc_line_paced(&qp->sdev->cc));
	cc->rc_kbps = line;
	cc->rt_kbps = line;
	cc->alpha = SROCE_CC_ALPHA_ONE;
	cc->timer_steps = 0;
	cc->byte_steps = 0;
	cc->bytes = 0;
	cc->alpha_stamp = 0;
	cc->rate_stamp = 0;
	cc->next_send = 0;
	cc->last_cnp_tx = 0;
}

void sroce_cc_qp_init(struct sroce_qp *qp)
{
	spin_lock_init(&qp->cc.lock);
	/*
	 * Pinned: armed by a requester pass, which runs on the QP's CPU
	 * (see sroce_req_own_cpu()), it kicks the requester there instead
	 * of on a CPU that would only hand over to the work item.
	 */
	hrtimer_init(&qp->cc.pace_timer, CLOCK_MONOTONIC,
		     HRTIMER_MODE_ABS_PINNED_SOFT);
	qp->cc.pace_timer.function = sroce_cc_pace_expired;
	sroce_cc_qp_start(qp);
}

void sroce_cc_qp_reset(struct sroce_qp *qp)
{
	hrtimer_cancel(&qp->cc.pace_timer);
	spin_lock_bh(&qp->cc.lock);
	sroce_cc_qp_start(qp);
	spin_unlock_bh(&qp->cc.lock);
}

/* After sroce_requester_cleanup(): nothing asks for budget any more. */
void sroce_cc_qp_cleanup(struct sroce_qp *qp)
{
	hrtimer_cancel(&qp->cc.pace_timer);
}

/* ---- reaction point: DCQCN ------------------------------------------------ */

static void sroce_cc_at_line_rate(struct sroce_cc_qp *cc,
				  const struct sroce_cc_params *p)
{
	cc->rc_kbps = sroce_cc_line(p);
	cc->rt_kbps = cc->rc_kbps;
	WRITE_ONCE(cc->paced, sroce_cc_line_paced(p));
}

/* One rate increase event (timer or byte counter already counted). */
static void sroce_cc_increase(struct sroce_cc_qp *cc,
			      const struct sroce_cc_params *p, bool by_bytes)
{
	u32 f = READ_ONCE(p->fast_recovery);
	u32 line = sroce_cc_line(p);
	u64 rt = cc->rt_kbps;
	u8 stage = SROCE_CC_STAGE_FR;

	if (max(cc->timer_steps, cc->byte_steps) > f) {
		if (min(cc->timer_steps, cc->byte_steps) > f) {
			rt += READ_ONCE(p->rate_hai_kbps);
			stage = SROCE_CC_STAGE_HAI;
		} else {
			rt += READ_ONCE(p->rate_ai_kbps);
			stage = SROCE_CC_STAGE_AI;
		}
	}
	cc->rt_kbps = min_t(u64, rt, line);
	cc->rc_kbps = DIV_ROUND_UP((u64)cc->rt_kbps + cc->rc_kbps, 2);
	if (cc->rc_kbps >= line)
		sroce_cc_at_line_rate(cc, p);
	trace_sroce_cc_rate_increase(&container_of(cc, struct sroce_qp, cc)->ibqp,
				     cc->rc_kbps, cc->rt_kbps, cc->alpha, stage,
				     by_bytes);
}

/* Apply the alpha periods that ended before @now. */
static void sroce_cc_alpha_catch_up(struct sroce_cc_qp *cc,
				    const struct sroce_cc_params *p, u64 now)
{
	u64 k = (u64)READ_ONCE(p->alpha_timer_us) * NSEC_PER_USEC;
	u32 g = READ_ONCE(p->g);
	u64 n;

	if (now < cc->alpha_stamp + k)
		return;
	n = div64_u64(now - cc->alpha_stamp, k);
	cc->alpha_stamp += n * k;
	if (n > SROCE_CC_MAX_DECAYS) {
		cc->alpha = 0;
		return;
	}
	while (n-- && cc->alpha)
		cc->alpha -= ((u64)cc->alpha * g) >> 10;
}

/* Apply the rate timer periods that ended before @now. */
static void sroce_cc_rate_catch_up(struct sroce_cc_qp *cc,
				   const struct sroce_cc_params *p, u64 now)
{
	u64 t = (u64)READ_ONCE(p->rate_timer_us) * NSEC_PER_USEC;
	u64 n;

	if (now < cc->rate_stamp + t)
		return;
	n = div64_u64(now - cc->rate_stamp, t);
	cc->rate_stamp += n * t;
	if (n > SROCE_CC_MAX_STEPS) {
		sroce_cc_at_line_rate(cc, p);
		return;
	}
	while (n-- && cc->paced && cc->rc_kbps < sroce_cc_line(p)) {
		cc->timer_steps++;
		sroce_cc_increase(cc, p, false);
	}
}

/* Wire time of @bytes at @kbps, in ns. */
static u64 sroce_cc_kbps_ns(u64 bytes, u32 kbps)
{
	return div64_u64(bytes * 8 * USEC_PER_SEC, max(kbps, 1U));
}

u64 sroce_cc_wire_ns(const struct sroce_cc_qp *cc, u64 bytes)
{
	/*
	 * Without cc.lock: the requester only spaces its AckReqs by it, and
	 * a rate a moment old spaces them just as well.
	 */
	return sroce_cc_kbps_ns(bytes, data_race(READ_ONCE(cc->rc_kbps)));
}

bool sroce_cc_tx_budget(struct sroce_qp *qp, u32 bytes)
{
	const struct sroce_cc_params *p = &qp->sdev->cc;
	struct sroce_cc_qp *cc = &qp->cc;
	u64 now = ktime_get_ns();
	u64 burst, b;

	spin_lock(&cc->lock);
	if (!cc->paced)
		goto send;
	/* The timers run from the first CNP on. */
	if (cc->alpha_stamp) {
		sroce_cc_alpha_catch_up(cc, p, now);
		sroce_cc_rate_catch_up(cc, p, now);
		if (!cc->paced)
			goto send;
	}

	if (cc->next_send > now) {
		if (!hrtimer_is_queued(&cc->pace_timer))
			hrtimer_start(&cc->pace_timer, ns_to_ktime(cc->next_send),
				      HRTIMER_MODE_ABS_PINNED_SOFT);
		spin_unlock(&cc->lock);
		return false;
	}
	burst = sroce_cc_kbps_ns(SROCE_CC_BURST, cc->rc_kbps);
	cc->next_send = max(cc->next_send, now > burst ? now - burst : 0) +
			sroce_cc_kbps_ns(bytes, cc->rc_kbps);

	/* Byte counter: one increase step every B bytes. */
	b = READ_ONCE(p->byte_counter);
	cc->bytes += bytes;
	while (cc->bytes >= b && cc->rc_kbps < sroce_cc_line(p)) {
		cc->bytes -= b;
		cc->byte_steps++;
		sroce_cc_increase(cc, p, true);
	}
send:
	spin_unlock(&cc->lock);
	return true;
}

void sroce_cc_rx_cnp(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_cc_params *p = &qp->sdev->cc;
	struct sroce_cc_qp *cc = &qp->cc;
	u32 g = READ_ONCE(p->g);
	u32 rc, rt, alpha;
	u64 now, cut;

	sroce_qp_stat_inc(qp, rx_cnp);
	if (!READ_ONCE(p->rp_enable) || !sroce_cc_qp_connected(qp))
		return;

	now = ktime_get_ns();
	spin_lock(&cc->lock);
	/* alpha decays from the first CNP on, at line rate too. */
	if (cc->alpha_stamp)
		sroce_cc_alpha_catch_up(cc, p, now);
	/* At line rate: the line rate of now, it may have changed. */
	if (!cc->paced)
		cc->rc_kbps = sroce_cc_line(p);
	cc->rt_kbps = cc->rc_kbps;
	cut = ((u64)cc->rc_kbps * cc->alpha) >> (SROCE_CC_ALPHA_SHIFT + 1);
	cc->rc_kbps = max_t(u64, cc->rc_kbps - cut,
			    READ_ONCE(p->rate_min_kbps));
	cc->alpha = cc->alpha - (((u64)cc->alpha * g) >> 10) +
		    ((SROCE_CC_ALPHA_ONE * (u64)g) >> 10);
	cc->alpha = min_t(u32, cc->alpha, SROCE_CC_ALPHA_ONE);
	cc->timer_steps = 0;
	cc->byte_steps = 0;
	cc->bytes = 0;
	cc->alpha_stamp = now;
	cc->rate_stamp = now;
	if (!cc->paced) {
		cc->next_send = now;
		WRITE_ONCE(cc->paced, true);
	}
	rc = cc->rc_kbps;
	rt = cc->rt_kbps;
	alpha = cc->alpha;
	spin_unlock(&cc->lock);

	sroce_qp_stat_inc(qp, cc_rate_cuts);
	trace_sroce_cc_rate_cut(&qp->ibqp, rc, rt, alpha, SROCE_CC_STAGE_CUT,
				false);
}

/* ---- notification point ----------------------------------------------------- */

bool sroce_cc_skb_ce(const struct sk_buff *skb)
{
	const struct iphdr *iph = ip_hdr(skb);

	if (iph->version == 4)
		return INET_ECN_is_ce(iph->tos);
	if (iph->version == 6)
		return INET_ECN_is_ce(ipv6_get_dsfield(ipv6_hdr(skb)));
	return false;
}

/*
 * @qp received a CE-marked packet from its peer: tell the peer's QP, the
 * one that sent it (our dest_qp_num), with a CNP, unless we told it less
 * than cnp_interval_us ago.
 */
void sroce_cc_rx_ce(struct sroce_qp *qp, struct sk_buff *skb)
{
	const struct sroce_cc_params *p = &qp->sdev->cc;
	struct sroce_cc_qp *cc = &qp->cc;
	u64 interval, now;
	struct sk_buff *cnp;

	sroce_qp_stat_inc(qp, rx_ecn_ce);
	if (!READ_ONCE(p->np_enable) || !sroce_cc_qp_connected(qp))
		return;

	interval = (u64)READ_ONCE(p->cnp_interval_us) * NSEC_PER_USEC;
	now = ktime_get_ns();
	spin_lock(&cc->lock);
	if (cc->last_cnp_tx && now - cc->last_cnp_tx < interval) {
		spin_unlock(&cc->lock);
		return;
	}
	cc->last_cnp_tx = now;
	spin_unlock(&cc->lock);

	/* BTH: opcode 0x81, P_Key, BECN, DestQP, PSN 0; 16 zero bytes. */
	cnp = sroce_pkt_alloc(qp, SROCE_OP_CNP, 0, 0, 0);
	if (!cnp)
		return;
	sroce_bth_set_becn(sroce_pkt_bth(cnp));
	if (!sroce_pkt_send(qp, cnp))
		sroce_qp_stat_inc(qp, tx_cnp);
}
