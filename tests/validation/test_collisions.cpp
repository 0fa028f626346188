// Two spheres colliding in free space (no gravity): an oblique, spinning, frictional impact.
// Linear momentum is conserved to round-off (every impulse acts equal and opposite) and
// angular momentum about the origin too; kinetic energy does not increase (e = 0 impacts
// dissipate). Tolerances: 1e-12 relative, as the issue demands.
#include <gtest/gtest.h>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

TEST(Collisions, TwoSpheresConserveMomentumAndDoNotGainEnergy) {
    World w = make_world(1e-3, Vec3::Zero(), 1e-10, 500);
    const uint32_t steel = add_material(w, 7800.0, 0.4);
    const uint32_t glass = add_material(w, 2500.0, 0.6);
    add_sphere(w, Vec3(-0.1, 0.01, 0.0), 0.02, steel, Vec3(2.0, 0.0, 0.1), Vec3(0, 5, 30));
    add_sphere(w, Vec3(0.1, -0.01, 0.005), 0.03, glass, Vec3(-1.0, 0.2, 0.0), Vec3(10, 0, 0));

    auto momentum = [&]() {
        Vec3 p = Vec3::Zero();
        for (std::size_t i = 0; i < 2; ++i) p += w.bodies.mass(i) * w.bodies.velocity[i];
        return p;
    };
    const Vec3 p0 = momentum();
    double e_prev = w.kinetic_energy();
    const double e0 = e_prev;
    int contact_steps = 0;
    for (int k = 0; k < 200; ++k) {
        ASSERT_TRUE(w.step().ok);
        contact_steps += w.batch().size() > 0 && w.batch().gamma[0][0] > 0.0;
        const Vec3 p = momentum();
        EXPECT_LE((p - p0).norm(), 1e-12 * p0.norm()) << "step " << k;
        const double e = w.kinetic_energy();
        EXPECT_LE(e, e_prev * (1.0 + 1e-12)) << "kinetic energy grew at step " << k;
        e_prev = e;
    }
    EXPECT_GT(contact_steps, 0) << "the spheres never collided";
    EXPECT_LT(e_prev, e0);
}

}  // namespace
}  // namespace talus
