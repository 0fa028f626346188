// Colouring the contact graph (DESIGN §6; the scheme of Box2D v3's constraint graph).
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
#include <utility>

namespace talus {
namespace {

template <class T>
void gather(std::vector<T>& dst, const std::vector<T>& src, const std::vector<uint32_t>& order) {
    dst.resize(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) dst[k] = src[order[k]];
}

}  // namespace

std::size_t colour_contacts(std::size_t body_count, ContactList& c, ColouringScratch& s) {
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

    ContactList& t = s.sorted;
    gather(t.a, c.a, s.order); gather(t.b, c.b, s.order); gather(t.key_a, c.key_a, s.order);
    gather(t.key_b, c.key_b, s.order); gather(t.feature, c.feature, s.order);
    gather(t.point, c.point, s.order); gather(t.normal, c.normal, s.order);
    gather(t.gap, c.gap, s.order); gather(t.velocity_a, c.velocity_a, s.order);
    gather(t.material_a, c.material_a, s.order); gather(t.shift_b, c.shift_b, s.order);
    t.colour_start = c.colour_start;
    t.overflow_colour = c.overflow_colour;
    std::swap(c, t);
    return c.colour_start.size() - 1;
}

}  // namespace talus
