// Clumps of spheres (core/clump.hpp, collision/narrow_phase.cpp) in whole scenes:
//  * a three-sphere line lying on a plane, a flat triangle on a triangle-mesh floor, and a
//    flat triangle resting in the grooves of another: at rest after 1 s;
//  * a dumbbell dropped tilted onto a plane: the momentum change of every step equals
//    gravity's plus the contact impulses, the total energy never increases, and it comes to
//    rest lying on both spheres;
//  * the contacts of a clump carry its body index, one per touching sphere;
//  * a dumbbell set down at rest across a conveyor (a plane translating at V, friction μ)
//    slides, then rolls about its long axis: friction F at the contact line gives
//    m v̇ = F and J ω̇ = −r F (J about the long axis), sliding ends when v − r ω = V, so
//    v = V J / (J + m r²) and ω = (v − V)/r (a sphere: 2/7 V). Asserted to 1e-6 relative;
//  * two dumbbells colliding across a periodic face (x = 1 ≡ 0) end as the same collision
//    half a period away, inside the box: positions to 1e-9 m, velocities to 1e-7 m/s,
//    angular velocities to 1e-5 rad/s (round-off from the shifted coordinates).
// Measured (Release, PGS defaults): line drift 3e-14 m, speed 4e-12 m/s; mesh floor drift
// 2e-15 m; stack drift 2e-12 m, speed 3e-12 m/s; dumbbell momentum error 1e-16 N s (weight
// impulse 1.3e-2 N s), largest energy gain of a step 7e-11 J, final sphere heights r ± 1e-17 m.
// The bounds below leave orders of magnitude for other solvers and platforms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "tests/support/mesh_builder.hpp"
#include "solvers/contact_ops.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using testing::add_material;
using testing::add_plane;
using testing::kPi;
using testing::make_world;
using testing::run_steps;

/// Adds a clump whose spheres (centre, radius) are given in a frame placed at `origin`
/// with orientation q_user; returns its index.
std::size_t add_clump(World& w, const std::vector<Vec3>& c, const std::vector<double>& r,
                      const Vec3& origin, uint32_t mat, const Quat& q_user = Quat::Identity(),
                      const Vec3& v = Vec3::Zero()) {
    const uint32_t t = w.bodies.clumps.add(c, r);
    const ClumpTable& tab = w.bodies.clumps;
    return w.bodies.add_clump(w.bodies.size(), origin + q_user * tab.user_centre[t], t,
                              w.materials.materials[mat].density, mat, v, Vec3::Zero(),
                              q_user * tab.principal[t]);
}

/// World centre of sphere k (in template order) of clump body i.
Vec3 sphere_centre(const World& w, std::size_t i, uint32_t k) {
    const ClumpTable& t = w.bodies.clumps;
    return w.bodies.position[i] + w.bodies.orientation[i] * t.centre[t.begin(w.bodies.clump_of(i)) + k];
}

std::vector<Vec3> triangle(double s, double z = 0.0, double angle = 0.0) {
    std::vector<Vec3> c;
    const double R = s / std::sqrt(3.0);
    for (int k = 0; k < 3; ++k) {
        const double a = angle + kPi / 2 + 2 * kPi * k / 3;
        c.emplace_back(R * std::cos(a), R * std::sin(a), z);
    }
    return c;
}

struct Rest {
    double drift = 0.0, speed = 0.0, spin = 0.0;
};

/// Runs w for `steps` and returns the largest displacement of a body's centre [m] and its
/// final speed [m/s] and angular speed [rad/s].
Rest rest_after(World& w, int steps) {
    const std::vector<Vec3> x0 = w.bodies.position;
    run_steps(w, steps);
    Rest r;
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        r.drift = std::max(r.drift, (w.bodies.position[i] - x0[i]).norm());
        r.speed = std::max(r.speed, w.bodies.velocity[i].norm());
        r.spin = std::max(r.spin, w.bodies.angular_velocity[i].norm());
    }
    return r;
}

// A three-sphere line (r = 5 cm, 6 cm apart: overlapping) lying along a diagonal on a plane,
// touching it with all three spheres. After 1 s (1000 steps): the centre moved < 1 µm and
// the speeds are < 1e-6 m/s and < 1e-5 rad/s (2 × 10⁻⁵ of the free-fall speed after 1 s).
TEST(Clumps, ThreeSphereLineRestsOnAPlane) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    const double r = 0.05;
    const Quat q(Eigen::AngleAxisd(0.3, Vec3::UnitZ()));
    add_clump(w, {Vec3(-0.06, 0, 0), Vec3(0, 0, 0), Vec3(0.06, 0, 0)}, {r, r, r}, Vec3(0.1, 0.2, r), m, q);
    const Rest rest = rest_after(w, 1000);
    EXPECT_LT(rest.drift, 1e-6);
    EXPECT_LT(rest.speed, 1e-6);
    EXPECT_LT(rest.spin, 1e-5);
    EXPECT_EQ(w.contacts().size(), 3u);  // one per sphere, all on body 0
    for (std::size_t k = 0; k < w.contacts().size(); ++k) EXPECT_EQ(w.contacts().b[k], 0);
    for (uint32_t k = 0; k < 3; ++k) EXPECT_NEAR(sphere_centre(w, 0, k).z(), r, 1e-6);
}

// A flat triangle of spheres on a triangle-mesh floor: the same bounds as on a plane.
TEST(Clumps, TriangleRestsOnAMeshFloor) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    const uint32_t m = add_material(w, 2500.0, 0.5);
    testing::add_mesh(w, testing::flat_grid(10, 0.1, -0.5, -0.5), m);
    const double r = 0.04;
    add_clump(w, triangle(0.07), {r, r, r}, Vec3(0.013, -0.021, r), m);
    const Rest rest = rest_after(w, 1000);
    EXPECT_LT(rest.drift, 1e-6);
    EXPECT_LT(rest.speed, 1e-6);
    EXPECT_LT(rest.spin, 1e-5);
    EXPECT_GE(w.contacts().size(), 3u);
}

// Two flat triangles (r = 4 cm, side 1.8 r: overlapping spheres), the upper one turned by
// 60° so that each of its spheres sits in the groove between two lower spheres (6 contacts
// between the clumps, 3 with the plane). After 1 s: drift < 1 µm, speeds < 1e-6 m/s.
TEST(Clumps, StackedClumpsStayAtRest) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    const double r = 0.04, s = 1.8 * r;
    const double R = s / std::sqrt(3.0);
    const double lift = std::sqrt(4 * r * r - R * R);  // vertical offset of touching spheres
    add_clump(w, triangle(s), {r, r, r}, Vec3(0, 0, r), m);
    add_clump(w, triangle(s, 0.0, kPi / 3), {r, r, r}, Vec3(0, 0, r + lift), m);
    const Rest rest = rest_after(w, 1000);
    EXPECT_LT(rest.drift, 1e-6);
    EXPECT_LT(rest.speed, 1e-6);
    EXPECT_LT(rest.spin, 1e-5);
    std::size_t between = 0;
    for (std::size_t k = 0; k < w.contacts().size(); ++k) between += w.contacts().a[k] >= 0;
    EXPECT_EQ(between, 6u);
}

// A dumbbell (two spheres r = 4 cm, 6 cm apart) released tilted by 35° with its lower
// sphere 5 cm above a plane, μ = 0.4. Checked every step:
//  * m (v⁺ − v) = m g h + Σ_i (γ_n n + γ_u u + γ_w w) (the impulses the solver applied),
//    to 1e-12 of the weight impulse m g h;
//  * the energy E = T + V never grows by more than 1e-9 J (E₀ ≈ 0.95 J);
// and after 1.5 s it lies on both spheres (centres within 1e-5 m of r above the plane) at
// rest (speed < 1e-5 m/s).
TEST(Clumps, DumbbellDroppedAtAnAngleComesToRestOnBothSpheres) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    const uint32_t m = add_material(w, 2500.0, 0.4);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    const double r = 0.04, d = 0.06;
    const Quat tilt(Eigen::AngleAxisd(35.0 * kPi / 180.0, Vec3(0.3, 1, 0).normalized()));
    const std::vector<Vec3> c = {Vec3(-0.5 * d, 0, 0), Vec3(0.5 * d, 0, 0)};
    // lowest sphere centre at r + 5 cm
    const double low = std::min((tilt * c[0]).z(), (tilt * c[1]).z());
    add_clump(w, c, {r, r}, Vec3(0, 0, r + 0.05 - low), m, tilt);
    const double mass = w.bodies.mass(0);
    double e_prev = w.kinetic_energy() + w.potential_energy();
    double worst_momentum = 0.0, worst_energy_gain = 0.0;
    for (int step = 0; step < 1500; ++step) {
        const Vec3 v0 = w.bodies.velocity[0];
        const StepStatus s = w.step();
        ASSERT_TRUE(s.ok) << s.message;
        Vec3 impulse = mass * w.simulation.gravity * w.simulation.dt;
        const AssembledBatch& b = w.batch();
        for (std::size_t k = 0; k < b.size(); ++k) {
            const Vec3 u = contact_frame(b, k).u, wv = b.normal[k].cross(u);
            impulse += b.gamma[k][0] * b.normal[k] + b.gamma[k][1] * u + b.gamma[k][2] * wv;
        }
        worst_momentum = std::max(worst_momentum, (mass * (w.bodies.velocity[0] - v0) - impulse).norm());
        const double e = w.kinetic_energy() + w.potential_energy();
        worst_energy_gain = std::max(worst_energy_gain, e - e_prev);
        e_prev = e;
    }
    EXPECT_LT(worst_momentum, 1e-12 * mass * 9.81 * w.simulation.dt);
    EXPECT_LT(worst_energy_gain, 1e-9);
    for (uint32_t k = 0; k < 2; ++k) EXPECT_NEAR(sphere_centre(w, 0, k).z(), r, 1e-5) << "sphere " << k;
    EXPECT_LT(w.bodies.velocity[0].norm(), 1e-5);
    EXPECT_LT(w.bodies.angular_velocity[0].norm(), 1e-4);
}

TEST(Clumps, DumbbellOnAConveyorEndsRollingAtVJOverJPlusMR2) {
    const double V = 0.5, r = 0.02, h = 1e-3;
    World w = make_world(h, Vec3(0, 0, -9.81), 1e-12, 500);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m, Vec3(V, 0, 0));  // the belt
    // long axis along y; both spheres touch the belt
    add_clump(w, {Vec3(0, -0.015, 0), Vec3(0, 0.015, 0)}, {r, r}, Vec3(0, 0, r), m);
    run_steps(w, 200);  // sliding lasts about 0.03 s
    const double mass = w.bodies.mass(0);
    const uint32_t t = w.bodies.clump_of(0);
    const Mat3 R = w.bodies.orientation[0].toRotationMatrix();
    const double rho = w.materials.materials[m].density;
    const Mat3 J_world = R * (rho * w.bodies.clumps.unit_inertia[t]).asDiagonal() * R.transpose();
    const double J = J_world(1, 1);
    const double v = V * J / (J + mass * r * r);
    const Vec3 omega = w.bodies.orientation[0] * w.bodies.angular_velocity[0];  // world frame
    std::printf("[ conveyor ] v = %.12f m/s (expected %.12f), ω_y = %.12f rad/s (expected %.12f)\n",
                w.bodies.velocity[0].x(), v, omega.y(), (v - V) / r);
    EXPECT_NEAR(w.bodies.velocity[0].x() / v, 1.0, 1e-6);
    EXPECT_NEAR(omega.y() / ((v - V) / r), 1.0, 1e-6);
    EXPECT_NEAR(w.bodies.velocity[0].y(), 0.0, 1e-9);
    EXPECT_NEAR(w.bodies.velocity[0].z(), 0.0, 1e-9);
    for (uint32_t k = 0; k < 2; ++k) EXPECT_NEAR(sphere_centre(w, 0, k).z(), r, 1e-9) << "sphere " << k;
}

/// Two dumbbells colliding obliquely on a frictional floor, periodic along x on [0, 1);
/// `shift` displaces the whole set-up along x.
World periodic_dumbbells(double shift) {
    World w = make_world(5e-4, Vec3(0.0, 0.0, -9.81), 1e-12, 2000);
    w.simulation.periodic.on = {true, false, false};
    w.simulation.periodic.lo = Vec3::Zero();
    w.simulation.periodic.hi = Vec3(1.0, 0.0, 0.0);
    const uint32_t m = add_material(w, 2500.0, 0.4);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    const double r = 0.01;
    auto wrap = [&](double x) { return x - std::floor(x); };
    // centres 0.055 m apart across x = 1 ≡ 0 when shift = 0: A (along y) strikes B (along
    // x, offset in y) at t ≈ 0.015 s through B's image
    add_clump(w, {Vec3(0, -0.012, 0), Vec3(0, 0.012, 0)}, {r, r}, Vec3(wrap(0.95 + shift), 0.0, r), m,
              Quat::Identity(), Vec3(1.5, 0.0, 0.0));
    add_clump(w, {Vec3(-0.012, 0, 0), Vec3(0.012, 0, 0)}, {r, r}, Vec3(wrap(1.005 + shift), 0.012, r), m);
    return w;
}

TEST(Clumps, ContactAcrossAPeriodicFaceActsAsOneInside) {
    World across = periodic_dumbbells(0.0), inside = periodic_dumbbells(0.5);
    int touched_across = 0;
    for (int k = 0; k < 200; ++k) {
        ASSERT_TRUE(across.step().ok);
        ASSERT_TRUE(inside.step().ok);
        const ContactList& c = across.contacts();
        for (std::size_t i = 0; i < c.size(); ++i)
            if (c.a[i] != kNoBody && !c.shift_b[i].isZero(0.0)) ++touched_across;
        for (std::size_t i = 0; i < inside.contacts().size(); ++i)
            ASSERT_TRUE(inside.contacts().a[i] == kNoBody || inside.contacts().shift_b[i].isZero(0.0));
    }
    EXPECT_GT(touched_across, 0) << "the set-up must produce a contact across the periodic face";
    for (uint64_t id = 0; id < 2; ++id) {
        const auto index = [&](const World& w) {
            return std::size_t(std::find(w.bodies.id.begin(), w.bodies.id.end(), id) - w.bodies.id.begin());
        };
        const std::size_t ia = index(across), ib = index(inside);
        const Vec3 dx = across.bodies.position[ia] - inside.bodies.position[ib];
        EXPECT_NEAR(std::remainder(dx.x() + 0.5, 1.0), 0.0, 1e-9) << "body " << id;
        EXPECT_NEAR(dx.y(), 0.0, 1e-9);
        EXPECT_NEAR(dx.z(), 0.0, 1e-9);
        EXPECT_LT((across.bodies.velocity[ia] - inside.bodies.velocity[ib]).norm(), 1e-7) << "body " << id;
        EXPECT_LT((across.bodies.angular_velocity[ia] - inside.bodies.angular_velocity[ib]).norm(), 1e-5)
            << "body " << id;
        EXPECT_LT(across.bodies.orientation[ia].angularDistance(inside.bodies.orientation[ib]), 1e-7);
    }
    // the collision did happen: the struck dumbbell moves and turns
    const std::size_t b = std::size_t(std::find(across.bodies.id.begin(), across.bodies.id.end(), 1u) -
                                      across.bodies.id.begin());
    EXPECT_GT(across.bodies.velocity[b].x(), 0.2);
    EXPECT_GT(std::abs((across.bodies.orientation[b] * across.bodies.angular_velocity[b]).z()), 1.0);
}

}  // namespace
}  // namespace talus
