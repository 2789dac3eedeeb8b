/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * trace.h - sroce tracepoints (TRACE_SYSTEM sroce).  Enable them with
 *   echo 1 > /sys/kernel/tracing/events/sroce/enable
 * and read /sys/kernel/tracing/trace_pipe, or use perf/trace-cmd.
 *
 * They answer "why did this QP stop / slow down": state changes, every
 * go-back-N and what caused it, ACK timeouts, NAKs in both directions,
 * dropped packets with their reason, and completions in error.  Each event
 * names the device and the QP, so one QP can be followed with a filter
 * (echo 'qpn == 17' > events/sroce/filter).
 *
 * The events take plain values, not sroce structures, so that every stage
 * of the pipeline can call them without this header knowing its state.
 * Disabled tracepoints cost a static branch; the arguments are not
 * evaluated.  Exactly one file (trace.c) defines CREATE_TRACE_POINTS.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sroce

#if !defined(SROCE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SROCE_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_verbs.h>

/* QP states (enum ib_qp_state) and completion statuses by name. */
TRACE_DEFINE_ENUM(IB_QPS_RESET);
TRACE_DEFINE_ENUM(IB_QPS_INIT);
TRACE_DEFINE_ENUM(IB_QPS_RTR);
TRACE_DEFINE_ENUM(IB_QPS_RTS);
TRACE_DEFINE_ENUM(IB_QPS_SQD);
TRACE_DEFINE_ENUM(IB_QPS_SQE);
TRACE_DEFINE_ENUM(IB_QPS_ERR);
TRACE_DEFINE_ENUM(IB_WC_SUCCESS);
TRACE_DEFINE_ENUM(IB_WC_LOC_LEN_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_QP_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_EEC_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_PROT_ERR);
TRACE_DEFINE_ENUM(IB_WC_WR_FLUSH_ERR);
TRACE_DEFINE_ENUM(IB_WC_MW_BIND_ERR);
TRACE_DEFINE_ENUM(IB_WC_BAD_RESP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_RNR_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_RDD_VIOL_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_RD_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ABORT_ERR);
TRACE_DEFINE_ENUM(IB_WC_INV_EECN_ERR);
TRACE_DEFINE_ENUM(IB_WC_INV_EEC_STATE_ERR);
TRACE_DEFINE_ENUM(IB_WC_FATAL_ERR);
TRACE_DEFINE_ENUM(IB_WC_RESP_TIMEOUT_ERR);
TRACE_DEFINE_ENUM(IB_WC_GENERAL_ERR);

#define sroce_show_qp_state(x)						\
	__print_symbolic(x,						\
		{ IB_QPS_RESET, "RESET" }, { IB_QPS_INIT, "INIT" },	\
		{ IB_QPS_RTR, "RTR" }, { IB_QPS_RTS, "RTS" },		\
		{ IB_QPS_SQD, "SQD" }, { IB_QPS_SQE, "SQE" },		\
		{ IB_QPS_ERR, "ERR" })

#define sroce_show_wc_status(x)						\
	__print_symbolic(x,						\
		{ IB_WC_SUCCESS, "SUCCESS" },				\
		{ IB_WC_LOC_LEN_ERR, "LOC_LEN_ERR" },			\
		{ IB_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR" },		\
		{ IB_WC_LOC_EEC_OP_ERR, "LOC_EEC_OP_ERR" },		\
		{ IB_WC_LOC_PROT_ERR, "LOC_PROT_ERR" },			\
		{ IB_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR" },			\
		{ IB_WC_MW_BIND_ERR, "MW_BIND_ERR" },			\
		{ IB_WC_BAD_RESP_ERR, "BAD_RESP_ERR" },			\
		{ IB_WC_LOC_ACCESS_ERR, "LOC_ACCESS_ERR" },		\
		{ IB_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR" },		\
		{ IB_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR" },		\
		{ IB_WC_REM_OP_ERR, "REM_OP_ERR" },			\
		{ IB_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR" },		\
		{ IB_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR" },	\
		{ IB_WC_LOC_RDD_VIOL_ERR, "LOC_RDD_VIOL_ERR" },		\
		{ IB_WC_REM_INV_RD_REQ_ERR, "REM_INV_RD_REQ_ERR" },	\
		{ IB_WC_REM_ABORT_ERR, "REM_ABORT_ERR" },		\
		{ IB_WC_INV_EECN_ERR, "INV_EECN_ERR" },			\
		{ IB_WC_INV_EEC_STATE_ERR, "INV_EEC_STATE_ERR" },	\
		{ IB_WC_FATAL_ERR, "FATAL_ERR" },			\
		{ IB_WC_RESP_TIMEOUT_ERR, "RESP_TIMEOUT_ERR" },		\
		{ IB_WC_GENERAL_ERR, "GENERAL_ERR" })

/*
 * AETH syndromes (IBA 9.7.5.1.1, the values of wire.h): the top three
 * bits say ACK (0), RNR NAK (1) or NAK (3); the low five bits are the
 * credit count, the RNR timer code or the NAK code.
 */
#define sroce_show_syndrome(s)						\
	__print_symbolic((s) & 0xe0, { 0x00, "ACK" }, { 0x20, "RNR_NAK" }, \
			 { 0x60, "NAK" })
#define sroce_show_nak_code(s)						\
	__print_symbolic((s) & 0x1f, { 0, "PSN_SEQ_ERR" },		\
			 { 1, "INVALID_REQ" }, { 2, "REM_ACCESS_ERR" },	\
			 { 3, "REM_OP_ERR" }, { 4, "INVALID_RD_REQ" })

/*
 * Strings are copied into fixed arrays rather than with __string(), whose
 * __assign_str() changed its arguments in 6.10: one form for both kernels.
 */
#define SROCE_TP_REASON_LEN	24

#define SROCE_TP_QP_ASSIGN						\
	do {								\
		strscpy(__entry->dev, dev_name(&ibqp->device->dev),	\
			IB_DEVICE_NAME_MAX);				\
		__entry->qpn = ibqp->qp_num;				\
	} while (0)

/*
 * sroce_qp_state: the QP moved from @old to @new (modify_qp, or an error
 * the datapath raised: then @new is ERR).
 */
TRACE_EVENT(sroce_qp_state,
	TP_PROTO(const struct ib_qp *ibqp, enum ib_qp_state old,
		 enum ib_qp_state new),
	TP_ARGS(ibqp, old, new),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(unsigned int, old)
		__field(unsigned int, new)
	),
	TP_fast_assign(
		SROCE_TP_QP_ASSIGN;
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("%s qpn=%u %s -> %s", __entry->dev, __entry->qpn,
		  sroce_show_qp_state(__entry->old),
		  sroce_show_qp_state(__entry->new))
);

/*
 * sroce_retransmit: the requester goes back to @psn and will resend every
 * PSN up to @psn_max (exclusive) that is still unacknowledged.  @reason
 * is a string literal: "timeout", "seq_nak", "rnr_nak", "out_of_order",
 * "probe", "probe_answered" (the probe's answer left PSNs unanswered).
 */
TRACE_EVENT(sroce_retransmit,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u32 psn_max,
		 const char *reason),
	TP_ARGS(ibqp, psn, psn_max, reason),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, psn_max)
		__array(char, reason, SROCE_TP_REASON_LEN)
	),
	TP_fast_assign(
		SROCE_TP_QP_ASSIGN;
		__entry->psn = psn;
		__entry->psn_max = psn_max;
		strscpy(__entry->reason, reason, SROCE_TP_REASON_LEN);
	),
	TP_printk("%s qpn=%u psn=%#x psn_max=%#x pkts=%u reason=%s",
		  __entry->dev, __entry->qpn, __entry->psn,
		  __entry->psn_max,
		  (__entry->psn_max - __entry->psn) & 0xffffff,
		  __entry->reason)
);

/*
 * sroce_ack_timeout: the local ACK timer expired with @psn the oldest
 * unacknowledged PSN; @retries_left before RETRY_EXC_ERR (7: infinite).
 */
TRACE_EVENT(sroce_ack_timeout,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 retries_left),
	TP_ARGS(ibqp, psn, retries_left),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, retries_left)
	),
	TP_fast_assign(
		SROCE_TP_QP_ASSIGN;
		__entry->psn = psn;
		__entry->retries_left = retries_left;
	),
	TP_printk("%s qpn=%u psn=%#x retries_left=%u", __entry->dev,
		  __entry->qpn, __entry->psn, __entry->retries_left)
);

/*
 * NAKs: an AETH with @syndrome at @psn sent by the responder
 * (sroce_nak_sent) or received by the completer (sroce_nak_rcvd).  Plain
 * ACKs (syndrome type 0) do not fire, so the call sites can pass every
 * AETH they build or parse.
 */
DECLARE_EVENT_CLASS(sroce_nak_class,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 syndrome),
	TP_ARGS(ibqp, psn, syndrome),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		SROCE_TP_QP_ASSIGN;
		__entry->psn = psn;
		__entry->syndrome = syndrome;
	),
	TP_printk("%s qpn=%u psn=%#x %s %s(%u)", __entry->dev,
		  __entry->qpn, __entry->psn,
		  sroce_show_syndrome(__entry->syndrome),
		  (__entry->syndrome & 0xe0) == 0x60 ?
			sroce_show_nak_code(__entry->syndrome) : "timer",
		  __entry->syndrome & 0x1f)
);

DEFINE_EVENT_CONDITION(sroce_nak_class, sroce_nak_sent,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 syndrome),
	TP_ARGS(ibqp, psn, syndrome),
	TP_CONDITION(syndrome & 0xe0)
);

DEFINE_EVENT_CONDITION(sroce_nak_class, sroce_nak_rcvd,
	TP_PROTO(const struct ib_qp *ibqp, u32 psn, u8 syndrome),
	TP_ARGS(ibqp, psn, syndrome),
	TP_CONDITION(syndrome & 0xe0)
);

/*
 * sroce_drop: a received packet was dropped.  @qpn is the destination
 * QPN from the BTH and @psn its PSN; both are 0 when the packet was
 * dropped before its BTH was parsed (QP 0 is never an sroce QP).  @reason is a string literal or
 * the name of the counter that counted the drop (sroce_stat_name()).
 */
TRACE_EVENT(sroce_drop,
	TP_PROTO(const struct ib_device *ibdev, u32 qpn, u32 psn,
		 const char *reason),
	TP_ARGS(ibdev, qpn, psn, reason),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, psn)
		__array(char, reason, SROCE_TP_REASON_LEN)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&ibdev->dev),
			IB_DEVICE_NAME_MAX);
		__entry->qpn = qpn;
		__entry->psn = psn;
		strscpy(__entry->reason, reason, SROCE_TP_REASON_LEN);
	),
	TP_printk("%s qpn=%u psn=%#x reason=%s", __entry->dev,
		  __entry->qpn, __entry->psn, __entry->reason)
);

/*
 * sroce_comp_err: a completion with an error status was posted to a CQ
 * (including WR_FLUSH_ERR after the QP entered ERR).  @wc is in the
 * userspace format that sroce_cq_post() takes.
 */
TRACE_EVENT_CONDITION(sroce_comp_err,
	TP_PROTO(const struct ib_cq *ibcq, const struct ib_uverbs_wc *wc),
	TP_ARGS(ibcq, wc),
	TP_CONDITION(wc->status != IB_WC_SUCCESS),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, cqn)
		__field(u32, qpn)
		__field(u64, wr_id)
		__field(u32, status)
		__field(u32, opcode)
		__field(u32, vendor_err)
	),
	TP_fast_assign(
		strscpy(__entry->dev, dev_name(&ibcq->device->dev),
			IB_DEVICE_NAME_MAX);
		__entry->cqn = ibcq->res.id;
		__entry->qpn = wc->qp_num;
		__entry->wr_id = wc->wr_id;
		__entry->status = wc->status;
		__entry->opcode = wc->opcode;
		__entry->vendor_err = wc->vendor_err;
	),
	TP_printk("%s cqn=%u qpn=%u wr_id=%#llx opcode=%u status=%s vendor_err=%u",
		  __entry->dev, __entry->cqn, __entry->qpn,
		  (unsigned long long)__entry->wr_id, __entry->opcode,
		  sroce_show_wc_status(__entry->status), __entry->vendor_err)
);

/*
 * A change of a QP's DCQCN rate: @rc_kbps and @rt_kbps after it, @alpha the
 * congestion estimate (1/2^20), @stage what changed it: a CNP's rate cut
 * or an increase step in fast recovery (target kept), additive or hyper
 * increase, caused by the rate timer or the byte counter (@by_bytes).
 *
 * sroce_cc_rate_cut: a CNP cut the rate (stage cut, alpha after the cut).
 * sroce_cc_rate_increase: one increase step.
 */
#define SROCE_CC_STAGE_FR	0
#define SROCE_CC_STAGE_AI	1
#define SROCE_CC_STAGE_HAI	2
#define SROCE_CC_STAGE_CUT	3

DECLARE_EVENT_CLASS(sroce_cc_rate_class,
	TP_PROTO(const struct ib_qp *ibqp, u32 rc_kbps, u32 rt_kbps, u32 alpha,
		 u8 stage, bool by_bytes),
	TP_ARGS(ibqp, rc_kbps, rt_kbps, alpha, stage, by_bytes),
	TP_STRUCT__entry(
		__array(char, dev, IB_DEVICE_NAME_MAX)
		__field(u32, qpn)
		__field(u32, rc_kbps)
		__field(u32, rt_kbps)
		__field(u32, alpha)
		__field(u8, stage)
		__field(bool, by_bytes)
	),
	TP_fast_assign(
		SROCE_TP_QP_ASSIGN;
		__entry->rc_kbps = rc_kbps;
		__entry->rt_kbps = rt_kbps;
		__entry->alpha = alpha;
		__entry->stage = stage;
		__entry->by_bytes = by_bytes;
	),
	TP_printk("%s qpn=%u rc_kbps=%u rt_kbps=%u alpha=%u/1048576 stage=%s by=%s",
		  __entry->dev, __entry->qpn, __entry->rc_kbps,
		  __entry->rt_kbps, __entry->alpha,
		  __print_symbolic(__entry->stage,
				   { SROCE_CC_STAGE_FR, "fast_recovery" },
				   { SROCE_CC_STAGE_AI, "additive" },
				   { SROCE_CC_STAGE_HAI, "hyper" },
				   { SROCE_CC_STAGE_CUT, "cut" }),
		  __entry->stage == SROCE_CC_STAGE_CUT ? "cnp" :
		  __entry->by_bytes ? "byte_counter" : "timer")
);

DEFINE_EVENT(sroce_cc_rate_class, sroce_cc_rate_cut,
	TP_PROTO(const struct ib_qp *ibqp, u32 rc_kbps, u32 rt_kbps, u32 alpha,
		 u8 stage, bool by_bytes),
	TP_ARGS(ibqp, rc_kbps, rt_kbps, alpha, stage, by_bytes));

DEFINE_EVENT(sroce_cc_rate_class, sroce_cc_rate_increase,
	TP_PROTO(const struct ib_qp *ibqp, u32 rc_kbps, u32 rt_kbps, u32 alpha,
		 u8 stage, bool by_bytes),
	TP_ARGS(ibqp, rc_kbps, rt_kbps, alpha, stage, by_bytes));

#endif /* SROCE_TRACE_H */

/* Out of tree: define_trace.h finds this file through -I (see Kbuild). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
