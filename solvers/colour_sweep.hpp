#pragma once
/// One sweep of a block Gauss–Seidel method over a coloured batch (PGS, PJ's update, APGD's
/// scatter, maximum dissipation): colours in their fixed order, each colour a oneTBB
/// parallel loop over ranges of a named grain (core/parallel.hpp). A colour holds contacts
/// and, when the step has joints, row blocks (a joint's rows; solvers/colouring.hpp,
/// colour_joint_rows), and no two of its blocks share a dynamic body, so each range reads
/// and writes bodies no other range touches and the result does not depend on the number
/// of threads. A colour's contacts and row blocks form one index space, contacts first, cut
/// into ranges together: a range may end in the contacts and go on into the rows. The
/// overflow colour (blocks that may share bodies: contacts, then row blocks, in order) and
/// colours of at most one range run serially. Rolling rows ride with their contact's range.
#include <algorithm>
#include <cassert>
#include <cstddef>

#include "core/parallel.hpp"
#include "solvers/assemble.hpp"

namespace talus {

/// Calls range(lo, hi, independent) over the contacts of every colour and returns the max
/// of its results and `init`; joint rows are not visited. `independent` is false only for
/// the overflow colour, whose contacts may share bodies (a kernel that updates several
/// contacts at once must not do so there).
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

/// The colours of the batch's sweep in order, contacts and joint rows together:
/// f(contact_lo, contact_hi, block_lo, block_hi, serial) per colour, with the colour's
/// contacts and its row blocks (positions in batch.joint_colours.order; none without rows,
/// and then the colours are exactly the contacts'). `serial`: the overflow colour.
template <class F>
void for_each_colour(const AssembledBatch& batch, F&& f) {
    if (batch.bilateral.empty()) {
        if (batch.colour_start.size() < 2) return;  // no contacts
        const std::size_t colours = batch.colour_start.size() - 1;
        for (std::size_t k = 0; k < colours; ++k)
            f(std::size_t(batch.colour_start[k]), std::size_t(batch.colour_start[k + 1]), std::size_t(0),
              std::size_t(0), batch.overflow_colour && k + 1 == colours);
        return;
    }
    const JointColouring& jc = batch.joint_colours;
    // colour_joint_rows ran on these rows and contacts (BodyOperator's constructor calls it)
    assert(!jc.block_rows.empty() && jc.block_rows.back() == batch.bilateral.size() &&
           jc.contact_start.back() == batch.size());
    const std::size_t colours = jc.colours();
    for (std::size_t k = 0; k < colours; ++k)
        f(std::size_t(jc.contact_start[k]), std::size_t(jc.contact_start[k + 1]), std::size_t(jc.block_start[k]),
          std::size_t(jc.block_start[k + 1]), jc.overflow && k + 1 == colours);
}

/// row(j) for the rows of the blocks at positions [first, last) of jc.order, each block's
/// rows in row order; returns the max of the results and `init`.
template <class RowFn>
double sweep_row_blocks(const JointColouring& jc, std::size_t first, std::size_t last, double init, RowFn& row) {
    double result = init;
    for (std::size_t p = first; p < last; ++p) {
        const uint32_t blk = jc.order[p];
        for (std::size_t j = jc.block_rows[blk]; j < jc.block_rows[blk + 1]; ++j) result = std::max(result, row(j));
    }
    return result;
}

namespace detail {

/// One colour as one index space: contact items [c_lo, c_hi), then its row blocks [b_lo,
/// b_hi) at [c_hi, c_hi + b_hi − b_lo). part(lo, hi, independent) is split into
/// contacts(lo', hi', independent) and blocks(first, last) (positions of jc.order).
template <class ContactFn, class BlockFn>
auto colour_part(std::size_t c_hi, std::size_t b_lo, double init, ContactFn& contacts, BlockFn& blocks) {
    return [&, c_hi, b_lo, init](std::size_t lo, std::size_t hi, bool independent) {
        double r = init;
        if (lo < c_hi) r = std::max(r, contacts(lo, std::min(hi, c_hi), independent));
        if (hi > c_hi) r = std::max(r, blocks(b_lo + (std::max(lo, c_hi) - c_hi), b_lo + (hi - c_hi)));
        return r;
    };
}

}  // namespace detail

/// One colour of a sweep (for_each_colour's arguments): contacts(lo, hi, independent) over
/// contact items and blocks(first, last) over row blocks, serially when `serial` or when
/// the colour is at most one grain, else over parallel ranges; returns the max of the
/// results and `init`.
template <class ContactFn, class BlockFn>
double sweep_colour(std::size_t c_lo, std::size_t c_hi, std::size_t b_lo, std::size_t b_hi, bool serial,
                    std::size_t grain, double init, ContactFn& contacts, BlockFn& blocks) {
    const std::size_t end = c_hi + (b_hi - b_lo);
    auto part = detail::colour_part(c_hi, b_lo, init, contacts, blocks);
    if (serial || end - c_lo <= grain) return part(c_lo, end, !serial);
    return parallel_max_ranges(c_lo, end, grain, init, [&](std::size_t a, std::size_t b) { return part(a, b, true); });
}

/// The same for passes without a result (APGD's scatter): parallel_ranges, no reduction.
template <class ContactFn, class BlockFn>
void scatter_colour(std::size_t c_lo, std::size_t c_hi, std::size_t b_lo, std::size_t b_hi, bool serial,
                    std::size_t grain, ContactFn& contacts, BlockFn& blocks) {
    const std::size_t end = c_hi + (b_hi - b_lo);
    auto part = detail::colour_part(c_hi, b_lo, 0.0, contacts, blocks);
    if (serial || end - c_lo <= grain) {
        part(c_lo, end, !serial);
        return;
    }
    parallel_ranges(c_lo, end, grain, [&](std::size_t a, std::size_t b) { part(a, b, true); });
}

/// A whole sweep over contacts and joint rows: range(lo, hi, independent) over each
/// colour's contacts as above and row(j) over its joint rows; returns the max of all
/// results and `init`. Without joint rows, the same ranges as the contacts-only sweep.
template <class RangeFn, class RowFn>
double sweep_colours(const AssembledBatch& batch, std::size_t grain, double init, RangeFn&& range, RowFn&& row) {
    auto blocks = [&](std::size_t first, std::size_t last) {
        return sweep_row_blocks(batch.joint_colours, first, last, init, row);
    };
    double result = init;
    for_each_colour(batch, [&](std::size_t c_lo, std::size_t c_hi, std::size_t b_lo, std::size_t b_hi, bool serial) {
        result = std::max(result, sweep_colour(c_lo, c_hi, b_lo, b_hi, serial, grain, init, range, blocks));
    });
    return result;
}

}  // namespace talus
