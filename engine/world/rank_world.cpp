// A World stepped over ranks, each holding its part (engine/world/rank_world.hpp).
#include "engine/world/rank_world.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/bytes.hpp"
#include "engine/distributed/rank_bodies.hpp"
#include "engine/distributed/rank_problem.hpp"
#include "engine/distributed/solve_over_ranks.hpp"

namespace talus {
namespace {

template <class E>
auto key_of(const E& e) {
    return std::tuple(e.key_b, e.key_a, e.feature);
}

// v[0, sorted) is sorted by key with each key once; the rest (from other ranks) in any
// order: afterwards the whole sorted by key, each key once. Two ranks may send the same
// entry of a contact between their bodies: the same bits, both solved it.
template <class E>
void merge_unique(std::vector<E>& v, std::size_t sorted) {
    const auto before = [](const E& x, const E& y) { return key_of(x) < key_of(y); };
    std::sort(v.begin() + std::ptrdiff_t(sorted), v.end(), before);
    std::inplace_merge(v.begin(), v.begin() + std::ptrdiff_t(sorted), v.end(), before);
    v.erase(std::unique(v.begin(), v.end(), [](const E& x, const E& y) { return key_of(x) == key_of(y); }), v.end());
}

void put_entry(std::string& out, const WarmStartCache::Entry& e) {
    put_bytes(out, e.key_a), put_bytes(out, e.key_b), put_bytes(out, e.feature);
    put_bytes(out, e.normal), put_vec(out, e.friction), put_bytes(out, e.h);
}

WarmStartCache::Entry take_entry(const std::string& in, std::size_t& at) {
    WarmStartCache::Entry e;
    e.key_a = take_bytes<uint64_t>(in, at), e.key_b = take_bytes<uint64_t>(in, at);
    e.feature = take_bytes<uint32_t>(in, at), e.normal = take_bytes<double>(in, at);
    e.friction = take_vec(in, at), e.h = take_bytes<double>(in, at);
    return e;
}

void put_torque(std::string& out, const WarmStartCache::TorqueEntry& e) {
    put_bytes(out, e.key_a), put_bytes(out, e.key_b), put_bytes(out, e.feature);
    put_vec(out, e.torque), put_bytes(out, e.h);
}

WarmStartCache::TorqueEntry take_torque(const std::string& in, std::size_t& at) {
    WarmStartCache::TorqueEntry e;
    e.key_a = take_bytes<uint64_t>(in, at), e.key_b = take_bytes<uint64_t>(in, at);
    e.feature = take_bytes<uint32_t>(in, at), e.torque = take_vec(in, at), e.h = take_bytes<double>(in, at);
    return e;
}

}  // namespace

uint64_t migrate_warm_start(WarmStartCache& warm, const BodyStore& bodies, std::span<const int32_t> owner,
                            const Decomposition& d, Ranks& ranks) {
    const int me = ranks.rank();
    // the rank that owns each own dynamic body under d, by stable id
    std::unordered_map<uint64_t, int> goes_to;
    goes_to.reserve(bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (owner[i] == me && !bodies.kinematic(i)) goes_to.emplace(bodies.id[i], d.owner_of(bodies.position[i]));
    const auto ranks_of = [&](uint64_t key_a, uint64_t key_b, int out[2]) {
        int n = 0;
        for (uint64_t key : {key_a, key_b}) {
            if (key & kWallKeyBit) continue;
            const auto it = goes_to.find(key);
            if (it != goes_to.end() && (n == 0 || out[0] != it->second)) out[n++] = it->second;
        }
        return n;
    };
    // what stays on this rank is kept as it is (in the cache's order, by key); the rest is
    // sent to the ranks of its bodies
    std::vector<WarmStartCache::Entry> got;
    std::vector<WarmStartCache::TorqueEntry> got_torques;
    std::vector<std::string> entries(std::size_t(ranks.size())), torques(entries.size());
    int to[2];
    for (const WarmStartCache::Entry& e : warm.entries())
        for (int k = 0, n = ranks_of(e.key_a, e.key_b, to); k < n; ++k)
            if (to[k] == me) got.push_back(e);
            else put_entry(entries[std::size_t(to[k])], e);
    for (const WarmStartCache::TorqueEntry& e : warm.torque_entries())
        for (int k = 0, n = ranks_of(e.key_a, e.key_b, to); k < n; ++k)
            if (to[k] == me) got_torques.push_back(e);
            else put_torque(torques[std::size_t(to[k])], e);
    std::vector<std::string> outbox(entries.size()), inbox;
    uint64_t sent = 0;
    for (std::size_t q = 0; q < outbox.size(); ++q) {
        if (int(q) == me) continue;
        put_bytes(outbox[q], uint64_t(entries[q].size()));
        outbox[q] += entries[q];
        outbox[q] += torques[q];
        sent += outbox[q].size();
    }
    ranks.exchange(outbox, inbox);
    const std::size_t kept = got.size(), kept_torques = got_torques.size();
    for (std::size_t q = 0; q < inbox.size(); ++q) {
        const std::string& m = inbox[q];
        if (int(q) == me || m.empty()) continue;
        std::size_t at = 0;
        const std::size_t end = sizeof(uint64_t) + take_bytes<uint64_t>(m, at);
        while (at < end) got.push_back(take_entry(m, at));
        while (at < m.size()) got_torques.push_back(take_torque(m, at));
    }
    merge_unique(got, kept);
    merge_unique(got_torques, kept_torques);
    warm.restore(std::move(got), std::move(got_torques), warm.lipschitz());
    return sent;
}

void hold_part(World& w, double edge, Ranks& ranks) {
    const Decomposition d = body_decomposition(w.bodies, edge, ranks.size());
    HeldBodies held = hold_from_whole(w.bodies, d, ranks.rank());
    World::OnRanks on{.ranks = &ranks,
                      .owner = std::move(held.owner),
                      .block_edge = edge,
                      .decomposition = d,
                      .clumps = w.bodies.clumps,
                      .clump_template = {}};
    on.cut_imbalance = imbalance(rank_loads(d, w.bodies.position, std::vector<uint32_t>(w.bodies.size(), 1)));
    for (std::size_t i = 0; i < w.bodies.size(); ++i)
        if (w.bodies.shape[i] == Shape::Clump) on.clump_template.emplace(w.bodies.id[i], w.bodies.clump_of(i));
    w.bodies = std::move(held.bodies);
    w.on_ranks = std::move(on);
    // the warm start of the contacts of its own bodies (what collide_on_rank reads)
    World::CarriedState s = w.carried_state();
    std::unordered_set<uint64_t> own;
    for (std::size_t i = 0; i < w.bodies.size(); ++i)
        if (w.on_ranks.owner[i] == ranks.rank()) own.insert(w.bodies.id[i]);
    const auto mine = [&](const auto& e) { return own.contains(e.key_a) || own.contains(e.key_b); };
    std::vector<WarmStartCache::Entry> entries;
    std::vector<WarmStartCache::TorqueEntry> torques;
    std::copy_if(s.warm.entries().begin(), s.warm.entries().end(), std::back_inserter(entries), mine);
    std::copy_if(s.warm.torque_entries().begin(), s.warm.torque_entries().end(), std::back_inserter(torques), mine);
    s.warm.restore(std::move(entries), std::move(torques), s.warm.lipschitz());
    w.restore_carried_state(std::move(s));
}

namespace {

/// gather_bodies onto rank `to`.
/// `bodies`' clumps name the run's templates again (a held body carries a copy of its own).
void name_run_templates(BodyStore& bodies, const World& w) {
    bodies.clumps = w.on_ranks.clumps;
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (bodies.shape[i] == Shape::Clump) bodies.shape_param[i].x() = double(w.on_ranks.clump_template.at(bodies.id[i]));
}

BodyStore gather_bodies_on(const World& w, int to) {
    BodyStore bodies = gather_own(w.bodies, w.on_ranks.owner, to, *w.on_ranks.ranks);
    if (bodies.size() > 0) name_run_templates(bodies, w);
    return bodies;
}

}  // namespace

BodyStore gather_bodies(const World& w) { return gather_bodies_on(w, 0); }

BodyStore own_bodies(const World& w) {
    const int me = w.on_ranks.ranks->rank();
    BodyStore mine;
    for (std::size_t i = 0; i < w.bodies.size(); ++i)
        if (w.bodies.kinematic(i) ? me == 0 : w.on_ranks.owner[i] == me) mine.append_from(w.bodies, i);
    name_run_templates(mine, w);
    return mine;
}

double first_block_edge(const World& w) {
    double r = 0.0;
    for (std::size_t i = 0; i < w.bodies.size(); ++i)
        if (!w.bodies.kinematic(i)) r = std::max(r, w.bodies.radius[i]);
    for (const Emitter& e : w.emitters) r = std::max(r, e.size.max);
    return r > 0.0 ? 4.0 * r : 1.0;
}

std::optional<World> gather_whole(const World& w, bool everywhere) {
    Ranks& ranks = *w.on_ranks.ranks;
    BodyStore bodies;
    for (int to = 0; to < (everywhere ? ranks.size() : 1); ++to) {
        BodyStore on = gather_bodies_on(w, to);
        if (to == ranks.rank()) bodies = std::move(on);
    }
    // every rank's warm-start entries (a contact across two ranks comes from both, once)
    std::string mine;
    put_bytes(mine, uint64_t(w.warm_start().entries().size()));
    for (const WarmStartCache::Entry& e : w.warm_start().entries()) put_entry(mine, e);
    for (const WarmStartCache::TorqueEntry& e : w.warm_start().torque_entries()) put_torque(mine, e);
    std::vector<std::string> outbox(std::size_t(ranks.size())), inbox;
    if (everywhere) outbox.assign(outbox.size(), mine);
    else outbox[0] = std::move(mine);
    ranks.exchange(outbox, inbox);
    if (!everywhere && !ranks.root()) return std::nullopt;
    std::vector<WarmStartCache::Entry> entries;
    std::vector<WarmStartCache::TorqueEntry> torques;
    for (const std::string& m : inbox) {
        std::size_t at = 0;
        const std::size_t n = take_bytes<uint64_t>(m, at);
        for (std::size_t k = 0; k < n; ++k) entries.push_back(take_entry(m, at));
        while (at < m.size()) torques.push_back(take_torque(m, at));
    }
    merge_unique(entries, 0);
    merge_unique(torques, 0);
    std::optional<World> whole(w);
    whole->bodies = std::move(bodies);
    whole->on_ranks = World::OnRanks{};
    World::CarriedState s = whole->carried_state();
    s.warm.restore(std::move(entries), std::move(torques), s.warm.lipschitz());
    whole->restore_carried_state(std::move(s));
    return whole;
}

double load_imbalance(const World& w, const Decomposition& d) {
    Ranks& ranks = *w.on_ranks.ranks;
    const int me = ranks.rank();
    // each rank's own bodies (kinematic ones on the rank `owner` names) by the rank whose
    // block holds them now, added over the ranks: decompose_held's weights
    std::vector<uint64_t> load(std::size_t(ranks.size()), 0);
    for (std::size_t i = 0; i < w.bodies.size(); ++i)
        if (w.on_ranks.owner[i] == me) ++load[std::size_t(d.owner_of(w.bodies.position[i]))];
    std::string mine;
    for (uint64_t l : load) put_bytes(mine, l);
    std::vector<std::string> all;
    ranks.all_gather(mine, all);
    std::fill(load.begin(), load.end(), 0);
    for (const std::string& m : all) {
        std::size_t at = 0;
        for (uint64_t& l : load) l += take_bytes<uint64_t>(m, at);
    }
    return imbalance(load);
}

void rebalance(World& w, bool decompose_again) {
    Ranks& ranks = *w.on_ranks.ranks;
    // the decomposition the bodies were placed by, unless the blocks changed or its load has
    // drifted (the result is the same bits either way: only the work per rank depends on
    // the decomposition)
    if (!decompose_again && w.on_ranks.decomposition.grid.edge != w.on_ranks.block_edge) decompose_again = true;
    if (!decompose_again)
        decompose_again = load_drifted(load_imbalance(w, w.on_ranks.decomposition), w.on_ranks.cut_imbalance);
    HeldBodies held{std::move(w.bodies), std::move(w.on_ranks.owner)};
    if (decompose_again) {
        w.on_ranks.decomposition = decompose_held(held, w.on_ranks.block_edge, ranks, &w.on_ranks.cut_imbalance);
        ++w.on_ranks.decompositions;
    }
    const Decomposition& d = w.on_ranks.decomposition;
    World::CarriedState carried = w.carried_state();
    w.on_ranks.between_bytes += migrate_warm_start(carried.warm, held.bodies, held.owner, d, ranks);
    w.restore_carried_state(std::move(carried));
    w.on_ranks.between_bytes += redistribute(held, d, ranks);
    w.bodies = std::move(held.bodies);
    w.on_ranks.owner = std::move(held.owner);
}

namespace {

/// The step taken by every rank on the whole world, its solves over the ranks as when
/// every rank steps the whole world (solve_over_ranks, which runs the over-constrained
/// check on the whole problem): the one-process step, bit for bit. Then every rank holds
/// its part again, cut afresh.
StepStatus step_whole_on_ranks(World& w, double until) {
    Ranks& ranks = *w.on_ranks.ranks;
    World whole = std::move(*gather_whole(w, true));
    whole.contact_solve = [&ranks](AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                                   SolverWorkspace& work) {
        return solve_over_ranks(batch, bodies, settings, work, ranks, kRankSolveMinContacts, nullptr);
    };
    const StepStatus s = whole.step(until);
    whole.contact_solve = nullptr;
    World::OnRanks before = std::move(w.on_ranks);
    hold_part(whole, before.block_edge, ranks);
    // what the run's end reports counts on
    World::OnRanks& now = whole.on_ranks;
    now.decompositions = before.decompositions + 1;
    now.solve_iterations = before.solve_iterations;
    now.solve_messages = before.solve_messages;
    now.solve_bytes = before.solve_bytes;
    now.between_bytes = before.between_bytes;
    now.whole_steps = before.whole_steps + 1;
    now.whole_on_candidates = before.whole_on_candidates;
    w = std::move(whole);
    return s;
}

}  // namespace

StepStatus step_on_ranks(World& w, double until) {
    for (int widened = 0;; ++widened) {
        StepStatus s = w.step(until);
        if (!s.ok && s.has(StepFault::CheckWhole)) return step_whole_on_ranks(w, until);
        if (s.ok || !s.has(StepFault::BlocksTooSmall) || widened == kMaxWidenings) {
            if (s.ok) {
                const auto start = std::chrono::steady_clock::now();
                rebalance(w, widened > 0);  // (blocks widened: cut again where the bodies are now)
                w.diag_.time_ranks = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            }
            return s;
        }
        // every rank alike (the error is agreed): wider blocks, the bodies sent where they
        // put them, the same step again (the state is as before it)
        w.on_ranks.block_edge *= 2.0;
        rebalance(w, true);
    }
}

}  // namespace talus
