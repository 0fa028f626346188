// ExactSum (core/exact_sum.hpp): the exact sum of any terms, rounded once, so the same bits
// for every order and every grouping of the terms. Checked against integer arithmetic where
// the exact sum is known, against hand-worked roundings, and by shuffling and splitting.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "core/exact_sum.hpp"
#include "core/parallel.hpp"

namespace talus {
namespace {

double sum_of(const std::vector<double>& v) {
    ExactSum s;
    for (double x : v) s.add(x);
    return s.value();
}

uint64_t bits(double x) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

TEST(ExactSum, CancellationThatAPlainSumLoses) {
    EXPECT_EQ(sum_of({1e300, 1.0, -1e300}), 1.0);
    EXPECT_EQ(sum_of({1.0, 1e-300, -1.0}), 1e-300);
    EXPECT_EQ(sum_of({std::ldexp(1.0, 1000), std::ldexp(1.0, -1000), -std::ldexp(1.0, 1000)}),
              std::ldexp(1.0, -1000));
    EXPECT_EQ(sum_of({}), 0.0);
    EXPECT_EQ(sum_of({3.5, -3.5}), 0.0);
    EXPECT_EQ(sum_of({-2.0, 0.5}), -1.5);
}

TEST(ExactSum, SubnormalsAddExactly) {
    const double tiny = std::numeric_limits<double>::denorm_min();
    EXPECT_EQ(sum_of({tiny, tiny}), 2 * tiny);
    EXPECT_EQ(sum_of({tiny, -tiny, tiny}), tiny);
    EXPECT_EQ(sum_of({std::numeric_limits<double>::min(), -tiny}),
              std::numeric_limits<double>::min() - tiny);
}

TEST(ExactSum, RoundsOnceToNearestWithTiesBrokenByTheBitsBelow) {
    const double half_ulp = std::ldexp(1.0, -53);  // half an ulp of 1
    EXPECT_EQ(sum_of({1.0, half_ulp}), 1.0);  // a tie: to even
    EXPECT_EQ(sum_of({1.0, half_ulp, std::ldexp(1.0, -200)}), 1.0 + std::ldexp(1.0, -52));  // above it
    EXPECT_EQ(sum_of({1.0, half_ulp, -std::ldexp(1.0, -200)}), 1.0);                         // below it
    // the same tie reached by many small terms (a plain sum would drop every one of them)
    std::vector<double> v{1.0};
    for (int k = 0; k < 1024; ++k) v.push_back(std::ldexp(1.0, -63));  // 1024 × 2⁻⁶³ = 2⁻⁵³
    v.push_back(std::ldexp(1.0, -300));
    EXPECT_EQ(sum_of(v), 1.0 + std::ldexp(1.0, -52));
}

TEST(ExactSum, InfinitiesAndNaN) {
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(sum_of({1.0, inf}), inf);
    EXPECT_EQ(sum_of({1.0, -inf}), -inf);
    EXPECT_TRUE(std::isnan(sum_of({inf, -inf})));
    EXPECT_TRUE(std::isnan(sum_of({1.0, std::nan("")})));
    const double big = std::numeric_limits<double>::max();
    EXPECT_EQ(sum_of({big, big}), inf);  // past the largest double
    EXPECT_EQ(sum_of({big, big, -big}), big);  // but not on the way
}

// Terms that are integer multiples of 2⁻⁴⁰ below 2²⁰: their exact sum is an integer count of
// 2⁻⁴⁰ that __int128 holds, and a double holds it exactly when it fits in 53 bits.
TEST(ExactSum, RandomTermsSumToTheIntegerTotal) {
    std::mt19937_64 rng(3);
    for (int trial = 0; trial < 200; ++trial) {
        std::vector<double> v;
        const int n = 1 + int(rng() % 2000);
        for (int k = 0; k < n; ++k) {
            const int64_t m = int64_t(rng() % (uint64_t(1) << 40)) - (int64_t(1) << 39);
            v.push_back(std::ldexp(double(m), -40 + int(rng() % 21)));  // |x| < 2²⁰, exact
        }
        __int128 total = 0;  // in units of 2⁻⁴⁰: every term is a whole number of them
        for (double x : v) total += __int128(std::ldexp(x, 40));
        const double expect = double(total) * std::ldexp(1.0, -40);  // one rounding, like value()
        EXPECT_EQ(bits(sum_of(v)), bits(expect)) << "trial " << trial;
    }
}

TEST(ExactSum, AnyOrderAndAnyGroupingGiveTheSameBits) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> v;
    for (int k = 0; k < 5000; ++k) v.push_back(std::ldexp(u(rng), int(rng() % 200) - 100));
    const uint64_t first = bits(sum_of(v));
    bool plain_differs = false;
    double plain0 = 0.0;
    for (double x : v) plain0 += x;
    for (int trial = 0; trial < 20; ++trial) {
        std::shuffle(v.begin(), v.end(), rng);
        EXPECT_EQ(bits(sum_of(v)), first);
        double plain = 0.0;
        for (double x : v) plain += x;
        plain_differs |= plain != plain0;
        // split at random points, summed separately and merged in a random order
        std::vector<ExactSum> parts(1 + rng() % 9);
        for (double x : v) parts[rng() % parts.size()].add(x);
        std::shuffle(parts.begin(), parts.end(), rng);
        ExactSum merged;
        for (const ExactSum& p : parts) merged += p;
        EXPECT_EQ(bits(merged.value()), first);
        // and the parallel helper
        EXPECT_EQ(bits(exact_sum(v.size(), [&](std::size_t i) { return v[i]; })), first);
    }
    EXPECT_TRUE(plain_differs) << "a plain sum in these orders should not agree with itself";
}

TEST(ExactSum, BinsGiveTheSameSumAsTermByTerm) {
    std::mt19937_64 rng(9);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int trial = 0; trial < 30; ++trial) {
        std::vector<double> v;
        const int n = 1 + int(rng() % 5000);  // across several flushes of 1024
        for (int k = 0; k < n; ++k) {
            const int kind = int(rng() % 20);
            if (kind == 0) v.push_back(std::numeric_limits<double>::denorm_min() * double(1 + rng() % 100));
            else v.push_back(std::ldexp(u(rng), int(rng() % 2000) - 1000));
        }
        ExactSum binned;
        {
            ExactSumBins bins(binned);
            for (double x : v) bins.add(x);
        }
        EXPECT_EQ(bits(binned.value()), bits(sum_of(v))) << "trial " << trial;
    }
    // many equal terms in one bin (the flush every 1024 keeps the bin from overflowing)
    ExactSum s;
    {
        ExactSumBins bins(s);
        for (int k = 0; k < 100000; ++k) bins.add(std::nextafter(2.0, 1.0));  // significand 2⁵³ − 1
    }
    EXPECT_EQ(s.value(), 100000.0 * std::nextafter(2.0, 1.0));
    ExactSum special;
    {
        ExactSumBins bins(special);
        bins.add(1.0);
        bins.add(-std::numeric_limits<double>::infinity());
    }
    EXPECT_EQ(special.value(), -std::numeric_limits<double>::infinity());
}

}  // namespace
}  // namespace talus
