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

// One contact of a ContactList, every per-contact field.
struct ContactRecord {
    int32_t a, b;
    uint64_t key_a, key_b;
    uint32_t feature, material_a;
    Vec3 point, normal, velocity_a, shift_b;
    double gap;

    static ContactRecord load(const ContactList& c, std::size_t i) {
        return {c.a[i], c.b[i], c.key_a[i], c.key_b[i], c.feature[i], c.material_a[i],
                c.point[i], c.normal[i], c.velocity_a[i], c.shift_b[i], c.gap[i]};
    }
    void store(ContactList& c, std::size_t i) const {
        c.a[i] = a; c.b[i] = b; c.key_a[i] = key_a; c.key_b[i] = key_b; c.feature[i] = feature;
        c.material_a[i] = material_a; c.point[i] = point; c.normal[i] = normal;
        c.velocity_a[i] = velocity_a; c.shift_b[i] = shift_b; c.gap[i] = gap;
    }
};

// c[k] ← c[order[k]] for every k, in place: each cycle of the permutation is walked once
// with one contact held aside. A permuted copy would double the contact list (132 bytes
// per contact, 20 % of a million-grain run's peak); `done` marks the placed contacts.
void permute_in_place(ContactList& c, const std::vector<uint32_t>& order,
                      std::vector<uint8_t>& done) {
    const std::size_t n = order.size();
    done.assign(n, 0);
    for (std::size_t start = 0; start < n; ++start) {
        if (done[start] || order[start] == start) continue;
        const ContactRecord held = ContactRecord::load(c, start);
        std::size_t k = start;
        while (order[k] != start) {
            ContactRecord::load(c, order[k]).store(c, k);
            done[k] = 1;
            k = order[k];
        }
        held.store(c, k);
        done[k] = 1;
    }
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

    permute_in_place(c, s.order, s.done);
    return c.colour_start.size() - 1;
}

}  // namespace talus
