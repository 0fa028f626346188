// route_kinematic_contacts (collision/kinematic_contacts.hpp) on hand-made contact lists.
#include <gtest/gtest.h>

#include "collision/kinematic_contacts.hpp"

namespace talus {
namespace {

void push(ContactList& c, int32_t a, int32_t b, uint64_t ka, uint64_t kb, uint32_t feature,
          const Vec3& p, const Vec3& n) {
    c.a.push_back(a); c.b.push_back(b); c.key_a.push_back(ka); c.key_b.push_back(kb);
    c.feature.push_back(feature); c.point.push_back(p); c.normal.push_back(n);
    c.gap.push_back(-1e-4); c.velocity_a.push_back(Vec3::Zero()); c.material_a.push_back(a < 0 ? 7u : 0u);
    c.shift_b.push_back(Vec3::Zero());
}

// Bodies: 0 dynamic clump, 1 kinematic clump turning at 2 rad/s about z through its centre
// (1, 0, 0) and moving at (0, 0.5, 0), 2 dynamic sphere, 3 kinematic sphere.
TEST(KinematicContacts, KinematicSideBecomesAMovingWall) {
    BodyStore b;
    const uint32_t t = b.clumps.add({Vec3(-0.1, 0, 0), Vec3(0.1, 0, 0)}, {0.1, 0.1});
    b.add_clump(100, Vec3(0, 0, 0), t, 1000.0, 0);
    b.add_clump(101, Vec3(1, 0, 0), t, 1000.0, 1);
    b.add_sphere(102, Vec3(2, 0, 0), 0.1, 1000.0, 0);
    b.add_sphere(103, Vec3(3, 0, 0), 0.1, 1000.0, 1);
    b.set_motion(1, WallMotion{});
    b.set_motion(3, WallMotion{});
    b.velocity[1] = Vec3(0, 0.5, 0);
    b.angular_velocity[1] = Vec3(0, 0, 2);  // identity orientation: body frame = world
    ContactList c;
    const Vec3 p(0.5, 0.1, 0);
    push(c, 0, 1, 100, 101, (1u << 8 | 0u) << kSubFeatureShift, p, Vec3(1, 0, 0));  // dyn–kin clumps
    push(c, 1, 3, 101, 103, 0, Vec3(2, 0, 0), Vec3(1, 0, 0));                      // kin–kin: dropped
    push(c, 1, 2, 101, 102, 1u << kSubFeatureShift, Vec3(1.5, 0, 0), Vec3(1, 0, 0)); // kin–dyn
    push(c, kNoBody, 3, kWallKeyBit | 4, 103, 0, Vec3(3, 0, -0.1), Vec3(0, 0, 1));  // wall–kin: dropped
    push(c, kNoBody, 2, kWallKeyBit | 4, 102, 0, Vec3(2, 0, -0.1), Vec3(0, 0, 1));  // wall–dyn: kept
    route_kinematic_contacts(b, c);
    ASSERT_EQ(c.size(), 3u);
    // the kinematic clump was B: sides swapped, normal turned, clump sphere numbers swapped
    EXPECT_EQ(c.a[0], kNoBody);
    EXPECT_EQ(c.b[0], 0);
    EXPECT_EQ(c.key_a[0], 101u);
    EXPECT_EQ(c.key_b[0], 100u);
    EXPECT_EQ(c.normal[0], Vec3(-1, 0, 0));
    EXPECT_EQ(c.feature[0], (0u << 8 | 1u) << kSubFeatureShift);
    EXPECT_EQ(c.material_a[0], 1u);
    // its velocity at p: v + ω × (p − x) = (0, 0.5, 0) + 2 ẑ × (−0.5, 0.1, 0) = (−0.2, −0.5, 0)
    EXPECT_LT((c.velocity_a[0] - Vec3(-0.2, -0.5, 0)).norm(), 1e-15);
    // the kinematic clump was A already
    EXPECT_EQ(c.a[1], kNoBody);
    EXPECT_EQ(c.b[1], 2);
    EXPECT_EQ(c.key_a[1], 101u);
    EXPECT_EQ(c.normal[1], Vec3(1, 0, 0));
    EXPECT_EQ(c.feature[1], 1u << kSubFeatureShift);
    EXPECT_LT((c.velocity_a[1] - Vec3(0, 1.5, 0)).norm(), 1e-15);
    // the wall contact of a dynamic body is untouched
    EXPECT_EQ(c.key_a[2], kWallKeyBit | 4);
    EXPECT_EQ(c.b[2], 2);
    EXPECT_EQ(c.material_a[2], 7u);
}

}  // namespace
}  // namespace talus
