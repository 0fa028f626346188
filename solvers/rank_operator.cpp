// One rank's contact operator (solvers/rank_operator.hpp): the halo after every pass that
// moves velocities, and the reductions over the ranks.
#include "solvers/rank_operator.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "core/bytes.hpp"
#include "solvers/contact_kernels.hpp"
#include "solvers/methods.hpp"

namespace talus {
namespace {


}  // namespace

RankOperator::RankOperator(AssembledBatch& batch, BodyStore& store, SolverWorkspace& work, Ranks& ranks,
                           std::span<const int32_t> owner)
    : BodyOperator(batch, store, work), ranks_(ranks), owner_(owner.begin(), owner.end()) {
    const int me = ranks.rank();
    const std::size_t n = batch.size();
    if (owner_.size() != store.size()) throw std::invalid_argument("RankOperator: an owner for every body");
    if (!batch.bilateral.empty() || !batch.rolling.empty())
        throw std::invalid_argument("RankOperator: joint rows and rolling rows are not distributed");
    for (std::size_t b = 0; b < store.size(); ++b) local_of_.emplace(store.id[b], uint32_t(b));
    counted_.assign(n, 0);
    ghost_ranks_.assign(store.size(), {});
    std::size_t mine = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const int32_t a = batch.a[i], b = batch.b[i];
        const int32_t first = contact_owner_body(a, b, store.id);
        counted_[i] = first != kNoBody && owner_[std::size_t(first)] == me;
        mine += counted_[i];
        if (a == kNoBody || b == kNoBody) continue;
        if (owner_[a] == me && owner_[b] != me) ghost_ranks_[a].push_back(owner_[b]);
        if (owner_[b] == me && owner_[a] != me) ghost_ranks_[b].push_back(owner_[a]);
    }
    for (std::size_t b = 0; b < store.size(); ++b) {
        std::vector<int32_t>& g = ghost_ranks_[b];
        std::sort(g.begin(), g.end());
        g.erase(std::unique(g.begin(), g.end()), g.end());
        if (!g.empty()) boundary_.push_back(uint32_t(b));
    }
    // per colour, the boundary bodies its contacts move
    const std::size_t colours = batch.colour_start.empty() ? 0 : batch.colour_start.size() - 1;
    colour_sends_.assign(colours, {});
    for (std::size_t k = 0; k < colours; ++k) {
        std::vector<uint32_t>& send = colour_sends_[k];
        for (std::size_t i = batch.colour_start[k]; i < batch.colour_start[k + 1]; ++i)
            for (int32_t body : {batch.a[i], batch.b[i]})
                if (body != kNoBody && !ghost_ranks_[std::size_t(body)].empty()) send.push_back(uint32_t(body));
        std::sort(send.begin(), send.end());
        send.erase(std::unique(send.begin(), send.end()), send.end());
    }
    // the problem's size, and whether there is one, over every rank
    std::string bytes;
    put_bytes(bytes, uint64_t(mine));
    std::vector<std::string> all;
    ranks_.all_gather(bytes, all);
    ++traffic_.reductions;
    total_ = 0;
    for (const std::string& s : all) {
        std::size_t at = 0;
        total_ += take_bytes<uint64_t>(s, at);
    }
    empty_ = total_ == 0;
    outbox_.resize(std::size_t(ranks.size()));
}

bool RankOperator::any_rank(bool x) {
    ++traffic_.reductions;
    return ranks_.any(x);
}

double RankOperator::max_over_ranks(double x) {
    ++traffic_.reductions;
    return ranks_.max_of(x);
}

Reductions RankOperator::reduce(const ReductionSums& mine) {
    std::string bytes;
    put_bytes(bytes, mine);
    std::vector<std::string> all;
    ranks_.all_gather(bytes, all);
    ++traffic_.reductions;
    ReductionSums total;
    for (const std::string& s : all) {  // exact: any order gives the same sums
        std::size_t at = 0;
        total.merge(take_bytes<ReductionSums>(s, at));
    }
    return total.value();
}

template <class Value, class Get, class Set>
void RankOperator::send_to_ghosts(const std::vector<uint32_t>& list, Get&& get, Set&& set) {
    struct Record {  // a body's value, named by its stable id
        uint64_t id;
        Value value;
    };
    const std::vector<uint64_t>& id = store().id;
    for (std::string& s : outbox_) s.clear();
    for (uint32_t b : list) {
        const Record rec{id[b], get(b)};
        for (int32_t q : ghost_ranks_[b]) put_bytes(outbox_[std::size_t(q)], rec);
    }
    for (const std::string& s : outbox_) {
        traffic_.messages += !s.empty();
        traffic_.bytes += s.size();
    }
    ++traffic_.halos;
    ranks_.exchange(outbox_, inbox_);
    for (const std::string& s : inbox_)
        for (std::size_t at = 0; at < s.size();) {
            const Record rec = take_bytes<Record>(s, at);
            const auto it = local_of_.find(rec.id);
            if (it == local_of_.end()) throw std::runtime_error("a halo message names a body this rank does not hold");
            set(it->second, rec.value);
        }
}

void RankOperator::halo(const std::vector<uint32_t>& list, SolverBodies& sb) {
    struct Velocities {
        double v[3], w[3];
    };
    send_to_ghosts<Velocities>(list,
        [&](uint32_t b) {
            const SolverBody& B = sb.body[b];
            return Velocities{{B.v[0], B.v[1], B.v[2]}, {B.w[0], B.w[1], B.w[2]}};
        },
        [&](uint32_t b, const Velocities& x) {
            sb.body[b].v = Vec3(x.v[0], x.v[1], x.v[2]);
            sb.body[b].w = Vec3(x.w[0], x.w[1], x.w[2]);
        });
}

void RankOperator::warm_start() {
    BodyOperator::warm_start();
    halo(boundary_, work().bodies);
}

double RankOperator::residual() { return max_over_ranks(BodyOperator::residual()); }

template <class Range>
double RankOperator::coloured_sweep(Range&& range) {
    // BodyOperator's sweep, with the halo after each colour: the next colour reads the
    // velocities its contacts' bodies have after this one, wherever they are owned.
    double result = -1.0;
    auto no_blocks = [](std::size_t, std::size_t) { return 0.0; };
    const std::vector<uint32_t>& cs = batch_.colour_start;
    for (std::size_t k = 0; k + 1 < cs.size(); ++k) {
        result = std::max(result, sweep_colour(cs[k], cs[k + 1], 0, 0, false, grain::kContacts, -1.0, range, no_blocks));
        halo(colour_sends_[k], work().bodies);
    }
    return max_over_ranks(result);
}

double RankOperator::pgs_sweep(double omega, double tol2) {
    SolverBodies& sb = work().bodies;
    return coloured_sweep([&](std::size_t lo, std::size_t hi, bool independent) {
        return pgs_range(batch_, sb, lo, hi, omega, tol2, independent);
    });
}

double RankOperator::bgs_sweep(double omega, double tol2) {
    SolverBodies& sb = work().bodies;
    return coloured_sweep([&](std::size_t lo, std::size_t hi, bool independent) {
        return bgs_range(batch_, sb, lo, hi, omega, tol2, independent, friction());
    });
}

void RankOperator::pj_prepare(double omega) {
    // a ghost's k is its owner's: this rank holds only the ghost's contacts with its own bodies
    std::vector<uint32_t> k = block_counts();
    send_to_ghosts<uint32_t>(boundary_, [&](uint32_t b) { return k[b]; },
                             [&](uint32_t b, uint32_t count) { k[b] = count; });
    pj_steps(omega, k);
}

double RankOperator::pj_probe() { return max_over_ranks(BodyOperator::pj_probe()); }

void RankOperator::pj_apply() {
    BodyOperator::pj_apply();
    halo(boundary_, work().bodies);
}

void RankOperator::finish(double tolerance, bool check_unbounded, SolverResult& result) {
    if (check_unbounded) capped_ = {true, tolerance, batch().gamma};
    // ν⁺ = ν* + M⁻¹ D γ of every own body from all its contacts, then the ghosts' from their
    // owners, and the residual there
    detail::rebuild_velocities(batch_, &store(), work());
    halo(boundary_, work().bodies);
    result.residual = max_over_ranks(law_residual(batch_, work().bodies, friction()));
    result.converged = result.residual <= tolerance;
    result.wall_time = seconds();
}

SolverResult solve_ccp_on_rank(AssembledBatch& batch, BodyStore& bodies, std::span<const int32_t> owner,
                               const SolverSettings& settings, SolverWorkspace& work, Ranks& ranks,
                               RankTraffic* traffic, RankCapped* capped) {
    const SolverType t = settings.type;
    if (!runs_on_ranks(settings)) {
        SolverResult refused;
        refused.refused = std::string("the \"") + solver_name(t) +
                          "\" solver does not run over MPI ranks yet under friction = \"" + friction_law_name(settings.friction) +
                          "\" (pgs, bgs, pj and apgd with friction = \"ccp\" do, and bgs with \"coulomb\")";
        return refused;
    }
    SolverSettings s = settings;
    RankOperator op(batch, bodies, work, ranks, owner);
    if (s.relative_tolerance > 0.0 && !op.empty()) {  // solve_ccp's stopping rule, over every rank
        const double local = batch.size() > 0 ? closing_speed(batch, bodies) : -std::numeric_limits<double>::infinity();
        s.tolerance = std::max(s.tolerance, s.relative_tolerance * op.max_over_ranks(local));
    }
    SolverResult result;
    switch (t) {
        case SolverType::PGS: result = pgs_method(op, s); break;
        case SolverType::BGS: result = bgs_method(op, s); break;
        case SolverType::PJ: result = pj_method(op, s); break;
        default: result = apgd_method(op, s); break;
    }
    if (traffic) *traffic = op.traffic();
    if (capped) *capped = op.capped();
    return result;
}

}  // namespace talus
