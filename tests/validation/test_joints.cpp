// Joints (bilateral constraints with γ-stabilisation, docs/design.md §4; Anitescu et al. 2003):
//  - pendulums: the period from zero crossings over several swings against 2π√(L/g) for a
//    point mass on a distance joint and 2π√(I_pivot/(m g L)) for a sphere hanging by a
//    spherical joint at an offset anchor, both within 1 % (the finite 5° amplitude adds
//    θ₀²/16 = 0.05 %, included; first-order stepping at h = 1 ms is far inside 1 %);
//  - a 5-sphere chain: the infeasibility I(q) = max |g_j| stays bounded with γ_s = 0.2 and
//    grows without stabilisation (γ_s = 0);
//  - a revolute motor, a fixed pair and a prismatic slider against their kinematics;
//  - PJ, APGD and the LCP stepper (lemke) on the same pendulum as PGS; maxdiss refuses joints;
//  - bit-identical results on 1, 2 and 3 threads for a chain swinging into a granular bed
//    (tests/validation/test_determinism.cpp has a bed of jointed pairs for every solver).
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

constexpr double kG = 9.81;

/// <build>/validation, for tools/validation/plot_joints.py.
std::filesystem::path validation_dir() {
    const std::filesystem::path dir = std::filesystem::path(TALUS_BINARY_DIR) / "validation";
    std::filesystem::create_directories(dir);
    return dir;
}

std::size_t index_of(const World& w, uint64_t id) {
    for (std::size_t i = 0; i < w.bodies.size(); ++i)
        if (w.bodies.id[i] == id) return i;
    throw std::runtime_error("no body with id " + std::to_string(id));
}

/// Period from the zero crossings of x(t) (linear interpolation), over `duration`;
/// appends (t, x) of every step to `trace` when given.
double measured_period(World& w, uint64_t id, double duration,
                       std::vector<std::pair<double, double>>* trace = nullptr) {
    std::vector<double> crossings;
    double t_prev = w.time, x_prev = w.bodies.position[index_of(w, id)].x();
    const int steps = int(std::lround(duration / w.simulation.dt));
    for (int k = 0; k < steps; ++k) {
        const StepStatus s = w.step();
        if (!s.ok) throw std::runtime_error(s.message);
        const double x = w.bodies.position[index_of(w, id)].x();
        if (trace) trace->push_back({w.time, x});
        if ((x_prev < 0.0) != (x < 0.0)) crossings.push_back(t_prev + (w.time - t_prev) * x_prev / (x_prev - x));
        t_prev = w.time;
        x_prev = x;
    }
    if (crossings.size() < 3) throw std::runtime_error("too few zero crossings");
    return 2.0 * (crossings.back() - crossings.front()) / double(crossings.size() - 1);
}

/// A sphere of radius r whose centre hangs at distance L below the world point (0, 0, 1),
/// displaced by theta0; the joint is of `type` with the anchor at the pivot.
World pendulum(JointType type, double r, double L, double theta0, SolverType solver) {
    World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 500);
    w.solver.type = solver;
    const uint32_t m = add_material(w, 1000.0, 0.5);
    const Vec3 pivot(0, 0, 1);
    add_sphere(w, pivot + L * Vec3(std::sin(theta0), 0, -std::cos(theta0)), r, m);
    if (type == JointType::Distance)  // centre of the sphere to the pivot on the world
        w.joints.push_back(make_joint(type, w.bodies, 0, -1, w.bodies.position[0], Vec3::UnitZ(), pivot));
    else
        w.joints.push_back(make_joint(type, w.bodies, 0, -1, pivot));
    return w;
}

double small_amplitude_factor(double theta0) { return 1.0 + theta0 * theta0 / 16.0; }

TEST(Joints, DistancePendulumPeriodIsTwoPiRootLOverG) {
    const double L = 1.0, theta0 = 5.0 * kPi / 180.0;
    World w = pendulum(JointType::Distance, 0.01, L, theta0, SolverType::PGS);
    const double expected = 2.0 * kPi * std::sqrt(L / kG) * small_amplitude_factor(theta0);
    std::vector<std::pair<double, double>> trace;
    const double T = measured_period(w, 0, 3.2 * expected, &trace);
    std::ofstream csv(validation_dir() / "joints_pendulum.csv");
    csv << "t,x,expected_period\n";
    for (const auto& [t, x] : trace) csv << t << ',' << x << ',' << expected << '\n';
    EXPECT_NEAR(T, expected, 0.01 * expected);
    std::printf("[ distance pendulum ] T = %.7f s, expected %.7f s, relative error %.2e\n", T, expected,
                (T - expected) / expected);
    EXPECT_LT(w.diagnostics().joint_infeasibility, 1e-6 * L);
}

TEST(Joints, SphericalPendulumAtOffsetAnchorIsACompoundPendulum) {
    // r = 0.2 m at L = 0.5 m: I_pivot = (2/5 r² + L²) m, 3.1 % longer than the point mass,
    // so the test tells the two apart.
    const double r = 0.2, L = 0.5, theta0 = 5.0 * kPi / 180.0;
    World w = pendulum(JointType::Spherical, r, L, theta0, SolverType::PGS);
    const double i_over_m = 0.4 * r * r + L * L;
    const double expected = 2.0 * kPi * std::sqrt(i_over_m / (kG * L)) * small_amplitude_factor(theta0);
    const double point_mass = 2.0 * kPi * std::sqrt(L / kG) * small_amplitude_factor(theta0);
    ASSERT_GT(expected - point_mass, 0.02 * expected);
    const double T = measured_period(w, 0, 3.2 * expected);
    EXPECT_NEAR(T, expected, 0.01 * expected);
    std::printf("[ spherical pendulum ] T = %.7f s, expected %.7f s, relative error %.2e\n", T, expected,
                (T - expected) / expected);
}

TEST(Joints, HingedRodIsAPhysicalPendulum) {
    // A capsule hinged (revolute, axis y) at one end-sphere centre, d = 0.2 m from its
    // centre of mass: T = 2π√((J_t + m d²)/(m g d)) with J_t the transverse moment about
    // the centre (anisotropic inertia: the solver's world inertia tensor path).
    const double r = 0.02, half = 0.2, theta0 = 5.0 * kPi / 180.0;
    World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_material(w, 1000.0, 0.5);
    const Vec3 pivot(0, 0, 1), down(std::sin(theta0), 0, -std::cos(theta0));
    const Quat q(Eigen::AngleAxisd(0.5 * kPi - theta0, Vec3::UnitY()));
    ASSERT_TRUE((q * Vec3::UnitX()).isApprox(down, 1e-12));
    w.bodies.add_capsule(0, pivot + half * down, r, half, 1000.0, m, Vec3::Zero(), Vec3::Zero(), q);
    w.joints.push_back(make_joint(JointType::Revolute, w.bodies, 0, -1, pivot, Vec3::UnitY()));
    const MassProperties mp = capsule_mass_properties(r, half, 1000.0);
    const double i_pivot = mp.inertia.y() + mp.mass * half * half;
    const double expected = 2.0 * kPi * std::sqrt(i_pivot / (mp.mass * kG * half)) *
                            small_amplitude_factor(theta0);
    const double T = measured_period(w, 0, 3.2 * expected);
    EXPECT_NEAR(T, expected, 0.01 * expected);
    std::printf("[ hinged rod ] T = %.7f s, expected %.7f s, relative error %.2e\n", T, expected,
                (T - expected) / expected);
    // the hinge keeps the rod in the x–z plane
    EXPECT_LT(std::abs(w.bodies.position[0].y()), 1e-9);
    EXPECT_LT(w.diagnostics().joint_infeasibility, 1e-6);
}

TEST(Joints, PjApgdAndLemkeSwingThePendulumLikePgs) {
    const double L = 0.5, theta0 = 5.0 * kPi / 180.0;
    const double expected = 2.0 * kPi * std::sqrt((0.4 * 0.01 + L * L) / (kG * L)) *
                            small_amplitude_factor(theta0);
    for (SolverType s : {SolverType::PJ, SolverType::APGD, SolverType::Lemke}) {
        World w = pendulum(JointType::Spherical, 0.1, L, theta0, s);
        w.solver.max_iterations = 2000;
        const double T = measured_period(w, 0, 3.2 * expected);
        EXPECT_NEAR(T, expected, 0.01 * expected) << solver_name(s);
        EXPECT_LT(w.diagnostics().joint_infeasibility, 1e-6) << solver_name(s);
    }
}

TEST(Joints, PendulumComesToRestAgainstAWallWithEverySolver) {
    // Rows and contacts in one problem: a bob on a 0.5 m distance joint swings into a
    // frictionless vertical wall that keeps its centre at x ≥ 0.05 m. The inelastic
    // contact stops the swing and the bob slides down the wall to where both hold:
    // x = 0.05 m, z = 1 − √(L² − x²).
    const double L = 0.5, r = 0.05, x_eq = 0.05;
    // (bgs under friction = "coulomb": its joint rows take PGS's step whatever the law)
    for (SolverType type : {SolverType::PGS, SolverType::PJ, SolverType::APGD, SolverType::Lemke, SolverType::BGS}) {
        World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 2000);
        w.solver.type = type;
        if (type == SolverType::BGS) w.solver.friction = FrictionLaw::Coulomb;
        const uint32_t m = add_material(w, 1000.0, 0.0);
        add_plane(w, Vec3::Zero(), Vec3::UnitX(), m);
        const Vec3 pivot(0, 0, 1);
        add_sphere(w, pivot + L * Vec3(0.3, 0, -std::sqrt(1.0 - 0.09)), r, m);
        w.joints.push_back(make_joint(JointType::Distance, w.bodies, 0, -1, w.bodies.position[0],
                                      Vec3::UnitZ(), pivot));
        run_steps(w, 2000);
        const Vec3 x = w.bodies.position[0];
        EXPECT_NEAR(x.x(), x_eq, 1e-4) << solver_name(type);
        EXPECT_NEAR(x.z(), 1.0 - std::sqrt(L * L - x_eq * x_eq), 1e-4) << solver_name(type);
        EXPECT_LT(w.bodies.velocity[0].norm(), 1e-3) << solver_name(type);
        EXPECT_EQ(w.diagnostics().contacts, 1u) << solver_name(type);
    }
}

TEST(Joints, MaxDissRefusesJoints) {
    World w = pendulum(JointType::Distance, 0.01, 1.0, 0.1, SolverType::MaxDiss);
    const Vec3 x0 = w.bodies.position[0];
    const StepStatus status = w.step();
    EXPECT_FALSE(status.ok);
    EXPECT_NE(status.message.find("does not support joints"), std::string::npos) << status.message;
    EXPECT_EQ(w.bodies.position[0], x0) << "a refused step must leave the state as it was";
}

/// Five spheres of radius 2 cm, 10 cm apart in a straight line at 45° from the world point
/// (0, 0, 1), linked by spherical joints at the midpoints, released at rest: the chain swings
/// and folds (relative speeds up to ≈ 2.4 m/s) without the spheres touching.
World chain(double stabilization, SolverType type = SolverType::PGS) {
    World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 500);
    w.solver.type = type;
    w.solver.stabilization = stabilization;
    const uint32_t m = add_material(w, 1000.0, 0.5);
    const Vec3 pivot(0, 0, 1), dir = Vec3(1, 0, -1).normalized();
    const double spacing = 0.1, r = 0.02;
    for (int k = 0; k < 5; ++k) add_sphere(w, pivot + (k + 1) * spacing * dir, r, m);
    w.joints.push_back(make_joint(JointType::Spherical, w.bodies, 0, -1, pivot));
    for (long k = 0; k + 1 < 5; ++k)
        w.joints.push_back(make_joint(JointType::Spherical, w.bodies, k, k + 1,
                                      pivot + (double(k) + 1.5) * spacing * dir));
    return w;
}

/// I(q) after every step of 2 s.
std::vector<double> chain_infeasibility(double stabilization, SolverType type = SolverType::PGS) {
    World w = chain(stabilization, type);
    std::vector<double> out;
    for (int k = 0; k < 2000; ++k) {
        const StepStatus s = w.step();
        if (!s.ok) throw std::runtime_error(s.message);
        EXPECT_EQ(w.diagnostics().contacts, 0u) << "the chain must swing freely";
        out.push_back(w.diagnostics().joint_infeasibility);
    }
    return out;
}

TEST(Joints, ChainDriftIsBoundedWithStabilisationAndGrowsWithout) {
    // Semi-implicit Euler satisfies the joints at velocity level, so each step a joint
    // drifts by δ ≈ h² v²/(2ℓ) (v the relative speed, ℓ ≈ 5 cm the lever to the anchor):
    // ≤ 6e-5 m here. With γ_s the error obeys g ← (1 − γ_s) g + δ, so it stays below
    // δ/γ_s ≈ 3e-4 m; without stabilisation (γ_s = 0) the drifts add up step after step.
    const std::vector<double> stab = chain_infeasibility(0.2);
    const std::vector<double> none = chain_infeasibility(0.0);
    const std::vector<double> full = chain_infeasibility(1.0);
    {
        std::ofstream csv(validation_dir() / "joints_chain.csv");
        csv << "t,gamma_0,gamma_0.2,gamma_1\n";
        for (std::size_t k = 0; k < stab.size(); ++k)
            csv << 1e-3 * double(k + 1) << ',' << none[k] << ',' << stab[k] << ',' << full[k] << '\n';
    }
    EXPECT_LT(*std::max_element(full.begin(), full.end()), *std::max_element(stab.begin(), stab.end()))
        << "γ_s = 1 corrects faster than 0.2";
    const double stab_max = *std::max_element(stab.begin(), stab.end());
    std::vector<double> none_window(4, 0.0);  // the largest value in each 0.5 s
    for (std::size_t k = 0; k < none.size(); ++k)
        none_window[k / 500] = std::max(none_window[k / 500], none[k]);
    std::printf("[ chain ] max I(q) with gamma_s = 0.2: %.3e m; with gamma_s = 0 per 0.5 s: "
                "%.3e %.3e %.3e %.3e m, %.3e m at 2 s\n", stab_max, none_window[0],
                none_window[1], none_window[2], none_window[3], none.back());
    EXPECT_LT(stab_max, 3e-4);
    for (std::size_t k = 1; k < none_window.size(); ++k)
        EXPECT_GT(none_window[k], none_window[k - 1]) << "without stabilisation the drift grows";
    EXPECT_GT(none.back(), 20.0 * stab_max);
}

TEST(Joints, LcpStepperChainDriftIsBoundedWithStabilisationAndGrowsWithout) {
    // The same chain with the Stewart–Trinkle/Anitescu LCP (joint rows as split free
    // variables, solved exactly by Lemke): the same bound δ/γ_s and the same growth at γ_s = 0.
    const std::vector<double> stab = chain_infeasibility(0.2, SolverType::Lemke);
    const std::vector<double> none = chain_infeasibility(0.0, SolverType::Lemke);
    const double stab_max = *std::max_element(stab.begin(), stab.end());
    std::vector<double> none_window(4, 0.0);
    for (std::size_t k = 0; k < none.size(); ++k)
        none_window[k / 500] = std::max(none_window[k / 500], none[k]);
    std::printf("[ chain, lemke ] max I(q) with gamma_s = 0.2: %.3e m; with gamma_s = 0 per 0.5 s: "
                "%.3e %.3e %.3e %.3e m\n", stab_max, none_window[0], none_window[1],
                none_window[2], none_window[3]);
    EXPECT_LT(stab_max, 3e-4);
    for (std::size_t k = 1; k < none_window.size(); ++k) EXPECT_GT(none_window[k], none_window[k - 1]);
    EXPECT_GT(none.back(), 20.0 * stab_max);
}

TEST(Joints, RevoluteMotorSpinsAtThePrescribedSpeed) {
    // A sphere on an arm of 0.3 m about the vertical axis through the world origin, driven
    // at 3 rad/s; gravity is along the axis, so the joint holds it and the motor turns it.
    const double omega = 3.0, arm = 0.3;
    World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_material(w, 1000.0, 0.5);
    add_sphere(w, Vec3(arm, 0, 0), 0.05, m);
    Joint j = make_joint(JointType::Revolute, w.bodies, 0, -1, Vec3::Zero(), Vec3::UnitZ());
    j.motor = true;
    j.motor_speed = omega;
    w.joints.push_back(j);
    run_steps(w, 1000);
    const Vec3 x = w.bodies.position[0];
    const Vec3 wb = w.bodies.orientation[0] * w.bodies.angular_velocity[0];
    EXPECT_NEAR(wb.z(), omega, 1e-6);
    EXPECT_NEAR(wb.x(), 0.0, 1e-6);
    EXPECT_NEAR(wb.y(), 0.0, 1e-6);
    EXPECT_NEAR(std::hypot(x.x(), x.y()), arm, 1e-4);
    EXPECT_NEAR(x.z(), 0.0, 1e-4);
    // angle travelled: ω t, wrapped; the first step already runs at speed
    const double angle = std::atan2(x.y(), x.x());
    const double expected = std::remainder(omega * w.time, 2.0 * kPi);
    EXPECT_NEAR(angle, expected, 3.0 * omega * w.simulation.dt);
    // The step moves the sphere along the tangent by h ω r, off the circle by
    // δ = (h ω r)²/(2r); γ-stabilisation holds the error where γ_s g = δ (Anitescu 2003).
    const double h = w.simulation.dt, delta = 0.5 * h * h * omega * omega * arm;
    EXPECT_NEAR(w.diagnostics().joint_infeasibility, delta / w.solver.stabilization,
                0.1 * delta / w.solver.stabilization);
}

TEST(Joints, FixedPairFallsAndTumblesAsOneBody) {
    // Two spheres fixed together 0.1 m apart, thrown spinning: the centre of mass follows
    // the parabola, and the pair keeps its relative pose and one angular velocity.
    World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_material(w, 1000.0, 0.5);
    const Vec3 v0(0.5, 0, 2.0), spin(0, 4.0, 1.0);
    add_sphere(w, Vec3(0, 0, 1), 0.03, m, v0 + spin.cross(Vec3(-0.05, 0, 0)), spin);
    add_sphere(w, Vec3(0.1, 0, 1), 0.03, m, v0 + spin.cross(Vec3(0.05, 0, 0)), spin);
    w.joints.push_back(make_joint(JointType::Fixed, w.bodies, 0, 1, Vec3(0.05, 0, 1)));
    const Vec3 c0(0.05, 0, 1);
    const Quat rest = w.bodies.orientation[0].conjugate() * w.bodies.orientation[1];
    double pose_drift = 0.0, angle_drift = 0.0, spin_diff = 0.0;
    for (int k = 0; k < 500; ++k) {
        ASSERT_TRUE(w.step().ok);
        const std::size_t a = index_of(w, 0), b = index_of(w, 1);
        pose_drift = std::max(pose_drift, std::abs((w.bodies.position[b] - w.bodies.position[a]).norm() - 0.1));
        const Quat rel = w.bodies.orientation[a].conjugate() * w.bodies.orientation[b];
        angle_drift = std::max(angle_drift, rel.angularDistance(rest));
        const Vec3 wa = w.bodies.orientation[a] * w.bodies.angular_velocity[a];
        const Vec3 wb = w.bodies.orientation[b] * w.bodies.angular_velocity[b];
        spin_diff = std::max(spin_diff, (wa - wb).norm());
    }
    const double t = w.time;
    const Vec3 com = 0.5 * (w.bodies.position[0] + w.bodies.position[1]);
    // semi-implicit Euler: x_n = x_0 + v_0 t + ½ g t (t + h) for a free body
    const Vec3 expected = c0 + v0 * t + 0.5 * t * (t + w.simulation.dt) * Vec3(0, 0, -kG);
    EXPECT_LT((com - expected).norm(), 1e-6);
    EXPECT_LT(pose_drift, 1e-5);
    EXPECT_LT(angle_drift, 1e-5);
    EXPECT_LT(spin_diff, 1e-6);
    // the pair rotated as one body: a quarter turn and more about the spin axis
    EXPECT_GT(w.bodies.orientation[index_of(w, 0)].angularDistance(Quat::Identity()), 1.5);
}

TEST(Joints, PrismaticSlidesOnlyAlongItsAxis) {
    // A sphere on a 45° prismatic rail to the world: it slides down with a = g sin 45°
    // and neither leaves the rail nor turns.
    World w = make_world(1e-3, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_material(w, 1000.0, 0.5);
    add_sphere(w, Vec3(0, 0, 1), 0.05, m, Vec3::Zero(), Vec3(0, 0, 2.0));
    const Vec3 axis = Vec3(1, 0, -1).normalized();
    w.joints.push_back(make_joint(JointType::Prismatic, w.bodies, -1, 0, Vec3(0, 0, 1), axis));
    run_steps(w, 500);
    const Vec3 dx = w.bodies.position[0] - Vec3(0, 0, 1);
    const double along = dx.dot(axis);
    const double t = w.time, a = kG * std::sqrt(0.5), h = w.simulation.dt;
    // semi-implicit Euler: s_n = a h² n(n+1)/2 = ½ a t (t + h)
    EXPECT_NEAR(along, 0.5 * a * t * (t + h), 1e-9);
    EXPECT_LT((dx - along * axis).norm(), 1e-6);
    EXPECT_LT(w.bodies.angular_velocity[0].norm(), 1e-6) << "the rail stops the initial spin";
    EXPECT_LT(w.bodies.orientation[0].angularDistance(Quat::Identity()), 1e-5);
}

std::vector<double> chain_into_bed(int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    World w = make_world(2e-3, Vec3(0, 0, -kG), 1e-6, 50);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(-0.05, -0.05, 0), Vec3(0.05, 0.05, 0.4), m);
    fill_lattice(w, Vec3(-0.05, -0.05, 0), Vec3(0.05, 0.05, 0.15), 0.004, m);
    const std::size_t first = w.bodies.size();
    const Vec3 pivot(-0.04, 0, 0.2);  // the chain swings down into the bed (top ≈ 0.15 m)
    for (int k = 0; k < 5; ++k) add_sphere(w, pivot + Vec3(0.015 * (k + 1), 0, 0), 0.006, m);
    w.joints.push_back(make_joint(JointType::Spherical, w.bodies, long(first), -1, pivot));
    for (long k = 0; k + 1 < 5; ++k)
        w.joints.push_back(make_joint(JointType::Distance, w.bodies, long(first) + k, long(first) + k + 1,
                                      w.bodies.position[first + std::size_t(k)], Vec3::UnitZ(),
                                      w.bodies.position[first + std::size_t(k) + 1]));
    w.simulation.renumber_interval = 10;  // renumber while the joints are active
    std::vector<double> s;
    uint32_t chain_contacts = 0;  // contacts of chain spheres with grains or walls
    for (int k = 0; k < 60; ++k) {
        if (!w.step().ok) throw std::runtime_error("step failed");
        s.push_back(w.diagnostics().joint_infeasibility);
        for (std::size_t i = 0; i < w.contacts().size(); ++i)
            if (w.contacts().key_b[i] >= first && !(w.contacts().key_b[i] & kWallKeyBit)) ++chain_contacts;
    }
    EXPECT_GT(chain_contacts, 0u) << "the chain must reach the bed";
    const std::vector<double> state = state_vector(w);
    s.insert(s.end(), state.begin(), state.end());
    return s;
}

TEST(Joints, ChainInAGranularBedIsBitIdenticalOnOneTwoAndThreeThreads) {
    const std::vector<double> one = chain_into_bed(1);
    for (int t : {2, 3}) {
        const std::vector<double> other = chain_into_bed(t);
        ASSERT_EQ(one.size(), other.size());
        EXPECT_EQ(std::memcmp(one.data(), other.data(), one.size() * sizeof(double)), 0) << t << " threads";
    }
}

}  // namespace
}  // namespace talus
