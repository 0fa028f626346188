// Colouring the contact graph (docs/design.md §6; the scheme of Box2D v3's constraint graph).
//
// Two contacts conflict when they share a dynamic body; static and kinematic sides
// (kNoBody) never conflict, so wall contacts colour freely. A contact takes the lowest
// colour absent from both bodies' colour masks (one 64-bit mask per body, so a colour
// lookup is two loads and a count-trailing-zeros). A granular contact graph has low
// degree (≈ 12 neighbours + walls), so a handful of colours suffice; a body in more than
// 63 colours sends its extra contacts to the overflow colour, swept serially. The
// colouring is serial and visits contacts in their deterministic order, so the result
// (and hence every parallel sweep) is independent of the thread count.
#include "solvers/colouring.hpp"

#include <bit>
#include <type_traits>
#include <utility>

#include "core/parallel.hpp"

namespace talus {
namespace {

// v[k] ← v[order[k]] for every k, in place: each cycle of the permutation is walked once
// with one entry held aside; `done` marks the placed entries. No second copy of the field.
template <class T>
void permute_in_place(std::vector<T>& v, const std::vector<uint32_t>& order,
                      std::vector<uint8_t>& done) {
    const std::size_t n = order.size();
    done.assign(n, 0);
    for (std::size_t start = 0; start < n; ++start) {
        if (done[start] || order[start] == start) continue;
        T held = std::move(v[start]);
        std::size_t k = start;
        while (order[k] != start) {
            v[k] = std::move(v[order[k]]);
            done[k] = 1;
            k = order[k];
        }
        v[k] = std::move(held);
        done[k] = 1;
    }
}

// The same through a spare vector of the field's type, filled in parallel (a gather) and
// then swapped in: the spare keeps the old array's memory for the next step.
template <class T>
void permute_by_copy(std::vector<T>& v, const std::vector<uint32_t>& order,
                     std::vector<T>& spare) {
    spare.resize(v.size());
    parallel_each(v.size(), [&](std::size_t k) { spare[k] = v[order[k]]; });
    v.swap(spare);
}

}  // namespace

std::size_t colour_contacts(std::size_t body_count, ContactList& c, ColouringScratch& s,
                            bool in_place) {
    const std::size_t n = c.size();
    s.body_colours.assign(body_count, 0);
    s.colour.resize(n);
    std::vector<uint32_t> count(kOverflowColour + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
        const int32_t a = c.a[i], b = c.b[i];
        const uint64_t used = (a != kNoBody ? s.body_colours[a] : 0) |
                              (b != kNoBody ? s.body_colours[b] : 0);
        const uint64_t free_mask = ~used & ((uint64_t(1) << kOverflowColour) - 1);
        uint32_t k = kOverflowColour;
        if (free_mask != 0) {
            k = uint32_t(std::countr_zero(free_mask));
            if (a != kNoBody) s.body_colours[a] |= uint64_t(1) << k;
            if (b != kNoBody) s.body_colours[b] |= uint64_t(1) << k;
        }
        s.colour[i] = k;
        ++count[k];
    }
    // Counting sort by colour, stable: colour_start over the colours in use, in order.
    std::vector<uint32_t> offset(kOverflowColour + 1, 0);
    c.colour_start.clear();
    uint32_t running = 0;
    for (uint32_t k = 0; k <= kOverflowColour; ++k) {
        offset[k] = running;
        if (count[k] > 0) c.colour_start.push_back(running);
        running += count[k];
    }
    c.colour_start.push_back(running);
    c.overflow_colour = count[kOverflowColour] > 0;
    s.order.resize(n);
    for (std::size_t i = 0; i < n; ++i) s.order[offset[s.colour[i]]++] = uint32_t(i);

    c.for_each_array([&](auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        if (in_place) permute_in_place(v, s.order, s.done);
        else permute_by_copy(v, s.order, std::get<std::vector<T>>(s.spare));
    });
    return c.colour_start.size() - 1;
}

}  // namespace talus
