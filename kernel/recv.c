// SPDX-License-Identifier: GPL-2.0-only
/*
 * Entry of the receive pipeline: UDP socket -> header and ICRC
 * checks -> QP lookup -> dispatch.
 *
 * Everything in a packet is checked before anything acts on it, in the
 * order below; the first failure drops the packet and counts why:
 *
 *   length   UDP length = datagram; room for a BTH and the ICRC
 *   BTH      transport version 0, an opcode sroce knows
 *   headers  the opcode's extension headers are there (and linear);
 *            the pad fits in the payload; no payload where the opcode
 *            carries none
 *   ICRC     over the whole packet, after the headers are known to be
 *            there, before any QP state is looked at; not for a packet
 *            that never crossed a wire (sroce_rx_icrc())
 *   QP       one with that number exists (a reference is taken), of a
 *            type the opcode is defined for, in a state that receives
 *            that class of packet, connected to the packet's sender
 *   P_Key    the partition of our only P_Key table entry
 *
 * Then a packet marked CE in its IP header has its QP send a CNP
 * (cc.c), and request opcodes go to the responder, response opcodes to
 * the completer, a CNP to congestion control, all in this softirq.  The
 * QP reference is dropped after they return: a role that keeps a packet longer (the responder's
 * backlog) is covered by QP destroy, which cancels and purges it.
 */
#include <linux/if_ether.h>
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <linux/udp.h>

#include "cc.h"
#include "completer.h"
#include "icrc.h"
#include "mcast.h"
#include "net.h"
#include "opcode.h"
#include "pkt.h"
#include "qp.h"
#include "responder.h"
#include "sroce.h"
#include "trace.h"
#include "transmit.h"

/* Why a packet was dropped; each reason has a device counter. */
enum sroce_rx_drop {
	SROCE_RX_OK,
	SROCE_RX_BAD_HEADER,	/* lengths, version, pad, missing headers */
	SROCE_RX_BAD_OPCODE,	/* not in the opcode table */
	SROCE_RX_BAD_ICRC,
	SROCE_RX_NO_QP,
	SROCE_RX_BAD_QP_TYPE,	/* opcode not defined for the QP's type */
	SROCE_RX_BAD_STATE,	/* QP not in a state that receives it */
	SROCE_RX_BAD_ADDR,	/* not from the QP's peer */
	SROCE_RX_BAD_PKEY,
};

/* Count (and trace) a dropped packet; pkt holds what was parsed of it. */
static void sroce_rx_count_drop(struct sroce_dev *sdev, struct sk_buff *skb,
				enum sroce_rx_drop reason)
{
	struct sroce_stats *s = &sdev->stats;
	atomic64_t *counter;

	switch (reason) {
	case SROCE_RX_BAD_HEADER:
		counter = &s->rx_bad_header;
		break;
	case SROCE_RX_BAD_OPCODE:
		counter = &s->rx_bad_opcode;
		break;
	case SROCE_RX_BAD_ICRC:
		counter = &s->rx_bad_icrc;
		break;
	case SROCE_RX_NO_QP:
		counter = &s->rx_no_qp;
		break;
	case SROCE_RX_BAD_QP_TYPE:
		counter = &s->rx_bad_qp_type;
		break;
	case SROCE_RX_BAD_STATE:
		counter = &s->rx_bad_state;
		break;
	case SROCE_RX_BAD_ADDR:
		counter = &s->rx_bad_addr;
		break;
	case SROCE_RX_BAD_PKEY:
		counter = &s->rx_bad_pkey;
		break;
	default:
		return;
	}
	atomic64_inc(counter);
	atomic64_inc(&s->rx_dropped);
	trace_sroce_drop(&sdev->ibdev, SROCE_PKT(skb)->qpn, SROCE_PKT(skb)->psn,
			 sroce_stat_name(s, counter));
}

/* ---- the packet on its own ------------------------------------------------ */

/* skb->data at the UDP header: strip it, keep the BTH in the linear part. */
static enum sroce_rx_drop sroce_rx_udp(struct sk_buff *skb)
{
	unsigned int ulen;

	/*
	 * RoCEv2 has no IPv6 extension headers, and the ICRC covers a plain
	 * 40-byte IPv6 header: a packet with one is malformed, not corrupt.
	 */
	if (skb->protocol == htons(ETH_P_IPV6) &&
	    skb_transport_header(skb) - skb_network_header(skb) !=
	    sizeof(struct ipv6hdr))
		return SROCE_RX_BAD_HEADER;
	if (!pskb_may_pull(skb, sizeof(struct udphdr) + SROCE_BTH_LEN))
		return SROCE_RX_BAD_HEADER;
	ulen = ntohs(udp_hdr(skb)->len);
	/* The UDP layer trimmed the skb to the datagram; insist on it. */
	if (ulen != skb->len ||
	    ulen < sizeof(struct udphdr) + SROCE_BTH_LEN + SROCE_ICRC_LEN)
		return SROCE_RX_BAD_HEADER;
	__skb_pull(skb, sizeof(struct udphdr));
	return SROCE_RX_OK;
}

/* The BTH and what the opcode table says must follow it. */
static enum sroce_rx_drop sroce_rx_bth(struct sk_buff *skb)
{
	const struct sroce_bth *bth = sroce_pkt_bth(skb);
	struct sroce_pkt *pkt = SROCE_PKT(skb);
	const struct sroce_opcode_info *op;
	unsigned int body;

	if (sroce_bth_tver(bth) != SROCE_BTH_TVER)
		return SROCE_RX_BAD_HEADER;
	if (!sroce_opcode_valid(bth->opcode))
		return SROCE_RX_BAD_OPCODE;
	op = sroce_opcode_info(bth->opcode);

	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = bth->opcode;
	pkt->hdr_len = op->hdr_len;
	pkt->pad = sroce_bth_pad(bth);
	pkt->psn = sroce_bth_psn(bth);
	pkt->qpn = sroce_bth_qpn(bth);
	pkt->flags = (sroce_bth_ackreq(bth) ? SROCE_PKT_ACKREQ : 0) |
		     (sroce_bth_se(bth) ? SROCE_PKT_SE : 0);

	if (skb->len < op->hdr_len + SROCE_ICRC_LEN)
		return SROCE_RX_BAD_HEADER;
	body = skb->len - op->hdr_len - SROCE_ICRC_LEN;
	if (pkt->pad > body)
		return SROCE_RX_BAD_HEADER;
	if (!(op->flags & SROCE_OPF_PAYLOAD) && body)
		return SROCE_RX_BAD_HEADER;
	pkt->paylen = body - pkt->pad;

	/* May reallocate the head: nothing above points into it any more. */
	if (!pskb_may_pull(skb, op->hdr_len))
		return SROCE_RX_BAD_HEADER;
	return SROCE_RX_OK;
}

/*
 * The ICRC guards the packet against corruption on a wire.  One whose
 * checksum state is CHECKSUM_PARTIAL never crossed a wire: the kernel
 * gives that state only to packets built in this host and handed on in
 * memory (a veth, loopback); whatever puts one on a wire fills its UDP
 * checksum in first, and the receiving host sees a checksum.  TCP and UDP
 * skip their checksums for such packets; sroce skips the ICRC check
 * (counted in rx_icrc_trusted).  It sends its own packets to a veth or
 * loopback that way (transmit.c), rdma_rxe and raw sockets do not.
 */
static enum sroce_rx_drop sroce_rx_icrc(struct sroce_dev *sdev,
					struct sk_buff *skb)
{
	int err;

	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		atomic64_inc(&sdev->stats.rx_icrc_trusted);
		return SROCE_RX_OK;
	}
	err = sroce_icrc_verify(skb);
	if (err == -EBADMSG)
		return SROCE_RX_BAD_ICRC;
	return err ? SROCE_RX_BAD_HEADER : SROCE_RX_OK;
}

static enum sroce_rx_drop sroce_rx_check_packet(struct sroce_dev *sdev,
						struct sk_buff *skb)
{
	enum sroce_rx_drop reason;

	reason = sroce_rx_udp(skb);
	if (reason == SROCE_RX_OK)
		reason = sroce_rx_bth(skb);
	if (reason == SROCE_RX_OK)
		reason = sroce_rx_icrc(sdev, skb);
	return reason;
}

/* ---- the packet and its QP ----------------------------------------------- */

static u8 sroce_qp_type_bit(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return SROCE_QPT_RC;
	case IB_QPT_UC:
		return SROCE_QPT_UC;
	case IB_QPT_UD:
	case IB_QPT_GSI:
		return SROCE_QPT_UD;
	case IB_QPT_XRC_INI:
		return SROCE_QPT_XRC_INI;
	case IB_QPT_XRC_TGT:
		return SROCE_QPT_XRC_TGT;
	default:
		return 0;
	}
}

/*
 * IBA 10.3.1: a QP receives requests from RTR on and responses while its
 * send queue is alive (RTS, SQD, SQE).  In ERR everything is dropped: the
 * queues are being flushed.
 */
static bool sroce_rx_state_ok(enum ib_qp_state state, bool request)
{
	switch (state) {
	case IB_QPS_RTR:
		return request;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		return true;
	default:
		return false;
	}
}

/* Does @skb come from the QP's peer, as its path says now? */
static bool sroce_rx_from_peer(struct sroce_qp *qp, const struct sk_buff *skb)
{
	struct sroce_av av;

	sroce_qp_av_read(qp, &av);
	return sroce_av_match(&av, skb);
}

/*
 * P_Key matching (IBA 10.9.3): the low 15 bits name the partition and
 * two limited members may not talk.  Our table holds the full-member
 * default key only.
 */
static bool sroce_rx_pkey_ok(const struct sroce_bth *bth)
{
	u16 pkey = be16_to_cpu(bth->pkey);

	return (pkey & 0x7fff) == (SROCE_DEFAULT_PKEY & 0x7fff);
}

static enum sroce_rx_drop sroce_rx_check_qp(struct sroce_qp *qp,
					    struct sk_buff *skb)
{
	const struct sroce_opcode_info *op =
		sroce_opcode_info(SROCE_PKT(skb)->opcode);
	bool request = op->flags & SROCE_OPF_REQ;

	if (!(op->qp_types & sroce_qp_type_bit(qp->ibqp.qp_type)))
		return SROCE_RX_BAD_QP_TYPE;
	if (!(op->flags & (SROCE_OPF_REQ | SROCE_OPF_RESP)) &&
	    op->kind != SROCE_OPK_CNP)
		return SROCE_RX_BAD_QP_TYPE;
	if (!sroce_rx_state_ok(sroce_qp_state(qp), request))
		return SROCE_RX_BAD_STATE;
	if ((sroce_qp_is_reliable(qp) || qp->ibqp.qp_type == IB_QPT_UC) &&
	    !sroce_rx_from_peer(qp, skb))
		return SROCE_RX_BAD_ADDR;
	if (!sroce_rx_pkey_ok(sroce_pkt_bth(skb)))
		return SROCE_RX_BAD_PKEY;
	return SROCE_RX_OK;
}

/*
 * Hand a checked packet to a QP it is for (the caller holds a reference
 * on @qp); consumes @skb.
 */
static void sroce_rx_deliver(struct sroce_qp *qp, struct sk_buff *skb)
{
	enum sroce_rx_drop reason;
	bool request;

	request = sroce_opcode_info(SROCE_PKT(skb)->opcode)->flags &
		  SROCE_OPF_REQ;
	/* Payload stays where it is, fragments too: pkt.h. */
	reason = sroce_rx_check_qp(qp, skb);
	if (reason != SROCE_RX_OK) {
		sroce_rx_count_drop(qp->sdev, skb, reason);
		kfree_skb(skb);
		return;
	}

	SROCE_PKT(skb)->qp = qp;
	if (unlikely(SROCE_PKT(skb)->opcode == SROCE_OP_CNP)) {
		/* A CE mark on a CNP is not answered: no CNP storms. */
		sroce_cc_rx_cnp(qp, skb);
		consume_skb(skb);
		return;
	}
	if (unlikely(sroce_cc_skb_ce(skb)))
		sroce_cc_rx_ce(qp, skb);
	if (request)
		sroce_responder_rcv(qp, skb);
	else
		sroce_completer_rcv(qp, skb);
}

/*
 * The multicast QPN: only UD sends use it (IBA 10.5.1.3); the packet goes
 * to every QP attached to the group of its destination address.
 */
static enum sroce_rx_drop sroce_rx_mcast(struct sroce_dev *sdev,
					 struct sk_buff *skb)
{
	const struct sroce_opcode_info *op =
		sroce_opcode_info(SROCE_PKT(skb)->opcode);

	if (op->qp_types != SROCE_QPT_UD)
		return SROCE_RX_BAD_QP_TYPE;
	if (!sroce_mcast_rcv(sdev, skb, sroce_rx_deliver))
		return SROCE_RX_NO_QP;
	return SROCE_RX_OK;
}

void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb)
{
	enum sroce_rx_drop reason;
	struct sroce_qp *qp;

	/* Counted from the BTH to the ICRC, as tx_bytes (sroce.h). */
	atomic64_inc(&sdev->stats.rx_packets);
	if (skb->len > sizeof(struct udphdr))
		atomic64_add(skb->len - sizeof(struct udphdr),
			     &sdev->stats.rx_bytes);
	memset(SROCE_PKT(skb), 0, sizeof(struct sroce_pkt));

	reason = sroce_rx_check_packet(sdev, skb);
	if (reason != SROCE_RX_OK)
		goto drop;
	SROCE_PKT(skb)->sdev = sdev;

	if (SROCE_PKT(skb)->qpn == SROCE_MCAST_QPN) {
		reason = sroce_rx_mcast(sdev, skb);
		if (reason != SROCE_RX_OK)
			goto drop;
		return;
	}

	qp = sroce_qp_get(sdev, SROCE_PKT(skb)->qpn);
	if (!qp) {
		reason = SROCE_RX_NO_QP;
		goto drop;
	}
	sroce_rx_deliver(qp, skb);
	sroce_qp_put(qp);
	return;

drop:
	sroce_rx_count_drop(sdev, skb, reason);
	kfree_skb(skb);
}

void sroce_rx_drop_malformed(struct sroce_dev *sdev, struct sk_buff *skb)
{
	/* nothing parsed: no QP, no PSN in the trace */
	memset(SROCE_PKT(skb), 0, sizeof(struct sroce_pkt));
	sroce_rx_count_drop(sdev, skb, SROCE_RX_BAD_HEADER);
	kfree_skb(skb);
}
