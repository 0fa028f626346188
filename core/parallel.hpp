#pragma once
/// Parallel loops and deterministic reductions shared by every stage: fixed-size chunks,
/// partial results in an array, combined serially in chunk order, so a sum has the same
/// bits for any thread count (a max is exact in any order). Every parallel loop of Talus
/// goes through this header, with one of the named grains below: a loop's grain is then
/// found, and tuned, in one place.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_sort.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "core/exact_sum.hpp"

namespace talus {

inline constexpr std::size_t kReduceChunk = 1024;

/// Indices per task of the parallel loops, by what a loop's index runs over. A grain only
/// sets how work is cut into tasks; no result depends on it except through the fixed
/// chunks of the reductions (kReduceChunk).
namespace grain {
inline constexpr std::size_t kBodies = 1024;     ///< per-body loops (gathers, integration)
inline constexpr std::size_t kContacts = 2048;   ///< per-contact solver passes (PGS, PJ, APGD)
inline constexpr std::size_t kAssembly = 1024;   ///< per-contact set-up (frames, right-hand sides)
inline constexpr std::size_t kExactBlocks = 256; ///< exact local solves per task (nsgs, maxdiss)
inline constexpr std::size_t kPairs = 1024;      ///< per-candidate-pair loops (narrow phase)
inline constexpr std::size_t kCells = 1024;      ///< per-grid-cell loops (broad phase)
}  // namespace grain

/// Number of chunks of `chunk` indices that cover [0, n).
inline std::size_t chunk_count(std::size_t n, std::size_t chunk) { return (n + chunk - 1) / chunk; }

/// f(c, lo, hi) for every chunk c = [lo, hi) of `chunk` consecutive indices of [0, n), in
/// parallel. The chunks depend only on n and `chunk`, not on the threads, so a loop that
/// writes one output per chunk and merges them in chunk order is deterministic.
template <class F>
void parallel_chunks(std::size_t n, std::size_t chunk, F&& f) {
    tbb::parallel_for(std::size_t(0), chunk_count(n, chunk), [&](std::size_t c) {
        f(c, c * chunk, std::min(n, (c + 1) * chunk));
    });
}

/// The first pass of a stable compaction in parallel: kept_before[c] becomes the count of
/// indices i with keep(i) in the chunks before chunk c (chunks of `chunk` indices of
/// [0, n), as parallel_chunks cuts them), for c = 0 … chunk_count; returns the last, the
/// count of all. A second pass writes chunk c's kept items in order from kept_before[c] on,
/// so the result is the serial compaction's on any number of threads.
template <class Keep>
std::size_t count_kept_before(std::size_t n, std::size_t chunk, std::vector<std::size_t>& kept_before, Keep&& keep) {
    const std::size_t chunks = chunk_count(n, chunk);
    kept_before.assign(chunks + 1, 0);
    parallel_chunks(n, chunk, [&](std::size_t c, std::size_t lo, std::size_t hi) {
        std::size_t count = 0;
        for (std::size_t i = lo; i < hi; ++i) count += keep(i) ? 1 : 0;
        kept_before[c + 1] = count;
    });
    for (std::size_t c = 0; c < chunks; ++c) kept_before[c + 1] += kept_before[c];
    return kept_before[chunks];
}

/// Sorts [first, last) by `less` in parallel. Under a total order (no two elements
/// equivalent) the sorted sequence is unique, so the result does not depend on the threads;
/// under a weaker order it may.
template <class It, class Less>
void parallel_sort(It first, It last, Less&& less) {
    tbb::parallel_sort(first, last, less);
}

/// f(lo, hi) over [begin, end) cut into ranges of about `grain` indices, in parallel.
/// For loops whose iterations are independent; the result is the same for any thread count.
template <class F>
void parallel_ranges(std::size_t begin, std::size_t end, std::size_t grain, F&& f) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(begin, end, grain),
                      [&](const tbb::blocked_range<std::size_t>& r) { f(r.begin(), r.end()); });
}

/// max(init, f(lo, hi) over ranges of [begin, end) of about `grain` indices), in parallel:
/// exact in any order, so the result does not depend on the threads.
template <class F>
double parallel_max_ranges(std::size_t begin, std::size_t end, std::size_t grain, double init, F&& f) {
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(begin, end, grain), init,
        [&](const tbb::blocked_range<std::size_t>& r, double m) { return std::max(m, f(r.begin(), r.end())); },
        [](double x, double y) { return std::max(x, y); });
}

/// Σ_{i<n} f(i) exactly, rounded once (core/exact_sum.hpp; exact_sum_of: the accumulator,
/// to merge with other ranks'): the same bits for any order of
/// the terms, so for bodies held in any order (or over any number of ranks), not only for
/// any thread count. f is evaluated in parallel.
template <class F>
ExactSum exact_sum_of(std::size_t n, F&& f) {
    return tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, n, kReduceChunk), ExactSum{},
        [&](const tbb::blocked_range<std::size_t>& r, ExactSum s) {
            for (std::size_t i = r.begin(); i != r.end(); ++i) s.add(f(i));
            return s;
        },
        [](ExactSum x, const ExactSum& y) {
            x += y;
            return x;
        });
}
template <class F>
double exact_sum(std::size_t n, F&& f) {
    return exact_sum_of(n, std::forward<F>(f)).value();
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
