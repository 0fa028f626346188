// Stages 1b–4 of a step on one rank, from the bodies it holds (engine/world/collide_on_rank.hpp).
#include "engine/world/collide_on_rank.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_map>

#include "collision/kinematic_contacts.hpp"
#include "core/bytes.hpp"
#include "solvers/colouring.hpp"

namespace talus {
namespace {

// Keeps the entries of every array of `list` (a PairList or ContactList field set) whose
// flag is set, in order. The kept entries' positions are listed once, without a branch
// (about as many pairs of a rank are dropped as kept, so a branch per entry and field
// would mispredict half the time); each field is then a straight gather, in place since a
// kept entry never moves back past its own position.
template <class List>
void keep_flagged(List& list, const std::vector<uint8_t>& keep) {
    const std::size_t n = keep.size();
    std::vector<std::size_t> from(n);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
        from[kept] = i;
        kept += keep[i] != 0;
    }
    auto compact = [&](auto& v) {
        for (std::size_t k = 0; k < kept; ++k) v[k] = v[from[k]];
        v.resize(kept);
    };
    if constexpr (requires { list.for_each_filled_array(compact); }) {
        list.for_each_filled_array(compact);
    } else {
        compact(list.a);
        compact(list.b);
        if (!list.shift.empty()) compact(list.shift);  // (filled only with periodic axes)
    }
}

}  // namespace

StepError agree_over_ranks(const StepError& mine, Ranks& ranks) {
    std::string bytes;
    put_bytes(bytes, mine.faults);
    put_bytes(bytes, uint64_t(mine.bad_bodies.size()));
    for (uint64_t id : mine.bad_bodies) put_bytes(bytes, id);
    bytes += mine.message;
    std::vector<std::string> all;
    ranks.all_gather(bytes, all);
    for (std::size_t r = 0; r < all.size(); ++r) {
        std::size_t at = 0;
        const uint32_t faults = take_bytes<uint32_t>(all[r], at);
        if (faults == 0) continue;
        StepError e;
        e.faults = faults;
        e.ok = false;
        const uint64_t n = take_bytes<uint64_t>(all[r], at);
        for (uint64_t k = 0; k < n; ++k) e.bad_bodies.push_back(take_bytes<uint64_t>(all[r], at));
        e.message = all[r].substr(at);
        if (ranks.size() > 1) e.message = "rank " + std::to_string(r) + ": " + e.message;
        return e;
    }
    return {};
}

RankCollided collide_on_rank(const RankCollideInput& in, Ranks& ranks) {
    RankCollided out;
    const BodyStore& bodies = in.bodies;
    const int me = ranks.rank();
    const auto own = [&](int32_t i) { return i != kNoBody && in.owner[std::size_t(i)] == me; };

    // 1b. Each held body's reach from its own state; the wall margin and the largest body
    // margin are maxima over every body, so over the ranks (exact: the one-process bits).
    std::vector<double>& reach = out.reach;
    Margins m = choose_margins(bodies, in.states, in.gravity, in.solver.envelope, in.h, reach,
                               in.floor != nullptr ? *in.floor : MarginFloor{});
    // Every body a candidate pair of an own body can have lies in the blocks around its own
    // while no reach exceeds half a block (two reaches at most between their centres).
    double most[3] = {m.wall, m.body, 0.0};  // the three maxima in one collective
    for (double r : reach) most[2] = std::max(most[2], r);
    ranks.max_of(std::span<double>(most));
    m.wall = most[0];
    m.body = most[1];
    const double most_reach = most[2];
    m.envelope = std::max(2.0 * m.body, m.body + m.wall);
    out.margins = m;
    if (2.0 * most_reach > in.block_edge) {
        out.error = StepError::of(StepFault::BlocksTooSmall,
                                  "a body's reach (" + std::to_string(most_reach) + " m) passed half a block of the decomposition (" +
                                      std::to_string(in.block_edge) + " m)");
        return out;
    }

    // 2. The candidate pairs of the held bodies; a pair of two ghosts is another rank's.
    PairList pairs;
    BroadPhaseScratch broad;
    StepError mine = find_pairs(bodies, reach, in.periodic, in.at, pairs, broad);
    uint64_t own_pairs = 0, own_bodies = 0;
    double vmax = 0.0;
    if (mine.ok) {
        std::vector<uint8_t> keep(pairs.size());
        for (std::size_t p = 0; p < pairs.size(); ++p) {
            keep[p] = own(pairs.a[p]) || own(pairs.b[p]);
            own_pairs += own(pairs.a[p]);  // a has the lower stable id (orient_by_id): each pair once
        }
        keep_flagged(pairs, keep);
    }
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (own(int32_t(i))) {
            ++own_bodies;
            vmax = std::max(vmax, bodies.velocity[i].norm());
        }
    // Too many candidate pairs: counted over all ranks, as one process counts them (one
    // gather: the sums, and the fastest body for the message).
    {
        std::string counts;
        put_bytes(counts, own_pairs);
        put_bytes(counts, own_bodies);
        put_bytes(counts, vmax);
        std::vector<std::string> all;
        ranks.all_gather(counts, all);
        uint64_t total_pairs = 0, total_bodies = 0;
        for (const std::string& s : all) {
            std::size_t at = 0;
            total_pairs += take_bytes<uint64_t>(s, at);
            total_bodies += take_bytes<uint64_t>(s, at);
            vmax = std::max(vmax, take_bytes<double>(s, at));
        }
        if (mine.ok) mine = crowding_error(total_pairs, total_bodies, vmax, m.envelope, in.h, in.at);
    }
    out.error = agree_over_ranks(mine, ranks);
    if (!out.error.ok) return out;

    // 3. The narrow phase, then only the contacts of own bodies (a ghost's wall contacts
    // are its owner's); 3b. those that cannot close set aside.
    NarrowPhaseScratch narrow;
    ContactList& c = out.contacts;
    narrow_phase(bodies, in.walls, in.states, pairs, reach, m.wall, c, narrow);
    route_kinematic_contacts(bodies, c);  // kinematic bodies act as moving walls
    forget_kinematic_unsupported(bodies, narrow);
    for (std::vector<uint32_t>* near_wall : {&narrow.unsupported_mesh, &narrow.unsupported_thin})
        std::erase_if(*near_wall, [&](uint32_t i) { return !own(int32_t(i)); });  // a ghost's: its owner's
    mine = unsupported_error(bodies, narrow, in.at);
    {
        std::vector<uint8_t> keep(c.size());
        for (std::size_t i = 0; i < c.size(); ++i) keep[i] = own(c.a[i]) || own(c.b[i]);
        keep_flagged(c, keep);
    }
    if (in.set_aside)
        set_aside_distant(bodies, in.gravity, in.h, in.solver.recovery_speed, c, out.aside, {}, in.owner, &ranks);  // (no joints over ranks yet)
    out.error = agree_over_ranks(mine, ranks);
    if (!out.error.ok) return out;

    // 4. Colours over the ranks and the assembly.
    out.colours = colour_and_assemble_on_rank(bodies, in.owner, c, in.materials, in.solver, in.h, in.warm, out.batch, ranks);
    return out;
}

namespace {

/// For each contact (a[i], b[i]) of an own body with another rank's, `put` writes the own
/// body's record for the other's rank; each record received is read by `take(message, at,
/// ghost)`, ghost being the body held here under the record's stable id (or kNotHeld: the
/// record must still be read past).
constexpr std::size_t kNotHeld = std::numeric_limits<std::size_t>::max();
void send_to_ghost_holders(const BodyStore& bodies, std::span<const int32_t> owner,
                           std::span<const int32_t> a_of, std::span<const int32_t> b_of, Ranks& ranks,
                           const std::function<void(std::string&, std::size_t)>& put,
                           const std::function<void(const std::string&, std::size_t&, std::size_t)>& take) {
    const int me = ranks.rank();
    std::vector<std::string> outbox(std::size_t(ranks.size())), inbox;
    for (std::size_t i = 0; i < a_of.size(); ++i) {
        const int32_t a = a_of[i], b = b_of[i];
        if (a == kNoBody) continue;
        for (auto [mine, other] : {std::pair{a, b}, std::pair{b, a}}) {
            if (owner[std::size_t(mine)] != me || owner[std::size_t(other)] == me) continue;
            std::string& out = outbox[std::size_t(owner[std::size_t(other)])];
            put_bytes(out, bodies.id[std::size_t(mine)]);
            put(out, std::size_t(mine));
        }
    }
    ranks.exchange(outbox, inbox);
    std::unordered_map<uint64_t, uint32_t> held;
    for (std::size_t b = 0; b < bodies.size(); ++b)
        if (owner[b] != me) held.emplace(bodies.id[b], uint32_t(b));
    for (const std::string& m : inbox) {
        for (std::size_t at = 0; at < m.size();) {
            const auto it = held.find(take_bytes<uint64_t>(m, at));
            take(m, at, it == held.end() ? kNotHeld : std::size_t(it->second));
        }
    }
}

}  // namespace

void refresh_ghost_velocities(BodyStore& bodies, std::span<const int32_t> owner, std::span<const int32_t> a_of,
                              std::span<const int32_t> b_of, Ranks& ranks) {
    if (ranks.size() == 1) return;
    send_to_ghost_holders(bodies, owner, a_of, b_of, ranks,
        [&](std::string& out, std::size_t body) {
            put_vec(out, bodies.velocity[body]);
            put_vec(out, bodies.angular_velocity[body]);
        },
        [&](const std::string& m, std::size_t& at, std::size_t ghost) {
            const Vec3 v = take_vec(m, at), w = take_vec(m, at);
            if (ghost == kNotHeld) return;
            bodies.velocity[ghost] = v;
            bodies.angular_velocity[ghost] = w;
        });
}

void refresh_ghost_flags(const BodyStore& bodies, std::span<const int32_t> owner, std::span<const int32_t> a_of,
                         std::span<const int32_t> b_of, std::vector<uint8_t>& flag, Ranks& ranks) {
    if (ranks.size() == 1) return;
    send_to_ghost_holders(bodies, owner, a_of, b_of, ranks,
        [&](std::string& out, std::size_t body) { put_bytes(out, flag[body]); },
        [&](const std::string& m, std::size_t& at, std::size_t ghost) {
            const uint8_t f = take_bytes<uint8_t>(m, at);
            if (ghost != kNotHeld) flag[ghost] = f;
        });
}

std::array<int64_t, 2> colour_counts(const JonesPlassmann& jp, Ranks* ranks) {
    std::array<int64_t, 2> most = {0, 0};
    for (uint32_t k : jp.colour) {
        if (k == kOverflowColour) most[1] = 1;
        else most[0] = std::max<int64_t>(most[0], int64_t(k) + 1);
    }
    if (ranks != nullptr) ranks->max(std::span<int64_t>(most));
    return most;
}

std::size_t colour_and_assemble_on_rank(const BodyStore& bodies, std::span<const int32_t> owner,
                                        ContactList& c, const MaterialTable& materials,
                                        const SolverSettings& solver, double h, const WarmStartCache& warm,
                                        AssembledBatch& batch, Ranks& ranks) {
    // Jones and Plassmann's colours over the ranks (the one-process colours), the sweep's
    // colour count over the ranks, and the assembly with the warm start.
    const JonesPlassmann jp = jones_plassmann_on_rank(bodies.size(), c, owner, ranks);
    const std::array<int64_t, 2> most = colour_counts(jp, &ranks);  // proper colours, overflow
    ColouringScratch colouring;
    order_by_colour(c, jp.colour, std::size_t(most[0]), colouring);
    std::size_t colours = std::size_t(most[0]);
    if (most[1] != 0) {
        // The overflow colour (contacts that share bodies, swept in order) cut into levels
        // of contacts that share none, as rank_problem cuts it: the sweep over the ranks
        // exchanges once a level, and each body meets its contacts in the one-process order.
        const OverflowLevels levels = overflow_levels_on_rank(bodies.size(), c, owner, ranks);
        const std::size_t first = c.overflow_colour ? c.colour_start[c.colour_start.size() - 2] : c.size();
        std::vector<uint32_t> order(c.size());
        std::iota(order.begin(), order.end(), 0u);
        std::stable_sort(order.begin() + std::ptrdiff_t(first), order.end(),
                         [&](uint32_t x, uint32_t y) { return levels.level[x] < levels.level[y]; });
        c.for_each_filled_array([&](auto& v) { apply_order(order, v); });
        // the proper colours' ranges, then one range a level (empty where this rank has none)
        std::vector<uint32_t> per_level(levels.count, 0);
        for (std::size_t i = first; i < levels.level.size(); ++i) ++per_level[levels.level[i]];
        c.colour_start.resize(std::size_t(most[0]) + 1);
        c.colour_start.back() = uint32_t(first);
        for (uint32_t l = 0; l < levels.count; ++l) c.colour_start.push_back(c.colour_start.back() + per_level[l]);
        c.overflow_colour = false;
        colours += levels.count;
    }
    assemble(bodies, c, materials, solver, h, warm, batch);
    return colours;
}

}  // namespace talus
