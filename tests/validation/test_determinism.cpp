// The same scene on 1, 2 and 3 threads: positions, orientations, velocities and every
// diagnostic except wall time bit-identical (docs/design.md §8); with joints, their λ too.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <cstdio>
#include <cstring>

#include "core/parallel.hpp"
#include "solvers/colouring.hpp"
#include "tests/support/instrumented.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

struct Snapshot {
    std::vector<double> state, diagnostics;
    std::size_t body_contacts = 0;  ///< body–body contacts of the last step
};

/// Clumps: 2- and 3-sphere templates on a lattice, each turned by its own angle and thrown
/// sideways at up to 1 m/s, so that they make many sub-sphere contacts with each other
/// and the box.
void fill_clumps(World& w, uint32_t m, double half) {
    const double r = 0.004;
    const uint32_t pair = w.bodies.clumps.add({Vec3(-0.6 * r, 0, 0), Vec3(0.6 * r, 0, 0)}, {r, r});
    const uint32_t tri = w.bodies.clumps.add(
        {Vec3(0, 0, 0), Vec3(1.2 * r, 0, 0), Vec3(0, 1.2 * r, 0)}, {r, 0.8 * r, r});
    const double spacing = 2.0 * std::max(w.bodies.clumps.bounding[pair], w.bodies.clumps.bounding[tri]) + 1e-4;
    int n = 0;
    for (double z = spacing; z < 0.35; z += spacing)
        for (double y = -half + spacing / 2; y < half - spacing / 2; y += spacing)
            for (double x = -half + spacing / 2; x < half - spacing / 2; x += spacing, ++n) {
                const uint32_t t = n % 2 ? pair : tri;
                const Quat q(Eigen::AngleAxisd(0.7 * n, Vec3(1, 2, 3).normalized()));
                const Vec3 v(std::sin(1.1 * n), std::cos(1.7 * n), 0.0);
                w.bodies.add_clump(w.bodies.size(), Vec3(x, y, z), t, 2500.0, m, v, Vec3::Zero(), q);
            }
}

/// Joins the spheres of each lattice row in pairs (spheres 2k and 2k + 1 from `first`),
/// cycling through four joint types (3, 1, 6 and 5 rows), at the pair's midpoint.
void join_pairs(World& w, std::size_t first) {
    const JointType types[] = {JointType::Spherical, JointType::Distance, JointType::Fixed, JointType::Revolute};
    for (std::size_t i = first, k = 0; i + 1 < w.bodies.size(); i += 2, ++k) {
        const Vec3 pa = w.bodies.position[i], pb = w.bodies.position[i + 1];
        const JointType t = types[k % 4];
        w.joints.push_back(make_joint(t, w.bodies, long(i), long(i + 1), t == JointType::Distance ? pa : Vec3(0.5 * (pa + pb)),
                                      Vec3::UnitY(), pb));
    }
}

enum class Fill { Lattice, Clumps, JointedPairs };

// `steps`: the steps taken; callers size them with steps_for_build (fewer under a sanitizer,
// tests/support/instrumented.hpp) where the test's precondition allows
Snapshot run_with_threads(int threads, Fill fill = Fill::Lattice, int steps = steps_for_build(50),
                          SolverType solver = SolverType::PGS,
                          FrictionLaw friction = FrictionLaw::CCP,
                          std::size_t* largest_mixed_colour = nullptr, bool adaptive = false) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    World w = make_world(2e-3, Vec3(0, 0, -9.81), 1e-5, 30);
    w.simulation.adaptive = adaptive;
    w.solver.type = solver;
    w.solver.friction = friction;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    // clumps are larger: a wider box for as many; jointed pairs: a wider box, so that a
    // colour holds more than grain::kContacts contacts and joints and runs in parallel
    const double half = fill == Fill::Clumps ? 0.1 : fill == Fill::JointedPairs ? 0.07 : 0.05;
    add_box(w, Vec3(-half, -half, 0), Vec3(half, half, 0.4), m);
    if (fill == Fill::Clumps)
        fill_clumps(w, m, half);
    else
        fill_lattice(w, Vec3(-half, -half, 0), Vec3(half, half, 0.35), 0.004, m);
    if (fill == Fill::JointedPairs) join_pairs(w, 0);
    Snapshot s;
    // adaptive: steps land on "frames" every 2.5 ms, as a run's would
    double next_frame = 2.5e-3;
    for (int k = 0; k < steps; ++k) {
        if (!w.step(adaptive ? next_frame : World::kNoTimeLimit).ok)
            throw std::runtime_error("step failed");
        if (w.time >= next_frame) next_frame += 2.5e-3;
        const StepDiagnostics& d = w.diagnostics();
        s.diagnostics.insert(s.diagnostics.end(),
                             {double(d.step), d.time, double(d.contacts), double(d.iterations),
                              d.residual, d.kinetic_energy, d.potential_energy, d.envelope, d.dt});
    }
    for (int32_t a : w.contacts().a) s.body_contacts += a >= 0;
    if (largest_mixed_colour) {  // the most contacts and joints of a colour that has both
        const JointColouring& jc = w.batch().joint_colours;
        *largest_mixed_colour = 0;
        for (std::size_t k = 0; k < jc.colours(); ++k) {
            const std::size_t contacts = jc.contact_start[k + 1] - jc.contact_start[k];
            const std::size_t joints = jc.block_start[k + 1] - jc.block_start[k];
            if (contacts > 0 && joints > 0) *largest_mixed_colour = std::max(*largest_mixed_colour, contacts + joints);
        }
    }
    for (double l : w.batch().bilateral.lambda) s.diagnostics.push_back(l);
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        const auto& q = w.bodies.orientation[i];
        for (double v : {w.bodies.position[i].x(), w.bodies.position[i].y(), w.bodies.position[i].z(),
                         q.w(), q.x(), q.y(), q.z(), w.bodies.velocity[i].x(),
                         w.bodies.velocity[i].y(), w.bodies.velocity[i].z(),
                         w.bodies.angular_velocity[i].x(), w.bodies.angular_velocity[i].y(),
                         w.bodies.angular_velocity[i].z()})
            s.state.push_back(v);
    }
    return s;
}

bool bit_identical(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(Determinism, BitIdenticalOnOneTwoAndThreeThreads) {
    const Snapshot one = run_with_threads(1);
    ASSERT_GT(one.state.size(), 13u * 3000u) << "need enough bodies for several parallel chunks";
    for (int t : {2, 3}) {
        const Snapshot other = run_with_threads(t);
        EXPECT_TRUE(bit_identical(one.state, other.state)) << t << " threads: state differs";
        EXPECT_TRUE(bit_identical(one.diagnostics, other.diagnostics))
            << t << " threads: diagnostics differ";
    }
}

// The adaptive step (World::choose_step): the speeds it reads are maxima, exact in any
// order, so the steps it chooses, and all that follows, keep the bits.
TEST(Determinism, AdaptiveStepBitIdenticalOnOneTwoAndThreeThreads) {
    const Snapshot one =
        run_with_threads(1, Fill::Lattice, steps_for_build(60), SolverType::PGS, FrictionLaw::CCP, nullptr, true);
    ASSERT_GT(one.state.size(), 13u * 3000u);
    for (int t : {2, 3}) {
        const Snapshot other =
            run_with_threads(t, Fill::Lattice, steps_for_build(60), SolverType::PGS, FrictionLaw::CCP, nullptr, true);
        EXPECT_TRUE(bit_identical(one.state, other.state)) << t << " threads: state differs";
        EXPECT_TRUE(bit_identical(one.diagnostics, other.diagnostics))
            << t << " threads: diagnostics differ";
    }
}

// The same with clumps (one contact per touching pair of spheres): the narrow phase's
// per-pair counts and the order of sub-sphere contacts must not depend on the threads.
TEST(Determinism, ClumpsBitIdenticalOnOneTwoAndThreeThreads) {
    const Snapshot one = run_with_threads(1, Fill::Clumps, steps_for_build(20));
    ASSERT_GT(one.state.size(), 13u * 2048u) << "need enough bodies for several parallel chunks";
    ASSERT_GT(one.body_contacts, 1000u) << "need many clump-clump contacts, got " << one.body_contacts;
    for (int t : {2, 3}) {
        const Snapshot other = run_with_threads(t, Fill::Clumps, steps_for_build(20));
        EXPECT_TRUE(bit_identical(one.state, other.state)) << t << " threads: state differs";
        EXPECT_TRUE(bit_identical(one.diagnostics, other.diagnostics))
            << t << " threads: diagnostics differ";
    }
}

// Exact Coulomb friction (issue 8): nsgs sweeps colours like PGS, and the fixed point over
// APGD adds serial shifts between solves; bgs's Coulomb step is four lanes at a time; all
// must keep the bits.
// All 60 steps in every build: the lattice needs them to settle into contact (under a
// sanitizer's 15 the falling layers' pairs are set aside, 871 body contacts in the solve).
TEST(Determinism, ExactCoulombBitIdenticalOnOneTwoAndThreeThreads) {
    for (SolverType type : {SolverType::NSGS, SolverType::APGD, SolverType::BGS}) {
        const Snapshot one = run_with_threads(1, Fill::Lattice, 60, type, FrictionLaw::Coulomb);
        ASSERT_GT(one.state.size(), 13u * 3000u);
        ASSERT_GT(one.body_contacts, 3000u) << "the bed must have settled into contact";
        for (int t : {2, 3}) {
            const Snapshot other = run_with_threads(t, Fill::Lattice, 60, type, FrictionLaw::Coulomb);
            EXPECT_TRUE(bit_identical(one.state, other.state)) << solver_name(type) << ", " << t << " threads";
            EXPECT_TRUE(bit_identical(one.diagnostics, other.diagnostics))
                << solver_name(type) << ", " << t << " threads: diagnostics differ";
        }
    }
}

// Joints are a block type of the colour sweep (solvers/colouring.cpp): a bed of jointed
// pairs (spherical, distance, fixed and revolute joints) whose colours hold contacts and
// joints together, more than one grain of them, so that they run as parallel ranges. Every
// solver that takes joints must keep the bits, and the joints' λ with them. All 20 steps in
// every build: the pairs need them to press into each other (8,000 contacts; at 10 steps
// there were 3,300). Under a sanitizer, 1 against 3 threads only (the 2-thread runs took a
// third of its two minutes there; the Release stage runs them).
TEST(Determinism, JointsBitIdenticalOnOneTwoAndThreeThreads) {
    for (SolverType type : {SolverType::PGS, SolverType::PJ, SolverType::APGD}) {
        std::size_t mixed = 0;
        const Snapshot one = run_with_threads(1, Fill::JointedPairs, 20, type, FrictionLaw::CCP, &mixed);
        ASSERT_GT(one.body_contacts, 8000u) << solver_name(type) << ": the pairs must touch each other";
        EXPECT_GT(mixed, grain::kContacts) << solver_name(type) << ": no colour with joints runs in parallel";
        std::printf("[ jointed pairs, %s ] %zu body-body contacts; largest colour of contacts and joints: %zu\n",
                    solver_name(type), one.body_contacts, mixed);
        for (int t : {2, 3}) {
            if (kInstrumented && t == 2) continue;
            const Snapshot other = run_with_threads(t, Fill::JointedPairs, 20, type);
            EXPECT_TRUE(bit_identical(one.state, other.state)) << solver_name(type) << ", " << t << " threads";
            EXPECT_TRUE(bit_identical(one.diagnostics, other.diagnostics))
                << solver_name(type) << ", " << t << " threads: diagnostics or λ differ";
        }
    }
}

}  // namespace
}  // namespace talus
