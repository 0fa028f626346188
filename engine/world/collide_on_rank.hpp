#pragma once
/// Stages 1b–4 of a step on one rank of P (docs/mpi.md, "Contacts found by each rank"): the
/// margins, the broad and narrow phases, the set-aside, the colouring and the assembly, run
/// on the bodies the rank holds (its own and ghosts) instead of the whole world. The rank
/// ends with every contact of its own bodies, coloured and assembled as one process would
/// have them, ready for solve_ccp_on_rank (solvers/rank_operator.hpp): the same contacts,
/// rows and colours, bit for bit, for any P.
///
/// A collective: every rank calls it. What it needs from the other ranks (the largest
/// margins, the crowding count, a failure anywhere, Jones–Plassmann's rounds, the colour
/// count) travels through `ranks`; with one rank it is the one-process stages.
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <limits>
#include <span>
#include <vector>

#include "core/body_store.hpp"
#include "core/contacts.hpp"
#include "core/materials.hpp"
#include "core/periodic.hpp"
#include "core/ranks.hpp"
#include "core/settings.hpp"
#include "core/walls.hpp"
#include "engine/world/pipeline.hpp"
#include "solvers/assemble.hpp"
#include "solvers/colouring.hpp"
#include "solvers/warm_start.hpp"

namespace talus {

/// What collide_on_rank reads.
struct RankCollideInput {
    /// The bodies this rank holds, at ν* (after the forces), in any order: its own and a
    /// ghost of every other rank's body whose reach can overlap an own body's (the blocks
    /// around its own, when a block is at least two largest reaches wide).
    const BodyStore& bodies;
    std::span<const int32_t> owner;  ///< per held body: the rank that owns it
    const std::vector<Wall>& walls;
    const std::vector<WallState>& states;  ///< the walls' poses and motion (wall_states)
    const PeriodicBox& periodic;
    const MaterialTable& materials;
    const SolverSettings& solver;
    double h = 0.0;  ///< [s]
    const WarmStartCache& warm;  ///< holds at least the warm start of every contact of an own body
    bool set_aside = false;      ///< move the contacts that cannot close out of the solve
    Vec3 gravity = Vec3::Zero();  ///< [m/s²]
    StepAt at;
    /// The decomposition's block edge [m]: a held ghost set is complete only while no
    /// reach exceeds half of it (StepFault::BlocksTooSmall otherwise)
    double block_edge = std::numeric_limits<double>::infinity();
    /// margins a step taken again gives the bodies it names (World::step, StepFault::Outran)
    const MarginFloor* floor = nullptr;
};

/// A rank's contacts and their rows.
struct RankCollided {
    ContactList contacts;  ///< every contact of an own body, by colour (held bodies' indices)
    ContactList aside;     ///< those of them set aside (in.set_aside)
    AssembledBatch batch;  ///< the contacts assembled, for solve_ccp_on_rank
    Margins margins;       ///< the whole step's margins (the same on every rank)
    std::vector<double> reach;  ///< per held body: radius + margin (choose_margins)
    /// the sweep's colours, the same on every rank: the proper colours, then the overflow
    /// colour's levels (overflow_levels_on_rank), as rank_problem cuts it
    std::size_t colours = 0;
    /// the step's error, the same on every rank: that of the lowest rank whose stages
    /// failed, its message led by "rank R: " when there are several ranks
    StepError error;
};

RankCollided collide_on_rank(const RankCollideInput& in, Ranks& ranks);

/// Jones and Plassmann's colours counted: {the proper colours (largest colour + 1), 1 if
/// some contact has the overflow colour}, the largest over the ranks when `ranks` is not
/// null (a collective then), so every rank sweeps the same colours.
std::array<int64_t, 2> colour_counts(const JonesPlassmann& jp, Ranks* ranks);

/// Stage 4 on one rank (a collective): colours the rank's contacts (every contact of an own
/// body) with Jones–Plassmann over the ranks, cuts an overflow colour into the one-process
/// levels, reorders them by colour and assembles them with the warm start `warm` into
/// `batch`. Returns the sweep's colour count, the same on every rank. collide_on_rank ends
/// with it, and the take-back of set-aside contacts colours again with it.
std::size_t colour_and_assemble_on_rank(const BodyStore& bodies, std::span<const int32_t> owner,
                                        ContactList& contacts, const MaterialTable& materials,
                                        const SolverSettings& solver, double h, const WarmStartCache& warm,
                                        AssembledBatch& batch, Ranks& ranks);

/// After a solve on one rank (a collective): the solved velocities of the ghosts of the
/// contacts (a[i], b[i]) of an own body with another rank's body, from their owners. The
/// solve leaves a ghost with its ν*; what reads a contact's two velocities after it (the
/// take-back of set-aside contacts, the adaptive step's slip speed) needs them. Each rank
/// sends its own body's velocities to the other body's rank, which holds the same contact
/// (it is its own body's too).
void refresh_ghost_velocities(BodyStore& bodies, std::span<const int32_t> owner, std::span<const int32_t> a,
                              std::span<const int32_t> b, Ranks& ranks);

/// The same exchange for a flag per body (a collective): for each contact (a[i], b[i]) of an
/// own body with another rank's, the own body's flag goes to the other's rank, which sets
/// its ghost's flag to it. The owner holds every contact of its body, so its flag is the
/// body's whole answer where a ghost's, computed from the contacts held here, is a part.
void refresh_ghost_flags(const BodyStore& bodies, std::span<const int32_t> owner, std::span<const int32_t> a,
                         std::span<const int32_t> b, std::vector<uint8_t>& flag, Ranks& ranks);

/// Every rank's step error, the same on every rank (a collective): that of the lowest rank
/// that failed, its message led by "rank R: " when there are several ranks; ok when none
/// did. Ranks that failed alone would leave the others waiting in the next collective.
StepError agree_over_ranks(const StepError& mine, Ranks& ranks);

}  // namespace talus
