#pragma once
/// The step's contact solves over MPI ranks while every rank still holds the whole world
/// (docs/mpi.md, "What the ranks do today"): what `talus run` under mpirun puts in
/// World::contact_solve. Each rank solves its part of the problem (rank_problem, the
/// decomposition's owners) with solve_ccp_on_rank, then every rank receives every own
/// body's ν⁺ and every contact's γ from the rank that owns it, so that all ranks go on with
/// the one-process bits. What does not run over ranks yet (joints, rolling resistance,
/// maxdiss, nsgs, lemke, friction = "coulomb") is solved whole on every rank, with the same
/// bits.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/body_store.hpp"
#include "core/ranks.hpp"
#include "core/settings.hpp"
#include "solvers/assemble.hpp"
#include "solvers/rank_operator.hpp"
#include "solvers/solver.hpp"

namespace talus {

/// The fewest contacts a rank for which `talus run` solves a problem over the ranks
/// (--rank-min-contacts): a Gauss–Seidel sweep over the ranks waits for one exchange a
/// colour, some microseconds on a network and far more when ranks share cores, against
/// about 30 ns a contact of work; at 1,000 contacts a rank and ten colours the exchanges are
/// comparable to the sweep's work, and below it every rank solves the problem whole faster,
/// with the same bits.
inline constexpr std::size_t kRankSolveMinContacts = 1000;

/// What the solves of a run over ranks did, counted on one rank.
struct RanksSolveCount {
    uint64_t distributed = 0;  ///< solves run over the ranks
    uint64_t small = 0;        ///< solves every rank ran whole, below the contacts a rank asked for
    uint64_t whole = 0;        ///< solves every rank ran whole: not distributed yet
    uint64_t unbounded_checks = 0;  ///< over-constrained checks run on the whole problem (a candidate found)
    uint64_t iterations = 0;   ///< iterations of the distributed solves
    RankTraffic traffic;       ///< their messages (this rank's), the gathers after them excluded
    uint64_t gathered_bytes = 0;  ///< bytes this rank sent in the gathers after them
};

/// solve_ccp's contract and bits for a problem every rank holds whole (a collective: every
/// rank calls it with the same problem). A problem of fewer than `min_contacts_a_rank`
/// contacts a rank is solved whole on every rank. settings.envelope sizes the
/// decomposition's blocks; `count`, if given, accumulates what was done.
SolverResult solve_over_ranks(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                              SolverWorkspace& work, Ranks& ranks, std::size_t min_contacts_a_rank,
                              RanksSolveCount* count = nullptr);

/// Whether solve_over_ranks can run this problem over the ranks; otherwise why not (a
/// phrase naming what is not distributed yet).
std::string not_over_ranks(const AssembledBatch& batch, const SolverSettings& settings);

}  // namespace talus
