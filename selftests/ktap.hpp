// SPDX-License-Identifier: GPL-2.0-only
/*
 * ktap.hpp: KTAP result lines for the C++ selftest programs (pktgen,
 * limits, hostile): "ok N NAME" / "not ok N NAME", then an optional "# "
 * detail line, or "ok N NAME # SKIP REASON"; the counts feed the program's
 * plan and exit status.
 */
#pragma once

#include <cstdio>
#include <string>

namespace ktap {

inline int n_tests, n_failed;

inline bool result(bool ok, const std::string &name, const std::string &detail = "")
{
	n_tests++;
	if (!ok)
		n_failed++;
	std::printf("%sok %d %s\n", ok ? "" : "not ", n_tests, name.c_str());
	if (!detail.empty())
		std::printf("# %s\n", detail.c_str());
	std::fflush(stdout);
	return ok;
}

/* A check that could not be made, and why: "ok N NAME # SKIP REASON". */
inline void skip(const std::string &name, const std::string &reason)
{
	n_tests++;
	std::printf("ok %d %s # SKIP %s\n", n_tests, name.c_str(), reason.c_str());
	std::fflush(stdout);
}

} // namespace ktap
