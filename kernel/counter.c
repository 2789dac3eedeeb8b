// SPDX-License-Identifier: GPL-2.0-only
/*
 * counter.c - per-QP counters: the rdma counters of `rdma statistic qp`
 * (the core's struct rdma_counter, bound to QPs automatically by QP type
 * or process, or by hand).
 *
 * A counter is a struct sroce_stats of its own (struct sroce_counter),
 * found by the counter's id in sdev->counter_xa.  A QP bound to it counts
 * its own events there instead of in the device's counters (qp->stats,
 * sroce_qp_stat_add()): the packets and bytes it sends, its requester's,
 * completer's and responder's retransmissions, NAKs, duplicates and
 * drops, its SQ poller's and its congestion control's events.  What is
 * counted before a received packet has a QP (the rx_* counters), for a CQ
 * (cq_overflows) or an MR (odp_*), and tx_icrc_skipped stay the device's.
 * As with a NIC's counter sets, the device's own counters (sysfs
 * hw_counters) then leave the bound QPs' events out, and `rdma statistic
 * show link` adds the counters' to them (the core does).
 *
 * Lifetime: the core allocates and frees struct rdma_counter, binds and
 * unbinds under the counter's mutex, and deallocates it once no QP is
 * bound (the last one unbound, or destroyed).  The datapath reads
 * qp->stats under RCU, so a counter's memory is freed a grace period
 * after its last QP left it; events counted in that window are lost, as
 * a NIC's are when a counter set goes.
 */
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/rdma_counter.h>

#include "qp.h"
#include "sroce.h"

struct sroce_counter {
	struct sroce_stats stats;
	struct rcu_head rcu;
};

/* The counts of @counter; NULL before its first QP is bound. */
static struct sroce_counter *sroce_counter_find(struct rdma_counter *counter)
{
	return xa_load(&to_sdev(counter->device)->counter_xa, counter->id);
}

/* The same counters as the port's: the core adds them up by index. */
struct rdma_hw_stats *sroce_counter_alloc_stats(struct rdma_counter *counter)
{
	return sroce_alloc_hw_port_stats(counter->device, counter->port);
}

int sroce_counter_update_stats(struct rdma_counter *counter)
{
	struct sroce_counter *sc = sroce_counter_find(counter);

	if (sc)
		sroce_stats_read(counter->stats, &sc->stats);
	return 0;
}

/* The first QP bound to a counter gives it an id and its counts. */
int sroce_counter_bind_qp(struct rdma_counter *counter, struct ib_qp *ibqp)
{
	struct sroce_dev *sdev = to_sdev(ibqp->device);
	struct sroce_counter *sc;
	int err;

	if (counter->id) {
		sc = sroce_counter_find(counter);
		if (WARN_ON_ONCE(!sc))
			return -EINVAL;
	} else {
		sc = kzalloc(sizeof(*sc), GFP_KERNEL);
		if (!sc)
			return -ENOMEM;
		err = xa_alloc(&sdev->counter_xa, &counter->id, sc,
			       xa_limit_32b, GFP_KERNEL);
		if (err) {
			kfree(sc);
			return err;
		}
	}
	rcu_assign_pointer(to_sqp(ibqp)->stats, &sc->stats);
	ibqp->counter = counter;
	return 0;
}

/* Back to the device's counters (also when the QP is destroyed). */
int sroce_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct sroce_qp *qp = to_sqp(ibqp);

	rcu_assign_pointer(qp->stats, &qp->sdev->stats);
	ibqp->counter = NULL;
	return 0;
}

int sroce_counter_dealloc(struct rdma_counter *counter)
{
	struct sroce_counter *sc;

	if (!counter->id)
		return 0;
	sc = xa_erase(&to_sdev(counter->device)->counter_xa, counter->id);
	if (sc)
		kfree_rcu(sc, rcu);
	return 0;
}
