#pragma once
/// Sorting within consecutive ranges of an array, each range a few elements long: what is
/// left to do after a counting pass has put every element into its range (by a body's id,
/// by a bucket of a hash). Shared by the warm-start cache (solvers/warm_start.cpp) and the
/// colouring's visit order (solvers/colouring.cpp).
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"

namespace talus {

/// Sorts each range [bounds[k], bounds[k + 1]) of `data` by `less`, by insertion (a call
/// through std::sort per range of a few elements cost more in the calls than in the work),
/// the ranges in parallel (they are disjoint). Stable, and under a total order the sorted
/// form is unique: the result does not depend on the threads.
template <class T, class Less>
void sort_within_ranges(std::vector<T>& data, const std::vector<uint32_t>& bounds, Less&& less) {
    if (bounds.size() < 2) return;
    parallel_ranges(0, bounds.size() - 1, grain::kBodies, [&](std::size_t k0, std::size_t k1) {
        for (std::size_t k = k0; k != k1; ++k)
            for (uint32_t m = bounds[k] + 1; m < bounds[k + 1]; ++m) {
                const T e = data[m];
                uint32_t j = m;
                for (; j > bounds[k] && less(e, data[j - 1]); --j) data[j] = data[j - 1];
                data[j] = e;
            }
    });
}

}  // namespace talus
