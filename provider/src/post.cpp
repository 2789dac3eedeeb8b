// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// The data path: posting receive and send work requests into the mapped
// rings.  Receives need no system call (the kernel reads the RQ when a
// packet arrives); sends end with one doorbell write() so the kernel's
// requester looks at the SQ (none while a kernel poller watches it).  No
// allocation, one spinlock per queue.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "sroce.h"
#include "wqe.h"

namespace sroce {

// IBA 10.3.1: sends may be posted from RTS on (in SQD/SQE/ERR they are
// queued or flushed by the kernel); receives from INIT on.  The state is
// the one libibverbs records on every successful ibv_modify_qp.
bool send_state_ok(ibv_qp_state s)
{
	return s != IBV_QPS_RESET && s != IBV_QPS_INIT && s != IBV_QPS_RTR;
}

namespace {

bool recv_state_ok(ibv_qp_state s)
{
	return s != IBV_QPS_RESET;
}

int post_recv_ring(Queue *q, uint32_t max_sge, ibv_recv_wr *wr,
		   ibv_recv_wr **bad_wr)
{
	RingView &r = q->ring;
	int err = 0;

	if (!r.attached()) { // created with max_recv_wr = 0
		*bad_wr = wr;
		return ENOMEM;
	}
	q->lock.lock();
	uint32_t prod = r.producer_owned();
	uint32_t room = r.free_slots();
	uint32_t n = 0;

	for (; wr; wr = wr->next, n++) {
		if (n == room) {
			err = ENOMEM;
			break;
		}
		err = encode_recv_wqe(*wr, max_sge, r.slot(prod + n));
		if (err)
			break;
	}
	// Publish what was written, even when a later request failed.
	if (n)
		r.publish(prod + n);
	q->lock.unlock();
	if (err)
		*bad_wr = wr;
	return err;
}

} // namespace

int ring_doorbell(Qp *qp)
{
	ibv_qp *ibqp = &qp->vqp.qp;
	int db_fd = from_ctx(ibqp->context)->doorbell_fd;
	ssize_t ret;

	if (db_fd >= 0) {
		// The QPN written to the context's doorbell file: the same
		// work in the kernel as the command below, without uverbs'
		// command parsing, allocations and handle lookup.
		const sroce_doorbell db = { ibqp->qp_num };

		ret = write(db_fd, &db, sizeof(db));
		if (ret == static_cast<ssize_t>(sizeof(db)))
			return 0;
		return ret < 0 ? errno : EIO;
	}

	// An IB_USER_VERBS_CMD_POST_SEND with no work requests: the kernel's
	// post_send sees an empty list for a user QP and kicks the requester,
	// which reads the SQ ring.  A raw write() on the command fd is the
	// cheapest way into uverbs (no ioctl attribute parsing).
	sroce_cmd_post_send cmd;
	ib_uverbs_post_send_resp resp;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core.response = reinterpret_cast<uintptr_t>(&resp);
	cmd.core.qp_handle = ibqp->handle;
	cmd.core.wr_count = 0;
	cmd.core.sge_count = 0;
	cmd.core.wqe_size = sizeof(ibv_send_wr);

	ret = write(ibqp->context->cmd_fd, &cmd, sizeof(cmd));
	if (ret == static_cast<ssize_t>(sizeof(cmd)))
		return 0;
	return ret < 0 ? errno : EIO;
}

int ring_send_doorbell(Qp *qp)
{
	// The kernel's SQ poller may be watching the producer index
	// (SROCE_SQ_FLAG_POLLED): then it sends what we just published and
	// the system call is not needed.  The poller stops with "clear flag,
	// barrier, look once more", hence the fence.
	if (qp->sq.ring.flags_after_fence() & SROCE_SQ_FLAG_POLLED)
		return 0;
	return ring_doorbell(qp);
}

int post_send(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr)
{
	return post_send_bind(ibqp, wr, bad_wr, false);
}

// @by_verb: the WRs are the BIND_MW of ibv_bind_mw() (mw.cpp).
int post_send_bind(ibv_qp *ibqp, ibv_send_wr *wr, ibv_send_wr **bad_wr,
		   bool by_verb)
{
	Qp *qp = from_qp(ibqp);
	RingView &r = qp->sq.ring;
	int err = 0;

	if (!send_state_ok(ibqp->state)) {
		*bad_wr = wr;
		return EINVAL;
	}
	if (!r.attached()) { // created with max_send_wr = 0
		*bad_wr = wr;
		return ENOMEM;
	}

	qp->sq.lock.lock();
	uint32_t prod = r.producer_owned();
	uint32_t room = r.free_slots();
	uint32_t n = 0;

	for (; wr; wr = wr->next, n++) {
		if (n == room) {
			err = ENOMEM;
			break;
		}
		err = encode_send_wqe(*wr, qp->send, r.entry_size(),
				      r.slot(prod + n), by_verb);
		if (err)
			break;
	}
	if (n)
		r.publish(prod + n);
	qp->sq.lock.unlock();

	// The requests before a failed one are posted: the kernel must see
	// them whatever we report for the failed one.  The doorbell is rung
	// outside the lock: it only says "look at the SQ", and the kernel
	// reads the producer index itself, so a racing poster's WQEs are
	// covered by one of the two doorbells.
	if (n) {
		int db = ring_send_doorbell(qp);
		if (!err && db) {
			err = db;
			wr = nullptr; // every request is queued; none is "bad"
		}
	}
	if (err)
		*bad_wr = wr;
	return err;
}

int post_recv(ibv_qp *ibqp, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	Qp *qp = from_qp(ibqp);

	// A QP attached to an SRQ has no receive queue of its own.
	if (qp->srq || !recv_state_ok(ibqp->state)) {
		*bad_wr = wr;
		return EINVAL;
	}
	int err = post_recv_ring(&qp->rq, qp->max_recv_sge, wr, bad_wr);
	// In the error state only the kernel can complete the new receives
	// (with WR_FLUSH_ERR): the store-load order against the kernel's
	// "set flag, barrier, flush" needs a full fence (SROCE_RQ_FLAG_FLUSH).
	// A failed doorbell is reported as post_send does: every request is
	// queued (none is "bad") but the kernel was not told to flush them.
	if (qp->rq.ring.attached() &&
	    (qp->rq.ring.flags_after_fence() & SROCE_RQ_FLAG_FLUSH)) {
		int db = ring_doorbell(qp);
		if (!err && db) {
			err = db;
			*bad_wr = nullptr;
		}
	}
	return err;
}

int post_srq_recv(ibv_srq *ibsrq, ibv_recv_wr *wr, ibv_recv_wr **bad_wr)
{
	Srq *srq = from_srq(ibsrq);

	return post_recv_ring(&srq->rq, srq->max_sge, wr, bad_wr);
}

} // namespace sroce
