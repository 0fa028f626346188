// Colouring the contact graph (docs/design.md §6; the masks of Box2D v3's constraint graph,
// the order of Jones and Plassmann's parallel colouring).
//
// Two contacts conflict when they share a dynamic body; static and kinematic sides
// (kNoBody) never conflict, so wall contacts colour freely. A contact takes the lowest
// colour absent from both bodies' colour masks (one 64-bit mask per body, so a colour
// lookup is two loads and a count-trailing-zeros). A granular contact graph has low
// degree (≈ 12 neighbours + walls), so a handful of colours suffice; a body in more than
// 63 colours sends its extra contacts to the overflow colour, swept serially.
//
// The contacts are visited in the order of a priority hashed from their keys (the two
// bodies' stable ids or wall keys and the feature), not in the order they sit in: the
// colours, and so every sweep, are then a function of the contacts themselves, the same
// whatever the dense order of the bodies, the thread count, or (docs/mpi.md) the ranks.
// Greedy colouring in a priority order is exactly what Jones and Plassmann's parallel
// algorithm computes (a contact takes the lowest colour its higher-priority neighbours
// left, once they are coloured), which ranks can run on their own contacts with a few
// exchanges; hashed priorities keep its rounds few, where a spatial order would chain them
// across the whole bed.
//
// Joint rows are a block type of the same sweep. They are built after the contacts are
// coloured and reordered, so they are coloured second, into the masks the contacts left:
// a joint's rows form one block (they share both bodies, so one task sweeps them in row
// order), and a block takes the lowest colour free of both its bodies, among the
// contacts' colours or in new colours after them. Unlike a contact, a row writes any side
// with a dense index, kinematic bodies included (ν += 0 there), so every dense side
// counts; only the world (kNoBody) never conflicts. The contacts keep their colours, and
// their order in the batch: a batch without rows sweeps exactly as it did before rows
// were coloured.
#include "solvers/colouring.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/bytes.hpp"
#include "core/parallel.hpp"
#include "core/sort_ranges.hpp"
#include "solvers/assemble.hpp"

namespace talus {
namespace {

// v[k] ← v[order[k]] for every k, in place, one 8-byte word of the element at a time:
// that word of every element is gathered in the new order into `words`, then written back
// (a Vec3 in three passes, one per component). Parallel, and no second copy of any field:
// n × 8 bytes beside the list. (Walking the permutation's cycles serially, as before, was
// about a quarter of a step of the million-grain pour at 2 M contacts: cache misses, one
// core; benchmarks/README.md, "A million grains poured".)
template <class T>
uint64_t to_word(const T& x) {
    if constexpr (sizeof(T) == 8) return std::bit_cast<uint64_t>(x);
    else return uint64_t(std::bit_cast<uint32_t>(x));
}
template <class T>
T from_word(uint64_t w) {
    if constexpr (sizeof(T) == 8) return std::bit_cast<T>(w);
    else return std::bit_cast<T>(uint32_t(w));
}

template <class T>
void permute_in_place(std::vector<T>& v, const std::vector<uint32_t>& order, std::vector<uint64_t>& words) {
    const std::size_t n = order.size();
    words.resize(n);
    if constexpr (std::is_same_v<T, Vec3>) {
        for (int c = 0; c < 3; ++c) {
            parallel_each(n, [&](std::size_t k) { words[k] = std::bit_cast<uint64_t>(v[order[k]][c]); });
            parallel_each(n, [&](std::size_t k) { v[k][c] = std::bit_cast<double>(words[k]); });
        }
    } else {
        static_assert(sizeof(T) == 8 || sizeof(T) == 4);
        parallel_each(n, [&](std::size_t k) { words[k] = to_word(v[order[k]]); });
        parallel_each(n, [&](std::size_t k) { v[k] = from_word<T>(words[k]); });
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

// The lowest colour below the overflow colour that `used` (bit k: colour k taken) leaves
// free, or kOverflowColour when all 63 are taken.
uint32_t lowest_free_colour(uint64_t used) {
    const uint64_t free_mask = ~used & ((uint64_t(1) << kOverflowColour) - 1);
    return free_mask != 0 ? uint32_t(std::countr_zero(free_mask)) : kOverflowColour;
}

// The contacts as (priority, index) in the colouring's visit order: by contact_priority,
// ties by the key itself (a total order defined without dense indices). With `spare` and
// `first` (scratch), by buckets: the priority's top bits put each contact in one of about
// n/4 buckets in a counting pass, which fill evenly (the priorities are a hash), and each
// bucket is put in order by insertion; without, by a parallel comparison sort (which was
// 2.7 % of a random-pack step; benchmarks/README.md, "Session 38"). A total order has one
// sorted form, so both give the same.
using Visit = std::pair<uint64_t, uint32_t>;
void priority_order(const ContactList& c, std::vector<Visit>& visit, std::vector<Visit>* spare = nullptr,
                    std::vector<uint32_t>* first = nullptr) {
    const std::size_t n = c.size();
    visit.resize(n);
    parallel_each(n, [&](std::size_t i) {
        visit[i] = {contact_priority(c.key_a[i], c.key_b[i], c.feature[i]), uint32_t(i)};
    });
    const auto before = [&](const Visit& x, const Visit& y) {
        if (x.first != y.first) return x.first < y.first;
        const uint32_t i = x.second, j = y.second;
        return std::tie(c.key_a[i], c.key_b[i], c.feature[i]) < std::tie(c.key_a[j], c.key_b[j], c.feature[j]);
    };
    if (spare == nullptr || first == nullptr || n < 4096) {
        parallel_sort(visit.begin(), visit.end(), before);
        return;
    }
    const int bits = std::bit_width(n / 4);  // 2^bits buckets, n/4 < 2^bits ≤ n/2
    const int shift = 64 - bits;
    // f[b + 1]: where bucket b starts, moved to where it ends (where b + 1 starts) by the
    // scatter; so after it f[b] .. f[b + 1] is bucket b
    std::vector<uint32_t>& f = *first;
    f.assign((std::size_t(1) << bits) + 2, 0);
    for (const Visit& v : visit) ++f[std::size_t(v.first >> shift) + 2];
    for (std::size_t b = 1; b < f.size(); ++b) f[b] += f[b - 1];
    spare->resize(n);
    for (const Visit& v : visit) (*spare)[f[std::size_t(v.first >> shift) + 1]++] = v;
    visit.swap(*spare);
    sort_within_ranges(visit, f, before);
}

}  // namespace

uint64_t contact_priority(uint64_t key_a, uint64_t key_b, uint32_t feature) {
    // splitmix64's finaliser over the three parts in turn: any change of a bit of a key
    // moves about half the bits of the priority
    const auto mix = [](uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    };
    uint64_t h = mix(key_a + 0x9e3779b97f4a7c15ull);
    h = mix(h ^ key_b);
    return mix(h ^ feature);
}

namespace {

// Reorders c colour by colour for the colours in s.colour (a proper colour < `proper`, or
// kOverflowColour) and sets colour_start: the proper colours 0 … proper − 1, each kept
// even when empty, then the overflow colour when a contact has it. Within a proper colour
// the contacts keep their order (which only sets where they sit in memory: they share no
// dynamic body, so their updates commute); the overflow colour is swept serially, so its
// order counts: the visit order (s.visit, by priority).
void sort_by_colour(ContactList& c, ColouringScratch& s, std::size_t proper, bool in_place) {
    const std::size_t n = c.size();
    std::vector<uint32_t> count(kOverflowColour + 1, 0);
    for (std::size_t i = 0; i < n; ++i) ++count[s.colour[i]];
    std::vector<uint32_t> offset(kOverflowColour + 1, 0);
    c.colour_start.clear();
    uint32_t running = 0;
    for (uint32_t k = 0; k <= kOverflowColour; ++k) {
        offset[k] = running;
        if (k < proper || (k == kOverflowColour && count[k] > 0)) c.colour_start.push_back(running);
        running += count[k];
    }
    c.colour_start.push_back(running);
    c.overflow_colour = count[kOverflowColour] > 0;
    s.order.resize(n);
    for (std::size_t i = 0; i < n; ++i)
        if (s.colour[i] != kOverflowColour) s.order[offset[s.colour[i]]++] = uint32_t(i);
    for (const auto& [priority, i] : s.visit)
        if (s.colour[i] == kOverflowColour) s.order[offset[kOverflowColour]++] = i;
    c.for_each_filled_array([&](auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        if (in_place) permute_in_place(v, s.order, s.words);
        else permute_by_copy(v, s.order, std::get<std::vector<T>>(s.spare));
    });
}

template <class T>
void follow_order(std::vector<T>& v, ColouringScratch& s, bool in_place) {
    if (in_place) permute_in_place(v, s.order, s.words);
    else permute_by_copy(v, s.order, std::get<std::vector<T>>(s.spare));
}

}  // namespace

void follow_colour_order(std::vector<int32_t>& v, ColouringScratch& s, bool in_place) { follow_order(v, s, in_place); }
void follow_colour_order(std::vector<double>& v, ColouringScratch& s, bool in_place) { follow_order(v, s, in_place); }
void follow_colour_order(std::vector<Vec3>& v, ColouringScratch& s, bool in_place) { follow_order(v, s, in_place); }

std::size_t colour_contacts(std::size_t body_count, ContactList& c, ColouringScratch& s,
                            bool in_place) {
    const std::size_t n = c.size();
    s.body_colours.assign(body_count, 0);
    s.colour.resize(n);
    // The greedy visit order: by priority hashed from the contact's key, ties by the key
    // itself (a total order on the contacts, defined without dense indices).
    priority_order(c, s.visit, in_place ? nullptr : &s.visit_spare, &s.bucket_start);
    // colour k in use means colours 0 … k − 1 are too (each was taken by a neighbour)
    std::size_t proper = 0;
    for (const auto& [priority, i] : s.visit) {
        const int32_t a = c.a[i], b = c.b[i];
        const uint64_t used = (a != kNoBody ? s.body_colours[a] : 0) |
                              (b != kNoBody ? s.body_colours[b] : 0);
        const uint32_t k = lowest_free_colour(used);
        if (k != kOverflowColour) {
            if (a != kNoBody) s.body_colours[a] |= uint64_t(1) << k;
            if (b != kNoBody) s.body_colours[b] |= uint64_t(1) << k;
            proper = std::max<std::size_t>(proper, k + 1);
        }
        s.colour[i] = k;
    }
    sort_by_colour(c, s, proper, in_place);
    return c.colour_start.size() - 1;
}

void order_by_colour(ContactList& c, std::span<const uint32_t> colour, std::size_t proper_colours,
                     ColouringScratch& s) {
    s.colour.assign(colour.begin(), colour.end());
    if (std::find(colour.begin(), colour.end(), kOverflowColour) != colour.end()) priority_order(c, s.visit);
    else s.visit.clear();
    sort_by_colour(c, s, proper_colours, false);
}

namespace {

constexpr uint32_t kUncoloured = std::numeric_limits<uint32_t>::max();

// What one body's contacts of higher priority than contact i say of it in a round: whether
// one is still uncoloured (i waits), and the proper colours they took.
struct SideStatus {
    bool waits = false;
    uint64_t used = 0;
};

// Each body's contacts in priority order (contacts sharing a body are neighbours), and where
// the rounds stand on each body. A contact is coloured only once every neighbour of higher
// priority is, so a body's coloured contacts are always a prefix of its list: `ready` is
// that prefix's length and `used` its proper colours. A contact waits on a body while the
// prefix has not reached it; once it has, `used` holds exactly the colours of its
// higher-priority neighbours there. So a round looks at each waiting contact's two sides in
// O(1), not at every neighbour.
class BodyRounds {
public:
    /// `visit`: the contacts in priority order (priority_order's).
    BodyRounds(std::size_t body_count, const ContactList& c, const std::vector<Visit>& visit)
        : start_(body_count + 1, 0), ready_(body_count, 0), used_(body_count, 0), at_(c.size()) {
        const std::size_t n = c.size();
        for (std::size_t i = 0; i < n; ++i)
            for (int32_t body : {c.a[i], c.b[i]})
                if (body != kNoBody) ++start_[std::size_t(body) + 1];
        for (std::size_t k = 0; k < body_count; ++k) start_[k + 1] += start_[k];
        list_.resize(start_[body_count]);
        std::vector<uint32_t> next(start_.begin(), start_.end() - 1);
        for (const Visit& v : visit)
            for (const uint32_t i = v.second; int s : {0, 1})
                if (const int32_t body = s == 0 ? c.a[i] : c.b[i]; body != kNoBody) {
                    at_[i][std::size_t(s)] = next[std::size_t(body)] - start_[std::size_t(body)];
                    list_[next[std::size_t(body)]++] = i;
                }
    }
    /// Contact i's side s (0: a, 1: b), whose body is `body`, from this body's own list.
    SideStatus side(int32_t body, uint32_t i, int s) const {
        const std::size_t b = std::size_t(body);
        return ready_[b] < at_[i][std::size_t(s)] ? SideStatus{true, 0} : SideStatus{false, used_[b]};
    }
    /// After a round's colours are set: the prefixes of the bodies of contact i move on.
    void coloured(const ContactList& c, uint32_t i, const std::vector<uint32_t>& colour) {
        for (int32_t body : {c.a[i], c.b[i]}) {
            if (body == kNoBody) continue;
            const std::size_t b = std::size_t(body), len = start_[b + 1] - start_[b];
            while (ready_[b] < len) {
                const uint32_t k = colour[list_[start_[b] + ready_[b]]];
                if (k == kUncoloured) break;
                if (k != kOverflowColour) used_[b] |= uint64_t(1) << k;
                ++ready_[b];
            }
        }
    }

private:
    std::vector<uint32_t> start_, list_, ready_;
    std::vector<uint64_t> used_;
    std::vector<std::array<uint32_t, 2>> at_;  // a contact's place in its bodies' lists
};

// One round: every uncoloured contact (`waiting`, in contact order) whose sides
// (side(body, i, s) for each body) do not wait takes the lowest colour they leave, all at
// once; `waiting` keeps the others; returns how many were coloured.
template <class Side>
std::size_t colour_round(const ContactList& c, JonesPlassmann& out, std::vector<uint32_t>& waiting, BodyRounds& rounds,
                         Side&& side) {
    std::vector<std::pair<uint32_t, uint32_t>> ready;  // (contact, colour), committed together
    std::size_t kept = 0;
    for (const uint32_t i : waiting) {
        uint64_t used = 0;
        bool waits = false;
        for (int s = 0; s < 2 && !waits; ++s) {
            const int32_t body = s == 0 ? c.a[i] : c.b[i];
            if (body == kNoBody) continue;
            const SideStatus st = side(body, i, s);
            waits = st.waits;
            used |= st.used;
        }
        if (waits) waiting[kept++] = i;
        else ready.emplace_back(i, lowest_free_colour(used));
    }
    waiting.resize(kept);
    for (const auto& [i, colour] : ready) out.colour[i] = colour;
    for (const auto& [i, colour] : ready) rounds.coloured(c, i, out.colour);
    ++out.rounds;
    return ready.size();
}

// The contacts in priority order (a total order: the colouring's visit order).
std::vector<Visit> priority_visit(const ContactList& c) {
    std::vector<Visit> visit;
    priority_order(c, visit);
    return visit;
}

// A rank's held contacts by key, to find the one another rank's message names.
class HeldByKey {
public:
    explicit HeldByKey(const ContactList& c) : c_(c), order_(c.size()) {
        for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = uint32_t(i);
        std::sort(order_.begin(), order_.end(), [&](uint32_t x, uint32_t y) { return key(x) < key(y); });
    }
    /// The held contact (key_a, key_b, feature); throws when this rank holds none.
    uint32_t find(uint64_t key_a, uint64_t key_b, uint32_t feature) const {
        const auto wanted = std::tie(key_a, key_b, feature);
        const auto it = std::lower_bound(order_.begin(), order_.end(), wanted,
                                         [&](uint32_t x, const auto& y) { return key(x) < y; });
        if (it == order_.end() || key(*it) != wanted)
            throw std::runtime_error("a rank's message names a contact this rank does not hold");
        return *it;
    }

private:
    std::tuple<const uint64_t&, const uint64_t&, const uint32_t&> key(uint32_t i) const {
        return std::tie(c_.key_a[i], c_.key_b[i], c_.feature[i]);
    }
    const ContactList& c_;
    std::vector<uint32_t> order_;
};

}  // namespace

JonesPlassmann jones_plassmann(std::size_t body_count, const ContactList& c) {
    const std::size_t n = c.size();
    BodyRounds rounds(body_count, c, priority_visit(c));
    JonesPlassmann out;
    out.colour.assign(n, kUncoloured);
    std::vector<uint32_t> waiting(n);
    std::iota(waiting.begin(), waiting.end(), 0u);
    while (!waiting.empty())
        colour_round(c, out, waiting, rounds, [&](int32_t body, uint32_t i, int s) { return rounds.side(body, i, s); });
    return out;
}

JonesPlassmann jones_plassmann_on_rank(std::size_t body_count, const ContactList& held,
                                       std::span<const int32_t> owner, Ranks& ranks) {
    const std::size_t n = held.size();
    const int me = ranks.rank();
    BodyRounds rounds(body_count, held, priority_visit(held));  // read for own bodies only: a ghost's list here is partial
    const HeldByKey by_key(held);
    struct Side {  // a body's SideStatus for a contact, sent to the rank holding the body as a ghost
        uint64_t key_a, key_b, used;
        uint32_t feature, waits;
    };
    JonesPlassmann out;
    out.colour.assign(n, kUncoloured);
    std::vector<SideStatus> remote(n);
    std::vector<std::string> outbox(std::size_t(ranks.size())), inbox;
    std::vector<uint32_t> waiting(n);
    std::iota(waiting.begin(), waiting.end(), 0u);
    while (ranks.any(!waiting.empty())) {
        // this rank's side of each boundary contact to the rank that holds the other side
        for (std::string& s : outbox) s.clear();
        for (const uint32_t i : waiting) {
            const int32_t a = held.a[i], b = held.b[i];
            if (a == kNoBody || b == kNoBody || (owner[std::size_t(a)] == me) == (owner[std::size_t(b)] == me)) continue;
            const bool a_mine = owner[std::size_t(a)] == me;
            const int32_t mine = a_mine ? a : b, other = a_mine ? b : a;
            const SideStatus st = rounds.side(mine, i, a_mine ? 0 : 1);
            put_bytes(outbox[std::size_t(owner[std::size_t(other)])],
                      Side{held.key_a[i], held.key_b[i], st.used, held.feature[i], st.waits ? 1u : 0u});
        }
        ranks.exchange(outbox, inbox);
        for (const std::string& s : inbox)
            for (std::size_t at = 0; at < s.size();) {
                const Side side = take_bytes<Side>(s, at);
                remote[by_key.find(side.key_a, side.key_b, side.feature)] = {side.waits != 0, side.used};
            }
        colour_round(held, out, waiting, rounds, [&](int32_t body, uint32_t i, int s) {
            return owner[std::size_t(body)] == me ? rounds.side(body, i, s) : remote[i];
        });
    }
    return out;
}

OverflowLevels overflow_levels_on_rank(std::size_t body_count, const ContactList& held,
                                       std::span<const int32_t> owner, Ranks& ranks) {
    const std::size_t n = held.size();
    const int me = ranks.rank();
    OverflowLevels out;
    out.level.assign(n, 0);
    // the overflow contacts: the last colour, in priority order (order_by_colour)
    const std::size_t first = held.overflow_colour && held.colour_start.size() >= 2
                                  ? held.colour_start[held.colour_start.size() - 2] : n;
    // per contact and side, the overflow contact before it on that body (or none)
    constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> last(body_count, kNone);
    std::vector<std::array<uint32_t, 2>> before(n, {kNone, kNone});
    for (std::size_t i = first; i < n; ++i)
        for (int s = 0; s < 2; ++s) {
            const int32_t body = s == 0 ? held.a[i] : held.b[i];
            if (body == kNoBody) continue;
            before[i][std::size_t(s)] = last[std::size_t(body)];
            last[std::size_t(body)] = uint32_t(i);
        }
    constexpr uint32_t kUnknown = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> level(n, kUnknown);
    // a side's lowest level for contact i, from this rank's levels: kUnknown while the
    // contact before it on the body has none
    auto side = [&](std::size_t i, int s) -> uint32_t {
        const uint32_t j = before[i][std::size_t(s)];
        if (j == kNone) return 0;
        return level[j] == kUnknown ? kUnknown : level[j] + 1;
    };
    const HeldByKey by_key(held);
    struct Side {  // this rank's side of a boundary contact, sent to the other body's rank
        uint64_t key_a, key_b;
        uint32_t feature, level;
    };
    std::vector<uint32_t> remote(n, kUnknown);
    std::vector<std::string> outbox(std::size_t(ranks.size())), inbox;
    std::size_t left = n - first;
    auto own = [&](int32_t body) { return body != kNoBody && owner[std::size_t(body)] == me; };
    while (ranks.any(left > 0)) {
        for (std::string& m : outbox) m.clear();
        for (std::size_t i = first; i < n; ++i) {
            const int32_t a = held.a[i], b = held.b[i];
            if (level[i] != kUnknown || a == kNoBody || b == kNoBody || own(a) == own(b)) continue;
            const int s = own(a) ? 0 : 1;
            const int32_t other = s == 0 ? b : a;
            put_bytes(outbox[std::size_t(owner[std::size_t(other)])],
                      Side{held.key_a[i], held.key_b[i], held.feature[i], side(i, s)});
        }
        ranks.exchange(outbox, inbox);
        for (const std::string& m : inbox)
            for (std::size_t at = 0; at < m.size();) {
                const Side got = take_bytes<Side>(m, at);
                remote[by_key.find(got.key_a, got.key_b, got.feature)] = got.level;
            }
        // decided together from the levels at the round's start
        std::vector<std::pair<uint32_t, uint32_t>> ready;
        for (std::size_t i = first; i < n; ++i) {
            if (level[i] != kUnknown) continue;
            uint32_t at_least = 0;
            bool known = true;
            for (int s = 0; s < 2 && known; ++s) {
                const int32_t body = s == 0 ? held.a[i] : held.b[i];
                if (body == kNoBody) continue;
                const uint32_t l = owner[std::size_t(body)] == me ? side(i, s) : remote[i];
                known = l != kUnknown;
                at_least = std::max(at_least, l);
            }
            if (known) ready.emplace_back(uint32_t(i), at_least);
        }
        for (const auto& [i, l] : ready) level[i] = l;
        left -= ready.size();
        ++out.rounds;
    }
    int64_t most = 0;
    for (std::size_t i = first; i < n; ++i) {
        out.level[i] = level[i];
        most = std::max<int64_t>(most, int64_t(level[i]) + 1);
    }
    ranks.max(std::span<int64_t>(&most, 1));
    out.count = uint32_t(most);
    return out;
}

void colour_joint_rows(std::size_t body_count, AssembledBatch& batch) {
    const BilateralBatch& rows = batch.bilateral;
    JointColouring& jc = batch.joint_colours;
    const std::vector<uint32_t>& cs = batch.colour_start;
    // The contacts' colours before their overflow colour: no two of a colour share a body.
    const std::size_t contact_colours = cs.size() < 2 ? 0 : cs.size() - 1;
    const std::size_t proper = contact_colours - (batch.overflow_colour && contact_colours > 0 ? 1 : 0);
    std::vector<uint64_t>& mask = jc.body_colours;
    mask.assign(body_count, 0);
    for (std::size_t k = 0; k < std::min<std::size_t>(proper, kOverflowColour); ++k)
        for (std::size_t i = cs[k]; i < cs[k + 1]; ++i) {
            if (batch.a[i] != kNoBody) mask[std::size_t(batch.a[i])] |= uint64_t(1) << k;
            if (batch.b[i] != kNoBody) mask[std::size_t(batch.b[i])] |= uint64_t(1) << k;
        }

    // Row blocks: runs of rows on the same two bodies, in row order.
    const std::size_t m = rows.size();
    jc.block_rows.clear();
    for (std::size_t j = 0; j < m; ++j)
        if (j == 0 || rows.a[j] != rows.a[j - 1] || rows.b[j] != rows.b[j - 1]) jc.block_rows.push_back(uint32_t(j));
    jc.block_rows.push_back(uint32_t(m));
    const std::size_t blocks = jc.block_rows.size() - 1;

    // Greedy, as colour_contacts: the lowest colour absent from both bodies' masks.
    std::vector<uint32_t>& colour = jc.order;  // each block's colour, until the sort below
    colour.resize(blocks);
    std::vector<uint32_t> count(kOverflowColour + 1, 0);
    std::size_t used_colours = proper;  // colours 0 … used_colours − 1 hold contacts or rows
    for (std::size_t blk = 0; blk < blocks; ++blk) {
        const int32_t a = rows.a[jc.block_rows[blk]], b = rows.b[jc.block_rows[blk]];
        const uint64_t used = (a != kNoBody ? mask[std::size_t(a)] : 0) | (b != kNoBody ? mask[std::size_t(b)] : 0);
        const uint32_t k = lowest_free_colour(used);
        if (k != kOverflowColour) {
            if (a != kNoBody) mask[std::size_t(a)] |= uint64_t(1) << k;
            if (b != kNoBody) mask[std::size_t(b)] |= uint64_t(1) << k;
            used_colours = std::max<std::size_t>(used_colours, k + 1);
        }
        colour[blk] = k;
        ++count[k];
    }

    // The sweep's colours: the proper ones, then one overflow colour (the contacts' and the
    // blocks' that found no colour), swept serially.
    jc.overflow = batch.overflow_colour || count[kOverflowColour] > 0;
    const std::size_t colours = used_colours + (jc.overflow ? 1 : 0);
    jc.contact_start.resize(colours + 1);
    for (std::size_t k = 0; k <= used_colours; ++k)
        jc.contact_start[k] = cs.empty() ? 0 : cs[std::min(k, proper)];
    if (jc.overflow) jc.contact_start[colours] = uint32_t(batch.size());
    // Counting sort of the blocks by colour, stable: row order within a colour.
    jc.block_start.assign(colours + 1, 0);
    for (std::size_t k = 0; k < used_colours; ++k)
        jc.block_start[k + 1] = jc.block_start[k] + (k < kOverflowColour ? count[k] : 0);
    if (jc.overflow) jc.block_start[colours] = jc.block_start[used_colours] + count[kOverflowColour];
    std::vector<uint32_t> next(jc.block_start.begin(), jc.block_start.end() - 1);
    std::vector<uint32_t> order(blocks);
    for (std::size_t blk = 0; blk < blocks; ++blk) {
        const uint32_t k = colour[blk] == kOverflowColour ? uint32_t(used_colours) : colour[blk];
        order[next[k]++] = uint32_t(blk);
    }
    jc.order.swap(order);
}

}  // namespace talus
