/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The send queue poller (sq_poll.c): posts to a user QP's send queue
 * without a system call, for as long as the module parameter sq_poll_us,
 * or the QP's own request within sq_poll_max_us, allows.
 */
#ifndef SROCE_SQ_POLL_H
#define SROCE_SQ_POLL_H

#include <linux/types.h>

struct sroce_qp;

/* The poller's workqueue; called by the requester's module init/exit. */
int sroce_sq_poll_module_init(void);
void sroce_sq_poll_module_exit(void);

/* With the requester's init and cleanup (requester.c). */
void sroce_sq_poll_init(struct sroce_qp *qp);
void sroce_sq_poll_stop(struct sroce_qp *qp);
/* qp.c: what create_qp asked for (0: the module parameter decides). */
void sroce_sq_poll_set(struct sroce_qp *qp, u32 poll_us);

/* qp.c: a user QP's doorbell in RTS; true if a poller took it. */
bool sroce_sq_poll_doorbell(struct sroce_qp *qp);

#endif /* SROCE_SQ_POLL_H */
