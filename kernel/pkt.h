/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One RoCEv2 packet inside the pipeline, and the transmit API.
 *
 * A packet is an skb whose data pointer sits at the BTH while the pipeline
 * works on it: from sroce_pkt_alloc() until sroce_pkt_send() on the way
 * out, from recv.c's checks until the responder or completer consumed it
 * on the way in.  struct sroce_pkt, in skb->cb, says what the headers
 * hold so that nobody parses them twice; the extension headers are found
 * through the opcode table (sroce_pkt_hdr()).
 *
 *   IP | UDP | BTH | ext headers | payload | pad | ICRC
 *              ^ skb->data       ^ sroce_pkt_payload()
 *
 * Payload of received packets.  Requests (responder) and READ responses
 * (completer) keep their payload where the NIC, or a local sender's
 * zero-copy transmit, put it: possibly in page fragments.  Both roles copy
 * it out with sroce_pkt_copy_payload() and never dereference
 * sroce_pkt_payload() of a received packet; only the headers up to
 * hdr_len are linear (recv.c).
 */
#ifndef SROCE_PKT_H
#define SROCE_PKT_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/skbuff.h>

#include "opcode.h"
#include "psn.h"

struct sroce_av;
struct sroce_dev;
struct sroce_mr;
struct sroce_qp;

/* Flags of sroce_pkt_alloc(), kept in sroce_pkt.flags. */
#define SROCE_PKT_ACKREQ	BIT(0)	/* BTH AckReq */
#define SROCE_PKT_SE		BIT(1)	/* BTH solicited event */

struct sroce_pkt {
	struct sroce_dev *sdev;
	struct sroce_qp *qp;	/* borrowed: the caller holds the QP */
	u32 psn;
	u32 qpn;		/* BTH destination QP */
	u32 paylen;		/* payload bytes, without pad and ICRC */
	u8 opcode;
	u8 hdr_len;		/* BTH + extension headers */
	u8 pad;			/* BTH pad count */
	u8 flags;		/* SROCE_PKT_* */
	u32 held_charge;	/* truesize charged while held */
};

static inline struct sroce_pkt *SROCE_PKT(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sroce_pkt) > sizeof_field(struct sk_buff, cb));
	return (struct sroce_pkt *)skb->cb;
}

static inline struct sroce_bth *sroce_pkt_bth(struct sk_buff *skb)
{
	return (struct sroce_bth *)skb->data;
}

/*
 * The extension header @h of the packet; the caller knows (from the
 * opcode table) that the opcode carries it.
 */
static inline void *sroce_pkt_hdr(struct sk_buff *skb, enum sroce_hdr h)
{
	return skb->data + sroce_hdr_offset(SROCE_PKT(skb)->opcode, h);
}

/* Start of the payload: see above for received request packets. */
static inline u8 *sroce_pkt_payload(struct sk_buff *skb)
{
	return skb->data + SROCE_PKT(skb)->hdr_len;
}

/*
 * May this context use the per-CPU skb cache that NAPI drivers recycle
 * through?  It needs bottom halves off, as on the receive path and under
 * the requester's and responder's locks.
 */
static inline bool sroce_pkt_napi_cache_ok(void)
{
	return in_softirq() && !in_hardirq();
}

/*
 * Free a packet the pipeline is done with (a request executed, a response
 * or ACK completed).  Where it may, its struct sk_buff goes to the per-CPU
 * cache and the transmit side (sroce_pkt_alloc()) takes its next ones from
 * there: no slab round trip per packet in either direction.
 */
static inline void sroce_pkt_consume(struct sk_buff *skb)
{
	napi_consume_skb(skb, sroce_pkt_napi_cache_ok());
}

/*
 * Packets held past a gap in the PSNs (requests by the responder, READ
 * responses by the completer): a queue sorted by PSN, under the role's
 * lock, each packet's truesize charged to a per-device budget (sroce.h),
 * so that all QPs together pin a bounded amount of memory whatever the
 * peer sends.  Truesize, not a count: a received skb can hold much more
 * than its payload (a NIC's page fragment, a local sender's MR pages).
 * The charge is kept in the packet, so that what is taken back is what
 * was charged even if the skb changed meanwhile.
 */
enum sroce_held_add {
	SROCE_HELD_ADDED,
	SROCE_HELD_DUPLICATE,	/* that PSN is held already */
	SROCE_HELD_NO_ROOM,	/* it would take the device past @dev_max */
};

/* Add @n to @dev_bytes unless that would take it past @dev_max. */
static inline bool sroce_held_charge(atomic_t *dev_bytes, int dev_max, int n)
{
	int old = atomic_read(dev_bytes);

	do {
		if (n > dev_max - old)
			return false;
	} while (!atomic_try_cmpxchg(dev_bytes, &old, old + n));
	return true;
}

/*
 * Queue @skb in PSN order.  The walk starts at the tail: what arrives
 * after a gap mostly comes in order, so it stops at once.  Unless it was
 * added, @skb stays the caller's.
 */
static inline enum sroce_held_add
sroce_held_add(struct sk_buff_head *held, atomic_t *dev_bytes, int dev_max,
	       struct sk_buff *skb)
{
	u32 psn = SROCE_PKT(skb)->psn;
	struct sk_buff *pos;

	skb_queue_reverse_walk(held, pos) {
		s32 d = sroce_psn_diff(SROCE_PKT(pos)->psn, psn);

		if (!d)
			return SROCE_HELD_DUPLICATE;
		if (d > 0)
			break;
	}
	if (!sroce_held_charge(dev_bytes, dev_max, skb->truesize))
		return SROCE_HELD_NO_ROOM;
	SROCE_PKT(skb)->held_charge = skb->truesize;
	/* After @pos: the list head itself puts it at the front. */
	__skb_queue_after(held, pos, skb);
	return SROCE_HELD_ADDED;
}

/* Take @skb out of @held: it is the caller's again. */
static inline void sroce_held_unlink(struct sk_buff_head *held,
				     atomic_t *dev_bytes, struct sk_buff *skb)
{
	__skb_unlink(skb, held);
	atomic_sub(SROCE_PKT(skb)->held_charge, dev_bytes);
}

/* Free everything held (reset, QP error, destroy). */
static inline void sroce_held_purge(struct sk_buff_head *held,
				    atomic_t *dev_bytes)
{
	struct sk_buff *skb;

	while ((skb = skb_peek(held))) {
		sroce_held_unlink(held, dev_bytes, skb);
		kfree_skb(skb);
	}
}

static inline bool sroce_pkt_ackreq(struct sk_buff *skb)
{
	return SROCE_PKT(skb)->flags & SROCE_PKT_ACKREQ;
}

static inline bool sroce_pkt_se(struct sk_buff *skb)
{
	return SROCE_PKT(skb)->flags & SROCE_PKT_SE;
}

/* ---- transmit.c ---------------------------------------------------------- */

/*
 * sroce_pkt_alloc() - a packet of @qp ready to be filled
 * @qp: the sending QP (RC/UC: BTH DestQP is qp->attr.dest_qp_num)
 * @opcode: a valid opcode; its extension headers are zeroed in place
 * @psn: BTH PSN
 * @payload_len: bytes reserved at sroce_pkt_payload() (not initialised);
 *	the pad and the ICRC after them are zeroed
 * @flags: SROCE_PKT_ACKREQ, SROCE_PKT_SE
 *
 * Headroom is reserved for the link, IP and UDP headers.  Atomic context
 * is fine.  Return: the skb, or NULL without memory.
 */
struct sk_buff *sroce_pkt_alloc(struct sroce_qp *qp, u8 opcode, u32 psn,
				u32 payload_len, u32 flags);

/*
 * Zero-copy transmit.  The payload of an RC or XRC SEND or WRITE request
 * and of a READ response from user MRs is not copied: the MR's pinned
 * pages go into the skb as page fragments, each with a page reference, so
 * a deregistration (or the owner's exit) while the packet is queued is
 * harmless: the page outlives the MR until the skb is freed.  That saves
 * one copy of every payload byte on the sending side; the ICRC still
 * reads them once.  A request completes only when the peer acknowledged
 * it, so the application rewrites its buffer only once the responder took
 * the data (a copy still queued is a duplicate, never executed); UC and
 * UD complete a request when it is sent, so theirs are copied: a packet
 * still queued would carry what the buffer holds later (its ICRC would
 * no longer match, or, where the receiver trusts it, recv.c, be taken as
 * sent).  Payloads below SROCE_PKT_ZC_MIN are copied: a
 * fragment costs more than copying a few hundred bytes.  Kernel MRs (DMA,
 * fast registration) are copied too, and so is a packet whose memory would
 * need more fragments than an skb has.
 */
#define SROCE_PKT_ZC_MIN	512

/*
 * Zero-copy packets: sroce_pkt_alloc_zc() is sroce_pkt_alloc() with only
 * the headers in the linear area; the caller then attaches the payload,
 * exactly payload_len bytes, as page fragments with sroce_pkt_add_mr()
 * or sroce_pkt_add_page() (each fragment takes a page reference of its
 * own), and ends with sroce_pkt_finish_zc(), which adds the pad and the
 * room for the ICRC (0, -ENOMEM or -EMSGSIZE).  On failure the caller
 * frees the skb, and builds the packet by copying instead.
 *
 * sroce_pkt_add_mr() attaches @len bytes at @iova of @mr, a range the
 * caller checked (sroce_mr_check()) and whose MR reference it holds
 * while attaching.  Return: 0, -EOPNOTSUPP for an MR without user pages,
 * -EMSGSIZE when the fragments are used up.
 */
struct sk_buff *sroce_pkt_alloc_zc(struct sroce_qp *qp, u8 opcode, u32 psn,
				   u32 payload_len, u32 flags);
int sroce_pkt_add_page(struct sk_buff *skb, struct page *page,
		       unsigned int off, unsigned int len);
int sroce_pkt_add_mr(struct sk_buff *skb, struct sroce_mr *mr, u64 iova,
		     u32 len);
int sroce_pkt_finish_zc(struct sk_buff *skb);

/*
 * sroce_pkt_send() - send a packet built by sroce_pkt_alloc()
 *
 * Adds UDP and IP headers from the QP's address vector (qp->av), the
 * ICRC, and sends it: through the IP stack towards the device's netdev,
 * or, when the destination address is local, back into the stack as a
 * received packet of the netdev that owns it.  Consumes @skb.  Return: 0,
 * or a negative errno if the packet was dropped (counted in tx_dropped);
 * callers treat a dropped packet as lost on the wire.
 */
int sroce_pkt_send(struct sroce_qp *qp, struct sk_buff *skb);

/*
 * The same for a UD packet: to @av (an address handle's) and @dest_qpn,
 * which the caller also wrote into the BTH (sroce_bth_set_qpn() on
 * sroce_pkt_bth()) together with the DETH.
 */
int sroce_pkt_send_av(struct sroce_qp *qp, const struct sroce_av *av,
		      u32 dest_qpn, struct sk_buff *skb);

/*
 * Transmit batches.  A requester pass usually sends a run of packets of
 * one QP to one destination; instead of one trip each through the IP
 * output path, the netdev, the peer's IP input, route and UDP socket
 * lookups, the run leaves as one UDP GSO skb of the fraglist kind: the
 * first packet, with every further packet, headers and ICRC complete,
 * chained on its frag_list.  Whoever cannot take the batch whole (a NIC,
 * the receiving UDP socket) splits it back into the very skbs that were
 * chained (skb_segment_list(): no copy, no allocation), so on the wire
 * and to every receiver it is the run of packets it would have been.
 * transmit.c, "batches", says what segmentation rewrites and how the
 * packets are built to survive it.
 *
 * sroce_pkt_send_batch() is sroce_pkt_send() into @batch (it may send
 * the batch so far first); sroce_tx_batch_flush() sends what is left.
 * Both return 0, or a negative errno when a send failed: the packets from
 * @batch->lost_psn on (the batch so far, or @skb alone) were lost and
 * counted in tx_dropped, and the batch is empty; -ENOBUFS says they were
 * refused for a full queue.  @skb is consumed in every case.
 */
struct sroce_tx_batch {
	struct sk_buff *head;	/* NULL: empty */
	struct sk_buff *last;	/* last packet chained */
	unsigned int count;	/* packets, the head included */
	unsigned int bytes;	/* RoCE bytes (BTH to ICRC), for the counters */
	u32 lost_psn;		/* after an error: the first PSN not sent */
};

static inline void sroce_tx_batch_init(struct sroce_tx_batch *batch)
{
	batch->head = NULL;
	batch->count = 0;
	batch->bytes = 0;
}

int sroce_pkt_send_batch(struct sroce_qp *qp, struct sroce_tx_batch *batch,
			 struct sk_buff *skb);
int sroce_tx_batch_flush(struct sroce_qp *qp, struct sroce_tx_batch *batch);

/*
 * Copy @len payload bytes starting @offset bytes into the payload of a
 * received packet, wherever they lie (linear part or fragments), to the
 * consumer @fn, in as few linear pieces as the skb allows.  Stops at the
 * first non-zero return of @fn and returns it.
 */
typedef int (*sroce_pkt_copy_fn)(void *ctx, const void *buf, u32 len);
int sroce_pkt_copy_payload(struct sk_buff *skb, u32 offset, u32 len,
			   sroce_pkt_copy_fn fn, void *ctx);

#endif /* SROCE_PKT_H */
