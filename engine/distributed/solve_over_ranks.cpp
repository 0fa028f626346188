// The step's contact solves over the ranks of a run whose ranks hold the whole world
// (engine/distributed/solve_over_ranks.hpp).
#include "engine/distributed/solve_over_ranks.hpp"

#include <string>
#include <vector>

#include "core/bytes.hpp"
#include "engine/distributed/rank_problem.hpp"

namespace talus {
namespace {

/// Whether this rank owns local contact i of its part: the owner of its body of lower
/// stable id (RankOperator counts the same contacts in its sums).
bool owns_contact(const RankProblem& part, std::size_t i, int rank) {
    const int32_t first = contact_owner_body(part.batch.a[i], part.batch.b[i], part.bodies.id);
    return first != kNoBody && part.owner[std::size_t(first)] == rank;
}

}  // namespace

std::string not_over_ranks(const AssembledBatch& batch, const SolverSettings& settings) {
    SolverSettings ccp = settings;
    ccp.friction = FrictionLaw::CCP;
    if (!runs_on_ranks(ccp)) return std::string("the \"") + solver_name(settings.type) + "\" solver";
    if (!runs_on_ranks(settings)) return "friction = \"coulomb\"";
    if (!batch.bilateral.empty()) return "joints";
    if (!batch.rolling.empty()) return "rolling or spinning resistance";
    return {};
}

SolverResult solve_over_ranks(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                              SolverWorkspace& work, Ranks& ranks, std::size_t min_contacts_a_rank,
                              RanksSolveCount* count) {
    RanksSolveCount unused;
    RanksSolveCount& c = count ? *count : unused;
    if (ranks.size() == 1 || batch.size() == 0) return solve_ccp(batch, bodies, settings, work);
    if (batch.size() < min_contacts_a_rank * std::size_t(ranks.size())) {
        ++c.small;  // the same inputs on every rank: the same bits
        return solve_ccp(batch, bodies, settings, work);
    }
    if (!not_over_ranks(batch, settings).empty()) {
        ++c.whole;  // the same inputs on every rank: the same bits
        return solve_ccp(batch, bodies, settings, work);
    }
    const int me = ranks.rank();
    const std::vector<int32_t> owner = body_owners(bodies, settings.envelope, ranks.size());
    RankProblem part = rank_problem(bodies, batch, owner, me);
    RankCapped capped;
    RankTraffic traffic;
    SolverResult result =
        solve_ccp_on_rank(part.batch, part.bodies, part.owner, settings, work, ranks, &traffic, &capped);
    c.traffic += traffic;
    ++c.distributed;
    c.iterations += uint64_t(result.iterations);

    // Every own body's ν⁺ and every owned contact's γ (with its growth snapshots when the
    // over-constrained check is owed) to every rank.
    const std::size_t n_local = part.batch.size();
    const bool snapshots = capped.check_unbounded && work.gn_quarter.size() == n_local &&
                           work.gamma_half.size() == n_local && capped.gamma.size() == n_local;
    std::string mine;
    uint64_t own_bodies = 0, own_contacts = 0;
    for (std::size_t b = 0; b < part.owner.size(); ++b) own_bodies += part.owner[b] == me;
    for (std::size_t i = 0; i < n_local; ++i) own_contacts += owns_contact(part, i, me);
    put_bytes(mine, uint8_t(snapshots));
    put_bytes(mine, own_bodies);
    for (std::size_t b = 0; b < part.owner.size(); ++b) {
        if (part.owner[b] != me) continue;
        put_bytes(mine, part.global_body[b]);
        put_vec(mine, part.bodies.velocity[b]);
        put_vec(mine, part.bodies.angular_velocity[b]);
    }
    put_bytes(mine, own_contacts);
    for (std::size_t i = 0; i < n_local; ++i) {
        if (!owns_contact(part, i, me)) continue;
        put_bytes(mine, part.global_contact[i]);
        put_vec(mine, part.batch.gamma[i]);
        if (!snapshots) continue;
        put_bytes(mine, work.gn_quarter[i]);
        put_vec(mine, work.gamma_half[i]);
        put_vec(mine, capped.gamma[i]);
    }
    c.gathered_bytes += mine.size();
    std::vector<std::string> all;
    ranks.all_gather(mine, all);

    const std::size_t n = batch.size();
    std::vector<Vec3> v(bodies.size()), w(bodies.size()), gamma(n), gamma_half, gamma_checked;
    std::vector<double> gn_quarter;
    bool every_snapshot = capped.check_unbounded;  // the same on every rank: they iterate in step
    for (const std::string& s : all) {
        std::size_t at = 0;
        const bool has = take_bytes<uint8_t>(s, at) != 0;
        every_snapshot = every_snapshot && has;
        if (has && gn_quarter.empty()) {
            gn_quarter.assign(n, 0.0);
            gamma_half.assign(n, Vec3::Zero());
            gamma_checked.assign(n, Vec3::Zero());
        }
        const uint64_t nb = take_bytes<uint64_t>(s, at);
        for (uint64_t k = 0; k < nb; ++k) {
            const uint32_t g = take_bytes<uint32_t>(s, at);
            v[g] = take_vec(s, at);
            w[g] = take_vec(s, at);
        }
        const uint64_t nc = take_bytes<uint64_t>(s, at);
        for (uint64_t k = 0; k < nc; ++k) {
            const uint32_t g = take_bytes<uint32_t>(s, at);
            gamma[g] = take_vec(s, at);
            if (!has) continue;
            gn_quarter[g] = take_bytes<double>(s, at);
            gamma_half[g] = take_vec(s, at);
            gamma_checked[g] = take_vec(s, at);
        }
    }
    // The over-constrained check follows clusters of contacts across the ranks. Its first
    // test almost always finds nothing, and then neither does the whole check; when it
    // finds a candidate, every rank runs the whole check on the whole problem, as
    // BodyOperator does: the bodies' velocities at the γ the method checked, from ν*
    // (the store, still untouched), and the gathered growth snapshots.
    if (every_snapshot &&
        !detail::unbounded_candidates(batch, bodies, gamma_checked, gn_quarter, gamma_half, capped.tolerance).empty()) {
        ++c.unbounded_checks;
        SolverWorkspace whole;
        detail::begin_solve(batch, bodies, whole);
        whole.gn_quarter.swap(gn_quarter);
        whole.gamma_half.swap(gamma_half);
        batch.gamma.swap(gamma_checked);
        detail::rebuild_velocities(batch, nullptr, whole);
        result.unbounded_contacts = detail::find_unbounded(batch, bodies, whole, capped.tolerance);
        batch.gamma.swap(gamma_checked);
    }
    bodies.velocity.swap(v);
    bodies.angular_velocity.swap(w);
    batch.gamma.swap(gamma);
    batch.lipschitz = part.batch.lipschitz;  // APGD's estimate: the same on every rank
    return result;
}

}  // namespace talus
