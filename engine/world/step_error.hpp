#pragma once
/// StepError: the one way a step says it could not go on. Every stage that can fail
/// returns one (collision/ and solvers/ report their own troubles as plain values, which
/// the step turns into this), so no failure travels by exception, member flag or list left
/// in a scratch buffer. A failed step leaves the state as it was before it (World::step).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace talus {

/// Why a step stopped, one bit each, so that a caller can branch on the cause without
/// parsing the message (StepError::faults).
enum class StepFault : uint32_t {
    /// NaN or Inf, or a speed beyond simulation.max_speed, after the forces or the solve
    NonFinite = 1u << 0,
    /// the broad phase could not grid the bodies (collision/broad_phase.hpp)
    BroadPhase = 1u << 1,
    /// more candidate pairs than kMaxPairsPerBody per body: dt far too long for the speeds
    Crowded = 1u << 2,
    // 1u << 3 was a pair of shapes with no contact routine: every pair has one now
    /// bodies near a cone or orifice wall (not ellipsoids) or a mesh wall (not ellipsoids)
    UnsupportedWall = 1u << 4,
    /// kinematic bodies with periodic boundaries (collision/kinematic_contacts.hpp)
    KinematicPeriodic = 1u << 5,
    /// a joint names a body that is gone (solvers/bilateral.hpp: map_joint_bodies)
    Joint = 1u << 6,
    /// the solver refused the contact problem (SolverResult::refused)
    SolverRefused = 1u << 7,
    /// contact impulses growing without bound (SolverResult::unbounded_contacts)
    OverConstrained = 1u << 8,
    /// the step's buffers did not fit in memory (std::bad_alloc inside the step)
    OutOfMemory = 1u << 9,
    /// a setting out of its range (World::settings_problems): only a World built in C++,
    /// since the scene reader refuses the same values first
    InvalidSettings = 1u << 10,
    /// over MPI ranks: a body's reach passed half a block of the decomposition, so a rank's
    /// ghosts may miss a contact (the run decomposes with wider blocks and takes the step again)
    BlocksTooSmall = 1u << 11,
    /// over MPI ranks, each holding its part: the solve hit its cap and a contact's impulse
    /// grew as in an over-constrained problem, whose check follows clusters of contacts
    /// across the ranks (the step is taken again by every rank on the whole world, with
    /// that check: step_on_ranks)
    CheckWhole = 1u << 12,
    /// an adaptive step's solve stopped at its cap leaving an overlap to deepen past the
    /// retake limit (World::kRetakeDepth): World::step takes the step again at half its
    /// length, and never returns this fault
    Unresolved = 1u << 13,
    /// the solve sent a body further than its collision margin, past pairs that were not
    /// candidates (outrunning): World::step takes the step again with wider margins for
    /// those bodies, and never returns this fault
    Outran = 1u << 14,
};

/// The outcome of a step, or of one of its stages: empty when all went well. A stage that
/// finds several causes at once (the narrow phase: unsupported pairs and bodies near a
/// mesh) raises each, and their messages follow one another on separate lines; the step
/// stops at the first stage that reports one, so later stages add nothing.
struct StepError {
    uint32_t faults = 0;                ///< StepFault bits; 0 when the step went on
    bool ok = true;                     ///< faults == 0 (a field: callers test `status.ok`)
    std::string message;                ///< what went wrong, naming bodies by stable id
    std::vector<uint64_t> bad_bodies;   ///< stable ids of the bodies involved (capped)

    bool has(StepFault f) const { return (faults & uint32_t(f)) != 0; }

    /// Records a cause, its text (appended on a new line) and the bodies it names.
    void raise(StepFault f, const std::string& text, const std::vector<uint64_t>& bodies = {}) {
        faults |= uint32_t(f);
        ok = false;
        if (!message.empty()) message += '\n';
        message += text;
        bad_bodies.insert(bad_bodies.end(), bodies.begin(), bodies.end());
    }

    static StepError of(StepFault f, const std::string& text, const std::vector<uint64_t>& bodies = {}) {
        StepError e;
        e.raise(f, text, bodies);
        return e;
    }
};

/// What World::step returns: the same type, under the name its callers have always read.
using StepStatus = StepError;

}  // namespace talus
