// The position-level variant of Stewart & Trinkle (seed 000 §3.6; engine/world/
// position_level.cpp): a short fixed-point sequence of LCPs with the contacts linearised at
// the latest end-of-step estimate, so that Φ(q^{l+1}) ≥ 0 holds at the new position rather
// than for the linearisation at the old one.
//  - On a curved body (Anitescu's ellipse, h = 0.05, no stabilisation) the velocity-level
//    step lets the penetration grow to a quarter of a metre in 10 s; the position-level
//    one keeps it at the fixed point's accuracy, shrinking as iterations are added.
//  - On a flat contact (sphere on a plane) the linearisation is exact: one re-solve
//    reproduces the velocity-level step and the sequence stops.
//  - The spinning rod tells the paper's story with it too, without penetration.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "io/scene.hpp"
#include "tests/support/paper_scenes.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

const std::string kEllipse = std::string(R"(
[simulation]
dt = 0.05
duration = 10
[solver]
type = "lemke"
stabilization = 0
recovery_speed = 1000
)") + kAnitescuEllipseBodies;

struct EllipseRun {
    double max_penetration = 0.0, final_kinetic = 0.0;
    uint32_t relinearisations = 0;  ///< summed over the run
};

EllipseRun run_ellipse(int position_iterations) {
    Scene s = parse_scene(kEllipse, "mem/ellipse.toml");
    World& w = s.world;
    w.solver.position_iterations = position_iterations;
    w.solver.split_push_out = false;  // the velocity-level term both variants are compared with
    EllipseRun out;
    for (int k = 0; k < 200; ++k) {
        const StepStatus st = w.step();
        EXPECT_TRUE(st.ok) << st.message;
        if (!st.ok) break;
        EXPECT_TRUE(w.solver_result().converged);
        const Mat3 R = w.bodies.orientation[0].toRotationMatrix();
        const double depth = Vec3(4, 2, 2).cwiseProduct(R.row(2).transpose()).norm();
        out.max_penetration = std::max(out.max_penetration, depth - w.bodies.position[0].z());
        out.relinearisations += w.diagnostics().relinearisations;
    }
    out.final_kinetic = w.kinetic_energy();
    return out;
}

TEST(PositionLevel, EllipseStaysAdmissibleWithoutStabilisation) {
    const EllipseRun velocity = run_ellipse(0), one = run_ellipse(1), three = run_ellipse(3),
                     ten = run_ellipse(10);
    for (const auto& [k, r] : {std::pair{0, velocity}, {1, one}, {3, three}, {10, ten}})
        std::printf("[ position ] ellipse, %2d re-solves: max penetration %.2e m, %u re-solves "
                    "in all, kinetic energy at 10 s %.3g J\n",
                    k, r.max_penetration, r.relinearisations, r.final_kinetic);
    EXPECT_EQ(velocity.relinearisations, 0u);
    EXPECT_GT(velocity.max_penetration, 0.1);  // drift of the velocity-level step (cf. Anitescu)
    EXPECT_LT(one.max_penetration, 0.01);
    EXPECT_LT(three.max_penetration, 1e-3);
    EXPECT_LT(ten.max_penetration, 1e-5);
    EXPECT_LE(ten.max_penetration, three.max_penetration);
    EXPECT_GT(ten.relinearisations, three.relinearisations);  // some steps need more than 3
    // The velocity-level step is not dissipative on the curved body (§3.6): it keeps the
    // ellipse rocking; the position-level one lets it settle.
    EXPECT_LT(three.final_kinetic, 0.05 * velocity.final_kinetic);
}

TEST(PositionLevel, FlatContactNeedsOneResolveAndChangesNothing) {
    auto run = [](int k) {
        World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-10, 200);
        w.solver.type = SolverType::Lemke;
        w.solver.position_iterations = k;
        const uint32_t m = add_material(w, 1000.0, 0.5);
        Wall plane;
        plane.type = WallType::Plane;
        plane.point = Vec3::Zero();
        plane.normal = Vec3::UnitZ();
        plane.material = m;
        w.walls.push_back(plane);
        w.bodies.add_sphere(0, Vec3(0, 0, 0.1), 0.1, 1000.0, m);
        w.bodies.velocity[0] = Vec3(0.3, 0.0, -0.2);  // sliding into the plane
        for (int s = 0; s < 20; ++s) {
            EXPECT_TRUE(w.step().ok);
            EXPECT_LE(w.diagnostics().relinearisations, k > 0 ? 1u : 0u);
        }
        return w;
    };
    const World a = run(0), b = run(5);
    EXPECT_NEAR((a.bodies.velocity[0] - b.bodies.velocity[0]).norm(), 0.0, 1e-9);
    EXPECT_NEAR((a.bodies.position[0] - b.bodies.position[0]).norm(), 0.0, 1e-9);
    EXPECT_NEAR(b.bodies.position[0].z(), 0.1, 1e-9);  // on the plane, not in it
    EXPECT_EQ(b.diagnostics().relinearisations, 1u);
}

TEST(PositionLevel, SpinningRodStoryWithoutPenetration) {
    const std::string rod = std::string(R"(
[simulation]
dt = 0.01
[solver]
type = "lemke"
position_iterations = 5
)") + kSpinningRodBodies;
    Scene s = parse_scene(rod, "mem/rod.toml");
    World& w = s.world;
    double worst = 0.0, second = -1.0, rest = -1.0;
    for (int k = 0; k < 80; ++k) {
        ASSERT_TRUE(w.step().ok);
        const Vec3 axis = w.bodies.orientation[0] * Vec3::UnitX();
        const double z = w.bodies.position[0].z();
        const double up = z + 0.25 * axis.z() - 0.05, down = z - 0.25 * axis.z() - 0.05;
        worst = std::min({worst, up, down});
        if (second < 0 && up < 1e-6) second = w.time;
        const double speed = w.bodies.velocity[0].norm() + 0.3 * w.bodies.angular_velocity[0].norm();
        if (speed >= 1e-3) rest = -1.0;
        else if (rest < 0) rest = w.time;
    }
    std::printf("[ position ] rod at h = 0.01: deepest penetration %.2e m, second end down by "
                "%.3f s, at rest from %.3f s\n", -worst, second, rest);
    EXPECT_GT(worst, -1e-6);
    EXPECT_NEAR(second, 0.548, 0.015);
    ASSERT_GT(rest, 0.0);
    EXPECT_LT(rest - second, 0.035);
}

}  // namespace
}  // namespace talus
