/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The response side of a requester: ACKs, NAKs, RDMA READ
 * responses and atomic ACKs -> retired send WQEs and send completions.
 *
 * Responses arrive in PSN order from a correct responder, and each one
 * acknowledges every request PSN before it (IBTA 9.7.5.1), so the
 * completer keeps a single number, comp.psn: the oldest PSN not yet
 * acknowledged.  A response for a PSN before it is a duplicate, one for a
 * PSN the requester never sent is a ghost; both are dropped.  WQEs are
 * retired strictly in SQ order, which makes send completions come out in
 * order as IB requires.
 *
 * The completer runs in the receive softirq, under the requester's lock
 * (req.lock, see requester.h), and uses only the shadow WQEs.
 */
#ifndef SROCE_COMPLETER_H
#define SROCE_COMPLETER_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct sk_buff;
struct sroce_qp;
struct sroce_swqe;

/* Completer state of one QP, embedded in struct sroce_qp as "comp". */
struct sroce_completer {
	u32 psn;		/* oldest unacknowledged PSN */
	/*
	 * A go-back-N from comp.psn was asked for because responses were
	 * missing; later out-of-order responses of the same burst must not
	 * ask again.  Cleared when comp.psn moves.
	 */
	bool retry_started;
};

/* Called by sroce_requester_init(); sroce_requester_start() sets comp.psn. */
void sroce_completer_init(struct sroce_qp *qp);

/* Receive hook for response opcodes (recv.c); consumes @skb. */
void sroce_completer_rcv(struct sroce_qp *qp, struct sk_buff *skb);

/* ---- shared with the requester (called under req.lock) ------------------ */

/* Retire the oldest WQE with @status: CQE if due, free its ring slot. */
void sroce_comp_retire(struct sroce_qp *qp, enum ib_wc_status status);

#endif /* SROCE_COMPLETER_H */
