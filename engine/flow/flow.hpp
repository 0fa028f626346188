#pragma once
/// Particle sources and sinks between steps (docs/design.md §10 "inflow emitters", "outlets/sinks"):
/// an Emitter adds spheres at a rate inside a box, an Outlet removes every body whose centre
/// enters its region. Both keep cumulative tallies, which the trajectory writer turns into
/// per-frame counts (docs/output-format.md, /flow).
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <vector>

#include "core/body_store.hpp"
#include "core/exact_sum.hpp"
#include "core/materials.hpp"
#include "core/math.hpp"
#include "core/periodic.hpp"
#include "core/walls.hpp"
#include "engine/flow/size_distribution.hpp"
#include "core/enum_names.hpp"

namespace talus {

/// Bodies and mass that crossed an emitter or an outlet.
struct FlowTally {
    uint64_t count = 0;  ///< bodies
    double mass = 0.0;   ///< [kg]
};

/// Candidate positions an emitter tries for one body before it defers it to the next step.
inline constexpr int kEmitterAttempts = 100;

/// A source of spheres. Over [start, stop) it keeps the emitted amount (bodies, or kg when
/// `per_mass`) at the largest value not above rate × (t − start): each call adds bodies
/// until the next one would overshoot. A body that finds no room (kEmitterAttempts random
/// centres all overlapping something) is deferred, not dropped: the deficit stays in the
/// target and later steps catch up, so the long-run rate is the one asked for.
struct Emitter {
    Vec3 min = Vec3::Zero();   ///< region where centres appear [m]
    Vec3 max = Vec3::Zero();   ///< [m]
    double rate = 0.0;         ///< bodies/s, or kg/s when per_mass [1/s or kg/s]
    bool per_mass = false;     ///< rate is a mass flow rate
    SizeDistribution size;     ///< radius of each new sphere
    uint32_t material = 0;     ///< index into the material table
    Vec3 velocity = Vec3::Zero();  ///< velocity of a new sphere [m/s]
    double start = 0.0;        ///< emission begins [s]
    double stop = std::numeric_limits<double>::infinity();  ///< emission ends [s]
    uint64_t seed = 0;         ///< positions: mt19937_64(seed); radii: mt19937_64(seed ^ kRadiusStream)

    // --- state, advanced by emit() ---
    FlowTally emitted;         ///< since the start of the run
    bool seeded = false;
    double next_radius = 0.0;  ///< radius of the next body (drawn once, kept until placed) [m]
    std::mt19937_64 rng, size_rng;
};

enum class OutletType : uint8_t {
    Box,       ///< removes centres inside [min, max]
    HalfSpace  ///< removes centres behind the plane: (x − point)·normal < 0
};
/// An [[outlet]]'s `type`: a half-space is named by its bounding plane.
template <>
struct EnumNames<OutletType> {
    static constexpr NamedValue<OutletType> table[] = {{OutletType::Box, "box"}, {OutletType::HalfSpace, "plane"}};
};

/// A sink: every dynamic body whose centre is in the region is removed.
struct Outlet {
    OutletType type = OutletType::Box;
    Vec3 min = Vec3::Zero(), max = Vec3::Zero();           ///< box [m]
    Vec3 point = Vec3::Zero(), normal = Vec3::UnitZ();     ///< half-space [m], unit normal
    FlowTally removed;  ///< since the start of the run

    bool contains(const Vec3& x) const {
        if (type == OutletType::Box)
            return (x.array() >= min.array()).all() && (x.array() <= max.array()).all();
        return (x - point).dot(normal) < 0.0;
    }
};

/// Adds the bodies `e` owes at time t [s] to `bodies`, at centres uniform in its box that
/// overlap no body (by bounding radius) and no wall at time t; new ids are next_id,
/// next_id + 1, … (next_id advances). Serial and seeded: the same run emits the same bodies
/// whatever the thread count. With periodic axes a new body misses the others through the
/// faces too. Returns what this call emitted.
FlowTally emit(Emitter& e, BodyStore& bodies, const std::vector<Wall>& walls,
               const MaterialTable& materials, double t, uint64_t& next_id,
               const PeriodicBox& periodic = {});

/// Removes every dynamic body (inv_mass > 0) whose centre lies in an outlet; a body in
/// several outlets counts for the first. The survivors keep their order. Adds what left to
/// the outlets' tallies (each outlet's mass of the call summed exactly, then added, so that
/// the tallies have the same bits when the bodies are held in another order or on several
/// ranks) and returns the number removed.
std::size_t drain(std::vector<Outlet>& outlets, BodyStore& bodies);

/// The same on one MPI rank of several (docs/mpi.md, "The step over ranks"): every body the
/// rank holds in an outlet is removed (with its `owner` entry), and what its own bodies
/// carried out is returned, not tallied: per outlet k, entries 2k and 2k + 1 are the count
/// and the mass [kg] as exact sums, which the caller merges over the ranks
/// (merge_over_ranks) and then adds with add_drained, the same on every rank.
std::vector<ExactSum> drain_on_rank(std::vector<Outlet>& outlets, BodyStore& bodies, std::vector<int32_t>& owner,
                                    int rank);
/// Adds drain_on_rank's sums (merged over the ranks) to the outlets' tallies.
void add_drained(std::vector<Outlet>& outlets, std::span<const ExactSum> sums);


}  // namespace talus
