#pragma once
/// A World stepped over the ranks of a run, each rank holding only its own bodies, the
/// ghosts of the blocks around them and every kinematic body (docs/mpi.md, "The step over
/// ranks"): World::step with World::on_ranks set runs the step's stages on what the rank
/// holds, and between steps the bodies and the warm start of their contacts go to the
/// ranks that own or hold them now. The own bodies move as in one process, bit for bit.
#include <optional>

#include "core/ranks.hpp"
#include "engine/distributed/decomposition.hpp"
#include "engine/world/world.hpp"

namespace talus {

/// Makes `w` (the whole World, the same on every rank) rank `ranks.rank()`'s part of the
/// decomposition of its bodies into blocks `edge` wide (body_decomposition): it keeps the
/// bodies hold_from_whole gives (engine/distributed/rank_bodies.hpp) and the warm start of
/// their contacts, and steps over `ranks` (which must outlive its steps). Every rank keeps
/// the whole run's tallies of the emitters and outlets (each step adds the same to them).
void hold_part(World& w, double edge, Ranks& ranks);

/// hold_part's block edge for a run [m]: four times the largest bounding radius of a dynamic
/// body or an emitter's sphere (1 m with neither), so that a block holds a few grains and
/// its ghosts are one layer of blocks; step_on_ranks widens the blocks if a reach passes
/// half of it (fast bodies: wide margins).
double first_block_edge(const World& w);

/// One step of every rank's part (a collective): w.step(until); then, when it succeeded,
/// rebalance: the warm start of every own body's contacts sent to that body's rank
/// (migrate_warm_start) and the bodies where the decomposition puts them (redistribute),
/// their time in the step's diagnostics (StepDiagnostics::time_ranks). A step that finds a reach beyond half a block
/// (StepFault::BlocksTooSmall) is taken again, from the same state, with blocks twice as
/// wide, up to kMaxWidenings times. A step whose solve hit its cap with a contact's impulse
/// growing (StepFault::CheckWhole: the over-constrained check follows clusters of contacts
/// across the ranks) is taken again by every rank on the whole world (gather_whole
/// everywhere), its solves over the ranks with that check, as one process takes it; then
/// every rank holds its part again, cut afresh. Either retake goes on from where the
/// adaptive step's halvings stood (World::StepResume), with the h and the warm start they
/// had reached. On failure the bodies stay where they were.
StepStatus step_on_ranks(World& w, double until = World::kNoTimeLimit);
inline constexpr int kMaxWidenings = 8;

/// What one process would hold of a World stepped over ranks (a collective), for the
/// output: on rank 0 a copy of `w` with every rank's own bodies by ascending stable id (the
/// clumps' templates the run's own table, as one process has them), the warm start of every
/// contact, and nothing of the ranks; nothing on the other ranks. `everywhere`: the same
/// on every rank.
std::optional<World> gather_whole(const World& w, bool everywhere = false);
/// Its bodies alone (a collective): on rank 0 gather_whole's store, elsewhere an empty one.
BodyStore gather_bodies(const World& w);
/// The bodies this rank owns (no collective): its dynamic bodies, and on rank 0 every
/// kinematic one, as gather_bodies would bring them from this rank (clumps naming the run's
/// templates), in the order held. Every rank's together are gather_bodies's store: a frame
/// written from every rank at once (TrajectoryWriter, RunMetadata::parallel).
BodyStore own_bodies(const World& w);

/// Between steps (a collective): the warm start and the bodies sent where the decomposition
/// w.on_ranks.decomposition puts them now. The bodies are decomposed again from where they
/// are (decompose_held, blocks w.on_ranks.block_edge wide) first when `decompose_again`, when
/// the block edge changed, or when the ranks' loads under the kept decomposition are
/// uneven past kRebalanceAbove (load_imbalance); otherwise the decomposition stays.
void rebalance(World& w, bool decompose_again = false);

/// The largest rank's load over the mean if `w`'s bodies were placed by `d` where they are
/// now (a collective; the loads are decompose_held's: a body counts 1 on its block's rank).
double load_imbalance(const World& w, const Decomposition& d);

/// Between steps (a collective): every warm-start entry of a contact of an own dynamic body
/// goes to the rank that owns that body under `d` (the entries of a contact across two
/// ranks reach both); entries a rank receives twice are one.
/// Returns the bytes this rank sent.
uint64_t migrate_warm_start(WarmStartCache& warm, const BodyStore& bodies, std::span<const int32_t> owner,
                            const Decomposition& d, Ranks& ranks);

}  // namespace talus
