#pragma once
/// Parallel loops and deterministic reductions shared by every stage: fixed-size chunks,
/// partial results in an array, combined serially in chunk order, so a sum has the same
/// bits for any thread count (a max is exact in any order).
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>

#include <algorithm>
#include <vector>

namespace talus {

inline constexpr std::size_t kReduceChunk = 1024;

/// Σ_{i<n} f(i), with f evaluated in parallel and summed in a fixed order.
template <class F>
double deterministic_sum(std::size_t n, std::vector<double>& partial, F&& f) {
    const std::size_t chunks = (n + kReduceChunk - 1) / kReduceChunk;
    partial.assign(chunks, 0.0);
    tbb::parallel_for(std::size_t(0), chunks, [&](std::size_t c) {
        double s = 0.0;
        const std::size_t end = std::min(n, (c + 1) * kReduceChunk);
        for (std::size_t i = c * kReduceChunk; i < end; ++i) s += f(i);
        partial[c] = s;
    });
    double total = 0.0;
    for (double p : partial) total += p;
    return total;
}

/// max_{i<n} f(i) (a max is exact, so any order gives the same result); 0 for n = 0.
template <class F>
double parallel_max(std::size_t n, F&& f) {
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, n, kReduceChunk), 0.0,
        [&](const tbb::blocked_range<std::size_t>& r, double m) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) m = std::max(m, f(i));
            return m;
        },
        [](double x, double y) { return std::max(x, y); });
}

/// f(i) for every i < n, in parallel over fixed chunks of `chunk` indices. For loops whose
/// iterations are independent (each writes only its own i), so the result is the same
/// for any thread count.
template <class F>
void parallel_each(std::size_t n, F&& f, std::size_t chunk = kReduceChunk) {
    const std::size_t chunks = (n + chunk - 1) / chunk;
    tbb::parallel_for(std::size_t(0), chunks, [&](std::size_t c) {
        const std::size_t end = std::min(n, (c + 1) * chunk);
        for (std::size_t i = c * chunk; i < end; ++i) f(i);
    });
}

}  // namespace talus
