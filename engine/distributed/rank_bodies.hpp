#pragma once
/// The bodies one rank holds between steps (docs/mpi.md, "The bodies a rank holds"): its
/// own (centres in its blocks of the decomposition), a ghost of every other rank's body in
/// the blocks around its own, and every kinematic body (prescribed motions: every rank
/// computes their poses, so they are never sent). After the positions move, `redistribute`
/// sends each own body to the rank that owns its block now (migration) and a fresh copy to
/// every rank that must hold it as a ghost.
#include <cstdint>
#include <span>
#include <vector>

#include "core/body_store.hpp"
#include "core/ranks.hpp"
#include "engine/distributed/decomposition.hpp"

namespace talus {

struct HeldBodies {
    /// own bodies by ascending stable id, then the others (ghosts and kinematic bodies of
    /// other ranks' blocks) by ascending stable id
    BodyStore bodies;
    std::vector<int32_t> owner;  ///< per held body: the rank whose block holds its centre
};

/// What rank `rank` holds of a whole store under `d` (a run's start, and the tests'
/// reference).
HeldBodies hold_from_whole(const BodyStore& whole, const Decomposition& d, int rank);

/// The decomposition of every rank's own bodies into blocks `edge` wide, from what each
/// rank holds (a collective): body_decomposition (engine/distributed/rank_problem.hpp) of
/// the whole store, the same on every rank, with no rank holding the whole. A kinematic
/// body counts on the rank that `held.owner` names, once.
/// With `cut_imbalance`, also the imbalance of the ranks' loads under the new cut (each
/// rank's bodies over the mean: 1 is even; blocks few and full can leave it above 1).
Decomposition decompose_held(const HeldBodies& held, double edge, Ranks& ranks, double* cut_imbalance = nullptr);

/// Between steps (a collective): every rank's held bodies become those of `d` (every rank
/// the same decomposition) at the positions its own bodies have now: each own dynamic body
/// goes, whole, to the rank that owns its block and to every rank that holds it as a ghost;
/// what a rank held as a ghost is replaced by what the owners send; kinematic bodies stay.
/// A body that entered on some rank (an emitter's) is simply one of that rank's own: it
/// moves to its block's rank like any other. The result is hold_from_whole of the bodies'
/// states, bit for bit; returns the bytes this rank sent.
uint64_t redistribute(HeldBodies& held, const Decomposition& d, Ranks& ranks);

/// Every rank's own bodies on rank `to` (a collective): there, a store of every own dynamic
/// body of every rank and every kinematic body, by ascending stable id (a clump with a copy
/// of its template); an empty store on the other ranks.
BodyStore gather_own(const BodyStore& bodies, std::span<const int32_t> owner, int to, Ranks& ranks);

}  // namespace talus
