// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// The built libsroce-rdmav34.so as libibverbs will see it: it must dlopen
// with RTLD_NOW (every undefined symbol resolvable), export nothing, have
// no SONAME, and bind its libibverbs imports to IBVERBS_PRIVATE_34.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

namespace {

struct DynSym {
	std::string name;
	bool defined;
	unsigned bind;
	std::string version; // from .gnu.version_r, "" if none
};

struct Elf {
	std::vector<char> bytes;
	std::vector<DynSym> syms;
	bool has_soname = false;
	std::vector<std::string> needed;
};

template <typename T>
const T *at(const std::vector<char> &b, size_t off)
{
	return off + sizeof(T) <= b.size() ?
		reinterpret_cast<const T *>(b.data() + off) : nullptr;
}

bool read_elf(const char *path, Elf &e)
{
	std::ifstream f(path, std::ios::binary);
	if (!f)
		return false;
	e.bytes.assign(std::istreambuf_iterator<char>(f), {});
	const auto *eh = at<Elf64_Ehdr>(e.bytes, 0);
	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64)
		return false;
	const auto *sh = at<Elf64_Shdr>(e.bytes, eh->e_shoff);
	if (!sh)
		return false;

	const Elf64_Shdr *dynsym = nullptr, *versym = nullptr,
			 *verneed = nullptr, *dynamic = nullptr;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		switch (sh[i].sh_type) {
		case SHT_DYNSYM: dynsym = &sh[i]; break;
		case SHT_GNU_versym: versym = &sh[i]; break;
		case SHT_GNU_verneed: verneed = &sh[i]; break;
		case SHT_DYNAMIC: dynamic = &sh[i]; break;
		}
	}
	if (!dynsym || !dynamic)
		return false;
	const char *dynstr = e.bytes.data() + sh[dynsym->sh_link].sh_offset;

	std::map<unsigned, std::string> vernames;
	if (verneed) {
		size_t off = verneed->sh_offset;
		for (unsigned i = 0; i < verneed->sh_info; i++) {
			const auto *vn = at<Elf64_Verneed>(e.bytes, off);
			size_t aoff = off + vn->vn_aux;
			for (unsigned j = 0; j < vn->vn_cnt; j++) {
				const auto *va = at<Elf64_Vernaux>(e.bytes, aoff);
				vernames[va->vna_other] = dynstr + va->vna_name;
				aoff += va->vna_next;
			}
			off += vn->vn_next;
		}
	}

	size_t n = dynsym->sh_size / sizeof(Elf64_Sym);
	const auto *sym = at<Elf64_Sym>(e.bytes, dynsym->sh_offset);
	const auto *ver = versym ? at<Elf64_Half>(e.bytes, versym->sh_offset) : nullptr;
	for (size_t i = 1; i < n; i++) {
		DynSym d;
		d.name = dynstr + sym[i].st_name;
		d.defined = sym[i].st_shndx != SHN_UNDEF;
		d.bind = ELF64_ST_BIND(sym[i].st_info);
		if (ver && vernames.count(ver[i] & 0x7fff))
			d.version = vernames[ver[i] & 0x7fff];
		e.syms.push_back(d);
	}

	const auto *dyn = at<Elf64_Dyn>(e.bytes, dynamic->sh_offset);
	for (size_t i = 0; dyn && i < dynamic->sh_size / sizeof(Elf64_Dyn); i++) {
		if (dyn[i].d_tag == DT_SONAME)
			e.has_soname = true;
		if (dyn[i].d_tag == DT_NEEDED)
			e.needed.push_back(dynstr + dyn[i].d_un.d_val);
	}
	return true;
}

TEST(ProviderSo, FileNameIsWhatLibibverbsOpens)
{
	std::string p = SROCE_PROVIDER_SO;
	ASSERT_GE(p.size(), 22u);
	EXPECT_EQ(p.substr(p.rfind('/') + 1), "libsroce-rdmav34.so");
}

TEST(ProviderSo, DlopensWithRtldNow)
{
	void *h = dlopen(SROCE_PROVIDER_SO, RTLD_NOW | RTLD_LOCAL);
	ASSERT_NE(h, nullptr) << dlerror();
	// Nothing is exported, so no internal name can be looked up.
	EXPECT_EQ(dlsym(h, "_ZN5sroce10device_opsEv"), nullptr);
	EXPECT_EQ(dlsym(h, "verbs_provider_sroce"), nullptr);
	dlclose(h);
}

TEST(ProviderSo, ExportsNothing)
{
	Elf e;
	ASSERT_TRUE(read_elf(SROCE_PROVIDER_SO, e));
	ASSERT_FALSE(e.syms.empty());
	std::vector<std::string> exported;
	for (const DynSym &s : e.syms)
		if (s.defined && s.bind != STB_LOCAL)
			exported.push_back(s.name);
	EXPECT_TRUE(exported.empty()) << "first export: " << exported[0];
	EXPECT_FALSE(e.has_soname);
}

TEST(ProviderSo, ImportsLibibverbsPrivate34)
{
	Elf e;
	ASSERT_TRUE(read_elf(SROCE_PROVIDER_SO, e));
	bool needs_ibverbs = false;
	for (const std::string &n : e.needed)
		needs_ibverbs |= n == "libibverbs.so.1";
	EXPECT_TRUE(needs_ibverbs);

	std::map<std::string, std::string> imports;
	for (const DynSym &s : e.syms)
		if (!s.defined)
			imports[s.name] = s.version;
	ASSERT_TRUE(imports.count("verbs_register_driver_34"));
	EXPECT_EQ(imports["verbs_register_driver_34"], "IBVERBS_PRIVATE_34");
	ASSERT_TRUE(imports.count("_verbs_init_and_alloc_context"));
	EXPECT_EQ(imports["_verbs_init_and_alloc_context"], "IBVERBS_PRIVATE_34");
	// Every verbs_* / ibv_cmd_* import is a PRIVATE_34 one.
	for (const auto &[name, version] : imports) {
		if (name.rfind("ibv_cmd_", 0) == 0 || name.rfind("verbs_", 0) == 0 ||
		    name.rfind("_verbs_", 0) == 0) {
			EXPECT_EQ(version, "IBVERBS_PRIVATE_34") << name;
		}
	}
}

} // namespace
