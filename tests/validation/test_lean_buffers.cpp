// A large run gives back the step's one-stage buffers between stages (World::lean_bodies):
// the broad phase's grid, the colouring, the pairs and margins, the old warm-start entries,
// the contacts' geometry once assembled and the solver's workspace. That must not change
// the physics: the same bed settled with the buffers kept and with them given back every
// step has the same bits, for each CCP solver, with the warm start carried across the gaps.
// The wall loads, whose lever arms then come from the batch instead of the contact points,
// agree to rounding.
#include <gtest/gtest.h>

#include <cstring>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

struct Settled {
    std::vector<double> state;
    WallLoads loads;
    ContactList contacts;
};

Settled settle(SolverType type, std::size_t lean_bodies) {
    World w = make_world(2e-3, Vec3(0, 0, -9.81), 1e-5, 60);
    w.solver.type = type;
    w.lean_bodies = lean_bodies;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(0, 0, 0), Vec3(0.04, 0.04, 0.2), m);
    fill_lattice(w, Vec3(0, 0, 0), Vec3(0.04, 0.04, 0.06), 0.004, m, 0.3);  // 4 x 4 x 6
    run_steps(w, 120);  // fallen, collided and settling: contacts come and go
    return {state_vector(w), w.wall_loads(), w.contacts()};
}

TEST(LeanBuffers, GivingBuffersBackBetweenStagesLeavesTheTrajectoryBitwiseUnchanged) {
    for (SolverType type : {SolverType::APGD, SolverType::PGS, SolverType::PJ}) {
        SCOPED_TRACE(solver_name(type));
        const Settled kept = settle(type, std::size_t(-1)), lean = settle(type, 0);
        ASSERT_EQ(kept.state.size(), lean.state.size());
        EXPECT_EQ(std::memcmp(kept.state.data(), lean.state.data(), kept.state.size() * sizeof(double)), 0);
        ASSERT_GT(kept.contacts.size(), 96u) << "the bed should be resting on its contacts";

        // The lean run's contact list keeps bodies, keys, features and gaps only.
        EXPECT_EQ(lean.contacts.key_a, kept.contacts.key_a);
        EXPECT_EQ(lean.contacts.key_b, kept.contacts.key_b);
        EXPECT_EQ(lean.contacts.gap, kept.contacts.gap);
        EXPECT_TRUE(lean.contacts.point.empty());
        EXPECT_EQ(kept.contacts.point.size(), kept.contacts.size());

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

}  // namespace
}  // namespace talus
