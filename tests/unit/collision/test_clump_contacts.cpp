// Clump contacts (collision/narrow_phase.cpp) against brute force: every pair of spheres
// of two clumps (or a clump and a sphere, or a clump and a plane) within the envelope gives
// exactly one contact, with the gap |c_a − c_b| − r_a − r_b, the normal along c_b − c_a and
// a feature that differs from every other contact of the pair (warm start keys on it).
// Also: a clump pair across a periodic boundary (PairList::shift) gives the contacts of the
// same pair with B displaced by the shift, whatever template indices the two bodies have;
// a clump against a cylinder wall gives one contact per sphere within the envelope, with
// the gap of that sphere alone; a clump's contacts with a moving plane carry the plane's
// velocity at each contact point.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "collision/narrow_phase.hpp"

namespace talus {
namespace {

Quat random_rotation(std::mt19937_64& rng) {
    std::normal_distribution<double> g;
    Quat q(g(rng), g(rng), g(rng), g(rng));
    return q.normalized();
}

std::vector<Vec3> world_spheres(const BodyStore& b, std::size_t i, std::vector<double>& r) {
    std::vector<Vec3> c;
    r.clear();
    if (b.shape[i] != Shape::Clump) {
        r.push_back(b.radius[i]);
        return {b.position[i]};
    }
    const ClumpTable& t = b.clumps;
    for (uint32_t k = t.begin(b.clump_of(i)); k < t.end(b.clump_of(i)); ++k) {
        c.push_back(b.position[i] + b.orientation[i] * t.centre[k]);
        r.push_back(t.radius[k]);
    }
    return c;
}

TEST(ClumpContacts, EveryTouchingSpherePairGivesOneContact) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const double env = 0.002;
    int checked = 0;
    ClumpTable templates;
    const uint32_t t4 = templates.add({Vec3(0, 0, 0), Vec3(0.03, 0, 0), Vec3(0, 0.03, 0), Vec3(0, 0, 0.03)},
                                      {0.02, 0.015, 0.02, 0.01});
    const uint32_t t2 = templates.add({Vec3(-0.02, 0, 0), Vec3(0.02, 0, 0)}, {0.02, 0.02});
    for (int trial = 0; trial < 200; ++trial) {
        BodyStore b;
        b.clumps = templates;
        b.add_clump(0, Vec3::Zero(), t4, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        const Vec3 x1(0.06 * u(rng), 0.06 * u(rng), 0.06 * u(rng));
        if (trial % 2)
            b.add_clump(1, x1, t2, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        else
            b.add_sphere(1, x1, 0.02, 1000.0, 0);
        for (int order = 0; order < 2; ++order) {
            const std::size_t a = order, c = 1 - order;
            std::vector<double> ra, rc;
            const std::vector<Vec3> ca = world_spheres(b, a, ra), cc = world_spheres(b, c, rc);
            std::vector<double> brute;
            for (std::size_t i = 0; i < ca.size(); ++i)
                for (std::size_t j = 0; j < cc.size(); ++j) {
                    const double gap = (cc[j] - ca[i]).norm() - ra[i] - rc[j];
                    if (gap <= env) brute.push_back(gap);
                }
            std::vector<ShapeContact> out;
            ASSERT_EQ(collide_pair(b, a, c, env, out), int(brute.size()));
            std::vector<double> got;
            std::set<uint32_t> features;
            for (const ShapeContact& k : out) {
                got.push_back(k.gap);
                features.insert(k.feature);
                EXPECT_NEAR(k.normal.norm(), 1.0, 1e-12);
            }
            EXPECT_EQ(features.size(), out.size()) << "features must tell the contacts apart";
            std::sort(got.begin(), got.end());
            std::sort(brute.begin(), brute.end());
            for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], brute[k], 1e-15);
            checked += int(out.size());
        }
    }
    EXPECT_GT(checked, 200);
}

TEST(ClumpContacts, PlaneGivesOneContactPerSphereWithinTheEnvelope) {
    BodyStore b;
    const uint32_t t = b.clumps.add({Vec3(0, 0, 0), Vec3(0.03, 0, 0), Vec3(0.06, 0, 0)}, {0.02, 0.02, 0.02});
    // tilted: the spheres sit at heights 0.019, 0.019 + 0.03 s, 0.019 + 0.06 s above z = 0
    // (s = sin 0.05): gaps −1 mm, +0.50 mm and +2.0 mm
    const double s = std::sin(0.05);
    const Quat q(Eigen::AngleAxisd(-0.05, Vec3::UnitY()));
    const Vec3 first = Vec3(0, 0, 0.019);  // the first sphere penetrates by 1 mm
    b.add_clump(0, first + q * (b.clumps.user_centre[t]), t, 1000.0, 0, Vec3::Zero(), Vec3::Zero(),
                q * b.clumps.principal[t]);
    std::vector<ShapeContact> out;
    const WallFace floor{Vec3::Zero(), Vec3::UnitZ()};
    ASSERT_EQ(collide_face(b, 0, floor, 0, 0.0015, out), 2);  // envelope 1.5 mm
    std::vector<double> gaps = {out[0].gap, out[1].gap};
    std::sort(gaps.begin(), gaps.end());
    EXPECT_NEAR(gaps[0], -0.001, 1e-12);
    EXPECT_NEAR(gaps[1], -0.001 + 0.03 * s, 1e-12);
    EXPECT_NE(out[0].feature, out[1].feature);
    for (const ShapeContact& c : out) EXPECT_NEAR(c.point.z(), c.gap, 1e-12);  // on the sphere
}

/// Three templates of different sizes; body k of `b` gets template tmpl[k].
ClumpTable three_templates() {
    ClumpTable t;
    t.add({Vec3(0, 0, 0), Vec3(0.025, 0, 0)}, {0.015, 0.012});
    t.add({Vec3(0, 0, 0), Vec3(0.03, 0, 0), Vec3(0, 0.03, 0), Vec3(0, 0, 0.03)}, {0.02, 0.015, 0.02, 0.01});
    t.add({Vec3(-0.02, 0, 0), Vec3(0.02, 0, 0), Vec3(0, 0.02, 0)}, {0.02, 0.02, 0.018});
    return t;
}

TEST(ClumpContacts, PairAcrossAPeriodicFaceMatchesThePairDisplaced) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const Vec3 shift(1.0, 0.0, -2.0);  // whole periods of a box [0, 1) × ? × [0, 2)
    int compared = 0;
    const ClumpTable templates = three_templates();
    for (int trial = 0; trial < 100; ++trial) {
        BodyStore b;
        b.clumps = templates;
        const uint32_t ta = uint32_t(trial % 3), tb = uint32_t((trial / 3) % 3);
        const Vec3 xa(0.98, 0.5, 0.02);
        const Vec3 rel(0.05 * u(rng), 0.05 * u(rng), 0.05 * u(rng));  // b's image is at xa + rel
        b.add_clump(0, xa, ta, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        if (trial % 4 == 3)
            b.add_sphere(1, xa + rel - shift, 0.02, 1000.0, 0);
        else
            b.add_clump(1, xa + rel - shift, tb, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        const std::vector<double> reach = {b.radius[0] + 0.001, b.radius[1] + 0.001};
        PairList periodic;
        periodic.a = {0};
        periodic.b = {1};
        periodic.shift = {shift};
        ContactList across, inside;
        NarrowPhaseScratch scratch;
        narrow_phase(b, {}, {}, periodic, reach, 0.0, across, scratch);
        BodyStore moved = b;
        moved.position[1] += shift;
        PairList plain;
        plain.a = {0};
        plain.b = {1};
        narrow_phase(moved, {}, {}, plain, reach, 0.0, inside, scratch);
        ASSERT_EQ(across.size(), inside.size()) << "trial " << trial;
        for (std::size_t k = 0; k < across.size(); ++k) {
            EXPECT_EQ(across.feature[k], inside.feature[k]);
            EXPECT_NEAR(across.gap[k], inside.gap[k], 1e-15);
            EXPECT_LT((across.point[k] - inside.point[k]).norm(), 1e-15);
            EXPECT_LT((across.normal[k] - inside.normal[k]).norm(), 1e-15);
            EXPECT_EQ(across.shift_b[k], shift);
            EXPECT_EQ(across.b[k], 1);
        }
        compared += int(across.size());
    }
    EXPECT_GT(compared, 50);
}

TEST(ClumpContacts, CylinderGivesOneContactPerSphereWithinTheEnvelope) {
    // A drum of radius 0.1 m about the x axis, bodies inside; a three-sphere line along x
    // lying low in it, tilted so its spheres sit at different depths.
    Wall drum;
    drum.type = WallType::Cylinder;
    drum.point = Vec3::Zero();
    drum.axis = Vec3::UnitX();
    drum.radius = 0.1;
    drum.inside = true;
    const CylinderAt cyl(drum, WallState{});
    std::mt19937_64 rng(3);
    int checked = 0;
    for (int trial = 0; trial < 50; ++trial) {
        BodyStore b;
        const uint32_t t = b.clumps.add({Vec3(0, 0, 0), Vec3(0.03, 0, 0), Vec3(0.06, 0, 0)}, {0.02, 0.02, 0.015});
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        b.add_clump(0, Vec3(0.1 * u(rng), 0.02 * u(rng), -0.07 + 0.01 * u(rng)), t, 1000.0, 0, Vec3::Zero(),
                    Vec3::Zero(), random_rotation(rng));
        const double env = 0.003;
        std::vector<double> brute;
        for (uint32_t k = 0; k < 3; ++k) {
            const Vec3 c = b.position[0] + b.orientation[0] * b.clumps.centre[k];
            const double gap = 0.1 - std::hypot(c.y(), c.z()) - b.clumps.radius[k];
            if (gap <= env) brute.push_back(gap);
        }
        std::vector<ShapeContact> out;
        ASSERT_EQ(collide_cylinder(b, 0, cyl, env, out), int(brute.size()));
        std::vector<double> got;
        std::set<uint32_t> features;
        for (const ShapeContact& c : out) {
            got.push_back(c.gap);
            features.insert(c.feature);
            // the normal points from the wall towards the axis; the point lies on its sphere
            const Vec3 radial(0.0, c.point.y(), c.point.z());
            EXPECT_LT((c.normal + radial.normalized()).norm(), 1e-12);
            EXPECT_NEAR(0.1 - radial.norm(), c.gap, 1e-12);
        }
        EXPECT_EQ(features.size(), out.size());
        std::sort(got.begin(), got.end());
        std::sort(brute.begin(), brute.end());
        for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], brute[k], 1e-15);
        checked += int(out.size());
    }
    EXPECT_GT(checked, 20);
}

TEST(ClumpContacts, MovingPlaneGivesItsVelocityAtEachContactPoint) {
    // A plane z = 0 turning about ẑ through the origin at Ω = 3 rad/s: its velocity at a
    // point p of the plane is Ω ẑ × p (the step's mean, to O(h Ω² |p|)).
    Wall plane;
    plane.type = WallType::Plane;
    plane.point = Vec3::Zero();
    plane.normal = Vec3::UnitZ();
    plane.motion.kind = MotionKind::Rotation;
    plane.motion.centre = Vec3::Zero();
    plane.motion.axis = Vec3::UnitZ();
    plane.motion.omega = 3.0;
    BodyStore b;
    const uint32_t t = b.clumps.add({Vec3(0, 0, 0), Vec3(0.1, 0, 0)}, {0.02, 0.02});
    b.add_clump(0, Vec3(0.3, 0.2, 0.0195) + b.clumps.user_centre[t], t, 1000.0, 0);
    const std::vector<Wall> walls = {plane};
    const std::vector<WallState> states = wall_states(walls, 0.0, 0.0, 1e-3);
    PairList none;
    ContactList out;
    NarrowPhaseScratch scratch;
    narrow_phase(b, walls, states, none, {b.radius[0] + 0.001}, 0.0, out, scratch);
    ASSERT_EQ(out.size(), 2u);  // both spheres 0.5 mm into the plane
    for (std::size_t k = 0; k < 2; ++k) {
        EXPECT_NEAR(out.gap[k], -5e-4, 1e-12);
        const Vec3 expected = states[0].velocity_at(out.point[k]);
        EXPECT_EQ(out.velocity_a[k], expected);
        // and that is Ω ẑ × p over the step to first order in h
        const Vec3 exact = 3.0 * Vec3::UnitZ().cross(Vec3(out.point[k].x(), out.point[k].y(), 0.0));
        EXPECT_LT((out.velocity_a[k] - exact).norm(), 3.0 * 3.0 * 0.4 * 1e-3) << k;
    }
    EXPECT_GT((out.velocity_a[0] - out.velocity_a[1]).norm(), 0.25);  // 0.1 m apart at Ω = 3
}

}  // namespace
}  // namespace talus
