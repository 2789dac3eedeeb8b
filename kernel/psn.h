/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * 24-bit packet sequence number arithmetic.
 *
 * PSNs count packets modulo 2^24, so "before" and "after" only make sense
 * within half the number space.  sroce_psn_diff(a, b) is the signed
 * distance from a to b taken in the window [-2^23, 2^23): b is ahead of a
 * when the result is positive and behind it when negative.  This is the
 * IBTA rule (vol 1, 9.7.5.1 and 9.7.6.1): a responder treats a request PSN
 * in the 2^23 PSNs below its expected PSN as a duplicate and one in the
 * half at or above it as new (in sequence if equal, otherwise a sequence
 * error); a requester accepts an acknowledgment only for PSNs it has sent
 * and not yet seen acknowledged.  For this to be unambiguous no more than
 * 2^23 PSNs may be outstanding, far above any real send window.  Two PSNs
 * exactly 2^23 apart are neither before nor after each other.
 *
 * All inputs may carry garbage above bit 23 (e.g. straight from a BTH
 * word); every function masks them.
 */
#ifndef SROCE_PSN_H
#define SROCE_PSN_H

#include <linux/types.h>
#if !defined(__KERNEL__) && !defined(__cplusplus)
#include <stdbool.h>
#endif

#define SROCE_PSN_BITS		24
#define SROCE_PSN_MASK		((1U << SROCE_PSN_BITS) - 1)
#define SROCE_PSN_HALF		(1U << (SROCE_PSN_BITS - 1))

/* psn + n, wrapped to 24 bits (n may be any unsigned count). */
static inline __u32 sroce_psn_add(__u32 psn, __u32 n)
{
	return (psn + n) & SROCE_PSN_MASK;
}

static inline __u32 sroce_psn_next(__u32 psn)
{
	return sroce_psn_add(psn, 1);
}

/* Signed distance from @a to @b in [-2^23, 2^23). */
static inline __s32 sroce_psn_diff(__u32 a, __u32 b)
{
	__u32 d = (b - a) & SROCE_PSN_MASK;

	return d >= SROCE_PSN_HALF ? (__s32)d - (__s32)(1U << SROCE_PSN_BITS) : (__s32)d;
}

/* @a comes strictly before @b. */
static inline bool sroce_psn_before(__u32 a, __u32 b)
{
	return sroce_psn_diff(a, b) > 0;
}

/* @a comes strictly after @b. */
static inline bool sroce_psn_after(__u32 a, __u32 b)
{
	return sroce_psn_diff(b, a) > 0;
}

/* Is @psn in [@first, @first + @count), with wrap? */
static inline bool sroce_psn_in_range(__u32 psn, __u32 first, __u32 count)
{
	return ((psn - first) & SROCE_PSN_MASK) < count;
}

#endif /* SROCE_PSN_H */
