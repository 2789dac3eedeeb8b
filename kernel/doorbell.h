/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The doorbell file (doorbell.c): a process's cheaper doorbell than a
 * uverbs POST_SEND command, opened through a driver method of uverbs.
 */
#ifndef SROCE_DOORBELL_H
#define SROCE_DOORBELL_H

#include <rdma/uverbs_ioctl.h>

#include "uapi/sroce-abi.h"

/* The doorbell object, chained into ib_device.driver_def (device.c). */
extern const struct uapi_definition sroce_doorbell_uapi_defs[];

#endif /* SROCE_DOORBELL_H */
