// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
//
// Parent and thread domains (pd.cpp): they are the provider's own objects,
// so everything but the kernel PD they stand for can be checked here.  The
// kernel PD is a Pd made by hand, as alloc_pd would leave it.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "sroce.h"

namespace {

struct Domains : ::testing::Test {
	ibv_context ctx{};
	sroce::Pd kpd{};

	void SetUp() override
	{
		kpd.ibpd.context = &ctx;
		kpd.ibpd.handle = 7;
		kpd.refs = 1; // its own, as alloc_pd leaves it
	}

	ibv_pd *parent(ibv_td *td = nullptr, uint32_t comp_mask = 0)
	{
		ibv_parent_domain_init_attr a{};

		a.pd = &kpd.ibpd;
		a.td = td;
		a.comp_mask = comp_mask;
		return sroce::alloc_parent_domain(&ctx, &a);
	}
};

TEST_F(Domains, ParentStandsForItsKernelPd)
{
	ibv_pd *p = parent();

	ASSERT_NE(p, nullptr);
	EXPECT_EQ(p->context, &ctx);
	EXPECT_EQ(p->handle, 7u); // every command sees the kernel PD
	EXPECT_EQ(sroce::from_pd(p)->protection, &kpd);
	EXPECT_FALSE(sroce::pd_single_thread(p)); // no thread domain
	EXPECT_EQ(kpd.refs.load(), 2u);
	// The kernel PD stays while a parent domain names it.
	EXPECT_EQ(sroce::dealloc_pd(&kpd.ibpd), EBUSY);
	EXPECT_EQ(sroce::dealloc_pd(p), 0);
	EXPECT_EQ(kpd.refs.load(), 1u);
}

// ibv_unimport_pd() cannot refuse: a parent domain naming the imported PD
// keeps the provider's struct until the parent domain goes.
TEST_F(Domains, UnimportedPdLivesWhileAParentNamesIt)
{
	void *mem = calloc(1, sizeof(sroce::Pd));
	ASSERT_NE(mem, nullptr);
	auto *imp = new (mem) sroce::Pd{};
	imp->ibpd.context = &ctx;
	imp->ibpd.handle = 9;
	imp->refs = 1;

	ibv_parent_domain_init_attr a{};
	a.pd = &imp->ibpd;
	ibv_pd *p = sroce::alloc_parent_domain(&ctx, &a);
	ASSERT_NE(p, nullptr);
	EXPECT_EQ(p->handle, 9u);
	sroce::unimport_pd(&imp->ibpd);
	EXPECT_EQ(imp->refs.load(), 1u); // still there: the parent's reference
	EXPECT_EQ(sroce::from_pd(p)->protection, imp);
	EXPECT_EQ(sroce::dealloc_pd(p), 0); // frees both (ASan/valgrind would see a leak)
}

TEST_F(Domains, ThreadDomainMakesQueuesSingleThreaded)
{
	ibv_td_init_attr ta{};
	ibv_td *td = sroce::alloc_td(&ctx, &ta);

	ASSERT_NE(td, nullptr);
	EXPECT_EQ(td->context, &ctx);
	ibv_pd *p = parent(td);
	ASSERT_NE(p, nullptr);
	EXPECT_TRUE(sroce::pd_single_thread(p));
	EXPECT_FALSE(sroce::pd_single_thread(&kpd.ibpd));
	EXPECT_EQ(sroce::dealloc_td(td), EBUSY); // a parent domain names it
	EXPECT_EQ(sroce::dealloc_pd(p), 0);
	EXPECT_EQ(sroce::dealloc_td(td), 0);
}

TEST_F(Domains, BadAttributesAreRefused)
{
	ibv_parent_domain_init_attr a{};
	ibv_context other{};

	errno = 0;
	EXPECT_EQ(sroce::alloc_parent_domain(&ctx, &a), nullptr); // no PD
	EXPECT_EQ(errno, EINVAL);
	errno = 0;
	EXPECT_EQ(parent(nullptr, 1u << 2), nullptr); // unknown comp_mask bit
	EXPECT_EQ(errno, EOPNOTSUPP);
	// Allocators announced but missing.
	errno = 0;
	EXPECT_EQ(parent(nullptr, IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS), nullptr);
	EXPECT_EQ(errno, EINVAL);
	// A parent domain of a parent domain.
	ibv_pd *p = parent();
	ASSERT_NE(p, nullptr);
	a.pd = p;
	errno = 0;
	EXPECT_EQ(sroce::alloc_parent_domain(&ctx, &a), nullptr);
	EXPECT_EQ(errno, EINVAL);
	// A PD or a thread domain of another context.
	a.pd = &kpd.ibpd;
	errno = 0;
	EXPECT_EQ(sroce::alloc_parent_domain(&other, &a), nullptr);
	EXPECT_EQ(errno, EINVAL);
	ibv_td_init_attr ta{};
	ibv_td *td = sroce::alloc_td(&other, &ta);
	ASSERT_NE(td, nullptr);
	a.td = td;
	errno = 0;
	EXPECT_EQ(sroce::alloc_parent_domain(&ctx, &a), nullptr);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(sroce::dealloc_td(td), 0);
	ta.comp_mask = 1;
	errno = 0;
	EXPECT_EQ(sroce::alloc_td(&ctx, &ta), nullptr);
	EXPECT_EQ(errno, EINVAL);
	EXPECT_EQ(sroce::dealloc_pd(p), 0);
	EXPECT_EQ(kpd.refs.load(), 1u);
}

TEST(QueueLock, ElidedOnlyWhenSingleThreaded)
{
	sroce::QueueLock l{};

	l.init();
	EXPECT_FALSE(l.single_thread());
	l.lock();
	l.unlock();
	l.set_single_thread(true);
	l.lock();
	l.lock(); // elided: a real spinlock would never return (ctest times out)
	l.unlock();
	l.unlock();
	l.destroy();
}

} // namespace
