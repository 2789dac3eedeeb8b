// SPDX-License-Identifier: GPL-2.0-only
/*
 * stats.c - the device counters (struct sroce_stats) as port hw counters:
 * /sys/class/infiniband/<dev>/ports/1/hw_counters/ and
 * `rdma statistic show link <dev>/1`.
 *
 * Every field of struct sroce_stats must be listed here; the build fails
 * otherwise.
 */
#include <linux/build_bug.h>
#include <linux/stddef.h>

#include "sroce.h"

/* The name is the field name; priv holds the field's offset. */
#define SROCE_STAT(field) {						\
	.name = #field,							\
	.priv = (const void *)offsetof(struct sroce_stats, field),	\
}

static const struct rdma_stat_desc sroce_stat_descs[] = {
	SROCE_STAT(rx_packets),
	SROCE_STAT(rx_hooked),
	SROCE_STAT(rx_hook_deferred),
	SROCE_STAT(rx_bytes),
	SROCE_STAT(rx_dropped),
	SROCE_STAT(rx_bad_header),
	SROCE_STAT(rx_bad_opcode),
	SROCE_STAT(rx_bad_icrc),
	SROCE_STAT(rx_icrc_trusted),
	SROCE_STAT(rx_no_qp),
	SROCE_STAT(rx_bad_qp_type),
	SROCE_STAT(rx_bad_state),
	SROCE_STAT(rx_bad_addr),
	SROCE_STAT(rx_bad_pkey),
	SROCE_STAT(rx_no_mem),
	SROCE_STAT(rx_cnp),
	SROCE_STAT(rx_ecn_ce),
	SROCE_STAT(tx_packets),
	SROCE_STAT(tx_bytes),
	SROCE_STAT(tx_dropped),
	SROCE_STAT(tx_cnp),
	SROCE_STAT(tx_batches),
	SROCE_STAT(tx_icrc_skipped),
	SROCE_STAT(req_retransmits),
	SROCE_STAT(req_timeouts),
	SROCE_STAT(req_probes),
	SROCE_STAT(req_empty_resends),
	SROCE_STAT(req_retry_exceeded),
	SROCE_STAT(req_rnr_retry_exceeded),
	SROCE_STAT(sq_poll_runs),
	SROCE_STAT(sq_poll_kicks),
	SROCE_STAT(sq_poll_yields),
	SROCE_STAT(sq_poll_backoffs),
	SROCE_STAT(cc_rate_cuts),
	SROCE_STAT(comp_out_of_order),
	SROCE_STAT(comp_held),
	SROCE_STAT(comp_patience_raised),
	SROCE_STAT(comp_naks_seq),
	SROCE_STAT(comp_naks_fatal),
	SROCE_STAT(comp_rnr_naks),
	SROCE_STAT(comp_fault_waits),
	SROCE_STAT(comp_duplicates),
	SROCE_STAT(comp_ghosts),
	SROCE_STAT(comp_dropped),
	SROCE_STAT(resp_seq_naks),
	SROCE_STAT(resp_rnr_naks),
	SROCE_STAT(resp_fatal_naks),
	SROCE_STAT(resp_duplicates),
	SROCE_STAT(resp_read_in_flight),
	SROCE_STAT(resp_bad_key),
	SROCE_STAT(resp_no_recv),
	SROCE_STAT(resp_held),
	SROCE_STAT(resp_dropped),
	SROCE_STAT(resp_xrc_bad_srq),
	SROCE_STAT(cq_overflows),
	SROCE_STAT(odp_faults),
	SROCE_STAT(odp_fault_errors),
	SROCE_STAT(odp_invalidations),
};

#define SROCE_NUM_STATS ARRAY_SIZE(sroce_stat_descs)

/* A counter added to struct sroce_stats but not listed above. */
static_assert(SROCE_NUM_STATS * sizeof(atomic64_t) ==
	      sizeof(struct sroce_stats));

struct rdma_hw_stats *sroce_alloc_hw_port_stats(struct ib_device *ibdev,
						u32 port)
{
	return rdma_alloc_hw_stats_struct(sroce_stat_descs, SROCE_NUM_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

/* Copy @s into @hw, allocated by sroce_alloc_hw_port_stats(). */
void sroce_stats_read(struct rdma_hw_stats *hw, const struct sroce_stats *s)
{
	const void *base = s;
	size_t i;

	for (i = 0; i < SROCE_NUM_STATS; i++) {
		uintptr_t offset = (uintptr_t)sroce_stat_descs[i].priv;

		hw->value[i] = atomic64_read(base + offset);
	}
}

int sroce_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
		       u32 port, int index)
{
	sroce_stats_read(stats, &to_sdev(ibdev)->stats);
	return SROCE_NUM_STATS;
}

/*
 * The name of @counter, a field of @stats ("rx_no_qp"): lets a drop site
 * give the counter it bumped as the reason in the sroce_drop tracepoint.
 */
const char *sroce_stat_name(const struct sroce_stats *stats,
			    const atomic64_t *counter)
{
	uintptr_t offset = (uintptr_t)counter - (uintptr_t)stats;
	size_t i;

	for (i = 0; i < SROCE_NUM_STATS; i++)
		if ((uintptr_t)sroce_stat_descs[i].priv == offset)
			return sroce_stat_descs[i].name;
	return "unknown";
}
