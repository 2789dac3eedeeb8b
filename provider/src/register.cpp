// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// libibverbs dlopen()s libsroce-rdmav34.so; this constructor is how it
// learns about us.  Kept out of the code the unit tests link, so loading
// the tests does not register a driver.
#include "sroce.h"

__attribute__((constructor)) static void sroce_register_driver()
{
	verbs_register_driver_34(sroce::device_ops());
}
