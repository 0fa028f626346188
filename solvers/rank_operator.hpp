#pragma once
/// The contact operator of one rank of a distributed solve (docs/mpi.md, "Solvers across
/// ranks"): BodyOperator on the rank's part of the problem, plus the messages that make
/// every rank's iterations the one-process iterations, bit for bit.
///
/// A rank holds its own bodies, a ghost of each other rank's body that shares a contact with
/// one of them, and every contact of its own bodies. A contact between two ranks' bodies is
/// held and computed by both, from the same inputs, so with the same bits. An own body
/// thus meets all its contacts, in the global sweep order, and its velocity takes exactly
/// the one-process sums. A ghost's velocity is incomplete after a pass that moves
/// velocities, and its owner's overwrites it (the halo: one message to each neighbour rank):
///  - PJ: one halo an iteration, after the update; APGD: one a product by N;
///  - PGS and bgs: one after each colour, since the next colour reads the velocities;
///  - the warm start and the final ν⁺: one each.
/// A max over the contacts (residuals, excesses) takes every held contact (one counted
/// twice changes no max); a sum (APGD's dot products) only the contacts the rank owns
/// (those whose body of lower stable id is its own), as exact sums merged over the ranks.
/// Every scalar the iterations decide on is then the same on every rank, and so is every
/// branch: the ranks run the same method in step.
///
/// The colours must be proper: an overflow colour (contacts that share bodies, swept in
/// order) is cut into levels first (engine/distributed/rank_problem.hpp). Joint rows and
/// rolling/spinning rows are not distributed yet: RankProblem refuses them.
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ranks.hpp"
#include "solvers/body_operator.hpp"

namespace talus {

/// Messages of a distributed solve, counted on one rank.
struct RankTraffic {
    uint64_t halos = 0;        ///< halo exchanges (each a message to every neighbour rank)
    uint64_t reductions = 0;   ///< collectives on scalars (maxes, exact sums, flags)
    uint64_t messages = 0;     ///< non-empty halo messages sent
    uint64_t bytes = 0;        ///< halo bytes sent
    RankTraffic& operator+=(const RankTraffic& o) {
        halos += o.halos;
        reductions += o.reductions;
        messages += o.messages;
        bytes += o.bytes;
        return *this;
    }
};

/// Whether solve_ccp_on_rank runs these settings: pgs, bgs, pj and apgd with friction =
/// "ccp", and bgs with "coulomb" (its sweep follows the law contact by contact, as in one
/// process: solvers/bgs.cpp).
inline bool runs_on_ranks(const SolverSettings& s) {
    const SolverType t = s.type;
    if (s.friction == FrictionLaw::Coulomb) return t == SolverType::BGS;
    return t == SolverType::PGS || t == SolverType::BGS || t == SolverType::PJ || t == SolverType::APGD;
}

/// The body of a contact (local indices a, b; kNoBody for a wall) whose rank owns the
/// contact and counts it in sums: the one of lower stable id (`id`), or the only one.
inline int32_t contact_owner_body(int32_t a, int32_t b, std::span<const uint64_t> id) {
    if (a == kNoBody) return b;
    if (b == kNoBody) return a;
    return id[std::size_t(a)] < id[std::size_t(b)] ? a : b;
}

/// Whether a rank's solve hit its cap and asked for the over-constrained check
/// (detail::find_unbounded), and at which stopping tolerance: the check follows clusters of
/// contacts across ranks, so the caller runs it on the whole problem (with the growth
/// snapshots, work.gn_quarter and work.gamma_half, of the rank's contacts).
struct RankCapped {
    bool check_unbounded = false;
    double tolerance = 0.0;   ///< [m/s]
    std::vector<Vec3> gamma;  ///< the rank's γ when the check was asked for (APGD asks at its last iterate)
};

class RankOperator : public BodyOperator {
public:
    /// `owner`: each local body's rank (this rank's own bodies and its ghosts); the batch
    /// holds every contact of this rank's own bodies, in proper colours.
    RankOperator(AssembledBatch& batch, BodyStore& store, SolverWorkspace& work, Ranks& ranks,
                 std::span<const int32_t> owner);

    bool empty() const { return empty_; }
    std::size_t contact_total() const { return total_; }
    bool any_rank(bool x);
    const RankTraffic& traffic() const { return traffic_; }
    /// Whether this rank owns contact i (counts it in sums).
    bool counted(std::size_t i) const { return counted_[i] != 0; }

    void warm_start();
    double residual();
    double pgs_sweep(double omega, double tol2);
    double bgs_sweep(double omega, double tol2);
    /// No cluster sweeps over ranks: inherited, each rank would scan, choose and sweep its
    /// own part alone and the ranks' collectives would part ways (a 2-rank run hung). So bgs
    /// finds neither here (solvers/bgs.cpp, solvers/iteration.hpp), and an MPI run says so
    /// at its start (tools/talus_main.cpp).
    ClusterOutcome cluster_sweeps(double tol, double omega) = delete;
    bool graded_masses() const = delete;
    void pj_prepare(double omega);
    double pj_probe();
    void pj_apply();

    template <class Terms>
    Reductions gather(const uint32_t* list, std::size_t count, std::vector<Vec3>& out,
                      std::vector<ReductionSums>& partial, Terms&& terms) {
        ReductionSums mine;
        BodyOperator::gather(list, count, out, partial, owned_terms(terms), &mine);
        return reduce(mine);
    }
    template <class Terms>
    Reductions product(const std::vector<uint32_t>& live, const std::vector<Vec3>& z,
                       const std::vector<double>& z_l, std::vector<Vec3>& out,
                       std::vector<double>& out_l, std::vector<ReductionSums>& partial, Terms&& terms) {
        scatter_product(live, z, z_l);
        halo(boundary_, work().scratch);
        out.resize(size());
        return gather(live.data(), live.size(), out, partial, terms);
    }
    double refine_residual(double max_term, const std::vector<Vec3>&, const std::vector<Vec3>&,
                           const std::vector<Vec3>&) const {
        return max_term;
    }
    /// The over-constrained check follows clusters of contacts across ranks: the operator
    /// reports none and notes that the method asked (capped()), for the caller to check the
    /// whole problem.
    std::vector<uint32_t> unbounded_contacts(double tolerance) {
        capped_ = {true, tolerance, batch().gamma};
        return {};
    }
    void finish(double tolerance, bool check_unbounded, SolverResult& result);
    const RankCapped& capped() const { return capped_; }

    /// The largest of every rank's x (a collective).
    double max_over_ranks(double x);

private:
    template <class Terms>
    auto owned_terms(Terms& terms) {
        return [this, &terms](std::size_t i, const Vec3& v, double floor) {
            Reductions t = terms(i, v, floor);
            if (!counted_[i]) t.sum[0] = t.sum[1] = t.sum[2] = 0.0;
            return t;
        };
    }
    Reductions reduce(const ReductionSums& mine);
    /// Each body of `list` (own ones) to the ranks holding its ghost; the ghosts received
    /// take their owners' v and ω.
    void halo(const std::vector<uint32_t>& list, SolverBodies& sb);
    /// The halo's messages for any per-body value: get(b) of each body of `list` to the ranks
    /// holding its ghost; set(local body, value) for each value received.
    template <class Value, class Get, class Set>
    void send_to_ghosts(const std::vector<uint32_t>& list, Get&& get, Set&& set);
    template <class Range>
    double coloured_sweep(Range&& range);

    Ranks& ranks_;
    std::vector<int32_t> owner_;
    std::vector<uint8_t> counted_;
    std::vector<std::vector<int32_t>> ghost_ranks_;     // per local body: ranks holding it as a ghost
    std::vector<uint32_t> boundary_;                    // own bodies held as ghosts elsewhere
    std::vector<std::vector<uint32_t>> colour_sends_;   // per colour: its boundary bodies
    std::unordered_map<uint64_t, uint32_t> local_of_;   // stable id → local body
    std::vector<std::string> outbox_, inbox_;
    RankTraffic traffic_;
    RankCapped capped_;
    std::size_t total_ = 0;
    bool empty_ = true;
};

/// solve_ccp on one rank's part of the problem (a collective: every rank calls it on its
/// part): the same γ on every contact held and the same ν⁺ on every own body as the
/// one-process solve, bit for bit, and the same result (iterations, residual) on every
/// rank. For pgs, bgs, pj and apgd with friction = "ccp", and bgs with "coulomb"; any other is refused
/// (SolverResult::refused), on every rank alike. `traffic`, if given, counts the messages;
/// `capped`, if given, receives whether the over-constrained check is owed (the result's
/// unbounded_contacts stays empty).
SolverResult solve_ccp_on_rank(AssembledBatch& batch, BodyStore& bodies, std::span<const int32_t> owner,
                               const SolverSettings& settings, SolverWorkspace& work, Ranks& ranks,
                               RankTraffic* traffic = nullptr, RankCapped* capped = nullptr);

}  // namespace talus
