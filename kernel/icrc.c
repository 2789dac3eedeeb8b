// SPDX-License-Identifier: GPL-2.0-only
/*
 * ICRC of RoCEv2 packets held in socket buffers.
 *
 * The masking rules live in icrc.h and are shared with the host tests; this
 * file only walks an skb.  The IP, UDP and base transport headers are
 * copied to a small stack buffer to be masked (the packet itself must not
 * change); everything after the BTH is hashed where it lies, linear part,
 * page fragments and frag list alike, through skb_seq_read().
 */
#include <linux/crc32.h>
#include <linux/errno.h>
#include <linux/minmax.h>
#include <linux/skbuff.h>

#include "icrc.h"

/**
 * sroce_icrc_skb() - compute the ICRC of a RoCEv2 packet
 * @skb: the packet.  skb_network_header() must point at the IP header, the
 *	IP, UDP and base transport headers must be in the linear area, and
 *	the packet must end with the 4-byte ICRC (trimmed to the UDP length).
 *	skb->data may point anywhere up to the end of the BTH.
 * @icrc: the computed ICRC, in CPU order
 *
 * Return: 0, or -EINVAL if the headers are not where they must be.
 */
int sroce_icrc_skb(struct sk_buff *skb, u32 *icrc)
{
	u8 masked[SROCE_ICRC_MASKED_MAX];
	int net_off = skb_network_offset(skb);
	unsigned int hlen, consumed, len, n;
	struct skb_seq_state st;
	const u8 *data;
	int from;
	u32 crc;

	if (net_off > (int)skb_headlen(skb) || skb->len < SROCE_ICRC_LEN)
		return -EINVAL;
	hlen = sroce_icrc_mask_hdrs(masked, skb_network_header(skb),
				    skb_headlen(skb) - net_off);
	if (!hlen)
		return -EINVAL;
	crc = crc32_le(SROCE_ICRC_SEED, masked, hlen);

	/* The rest, from the end of the BTH; skb->data may already be past it. */
	from = net_off + hlen;
	if (from < 0) {
		crc = crc32_le(crc, skb->data + from, -from);
		from = 0;
	}
	if ((unsigned int)from > skb->len - SROCE_ICRC_LEN)
		return -EINVAL;
	len = skb->len - SROCE_ICRC_LEN - from;

	skb_prepare_seq_read(skb, from, from + len, &st);
	for (consumed = 0; consumed < len; consumed += n) {
		n = skb_seq_read(consumed, &data, &st);
		if (!n)
			return -EINVAL;	/* shorter than skb->len says */
		n = min(n, len - consumed);
		crc = crc32_le(crc, data, n);
	}
	skb_abort_seq_read(&st);	/* drop a fragment mapping still held */

	*icrc = ~crc;
	return 0;
}

/**
 * sroce_icrc_generate() - fill in the ICRC trailer of an outgoing packet
 * @skb: as for sroce_icrc_skb(); its last 4 bytes are overwritten
 *
 * Return: 0 or -EINVAL.
 */
int sroce_icrc_generate(struct sk_buff *skb)
{
	u8 wire[SROCE_ICRC_LEN];
	u32 icrc;
	int err;

	err = sroce_icrc_skb(skb, &icrc);
	if (err)
		return err;
	sroce_icrc_put(wire, icrc);
	return skb_store_bits(skb, skb->len - SROCE_ICRC_LEN, wire, sizeof(wire));
}

/**
 * sroce_icrc_verify() - check the ICRC trailer of a received packet
 * @skb: as for sroce_icrc_skb()
 *
 * Return: 0 if it matches, -EBADMSG if it does not, -EINVAL if the packet
 * is malformed.
 */
int sroce_icrc_verify(struct sk_buff *skb)
{
	u8 wire[SROCE_ICRC_LEN];
	u32 icrc;
	int err;

	err = sroce_icrc_skb(skb, &icrc);
	if (err)
		return err;
	err = skb_copy_bits(skb, skb->len - SROCE_ICRC_LEN, wire, sizeof(wire));
	if (err)
		return -EINVAL;
	return sroce_icrc_get(wire) == icrc ? 0 : -EBADMSG;
}

/*
 * A CNP captured on a ConnectX-4 Lx (published in scapy's
 * test/contrib/roce.uts), IPv4 header onwards.  Its TOS, checksums and BECN
 * are non-zero, so it exercises the masking as well as the CRC.
 */
static const u8 sroce_icrc_cnp_ipv4[] = {
	0x45, 0xc2, 0x00, 0x3c, 0x71, 0x8c, 0x40, 0x00,	/* IPv4 */
	0x40, 0x11, 0x91, 0x61, 0x0a, 0x00, 0x11, 0x01,
	0x0a, 0x00, 0x12, 0x01,
	0x00, 0x00, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00,	/* UDP */
	0x81, 0x00, 0xff, 0xff, 0x40, 0x00, 0x01, 0x18,	/* BTH */
	0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,	/* CNP */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x82, 0xfd, 0x00, 0x2a,				/* ICRC */
};

/**
 * sroce_icrc_selftest() - check the skb walk against a captured packet
 *
 * The packet is split the way received packets are: headers in the linear
 * area, the rest in a page fragment.  It is checked with skb->data at the
 * BTH and again with skb->data past the BTH, then regenerated, then
 * corrupted.  Cheap enough to run at every module load.
 *
 * Return: 0, -ENOMEM, or -EBADMSG if the walk or the CRC is wrong.
 */
int sroce_icrc_selftest(void)
{
	const unsigned int bth_end = 20 + SROCE_UDP_HDR_LEN + SROCE_BTH_LEN;
	const unsigned int head = bth_end + 8;
	const unsigned int tail = sizeof(sroce_icrc_cnp_ipv4) - head;
	struct sk_buff *skb;
	struct page *page;
	u8 *frag;
	int err;

	skb = alloc_skb(head, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	page = alloc_page(GFP_KERNEL);
	if (!page) {
		kfree_skb(skb);
		return -ENOMEM;
	}
	skb_put_data(skb, sroce_icrc_cnp_ipv4, head);
	frag = page_address(page);
	memcpy(frag, sroce_icrc_cnp_ipv4 + head, tail);
	skb_add_rx_frag(skb, 0, page, 0, tail, PAGE_SIZE);
	skb_reset_network_header(skb);
	skb_set_transport_header(skb, 20);

	err = -EBADMSG;
	skb_pull(skb, 20 + SROCE_UDP_HDR_LEN);		/* data at the BTH */
	if (sroce_icrc_verify(skb))
		goto out;
	skb_pull(skb, SROCE_BTH_LEN + 4);		/* data past the BTH */
	if (sroce_icrc_verify(skb))
		goto out;
	memset(frag + tail - SROCE_ICRC_LEN, 0, SROCE_ICRC_LEN);
	if (sroce_icrc_generate(skb) || sroce_icrc_verify(skb))
		goto out;
	frag[3] ^= 0x01;				/* a payload bit */
	if (sroce_icrc_verify(skb) != -EBADMSG)
		goto out;
	err = 0;
out:
	kfree_skb(skb);
	return err;
}
