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

#include <linux/sizes.h>
#include <linux/skbuff.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

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
	/*
	 * READ responses that arrived past a gap, sorted by PSN, kept until
	 * the gap fills (sroce_comp_hold()); and the response at comp.psn
	 * while the pages it goes to fault in (sroce_comp_fault()).
	 */
	struct sk_buff_head held;
	u32 patience;		/* held responses before a go-back-N
				 * (written under req.lock, read by
				 * restrack without it)
				 */
};

/*
 * READ responses past a gap are held, as the responder holds requests
 * (responder.h): at most this many PSNs ahead of comp.psn (the
 * requester's window, SROCE_REQ_MAX_UNACKED), and at most
 * SROCE_COMP_HELD_DEV_BYTES of skb truesize for all QPs of a device.
 * The missing ones are asked for again once comp.patience responses wait
 * behind the gap, a READ's last response arrived behind it, or a
 * retransmit probe went out.  The patience starts at
 * SROCE_COMP_PATIENCE_MIN (TCP's duplicate-ACK threshold: a lost response
 * costs three packet times more than a go-back-N at once) and grows, up
 * to SROCE_COMP_PATIENCE_MAX, to the deepest reordering the path showed
 * (a gap filled by the original response, once it was checked and used,
 * sroce_comp_learn(); counted in comp_patience_raised, shown as
 * read_resp_patience by restrack).
 */
#define SROCE_COMP_HELD_SPAN		256
#define SROCE_COMP_PATIENCE_MIN		3
#define SROCE_COMP_PATIENCE_MAX		64
#define SROCE_COMP_HELD_DEV_BYTES	SZ_32M

/*
 * At QP creation, from sroce_requester_init(), before its
 * sroce_req_reset_state() calls sroce_completer_reset().
 */
void sroce_completer_init(struct sroce_qp *qp);
/*
 * Forget the acknowledgment state and free the held responses: at
 * creation and on the transition to RESET (sroce_req_reset_state(), under
 * req.lock).  sroce_requester_start() sets comp.psn.
 */
void sroce_completer_reset(struct sroce_qp *qp);
/* Free the held responses only: the QP failed or is being destroyed. */
void sroce_completer_drop_held(struct sroce_qp *qp);

/* Receive hook for response opcodes (recv.c); consumes @skb. */
void sroce_completer_rcv(struct sroce_qp *qp, struct sk_buff *skb);

/* ---- shared with the requester (called under req.lock) ------------------ */

/* Retire the oldest WQE with @status: CQE if due, free its ring slot. */
void sroce_comp_retire(struct sroce_qp *qp, enum ib_wc_status status);
/*
 * Place the held responses that comp.psn reached: the one at comp.psn was
 * kept because its pages were faulting in (a requester's pass, a tick
 * after it asked with sroce_req_fault_retry_later()).
 */
void sroce_completer_fault_retry(struct sroce_qp *qp);

#endif /* SROCE_COMPLETER_H */
