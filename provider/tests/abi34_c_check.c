// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Compile abi34.h as C: the build fails if it is not valid C11. */
#include "abi34.h"
#include "sroce-abi.h"

const struct verbs_context_ops *sroce_c_check_ops(void);
const struct verbs_context_ops *sroce_c_check_ops(void)
{
	static const struct verbs_context_ops ops = { .poll_cq = 0 };

	return &ops;
}
