// SPDX-License-Identifier: GPL-2.0
/* shim_test.c - the helpers of kmod/core/bi_shim.h. */
#include "bi_shim.h"
#include "kselftest_harness.h"

TEST(mul_div_does_not_overflow)
{
	/* 10^12 ns * 10^9 units/s overflows u64 as a plain product. */
	ASSERT_EQ(1000000000000ULL, bi_mul_div_u64(1000000000000ULL, 1000000000ULL, 1000000000ULL));
	ASSERT_EQ(3ULL, bi_div_round_up_u64(5, 2));
	ASSERT_EQ(2ULL, bi_div_round_up_u64(4, 2));
}

TEST_HARNESS_MAIN
