// SPDX-License-Identifier: GPL-2.0-only
/*
 * trace.c - instantiates the tracepoints declared in trace.h.  Other files
 * include "trace.h" and call trace_sroce_*().
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
