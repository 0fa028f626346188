// The bodies a rank holds and their redistribution between steps
// (engine/distributed/rank_bodies.hpp).
#include "engine/distributed/rank_bodies.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <type_traits>
#include <string>

#include "core/bytes.hpp"

namespace talus {
namespace {

// A vector of plain values (numbers, Eigen's fixed-size vectors and quaternions, enums) as
// its length and bytes: both ends are the same binary.
template <class T>
void put_array(std::string& out, const std::vector<T>& v) {
    put_bytes(out, uint64_t(v.size()));
    if (!v.empty()) out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

template <class T>
void take_array(const std::string& in, std::size_t& at, std::vector<T>& v) {
    const uint64_t n = take_bytes<uint64_t>(in, at);
    if (n > (in.size() - at) / sizeof(T)) throw std::runtime_error("a rank's message ended early");
    v.resize(n);
    if (n > 0) std::memcpy(static_cast<void*>(v.data()), in.data() + at, n * sizeof(T));  // (no null pointer)
    at += n * sizeof(T);
}

void put_clumps(std::string& out, const ClumpTable& c) {
    put_array(out, c.first), put_array(out, c.centre), put_array(out, c.radius), put_array(out, c.volume);
    put_array(out, c.unit_inertia), put_array(out, c.bounding), put_array(out, c.principal);
    put_array(out, c.user_centre);
}

ClumpTable take_clumps(const std::string& in, std::size_t& at) {
    ClumpTable c;
    take_array(in, at, c.first), take_array(in, at, c.centre), take_array(in, at, c.radius);
    take_array(in, at, c.volume), take_array(in, at, c.unit_inertia), take_array(in, at, c.bounding);
    take_array(in, at, c.principal), take_array(in, at, c.user_centre);
    return c;
}

// The dynamic bodies `pick` of `s` (kinematic bodies are never sent), as their clump
// templates (none for a store without clumps) and then each per-body array: the arrays are
// read straight from `s`, with no store of the picked bodies in between.
void put_bodies(std::string& out, const BodyStore& s, std::span<const uint32_t> pick) {
    if (s.clumps.size() > 0) {  // clumps carry copies of their templates
        BodyStore sub;
        for (uint32_t i : pick) sub.append_from(s, i);
        put_clumps(out, sub.clumps);
        sub.for_each_array([&](const char*, const auto& v) { put_array(out, v); });
        return;
    }
    put_clumps(out, ClumpTable{});
    s.for_each_array([&](const char*, const auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        put_bytes(out, uint64_t(pick.size()));
        std::size_t at = out.size();
        out.resize(at + pick.size() * sizeof(T));
        for (uint32_t i : pick) {
            std::memcpy(out.data() + at, static_cast<const void*>(&v[i]), sizeof(T));
            at += sizeof(T);
        }
    });
}

// What put_bodies wrote, appended to `to`: array by array when the bodies have no clumps,
// otherwise body by body (each clump's template joins to.clumps).
void append_bodies(BodyStore& to, const std::string& in, std::size_t& at) {
    const ClumpTable clumps = take_clumps(in, at);
    if (clumps.size() == 0) {
        to.for_each_array([&](const char*, auto& v) {
            using T = typename std::decay_t<decltype(v)>::value_type;
            const uint64_t n = take_bytes<uint64_t>(in, at);
            if (n > (in.size() - at) / sizeof(T)) throw std::runtime_error("a rank's message ended early");
            const std::size_t old = v.size();
            v.resize(old + n);
            if (n > 0) std::memcpy(static_cast<void*>(v.data() + old), in.data() + at, n * sizeof(T));
            at += n * sizeof(T);
        });
        return;
    }
    BodyStore got;
    got.for_each_array([&](const char*, auto& v) { take_array(in, at, v); });
    got.clumps = clumps;
    for (std::size_t i = 0; i < got.size(); ++i) to.append_from(got, i);
}

// The held order of `held` (own bodies by id, then the others by id), in place; the clump
// templates and the kinematic bodies' motions renumbered in that order, as hold_from_whole
// numbers them.
void put_in_held_order(HeldBodies& held, int rank) {
    BodyStore& b = held.bodies;
    std::vector<std::pair<uint64_t, uint32_t>> key(b.size());  // (others after own, id), index
    for (std::size_t i = 0; i < b.size(); ++i) key[i] = {b.id[i], uint32_t(i)};
    const auto before = [&](const std::pair<uint64_t, uint32_t>& x, const std::pair<uint64_t, uint32_t>& y) {
        const bool ox = held.owner[x.second] == rank, oy = held.owner[y.second] == rank;
        if (ox != oy) return ox;
        return x.first < y.first;
    };
    if (!std::is_sorted(key.begin(), key.end(), before)) {
        std::sort(key.begin(), key.end(), before);
        std::vector<uint32_t> order(b.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = key[k].second;
        b.permute(order);
        apply_order(order, held.owner);
    }
    // the shared tables in the bodies' order, each entry once (as append_from builds them)
    if (b.clumps.size() > 0) {
        ClumpTable clumps;
        for (std::size_t i = 0; i < b.size(); ++i)
            if (b.shape[i] == Shape::Clump) b.shape_param[i].x() = double(clumps.append(b.clumps, b.clump_of(i)));
        b.clumps = std::move(clumps);
    }
    if (!b.motions.empty()) {
        std::vector<BodyMotion> motions;
        for (std::size_t i = 0; i < b.size(); ++i)
            if (b.kinematic(i)) {
                motions.push_back(b.motions[std::size_t(b.motion[i])]);
                b.motion[i] = int32_t(motions.size() - 1);
            }
        b.motions = std::move(motions);
    }
}

}  // namespace

HeldBodies hold_from_whole(const BodyStore& whole, const Decomposition& d, int rank) {
    BodyStore kept;
    std::vector<int32_t> owner;
    std::vector<int> ghosts;
    for (std::size_t i = 0; i < whole.size(); ++i) {
        const int o = d.owner_of(whole.position[i]);
        d.ghost_ranks(whole.position[i], o, ghosts);
        const bool held = o == rank || whole.kinematic(i) || std::binary_search(ghosts.begin(), ghosts.end(), rank);
        if (!held) continue;
        kept.append_from(whole, i);
        owner.push_back(o);
    }
    HeldBodies h{std::move(kept), std::move(owner)};
    put_in_held_order(h, rank);
    return h;
}

Decomposition decompose_held(const HeldBodies& held, double edge, Ranks& ranks, double* cut_imbalance) {
    const int me = ranks.rank();
    const BodyStore& b = held.bodies;
    // the corner of every body's centre (body_decomposition's), component by component
    Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < b.size(); ++i)
        if (held.owner[i] == me) lo = lo.cwiseMin(b.position[i]);
    ranks.min_of(std::span<double>(lo.data(), 3));
    if (!std::isfinite(lo.x())) lo = Vec3::Zero();  // no body anywhere
    const BlockGrid grid = block_grid(lo, edge, 1);
    // each rank's (block, bodies) entries, then every rank's, sorted by block
    std::vector<std::pair<uint64_t, uint64_t>> mine;
    for (std::size_t i = 0; i < b.size(); ++i)
        if (held.owner[i] == me) mine.emplace_back(grid.key(b.position[i]), 1);
    std::sort(mine.begin(), mine.end());
    std::size_t kept = 0;  // one entry a block
    for (std::size_t k = 0; k < mine.size(); ++k) {
        if (kept > 0 && mine[kept - 1].first == mine[k].first) mine[kept - 1].second += mine[k].second;
        else mine[kept++] = mine[k];
    }
    mine.resize(kept);
    std::string bytes;
    for (const auto& [key, weight] : mine) put_bytes(bytes, key), put_bytes(bytes, weight);
    std::vector<std::string> all;
    ranks.all_gather(bytes, all);
    std::vector<std::pair<uint64_t, uint64_t>> blocks;
    for (const std::string& m : all)
        for (std::size_t at = 0; at < m.size();) {
            const uint64_t key = take_bytes<uint64_t>(m, at);
            blocks.emplace_back(key, take_bytes<uint64_t>(m, at));
        }
    std::sort(blocks.begin(), blocks.end());
    Decomposition d = cut_blocks(grid, blocks, ranks.size());
    if (cut_imbalance) {
        std::vector<uint64_t> load(std::size_t(ranks.size()), 0);
        for (const auto& [key, weight] : blocks) load[std::size_t(d.owner(key))] += weight;
        *cut_imbalance = imbalance(load);
    }
    return d;
}

uint64_t redistribute(HeldBodies& held, const Decomposition& d, Ranks& ranks) {
    // Each own dynamic body is sent, whole, to every other rank that holds it under d (its
    // owner and its ghosts' ranks): read straight from the held store into the messages.
    // What the rank keeps (its own bodies it still holds, every kinematic body) stays where
    // it is; the ghosts it held go, replaced by what their owners send; then the held order.
    const int me = ranks.rank();
    const std::size_t p = std::size_t(ranks.size());
    BodyStore& b = held.bodies;
    std::vector<std::vector<uint32_t>> to(p);
    std::vector<uint8_t> gone(b.size(), 0);
    std::vector<int> ghosts;
    for (std::size_t i = 0; i < b.size(); ++i) {
        const int o = d.owner_of(b.position[i]);
        if (b.kinematic(i)) {  // every rank holds it and places it itself
            held.owner[i] = o;
            continue;
        }
        if (held.owner[i] != me) {  // a ghost: its owner sends the fresh copy
            gone[i] = 1;
            continue;
        }
        d.ghost_ranks(b.position[i], o, ghosts);
        if (o != me) to[std::size_t(o)].push_back(uint32_t(i));
        bool stays = o == me;
        for (int g : ghosts) {
            if (g == me) stays = true;
            else to[std::size_t(g)].push_back(uint32_t(i));
        }
        if (stays) held.owner[i] = o;
        else gone[i] = 1;
    }
    std::vector<std::string> outbox(p), inbox;
    uint64_t sent = 0;
    for (std::size_t q = 0; q < p; ++q) {
        if (int(q) == me) continue;
        put_bodies(outbox[q], b, to[q]);
        sent += outbox[q].size();
    }
    ranks.exchange(outbox, inbox);
    b.erase_marked(gone);
    erase_marked(gone, held.owner);
    for (std::size_t q = 0; q < p; ++q) {
        if (int(q) == me || inbox[q].empty()) continue;
        const std::size_t first = b.size();
        std::size_t at = 0;
        append_bodies(b, inbox[q], at);
        for (std::size_t i = first; i < b.size(); ++i) held.owner.push_back(d.owner_of(b.position[i]));
    }
    put_in_held_order(held, me);
    return sent;
}

BodyStore gather_own(const BodyStore& bodies, std::span<const int32_t> owner, int to, Ranks& ranks) {
    const int me = ranks.rank();
    std::vector<uint32_t> mine;  // dynamic bodies only: `to` holds every kinematic body itself
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (owner[i] == me && !bodies.kinematic(i)) mine.push_back(uint32_t(i));
    std::vector<std::string> outbox(std::size_t(ranks.size())), inbox;
    put_bodies(outbox[std::size_t(to)], bodies, mine);
    ranks.exchange(outbox, inbox);
    if (me != to) return {};
    BodyStore all;
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (bodies.kinematic(i)) all.append_from(bodies, i);
    for (const std::string& m : inbox) {
        if (m.empty()) continue;
        std::size_t at = 0;
        append_bodies(all, m, at);
    }
    std::vector<uint32_t> order(all.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return all.id[x] < all.id[y]; });
    all.permute(order);  // by id, in place (the clump templates stay where they are)
    return all;
}

}  // namespace talus
