/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * rx_hook.h - the receive hook: RoCEv2 packets taken off the netdev
 * before the IP stack (module parameter fast_rx, on by default).
 */
#ifndef SROCE_RX_HOOK_H
#define SROCE_RX_HOOK_H

#include <linux/types.h>

struct sroce_dev;

/* Before ib_register_device(); takes RTNL.  No hook if fast_rx is off. */
void sroce_rx_hook_attach(struct sroce_dev *sdev);
/* The netdev is going away (NETDEV_UNREGISTER, RTNL held). */
void sroce_rx_hook_detach_locked(struct sroce_dev *sdev);
/* From dealloc_driver, before the device's tables go; takes RTNL. */
void sroce_rx_hook_detach(struct sroce_dev *sdev);

#endif /* SROCE_RX_HOOK_H */
