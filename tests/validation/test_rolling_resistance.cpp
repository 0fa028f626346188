// Rolling and spinning resistance (Tasora & Anitescu 2013; solvers/rolling.hpp) against the
// rigid-body equations of a sphere (m, r, J = 2/5 m r², gravity g):
//  - rolling without slipping on a level plane, m dv/dt = −F, J dω/dt = F r − μ_r N,
//    v = ω r: a = −(5/7) μ_r g / r until v = 0 (at t = v₀/|a|), then at rest;
//  - spinning about the vertical: J dω_z/dt = −μ_s m g, so dω_z/dt = −(5/2) μ_s g / r²;
//  - on an incline θ: at rest needs a friction force F = m g sin θ and a rolling torque
//    F r ≤ μ_r N = μ_r m g cos θ, i.e. tan θ ≤ μ_r / r (exact, for enough Coulomb μ);
//    beyond it a = (5/7) g (sin θ − (μ_r/r) cos θ).
// The torque bound is met exactly in each step (impulses μ_r γ_n with γ_n = m g h), so the
// discrete deceleration matches the continuous one up to the solver tolerance and the
// time-step quantisation of the stop; the 1 % tolerances leave room for the tolerance of
// 1e-10 m/s and one step of 1 ms at the end of a motion lasting about a second.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <cstring>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

constexpr double kG = 9.81, kR = 0.05, kH = 1e-3;

uint32_t add_resistant_material(World& w, double friction, double mu_r, double mu_s) {
    Material m{"r" + std::to_string(w.materials.size()), 2500.0, friction};
    m.rolling_friction = mu_r;
    m.spinning_friction = mu_s;
    return w.materials.add(m);
}

TEST(RollingResistance, RollingSphereDeceleratesAtFiveSeventhsMuRGOverRThenRests) {
    const double mu_r = 0.002, v0 = 0.5;
    const double a = 5.0 / 7.0 * mu_r * kG / kR;  // 0.2803 m/s²
    // bgs under exact Coulomb friction too: its rolling rows take PGS's step as under the CCP
    for (auto [type, law] : {std::pair{SolverType::PGS, FrictionLaw::CCP}, std::pair{SolverType::PJ, FrictionLaw::CCP},
                             std::pair{SolverType::BGS, FrictionLaw::Coulomb}}) {
        World w = make_world(kH, Vec3(0, 0, -kG), 1e-10, 500);
        w.solver.type = type;
        w.solver.friction = law;
        const uint32_t m = add_resistant_material(w, 0.5, mu_r, 0.0);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0, 0, kR), kR, m, Vec3(v0, 0, 0), Vec3(0, v0 / kR, 0));
        double v_early = 0.0, v_late = 0.0, t_stop = -1.0, slip = 0.0;
        const int steps = int(std::lround(2.5 / kH));
        for (int k = 1; k <= steps; ++k) {
            ASSERT_TRUE(w.step().ok) << solver_name(type);
            const double v = w.bodies.velocity[0].x();
            slip = std::max(slip, std::abs(v - kR * w.bodies.angular_velocity[0].y()));
            if (k == 200) v_early = v;
            if (k == 1200) v_late = v;
            if (t_stop < 0.0 && v <= 1e-9) t_stop = k * kH;
        }
        const double measured = (v_early - v_late) / 1.0;
        std::printf("[ rolling ] %s: a = %.6f m/s² (5/7 μ_r g / r = %.6f), stop at %.3f s "
                    "(v₀/a = %.4f s), slip ≤ %.1e m/s\n", solver_name(type), measured, a, t_stop,
                    v0 / a, slip);
        EXPECT_NEAR(measured, a, 0.01 * a) << solver_name(type);
        EXPECT_NEAR(t_stop, v0 / a, 0.01 * v0 / a + kH) << solver_name(type);
        EXPECT_LT(slip, 1e-6) << solver_name(type) << ": the sphere must roll, not slide";
        EXPECT_NEAR(w.bodies.position[0].z(), kR, 1e-9) << solver_name(type) << ": no lift-off";
        // 0.7 s after stopping: still at rest, not rolling back.
        EXPECT_LT(w.bodies.velocity[0].norm(), 1e-8) << solver_name(type);
        EXPECT_LT(w.bodies.angular_velocity[0].norm(), 1e-8 / kR) << solver_name(type);
    }
}

TEST(RollingResistance, SpinningSphereSlowsAtFiveHalvesMuSGOverRSquaredThenRests) {
    const double mu_s = 0.001, w0 = 10.0;
    const double alpha = 2.5 * mu_s * kG / (kR * kR);  // 9.81 rad/s²
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_resistant_material(w, 0.5, 0.0, mu_s);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, Vec3(0, 0, kR), kR, m, Vec3::Zero(), Vec3(0, 0, w0));
    double w_early = 0.0, w_late = 0.0, t_stop = -1.0;
    for (int k = 1; k <= 1500; ++k) {
        ASSERT_TRUE(w.step().ok);
        const double wz = w.bodies.angular_velocity[0].z();
        if (k == 100) w_early = wz;
        if (k == 900) w_late = wz;
        if (t_stop < 0.0 && wz <= 1e-9) t_stop = k * kH;
    }
    std::printf("[ spinning ] dω/dt = %.6f rad/s² (5/2 μ_s g / r² = %.6f), stop at %.3f s (%.4f s)\n",
                (w_early - w_late) / 0.8, alpha, t_stop, w0 / alpha);
    EXPECT_NEAR((w_early - w_late) / 0.8, alpha, 0.01 * alpha);
    EXPECT_NEAR(t_stop, w0 / alpha, 0.01 * w0 / alpha + kH);
    EXPECT_LT(w.bodies.angular_velocity[0].norm(), 1e-8) << "must stay stopped";
    EXPECT_LT(w.bodies.velocity[0].norm(), 1e-8);
}

TEST(RollingResistance, SpinningResistanceActsOnTheRelativeSpinOfTwoBodies) {
    // Two equal spheres stacked on a frictionless-in-spin floor (μ_s = 0 there, by the pair
    // table), the top one spinning about the vertical: the torque between them, μ_s m g,
    // slows the top one and spins up the bottom one at the same rate (5/2) μ_s g / r² until
    // their relative spin vanishes at t = ω₀ / (5 μ_s g / r²); then both turn at ω₀/2
    // (angular momentum about the vertical is conserved: the floor exerts no spin torque).
    const double mu_s = 0.001, w0 = 10.0;
    const double alpha = 2.5 * mu_s * kG / (kR * kR);
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t floor = add_material(w, 2500.0, 0.5);
    const uint32_t m = add_resistant_material(w, 0.5, 0.0, mu_s);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), floor);  // pair (floor, m): min(0, μ_s) = 0
    add_sphere(w, Vec3(0, 0, kR), kR, m);
    add_sphere(w, Vec3(0, 0, 3.0 * kR), kR, m, Vec3::Zero(), Vec3(0, 0, w0));
    double t_lock = -1.0, top_early = 0.0, top_late = 0.0, bottom_late = 0.0;
    for (int k = 1; k <= 1000; ++k) {
        ASSERT_TRUE(w.step().ok);
        const double top = w.bodies.angular_velocity[1].z(), bottom = w.bodies.angular_velocity[0].z();
        if (k == 50) top_early = top;
        if (k == 350) { top_late = top; bottom_late = bottom; }
        if (t_lock < 0.0 && top - bottom <= 1e-9) t_lock = k * kH;
    }
    const double top_rate = (top_early - top_late) / 0.3;
    std::printf("[ spinning pair ] top slows at %.6f rad/s² (%.6f), bottom at %.6f rad/s after "
                "0.35 s (%.6f), lock at %.3f s (%.4f s)\n", top_rate, alpha, bottom_late,
                alpha * 0.35, t_lock, w0 / (2.0 * alpha));
    EXPECT_NEAR(top_rate, alpha, 0.01 * alpha);
    EXPECT_NEAR(bottom_late, alpha * 0.35, 0.01 * alpha * 0.35);
    EXPECT_NEAR(t_lock, w0 / (2.0 * alpha), 0.01 * w0 / (2.0 * alpha) + kH);
    EXPECT_NEAR(w.bodies.angular_velocity[0].z(), 0.5 * w0, 1e-6 * w0);
    EXPECT_NEAR(w.bodies.angular_velocity[1].z(), 0.5 * w0, 1e-6 * w0);
    EXPECT_LT(w.bodies.position[1].head<2>().norm(), 1e-9) << "the stack must stay upright";
}

TEST(RollingResistance, CapsuleRollingAboutItsAxisDeceleratesOnBothEnds) {
    // A capsule (axis x) lying on a plane rests on two contacts, one per end; rolling along
    // y without slipping, each end resists with μ_r N_i and N_1 + N_2 = m g, so
    // m a = −F, J_x α = F r − μ_r m g, a = α r: a = μ_r g / (r (1 + J_x / (m r²))).
    // An anisotropic body: the solver's world inverse inertia and the Gershgorin step.
    const double r = 0.03, half = 0.1, mu_r = 0.001, v0 = 0.3;
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_resistant_material(w, 0.5, mu_r, 0.0);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    w.bodies.add_capsule(0, Vec3(0, 0, r), r, half, 2500.0, m, Vec3(0, v0, 0), Vec3(-v0 / r, 0, 0));
    const double mass = w.bodies.mass(0), jx = 1.0 / w.bodies.inv_inertia[0].x();
    const double a = mu_r * kG / (r * (1.0 + jx / (mass * r * r)));
    double v_early = 0.0, v_late = 0.0;
    for (int k = 1; k <= 800; ++k) {
        ASSERT_TRUE(w.step().ok);
        if (k == 100) v_early = w.bodies.velocity[0].y();
        if (k == 700) v_late = w.bodies.velocity[0].y();
    }
    ASSERT_EQ(w.batch().rolling.size(), 2u) << "one torque entry per end contact";
    const double measured = (v_early - v_late) / 0.6;
    std::printf("[ rolling capsule ] a = %.6f m/s² (μ_r g / (r (1 + J/(m r²))) = %.6f)\n", measured, a);
    EXPECT_NEAR(measured, a, 0.01 * a);
    EXPECT_NEAR(w.bodies.velocity[0].x(), 0.0, 1e-9) << "rolls straight";
    EXPECT_NEAR(w.bodies.position[0].z(), r, 1e-4 * r);
}

/// Distance rolled downhill in t_end on an incline θ with μ_r (μ = 0.5).
double incline_distance(double theta, double mu_r, double t_end, double* speed = nullptr) {
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_resistant_material(w, 0.5, mu_r, 0.0);
    const Vec3 n(-std::sin(theta), 0.0, std::cos(theta));  // downhill is −x
    add_plane(w, Vec3::Zero(), n, m);
    add_sphere(w, kR * n, kR, m);
    const Vec3 x0 = w.bodies.position[0];
    const Vec3 downhill(-std::cos(theta), 0.0, -std::sin(theta));
    run_steps(w, int(std::lround(t_end / kH)));
    if (speed) *speed = w.bodies.velocity[0].norm();
    return (w.bodies.position[0] - x0).dot(downhill);
}

TEST(RollingResistance, SphereOnAnInclineHoldsBelowTanThetaEqualsMuROverR) {
    const double mu_r = 0.005;  // tan θ_c = μ_r / r = 0.1, θ_c = 5.71°
    const double theta = std::atan(0.95 * mu_r / kR);
    double speed = 0.0;
    const double d = incline_distance(theta, mu_r, 1.0, &speed);
    std::printf("[ incline ] tan θ = 0.95 μ_r / r: moved %.2e m in 1 s, speed %.2e m/s\n", d, speed);
    EXPECT_LT(std::abs(d), 1e-7) << "held by the rolling torque: it must not move";
    EXPECT_LT(speed, 1e-7);
}

TEST(RollingResistance, SphereOnAnInclineRollsAboveTanThetaEqualsMuROverR) {
    const double mu_r = 0.005, t = 0.5;
    for (double factor : {1.1, 2.0}) {
        const double theta = std::atan(factor * mu_r / kR);
        const double a = 5.0 / 7.0 * kG * (std::sin(theta) - mu_r / kR * std::cos(theta));
        const double expected = 0.5 * a * t * t;
        const double d = incline_distance(theta, mu_r, t);
        std::printf("[ incline ] tan θ = %.1f μ_r / r: %.6f m in %.1f s (½ a t² = %.6f m)\n", factor,
                    d, t, expected);
        EXPECT_NEAR(d, expected, 0.01 * expected)
            << "tan θ = " << factor << " μ_r / r";
    }
}

/// A settling pile of plain spheres (no resistance) at one end of a long box and, far from
/// it on the same floor, one sphere of another material rolling and spinning. With
/// `resistant`, the pair table gives that sphere and the box rolling and spinning
/// resistance (so the batch holds a torque block); otherwise the pair has none (the
/// smaller of the two materials' zero and non-zero coefficients). Returns the pile's state
/// after 40 steps, then the far sphere's spin.
std::vector<double> pile_state(bool resistant, int threads = 0) {
    std::unique_ptr<tbb::global_control> limit;
    if (threads > 0)
        limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      std::size_t(threads));
    // The tolerance is never met, so every step sweeps 30 times in both runs: the iteration
    // count (a global stopping decision) cannot differ.
    World w = make_world(2e-3, Vec3(0, 0, -9.81), 1e-30, 30);
    w.simulation.renumber_interval = 0;
    const uint32_t plain = add_material(w, 2500.0, 0.5);
    const uint32_t rough = add_resistant_material(w, 0.5, 0.002, 0.001);
    if (resistant) {
        w.materials.set_pair_rolling(plain, rough, 0.002);
        w.materials.set_pair_spinning(plain, rough, 0.001);
    }
    add_box(w, Vec3(-0.05, -0.05, 0), Vec3(0.5, 0.05, 0.2), plain);
    fill_lattice(w, Vec3(-0.05, -0.05, 0), Vec3(0.05, 0.05, 0.15), 0.004, plain);
    const std::size_t pile = w.bodies.size();
    add_sphere(w, Vec3(0.4, 0, 0.01), 0.01, rough, Vec3(0.05, 0, 0), Vec3(0, 5.0, 1.0));
    for (int k = 0; k < 40; ++k) {
        if (!w.step().ok) throw std::runtime_error("step failed");
        if (resistant != !w.batch().rolling.empty())
            throw std::runtime_error("the torque block must exist exactly when resistant");
    }
    std::vector<double> s;
    for (std::size_t i = 0; i < pile; ++i)
        for (int k = 0; k < 3; ++k)
            for (double v : {w.bodies.position[i][k], w.bodies.velocity[i][k],
                             w.bodies.angular_velocity[i][k], w.bodies.orientation[i].coeffs()[k]})
                s.push_back(v);
    s.push_back(w.bodies.angular_velocity[pile].norm());
    return s;
}

bool bit_identical(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(RollingResistance, ContactsWithoutResistanceKeepTheirBitsWhenOthersHaveIt) {
    // The pile's contacts have μ_r = μ_s = 0: whether the batch also holds a torque block
    // (from the far sphere) must not change one bit of the pile.
    std::vector<double> plain = pile_state(false), resistant = pile_state(true);
    ASSERT_GT(plain.size(), 12u * 1000u);
    EXPECT_LT(resistant.back(), plain.back() - 0.01) << "the far sphere must feel its resistance";
    plain.pop_back();
    resistant.pop_back();
    EXPECT_TRUE(bit_identical(plain, resistant));
}

TEST(RollingResistance, BitIdenticalOnOneAndThreeThreads) {
    const std::vector<double> one = pile_state(true, 1);
    EXPECT_TRUE(bit_identical(one, pile_state(true, 3)));
}

TEST(RollingResistance, SolversWithoutTheTorqueBlockRefuseIt) {
    for (SolverType type : {SolverType::APGD, SolverType::MaxDiss, SolverType::Lemke}) {
        World w = make_world(kH, Vec3(0, 0, -kG), 1e-8, 100);
        w.solver.type = type;
        const uint32_t m = add_resistant_material(w, 0.5, 0.001, 0.0);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0, 0, kR), kR, m);
        const StepStatus s = w.step();
        EXPECT_FALSE(s.ok) << solver_name(type);
        EXPECT_NE(s.message.find("does not support rolling or spinning resistance"), std::string::npos)
            << s.message;
    }
}

}  // namespace
}  // namespace talus
