/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Congestion control: ECN marking, congestion notification packets (CNPs)
 * and DCQCN rate control (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015), as RoCE NICs do it.
 *
 *   notification point (NP)  a received RC/UC packet whose IP header says
 *                            CE makes the receiving QP send a CNP (BTH
 *                            opcode 0x81, BECN, DestQP = the QP that sent
 *                            the packet) to its peer, at most one per QP
 *                            per cnp_interval_us;
 *   reaction point (RP)      a CNP cuts the sending QP's rate with DCQCN's
 *                            alpha estimate; timer and byte counter raise
 *                            it again; the requester paces its packets to
 *                            the current rate;
 *   marking                  every transmitted packet carries ECT(0).
 *
 * Parameters are per device (struct sroce_cc_params, sysfs
 * /sys/class/infiniband/<dev>/ports/1/cc/), state is per QP (struct
 * sroce_cc_qp).  See Documentation/congestion-control.rst.
 *
 * The datapath sees four calls.  While a QP is not paced (at line rate
 * with no emulated line rate, always when the reaction point is off) the
 * requester's cost is the one branch on sroce_cc_paced().
 */
#ifndef SROCE_CC_H
#define SROCE_CC_H

#include <linux/bits.h>
#include <linux/compiler.h>
#include <linux/hrtimer.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct sk_buff;
struct sroce_dev;
struct sroce_qp;

/*
 * Device parameters; each one is a sysfs file of the same name.  Written
 * by sysfs with WRITE_ONCE, read by the datapath with READ_ONCE: a new
 * value applies from the next event that uses it.  Rates are in kbit/s so
 * that the small bottlenecks of a software fabric can be modelled.
 */
struct sroce_cc_params {
	u32 ecn_mark;		/* 1: transmit ECT(0) */
	u32 np_enable;		/* 1: answer CE with CNPs */
	u32 cnp_interval_us;	/* minimum gap between CNPs of one QP */
	u32 rp_enable;		/* 1: DCQCN reacts to CNPs */
	u32 g;			/* alpha gain, in 1/1024 */
	u32 alpha_timer_us;	/* K: alpha decays after this without CNP */
	u32 rate_timer_us;	/* T: one rate increase step per period */
	u32 byte_counter;	/* B: one rate increase step per B bytes */
	u32 fast_recovery;	/* F: steps of fast recovery */
	u32 rate_ai_kbps;	/* R_AI: additive increase */
	u32 rate_hai_kbps;	/* R_HAI: hyper increase */
	u32 rate_min_kbps;	/* never paced below this */
	u32 rate_line_kbps;	/* emulated port speed; 0: the netdev's */
};

/* Per-QP congestion state, struct sroce_qp.cc. */
struct sroce_cc_qp {
	/*
	 * Read without the lock by the requester: true while the QP's
	 * packets are paced (below line rate, or at an emulated line rate).
	 */
	bool paced;

	spinlock_t lock;	/* everything below; BH contexts only */
	u32 rc_kbps;		/* current rate */
	u32 rt_kbps;		/* target rate */
	u32 alpha;		/* congestion estimate, SROCE_CC_ALPHA_ONE = 1 */
	u32 timer_steps;	/* rate timer periods since the last cut */
	u32 byte_steps;		/* byte counter periods since the last cut */
	u64 bytes;		/* sent since the last byte counter period */
	u64 alpha_stamp;	/* ns: start of the current alpha period */
	u64 rate_stamp;		/* ns: start of the current rate period */
	u64 next_send;		/* ns: the next packet may leave then */
	u64 last_cnp_tx;	/* ns: our last CNP (notification point) */
	struct hrtimer pace_timer;	/* kicks the requester at next_send */
};

#define SROCE_CC_ALPHA_SHIFT	20
#define SROCE_CC_ALPHA_ONE	BIT(SROCE_CC_ALPHA_SHIFT)

/* Device set-up (device.c) and the sysfs group of port 1. */
void sroce_cc_dev_init(struct sroce_dev *sdev);
extern const struct attribute_group *sroce_cc_port_groups[];

/* QP lifetime (qp.c): create, transition to RESET, destroy. */
void sroce_cc_qp_init(struct sroce_qp *qp);
void sroce_cc_qp_reset(struct sroce_qp *qp);
void sroce_cc_qp_cleanup(struct sroce_qp *qp);

/* Transmit (transmit.c): the ECN bits to put into the IP header. */
static inline u8 sroce_cc_ecn_bits(const struct sroce_cc_params *p)
{
	/* ECT(0) = 0b10 (RFC 3168); data and CNPs alike. */
	return READ_ONCE(p->ecn_mark) ? 0x02 : 0;
}

/*
 * Requester (under req.lock): must this QP's packets be paced
 * (sroce_cc_paced(&qp->cc))?  Then ask
 * sroce_cc_tx_budget() before each one: true means send now (the packet
 * of @bytes on the wire is charged), false means the pace timer will kick
 * the requester when it may.
 */
static inline bool sroce_cc_paced(const struct sroce_cc_qp *cc)
{
	return READ_ONCE(cc->paced);
}

bool sroce_cc_tx_budget(struct sroce_qp *qp, u32 bytes);

/* Time @bytes take on the wire at the QP's current rate, in ns. */
u64 sroce_cc_wire_ns(const struct sroce_cc_qp *cc, u64 bytes);

/*
 * Receive (recv.c), for a packet that passed every check of @qp:
 * sroce_cc_rx_ce() when its IP header says CE, sroce_cc_rx_cnp() when it
 * is a CNP.
 */
bool sroce_cc_skb_ce(const struct sk_buff *skb);
void sroce_cc_rx_ce(struct sroce_qp *qp, struct sk_buff *skb);
void sroce_cc_rx_cnp(struct sroce_qp *qp, struct sk_buff *skb);

#endif /* SROCE_CC_H */
