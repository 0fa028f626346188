// The particle-meets-wall examples of the Trinkle notes (seed 003): h = m = F = 1, a wall
// at x = 11, fixed or moving at −1. The semi-implicit, anticipating time-stepper must
// reproduce the hand-worked tables of x, v and λ (normal impulse per step) exactly; we
// allow 1e-9 for the iterative solve (solver tolerance 1e-13 m/s).
//
// A sphere of radius 0.5 whose centre plays the particle, and a plane at x = 11.5 facing
// −x, so the centre's free space ends at x = 11. The envelope (20) lets the contact exist
// from the first step, as in the notes, where Ψ is always known.
#include <gtest/gtest.h>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

struct Row { double x, v, lambda; };

World particle_and_wall(const Vec3& wall_velocity) {
    World w = make_world(1.0, Vec3(1.0, 0.0, 0.0), 1e-13, 2000);
    w.solver.envelope = 20.0;
    const uint32_t m = add_material(w, density_for_mass(1.0, 0.5), 0.3);
    add_plane(w, Vec3(11.5, 0, 0), Vec3(-1, 0, 0), m, wall_velocity);
    add_sphere(w, Vec3(0, 0, 0), 0.5, m);
    return w;
}

void expect_table(World& w, const std::vector<Row>& table) {
    for (std::size_t l = 0; l < table.size(); ++l) {
        ASSERT_TRUE(w.step().ok);
        // The wall contact is in the solve, or set aside as unable to close within the step
        // (docs/design.md §3, "Speculative contacts"), where its impulse is zero.
        const bool solved = w.batch().size() == 1u;
        ASSERT_TRUE(solved || w.diagnostics().set_aside == 1u)
            << "the wall contact must be in the solve or set aside at step " << l + 1;
        const double lambda = solved ? w.batch().gamma[0][0] : 0.0;
        EXPECT_NEAR(w.bodies.position[0].x(), table[l].x, 1e-9) << "x at l = " << l + 1;
        EXPECT_NEAR(w.bodies.velocity[0].x(), table[l].v, 1e-9) << "v at l = " << l + 1;
        EXPECT_NEAR(lambda, table[l].lambda, 1e-9) << "λ at l = " << l + 1;
        EXPECT_NEAR(w.bodies.position[0].y(), 0.0, 1e-12);
    }
}

TEST(TrinkleNotes, ParticleMeetsFixedWall) {
    World w = particle_and_wall(Vec3::Zero());
    // l = 1 … 10: the table of the notes, then the steady state λ = F h = 1.
    expect_table(w, {{1, 1, 0}, {3, 2, 0}, {6, 3, 0}, {10, 4, 0}, {11, 1, 4}, {11, 0, 2},
                     {11, 0, 1}, {11, 0, 1}, {11, 0, 1}, {11, 0, 1}});
}

TEST(TrinkleNotes, ParticleMeetsWallMovingAtMinusOne) {
    World w = particle_and_wall(Vec3(-1.0, 0.0, 0.0));
    // Wall at 11 − t: impact completes in two steps, then the particle is pushed at −1.
    expect_table(w, {{1, 1, 0}, {3, 2, 0}, {6, 3, 0}, {7, 1, 3}, {6, -1, 3}, {5, -1, 1},
                     {4, -1, 1}, {3, -1, 1}, {2, -1, 1}});
}

}  // namespace
}  // namespace talus
