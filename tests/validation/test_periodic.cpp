// Periodic boundaries: a body leaving through one face re-enters through the opposite one
// with its velocity unchanged, and a contact across a periodic face acts exactly as the
// same contact inside the box (the same collision displaced by half a period gives the
// same velocities and spins to round-off).
#include <gtest/gtest.h>

#include <cmath>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using testing::add_material;
using testing::add_plane;
using testing::add_sphere;
using testing::make_world;
using testing::run_steps;

PeriodicBox periodic_x(double lo, double hi) {
    PeriodicBox p;
    p.on = {true, false, false};
    p.lo = Vec3(lo, 0.0, 0.0);
    p.hi = Vec3(hi, 0.0, 0.0);
    return p;
}

TEST(Periodic, LeavingOneSideEntersTheOtherWithItsVelocity) {
    World w = make_world(1e-3, Vec3::Zero());
    w.simulation.periodic = periodic_x(0.0, 1.0);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    const Vec3 v(2.0, 0.5, -0.25), omega(1.0, -3.0, 2.0);
    add_sphere(w, Vec3(0.95, 0.0, 0.0), 0.01, m, v, omega);
    run_steps(w, 100);  // x(t) = 0.95 + 2 t: crosses x = 1 at t = 0.025, ends at 1.15 ≡ 0.15
    const Vec3 x = w.bodies.position[0];
    EXPECT_NEAR(x.x(), 0.15, 1e-12);
    EXPECT_NEAR(x.y(), 0.05, 1e-12);   // the other axes are not periodic
    EXPECT_NEAR(x.z(), -0.025, 1e-12);
    EXPECT_EQ(w.bodies.velocity[0], v);  // no force acts: the crossing leaves it bit for bit
    EXPECT_EQ(w.bodies.angular_velocity[0], omega);

    // and backwards through the lower face
    World b = make_world(1e-3, Vec3::Zero());
    b.simulation.periodic = periodic_x(-0.5, 0.5);
    const uint32_t mb = add_material(b, 2500.0, 0.5);
    add_sphere(b, Vec3(-0.45, 0.0, 0.0), 0.01, mb, Vec3(-1.0, 0.0, 0.0));
    run_steps(b, 100);  // −0.45 − 0.1 = −0.55 ≡ 0.45
    EXPECT_NEAR(b.bodies.position[0].x(), 0.45, 1e-12);
    EXPECT_EQ(b.bodies.velocity[0], Vec3(-1.0, 0.0, 0.0));
}

/// Two spheres colliding obliquely with friction on a frictional floor under gravity;
/// `shift` displaces the whole set-up along x. The periodic range is [0, 1).
World oblique_collision(double shift) {
    World w = make_world(5e-4, Vec3(0.0, 0.0, -9.81), 1e-12, 2000);
    w.simulation.periodic = periodic_x(0.0, 1.0);
    const uint32_t m = add_material(w, 2500.0, 0.4);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    const double r = 0.02;
    auto wrap = [&](double x) { return x - std::floor(x); };
    // centres 0.055 m apart across x = 1 ≡ 0 when shift = 0: the impact (at t ≈ 0.01 s) is
    // between the first sphere and the second one's image
    add_sphere(w, Vec3(wrap(0.95 + shift), 0.0, r), r, m, Vec3(1.5, 0.0, 0.0));
    add_sphere(w, Vec3(wrap(1.005 + shift), 0.012, r), r, m, Vec3::Zero(), Vec3(0.0, 0.0, 4.0));
    return w;
}

TEST(Periodic, ContactAcrossTheBoundaryActsAsOneInside) {
    // shift 0: the spheres' centres lie on either side of x = 1 ≡ 0, so the impact happens
    // across the face;
    // shift 0.5: the same collision in the middle of the box, touching nothing periodic.
    World across = oblique_collision(0.0), inside = oblique_collision(0.5);
    bool touched_across = false;
    for (int k = 0; k < 200; ++k) {
        ASSERT_TRUE(across.step().ok);
        ASSERT_TRUE(inside.step().ok);
        const ContactList& c = across.contacts();
        for (std::size_t i = 0; i < c.size(); ++i)
            if (c.a[i] != kNoBody && !c.shift_b[i].isZero(0.0)) touched_across = true;
    }
    EXPECT_TRUE(touched_across) << "the set-up must produce a contact across the periodic face";
    for (std::size_t i = 0; i < 2; ++i) {
        // compare by stable id: renumbering may reorder the bodies
        const std::size_t ia = std::size_t(std::find(across.bodies.id.begin(), across.bodies.id.end(), i) -
                                           across.bodies.id.begin());
        const std::size_t ib = std::size_t(std::find(inside.bodies.id.begin(), inside.bodies.id.end(), i) -
                                           inside.bodies.id.begin());
        const Vec3 dx = across.bodies.position[ia] - inside.bodies.position[ib];
        EXPECT_NEAR(std::remainder(dx.x() + 0.5, 1.0), 0.0, 1e-9) << "body " << i;
        EXPECT_NEAR(dx.y(), 0.0, 1e-9);
        EXPECT_NEAR(dx.z(), 0.0, 1e-9);
        EXPECT_LT((across.bodies.velocity[ia] - inside.bodies.velocity[ib]).norm(), 1e-7) << "body " << i;
        EXPECT_LT((across.bodies.angular_velocity[ia] - inside.bodies.angular_velocity[ib]).norm(), 1e-5)
            << "body " << i;
    }
    // the collision did happen: the struck sphere moves and spins
    EXPECT_GT(across.bodies.velocity[1].x(), 0.3);
}

TEST(Periodic, FrictionlessGasConservesMomentumAcrossTheFaces) {
    // Spheres with random velocities in a box periodic along x and y, floor and lid along z,
    // no gravity, no friction: walls push only along z, so the x and y momentum stays what it
    // was; contacts across the faces must neither leak momentum nor let spheres interpenetrate.
    World w = make_world(1e-3, Vec3::Zero(), 1e-12, 3000);
    PeriodicBox p;
    p.on = {true, true, false};
    p.lo = Vec3(0.0, 0.0, 0.0);
    p.hi = Vec3(0.2, 0.2, 0.0);
    w.simulation.periodic = p;
    const uint32_t m = add_material(w, 1000.0, 0.0);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_plane(w, Vec3(0.0, 0.0, 0.1), -Vec3::UnitZ(), m);
    uint64_t state = 99;
    auto next = [&]() {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return double(state >> 11) * 0x1.0p-53;
    };
    const double r = 0.01;
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j)
            for (int k = 0; k < 3; ++k)
                add_sphere(w, Vec3(0.0125 + 0.025 * i, 0.0125 + 0.025 * j, 0.015 + 0.03 * k), r, m,
                           Vec3(next() - 0.5, next() - 0.5, next() - 0.5));
    auto momentum = [&]() {
        Vec3 P = Vec3::Zero();
        for (std::size_t i = 0; i < w.bodies.size(); ++i) P += w.bodies.mass(i) * w.bodies.velocity[i];
        return P;
    };
    const Vec3 P0 = momentum();
    double deepest = 0.0;
    std::size_t across = 0;
    for (int s = 0; s < 400; ++s) {
        ASSERT_TRUE(w.step().ok);
        deepest = std::max(deepest, w.diagnostics().contact_infeasibility);
        const ContactList& c = w.contacts();
        for (std::size_t i = 0; i < c.size(); ++i)
            if (c.a[i] != kNoBody && !c.shift_b[i].isZero(0.0)) ++across;
    }
    const Vec3 P1 = momentum();
    const double scale = w.bodies.mass(0) * 0.5;  // one sphere at half a metre per second
    EXPECT_NEAR(P1.x(), P0.x(), 1e-9 * scale);
    EXPECT_NEAR(P1.y(), P0.y(), 1e-9 * scale);
    EXPECT_GT(across, 50u) << "collisions across the periodic faces must have happened";
    EXPECT_LT(deepest, 0.01 * 2 * r) << "no sphere sinks into another across a face";
    for (const Vec3& x : w.bodies.position) {
        EXPECT_GE(x.x(), 0.0);
        EXPECT_LT(x.x(), 0.2);
        EXPECT_GE(x.y(), 0.0);
        EXPECT_LT(x.y(), 0.2);
    }
}

}  // namespace
}  // namespace talus
