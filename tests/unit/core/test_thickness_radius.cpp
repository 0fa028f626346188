// BodyStore::thickness_radius: half a body's thickness, the scale the penetration target,
// the adaptive step's bounds and the default envelope measure a body against
// (smallest_dynamic_radius, docs/design.md §4). A capsule or clump is as thin as its end
// radius or smallest sphere, not as its bounding sphere: with the bounding radius a bed of
// 1 mm capsules 6 mm long ran with the targets of 3 mm grains.
#include <gtest/gtest.h>

#include "core/body_store.hpp"
#include "engine/world/pipeline.hpp"

namespace talus {
namespace {

TEST(ThicknessRadius, IsTheThinnestPartOfEachShape) {
    BodyStore b;
    b.add_sphere(0, Vec3::Zero(), 0.004, 1000.0, 0);
    b.add_capsule(1, Vec3(1, 0, 0), 0.001, 0.002, 1000.0, 0);
    b.add_ellipsoid(2, Vec3(2, 0, 0), Vec3(0.003, 0.002, 0.0015), 1000.0, 0);
    const uint32_t t = b.clumps.add({Vec3(-0.002, 0, 0), Vec3(0.002, 0, 0), Vec3(0, 0.002, 0)}, {0.0015, 0.002, 0.0012});
    b.add_clump(3, Vec3(3, 0, 0), t, 1000.0, 0);
    EXPECT_EQ(b.thickness_radius(0), 0.004);
    EXPECT_EQ(b.thickness_radius(1), 0.001);
    EXPECT_GT(b.radius[1], 0.0029);  // the bounding radius, r + half length
    EXPECT_EQ(b.thickness_radius(2), 0.0015);
    EXPECT_EQ(b.thickness_radius(3), 0.0012);
    EXPECT_GT(b.radius[3], 0.003);
    EXPECT_EQ(smallest_dynamic_radius(b), 0.001);
    b.set_motion(1, WallMotion{});  // only dynamic bodies count
    EXPECT_EQ(smallest_dynamic_radius(b), 0.0012);
}

}  // namespace
}  // namespace talus
