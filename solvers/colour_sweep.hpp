#pragma once
/// One sweep of a block Gauss–Seidel method over a coloured batch (PGS, maximum
/// dissipation): colours in their fixed order, each colour a oneTBB parallel loop over
/// ranges of a named grain (core/parallel.hpp). Within a colour no two contacts share a dynamic body, so each range
/// reads and writes bodies no other range touches and the result does not depend on the
/// number of threads. The overflow colour (contacts that may share bodies) and colours of
/// at most one range run serially.
#include <algorithm>
#include <cstddef>

#include "core/parallel.hpp"
#include "solvers/assemble.hpp"

namespace talus {

/// Calls range(lo, hi, independent) over every colour and returns the max of its results
/// and `init`. `independent` is false only for the overflow colour, whose contacts may
/// share bodies (a kernel that updates several contacts at once must not do so there).
template <class RangeFn>
double sweep_colours(const AssembledBatch& batch, std::size_t grain, double init, RangeFn&& range) {
    double result = init;
    if (batch.colour_start.size() < 2) return result;  // no contacts
    const std::size_t colours = batch.colour_start.size() - 1;
    for (std::size_t k = 0; k < colours; ++k) {
        const std::size_t lo = batch.colour_start[k], hi = batch.colour_start[k + 1];
        const bool overflow = batch.overflow_colour && k + 1 == colours;
        if (overflow || hi - lo <= grain) {
            result = std::max(result, range(lo, hi, !overflow));
            continue;
        }
        result = std::max(result, parallel_max_ranges(lo, hi, grain, init, [&](std::size_t a, std::size_t b) {
            return range(a, b, true);
        }));
    }
    return result;
}

}  // namespace talus
