// The bodies a rank holds and their redistribution between steps
// (engine/distributed/rank_bodies.hpp).
#include "engine/distributed/rank_bodies.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <numeric>
#include <stdexcept>
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

// A store of dynamic bodies with its clump templates (kinematic bodies are never sent).
void put_store(std::string& out, const BodyStore& s) {
    s.for_each_array([&](const char*, const auto& v) { put_array(out, v); });
    const ClumpTable& c = s.clumps;
    put_array(out, c.first), put_array(out, c.centre), put_array(out, c.radius), put_array(out, c.volume);
    put_array(out, c.unit_inertia), put_array(out, c.bounding), put_array(out, c.principal);
    put_array(out, c.user_centre);
}

BodyStore take_store(const std::string& in, std::size_t& at) {
    BodyStore s;
    s.for_each_array([&](const char*, auto& v) { take_array(in, at, v); });
    ClumpTable& c = s.clumps;
    take_array(in, at, c.first), take_array(in, at, c.centre), take_array(in, at, c.radius);
    take_array(in, at, c.volume), take_array(in, at, c.unit_inertia), take_array(in, at, c.bounding);
    take_array(in, at, c.principal), take_array(in, at, c.user_centre);
    return s;
}

// The held store in its order: own bodies by id, then the others by id.
HeldBodies in_held_order(const BodyStore& from, const std::vector<int32_t>& owner, int rank) {
    std::vector<uint32_t> order(from.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
        const bool ox = owner[x] == rank, oy = owner[y] == rank;
        if (ox != oy) return ox;
        return from.id[x] < from.id[y];
    });
    HeldBodies h;
    for (uint32_t i : order) {
        h.bodies.append_from(from, i);
        h.owner.push_back(owner[i]);
    }
    return h;
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
    return in_held_order(kept, owner, rank);
}

Decomposition decompose_held(const HeldBodies& held, double edge, Ranks& ranks) {
    const int me = ranks.rank();
    const BodyStore& b = held.bodies;
    // the corner of every body's centre (body_decomposition's), component by component
    Vec3 lo = Vec3::Constant(std::numeric_limits<double>::infinity());
    for (std::size_t i = 0; i < b.size(); ++i)
        if (held.owner[i] == me) lo = lo.cwiseMin(b.position[i]);
    for (int k = 0; k < 3; ++k) lo[k] = ranks.min_of(lo[k]);
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
    return cut_blocks(grid, blocks, ranks.size());
}

uint64_t redistribute(HeldBodies& held, const Decomposition& d, Ranks& ranks) {
    const int me = ranks.rank();
    const std::size_t p = std::size_t(ranks.size());
    std::vector<BodyStore> to(p);
    BodyStore kept;  // kinematic bodies: every rank holds them and places them itself
    std::vector<int32_t> kept_owner;
    std::vector<int> ghosts;
    const BodyStore& b = held.bodies;
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (b.kinematic(i)) {
            kept.append_from(b, i);
            kept_owner.push_back(d.owner_of(b.position[i]));
            continue;
        }
        if (held.owner[i] != me) continue;  // a ghost: its owner sends the fresh copy
        const int o = d.owner_of(b.position[i]);
        to[std::size_t(o)].append_from(b, i);
        d.ghost_ranks(b.position[i], o, ghosts);
        for (int g : ghosts) to[std::size_t(g)].append_from(b, i);
    }
    std::vector<std::string> outbox(p), inbox;
    uint64_t sent = 0;
    for (std::size_t q = 0; q < p; ++q) {
        put_store(outbox[q], to[q]);
        if (int(q) != me) sent += outbox[q].size();
    }
    ranks.exchange(outbox, inbox);
    BodyStore all = std::move(kept);
    std::vector<int32_t> owner = std::move(kept_owner);
    for (const std::string& m : inbox) {
        std::size_t at = 0;
        const BodyStore got = take_store(m, at);
        for (std::size_t i = 0; i < got.size(); ++i) {
            all.append_from(got, i);
            owner.push_back(d.owner_of(got.position[i]));
        }
    }
    held = in_held_order(all, owner, me);
    return sent;
}

BodyStore gather_own(const BodyStore& bodies, std::span<const int32_t> owner, int to, Ranks& ranks) {
    const int me = ranks.rank();
    BodyStore mine;  // dynamic bodies only: `to` holds every kinematic body itself
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (owner[i] == me && !bodies.kinematic(i)) mine.append_from(bodies, i);
    std::vector<std::string> outbox(std::size_t(ranks.size())), inbox;
    put_store(outbox[std::size_t(to)], mine);
    ranks.exchange(outbox, inbox);
    if (me != to) return {};
    BodyStore all;
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (bodies.kinematic(i)) all.append_from(bodies, i);
    for (const std::string& m : inbox) {
        if (m.empty()) continue;
        std::size_t at = 0;
        const BodyStore got = take_store(m, at);
        for (std::size_t i = 0; i < got.size(); ++i) all.append_from(got, i);
    }
    std::vector<uint32_t> order(all.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) { return all.id[x] < all.id[y]; });
    all.permute(order);  // by id, in place (the clump templates stay where they are)
    return all;
}

}  // namespace talus
