// A large run gives back the step's one-stage buffers between stages (World::lean_bodies):
// the broad phase's grid, the colouring, the pairs and margins, the old warm-start entries,
// the contacts' geometry once assembled, the solver's workspace, and between two steps the
// contacts and their batch. That must not change the physics: the same bed settled with the
// buffers kept and with them given back every step has the same bits, for each CCP solver,
// with the warm start carried across the gaps.
// The wall loads, whose lever arms then come from the batch instead of the contact points,
// agree to rounding.
#include <gtest/gtest.h>

#include <cstring>

#include "core/kinematic.hpp"
#include "solvers/colouring.hpp"

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

struct Settled {
    std::vector<double> state;
    WallLoads loads;
    ContactList contacts;
    std::vector<WarmStartCache::Entry> warm;
    std::size_t batch_rows = 0;
};

Settled settle(SolverType type, std::size_t lean_bodies) {
    World w = make_world(2e-3, Vec3(0, 0, -9.81), 1e-5, 60);
    w.solver.type = type;
    w.lean_bodies = lean_bodies;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(0, 0, 0), Vec3(0.04, 0.04, 0.2), m);
    fill_lattice(w, Vec3(0, 0, 0), Vec3(0.04, 0.04, 0.06), 0.004, m, 0.3);  // 4 x 4 x 6
    run_steps(w, 120);  // fallen, collided and settling: contacts come and go
    return {state_vector(w), w.wall_loads(), w.contacts(), w.warm_start().entries(), w.batch().size()};
}

TEST(LeanBuffers, GivingBuffersBackBetweenStagesLeavesTheTrajectoryBitwiseUnchanged) {
    for (SolverType type : {SolverType::APGD, SolverType::PGS, SolverType::PJ}) {
        SCOPED_TRACE(solver_name(type));
        const Settled kept = settle(type, std::size_t(-1)), lean = settle(type, 0);
        ASSERT_EQ(kept.state.size(), lean.state.size());
        EXPECT_EQ(std::memcmp(kept.state.data(), lean.state.data(), kept.state.size() * sizeof(double)), 0);
        ASSERT_GT(kept.contacts.size(), 96u) << "the bed should be resting on its contacts";

        // Between two steps a lean run holds no contacts and no batch (the next step builds
        // its own); what the next step starts from, the warm start, is the same to the bit.
        EXPECT_EQ(lean.contacts.size(), 0u);
        EXPECT_EQ(lean.batch_rows, 0u);
        EXPECT_EQ(kept.batch_rows, kept.contacts.size());
        ASSERT_EQ(lean.warm.size(), kept.warm.size());
        ASSERT_GT(kept.warm.size(), 96u);
        for (std::size_t i = 0; i < kept.warm.size(); ++i) {
            const WarmStartCache::Entry &x = lean.warm[i], &y = kept.warm[i];
            ASSERT_TRUE(x.key_a == y.key_a && x.key_b == y.key_b && x.feature == y.feature) << "entry " << i;
            EXPECT_EQ(std::memcmp(&x.normal, &y.normal, sizeof x.normal), 0) << "entry " << i;
            EXPECT_EQ(std::memcmp(x.friction.data(), y.friction.data(), 3 * sizeof(double)), 0) << "entry " << i;
            EXPECT_EQ(std::memcmp(&x.h, &y.h, sizeof x.h), 0) << "entry " << i;
        }

        // Wall loads: the floor carries the bed's weight; both runs agree to rounding.
        ASSERT_EQ(lean.loads.impulse.size(), kept.loads.impulse.size());
        double scale = 0.0;
        for (const Vec3& t : kept.loads.angular_impulse) scale = std::max(scale, t.norm());
        ASSERT_GT(scale, 0.0);
        for (std::size_t k = 0; k < kept.loads.impulse.size(); ++k) {
            EXPECT_EQ(lean.loads.impulse[k], kept.loads.impulse[k]) << "wall " << k;
            EXPECT_LT((lean.loads.angular_impulse[k] - kept.loads.angular_impulse[k]).norm(), 1e-12 * scale)
                << "wall " << k;
        }
    }
}

/// Grains thrown down at 2 m/s onto a bed stirred by a kinematic capsule
/// going round, with the
/// defaults' adaptive step: the margins reach pairs that cannot close, which the solve
/// sets aside and takes back when its velocities close them (World::take_back_and_resolve).
/// A lean run recomputes ν* for those re-solves (World::free_velocities) where a small
/// one keeps a copy: the kinematic body's placing and the forces are applied again.
struct Thrown {
    std::vector<double> state;
    uint32_t resolves = 0, set_aside = 0;
};
Thrown thrown(std::size_t lean_bodies) {
    World w;
    w.simulation.gravity = Vec3(0, 0, -9.81);
    w.simulation.adaptive = true;
    w.lean_bodies = lean_bodies;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(0, 0, 0), Vec3(0.05, 0.05, 0.2), m);
    fill_lattice(w, Vec3(0, 0, 0), Vec3(0.05, 0.05, 0.03), 0.003, m, 0.3);
    const std::size_t bed = w.bodies.size();
    fill_lattice(w, Vec3(0, 0, 0.05), Vec3(0.05, 0.05, 0.09), 0.003, m, 0.3);
    for (std::size_t i = bed; i < w.bodies.size(); ++i) w.bodies.velocity[i] = Vec3(0, 0, -2.0);
    const std::size_t stirrer = w.bodies.add_capsule(w.bodies.size(), Vec3(0.025, 0.025, 0.04), 0.004, 0.02, 2500.0, m);
    // turning about an axis off its centre, so that its velocity changes every step
    w.bodies.set_motion(stirrer, rotation_motion(Vec3(0.025, 0.015, 0.04), Vec3(0, 0, 1), 5.0));
    Thrown out;
    for (int k = 0; k < 60; ++k) {
        const StepStatus st = w.step(0.05);
        if (!st.ok) throw std::runtime_error(st.message);
        out.resolves += w.diagnostics().resolves;
        out.set_aside += w.diagnostics().set_aside;
    }
    out.state = state_vector(w);
    return out;
}

TEST(LeanBuffers, SetAsideContactsTakenBackGiveTheSameBitsLean) {
    const Thrown kept = thrown(std::size_t(-1)), lean = thrown(0);
    ASSERT_GT(kept.set_aside, 0u) << "the thrown grains' margins should reach pairs that cannot close";
    ASSERT_GT(kept.resolves, 0u) << "some pair set aside should close and be taken back";
    EXPECT_EQ(lean.resolves, kept.resolves);
    ASSERT_EQ(kept.state.size(), lean.state.size());
    EXPECT_EQ(std::memcmp(kept.state.data(), lean.state.data(), kept.state.size() * sizeof(double)), 0);
}

/// Grains thrown onto a ball five times their size resting on the floor: the ball touches
/// more grains than the colouring has colours (63), so its contacts reach the overflow
/// colour and a take-back cannot append colours of its own; the solve's contacts are
/// coloured and assembled again with those taken back (three steps of the first 100; the
/// rain is 6.5 cm tall so that grains still land while the ball's contacts fill the
/// colours: a 2.5 cm rain took none back once the adaptive step weighed each pair's slide
/// by its radii, its steps then longer). A lean run, which gave back their
/// geometry after the first assembly, keeps their rows and re-makes only their warm start
/// (recolour_rows in engine/world/speculative.cpp): the same rows, order and bits.
struct OnBall {
    std::vector<double> state;
    uint32_t recoloured = 0;  ///< steps that took back contacts with the overflow colour in use
};
OnBall thrown_on_ball(std::size_t lean_bodies) {
    World w;
    w.simulation.gravity = Vec3(0, 0, -9.81);
    w.simulation.adaptive = true;
    w.lean_bodies = lean_bodies;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(0, 0, 0), Vec3(0.06, 0.06, 0.2), m);
    add_sphere(w, Vec3(0.03, 0.03, 0.0151), 0.015, m);
    fill_lattice(w, Vec3(0.005, 0.005, 0.035), Vec3(0.055, 0.055, 0.1), 0.0015, m, 0.2);
    for (std::size_t i = 1; i < w.bodies.size(); ++i) w.bodies.velocity[i] = Vec3(0, 0, -1.5);
    OnBall out;
    for (int k = 0; k < 100; ++k) {
        const StepStatus st = w.step(0.05);
        if (!st.ok) throw std::runtime_error(st.message);
        if (w.diagnostics().resolves > 0 && w.diagnostics().colours > kOverflowColour) ++out.recoloured;
    }
    out.state = state_vector(w);
    return out;
}

TEST(LeanBuffers, ContactsColouredAgainWithoutTheirGeometryGiveTheSameBits) {
    const OnBall kept = thrown_on_ball(std::size_t(-1)), lean = thrown_on_ball(0);
    ASSERT_GT(kept.recoloured, 0u) << "contacts should be taken back while the ball's reach the overflow colour";
    EXPECT_EQ(lean.recoloured, kept.recoloured);
    ASSERT_EQ(kept.state.size(), lean.state.size());
    EXPECT_EQ(std::memcmp(kept.state.data(), lean.state.data(), kept.state.size() * sizeof(double)), 0);
}

}  // namespace
}  // namespace talus
