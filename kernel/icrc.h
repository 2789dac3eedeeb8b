/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * RoCEv2 invariant CRC (ICRC, IBTA annex A17.3.3).
 *
 * The ICRC is a CRC-32 (the Ethernet polynomial, reflected, as the kernel's
 * crc32_le()) over everything from the IP header to the end of the payload
 * padding, with the fields that routers may legitimately change replaced
 * by all ones, and preceded by 8 bytes of ones that stand for the
 * InfiniBand LRH, which RoCE does not carry:
 *
 *   0xff x 8 | IP header | UDP header | BTH | ext headers | payload | pad
 *
 *   IPv4: Type of Service (DSCP + ECN), TTL and header checksum -> ones
 *   IPv6: Traffic Class, Flow Label and Hop Limit -> ones
 *   UDP:  checksum -> ones
 *   BTH:  the byte holding FECN, BECN and resv6 ("resv8a") -> ones
 *
 * The CRC register starts at ~0 and the result is inverted, and it goes on
 * the wire least significant byte first (sroce_icrc_put()).  These facts
 * were checked against packets captured from ConnectX NICs (see
 * provider/tests/test_wire.cpp).
 *
 * Everything up to sroce_icrc_calc() is pure and shared with userspace;
 * only the CRC primitive differs: the kernel's crc32_le(), or a bitwise
 * implementation for host tools (slow, but those are tests).
 */
#ifndef SROCE_ICRC_H
#define SROCE_ICRC_H

#include "wire.h"

#ifdef __KERNEL__
#include <linux/crc32.h>
#include <linux/errno.h>
#include <linux/string.h>

#define sroce_crc32_le(crc, p, len)	crc32_le(crc, p, len)
#else
#include <errno.h>
#include <stddef.h>
#include <string.h>

static inline __u32 sroce_crc32_le(__u32 crc, const void *buf, size_t len)
{
	const __u8 *p = (const __u8 *)buf;

	while (len--) {
		crc ^= *p++;
		for (int bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (0xedb88320U & -(crc & 1));
	}
	return crc;
}
#endif

/*
 * crc32_le(~0, 8 bytes of 0xff), not inverted: the CRC register after the
 * masked-LRH prefix, so that the prefix itself is never hashed at runtime.
 */
#define SROCE_ICRC_SEED		0xdebb20e3U
#define SROCE_ICRC_PREFIX_LEN	8

#define SROCE_IPV4_MIN_HLEN	20
#define SROCE_IPV4_MAX_HLEN	60
#define SROCE_IPV6_HLEN		40
/* Largest IP + UDP + BTH block that sroce_icrc_mask_hdrs() writes. */
#define SROCE_ICRC_MASKED_MAX	(SROCE_IPV4_MAX_HLEN + SROCE_UDP_HDR_LEN + SROCE_BTH_LEN)

/*
 * Length of the IP header at @l3 (its version nibble says v4 or v6), or 0
 * if it is not a plausible IPv4/IPv6 header within @avail bytes.  IPv6
 * extension headers are not supported (RoCEv2 does not use them).
 */
static inline unsigned int sroce_icrc_ip_hdr_len(const __u8 *l3, size_t avail)
{
	unsigned int len;

	if (avail < 1)
		return 0;
	switch (l3[0] >> 4) {
	case 4:
		len = (l3[0] & 0x0f) * 4;
		if (len < SROCE_IPV4_MIN_HLEN)
			return 0;
		break;
	case 6:
		len = SROCE_IPV6_HLEN;
		break;
	default:
		return 0;
	}
	return len <= avail ? len : 0;
}

/* Set the variant fields of an IPv4 or IPv6 header (by its version) to ones. */
static inline void sroce_icrc_mask_ip(__u8 *ip)
{
	if ((ip[0] >> 4) == 4) {
		ip[1] = 0xff;		/* TOS: DSCP + ECN */
		ip[8] = 0xff;		/* TTL */
		ip[10] = 0xff;		/* header checksum */
		ip[11] = 0xff;
	} else {
		ip[0] |= 0x0f;		/* traffic class, high nibble */
		ip[1] = 0xff;		/* traffic class low nibble, flow label */
		ip[2] = 0xff;
		ip[3] = 0xff;
		ip[7] = 0xff;		/* hop limit */
	}
}

static inline void sroce_icrc_mask_udp(__u8 *udp)
{
	udp[6] = 0xff;			/* checksum */
	udp[7] = 0xff;
}

static inline void sroce_icrc_mask_bth(__u8 *bth)
{
	bth[4] = 0xff;			/* FECN, BECN, resv6 */
}

/*
 * Copy the IP header, UDP header and BTH at @l3 to @dst (at least
 * SROCE_ICRC_MASKED_MAX bytes) with the variant fields set to ones.
 * Return the number of bytes copied, 0 if @l3 does not start with a
 * plausible IP header followed by UDP and BTH within @avail bytes.
 */
static inline unsigned int sroce_icrc_mask_hdrs(__u8 *dst, const __u8 *l3, size_t avail)
{
	unsigned int ip_len = sroce_icrc_ip_hdr_len(l3, avail);
	unsigned int len = ip_len + SROCE_UDP_HDR_LEN + SROCE_BTH_LEN;

	if (!ip_len || len > avail)
		return 0;
	memcpy(dst, l3, len);
	sroce_icrc_mask_ip(dst);
	sroce_icrc_mask_udp(dst + ip_len);
	sroce_icrc_mask_bth(dst + ip_len + SROCE_UDP_HDR_LEN);
	return len;
}

/*
 * ICRC of a packet given as up to two buffers: @hdrs starts at the IP
 * header and holds at least IP + UDP + BTH; @payload continues it (NULL if
 * @payload_len is 0).  Together they cover everything up to, not including,
 * the ICRC.  Returns 0 and the ICRC in @icrc, or -EINVAL if @hdrs is not
 * IP + UDP + BTH.
 */
static inline int sroce_icrc_calc(const void *hdrs, size_t hdrs_len,
				  const void *payload, size_t payload_len,
				  __u32 *icrc)
{
	__u8 masked[SROCE_ICRC_MASKED_MAX];
	unsigned int n = sroce_icrc_mask_hdrs(masked, (const __u8 *)hdrs, hdrs_len);
	__u32 crc;

	if (!n)
		return -EINVAL;
	crc = sroce_crc32_le(SROCE_ICRC_SEED, masked, n);
	crc = sroce_crc32_le(crc, (const __u8 *)hdrs + n, hdrs_len - n);
	if (payload_len)
		crc = sroce_crc32_le(crc, payload, payload_len);
	*icrc = ~crc;
	return 0;
}

/* The ICRC goes on the wire least significant byte first. */
static inline void sroce_icrc_put(void *wire, __u32 icrc)
{
	__u8 *p = (__u8 *)wire;

	p[0] = icrc;
	p[1] = icrc >> 8;
	p[2] = icrc >> 16;
	p[3] = icrc >> 24;
}

static inline __u32 sroce_icrc_get(const void *wire)
{
	const __u8 *p = (const __u8 *)wire;

	return p[0] | p[1] << 8 | p[2] << 16 | (__u32)p[3] << 24;
}

#ifdef __KERNEL__
struct sk_buff;

int sroce_icrc_skb(struct sk_buff *skb, u32 *icrc);
int sroce_icrc_generate(struct sk_buff *skb);
int sroce_icrc_verify(struct sk_buff *skb);
int sroce_icrc_selftest(void);
#endif

#endif /* SROCE_ICRC_H */
