// SPDX-License-Identifier: GPL-2.0-only
/*
 * recv.c - entry of the receive pipeline.
 *
 * Placeholder until the packet pipeline lands: every RoCEv2 packet that
 * reaches a device is counted and dropped, so that the socket plumbing
 * (net.c) can be verified on its own.
 */
#include "sroce.h"
#include "net.h"

void sroce_rcv(struct sroce_dev *sdev, struct sk_buff *skb)
{
	atomic64_inc(&sdev->stats.rx_packets);
	atomic64_inc(&sdev->stats.rx_dropped);
	kfree_skb(skb);
}
