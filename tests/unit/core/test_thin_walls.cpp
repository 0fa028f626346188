// Cone and orifice walls (core/thin_walls.hpp) against brute force: the distance to the
// nearest point equals the smallest distance to a dense sampling of the wall's surface (to
// the sampling's resolution), the first contact is that point with the unit normal towards
// the centre, and every contact is a point of the wall. A sphere on the axis of a funnel or
// over a round hole gets three contacts at 120°; over a square hole, four. "Outside" a
// cone (where fills put nothing) is beside it between its ends.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/thin_walls.hpp"
#include "tests/support/instrumented.hpp"
#include "tests/support/thin_wall_builder.hpp"

namespace talus {
namespace {

constexpr double kPi = 3.14159265358979323846;
using testing::cone_wall;
using testing::round_orifice_wall;
using testing::slot_wall;

/// Smallest distance from x to points of the surface sampled by `point(a, b)` on an
/// n × m grid of (a, b) in [0, 1]².
template <class F>
double sampled_distance(const Vec3& x, F point, int n, int m) {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= n; ++i)
        for (int j = 0; j <= m; ++j) best = std::min(best, (point(double(i) / n, double(j) / m) - x).norm());
    return best;
}

/// Each contact: the point lies on the wall (its sampled distance is within tol), the normal is
/// unit and points from it to x, and the distance is |x − point|.
template <class F>
void expect_contacts_on_wall(const ThinWallAt& at, const Vec3& x, F point, int n, int m, double tol) {
    std::array<ThinWallPoint, 4> c;
    const int k = at.contacts(x, std::numeric_limits<double>::infinity(), c);
    ASSERT_GE(k, 1);
    for (int j = 0; j < k; ++j) {
        const ThinWallPoint& p = c[std::size_t(j)];
        EXPECT_LE(sampled_distance(p.point, point, n, m), tol) << "contact " << j;
        EXPECT_NEAR(p.normal.norm(), 1.0, 1e-12);
        EXPECT_NEAR((x - p.point).norm(), p.distance, 1e-12);
        if (p.distance > 1e-9) { EXPECT_LT((p.point + p.distance * p.normal - x).norm(), 1e-12); }
    }
}

TEST(ThinWalls, ConeDistanceIsTheNearestPointOfItsSurface) {
    // a tilted frustum, radius 0.01 at the start to 0.05 at the end, 0.08 long
    const Vec3 start(0.1, -0.2, 0.3), axis = Vec3(0.3, -0.2, 1.0).normalized();
    const Wall w = cone_wall(start, start + 0.08 * axis, 0.01, 0.05);
    const ThinWallAt at(w, WallState{});
    Vec3 u, v;
    orthonormal_basis(axis, u, v);
    const auto surface = [&](double a, double b) {
        const double phi = 2 * kPi * a;
        return Vec3(start + b * 0.08 * axis + (0.01 + 0.04 * b) * (std::cos(phi) * u + std::sin(phi) * v));
    };
    // grid spacing: 2π 0.05 / 1000 = 3.1e-4 m around, 0.08 / 400 = 2e-4 m along, so a
    // sample within half the diagonal, 1.9e-4 m, of any point of the surface
    const double resolution = 2e-4;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> coord(-0.08, 0.08);
    for (int k = 0; k < testing::cases_for_build(60); ++k) {
        const Vec3 x = start + 0.04 * axis + Vec3(coord(rng), coord(rng), coord(rng));
        const double brute = sampled_distance(x, surface, 1000, 400);
        EXPECT_LE(at.distance(x), brute + 1e-12) << "point " << k;
        EXPECT_GE(at.distance(x), brute - resolution) << "point " << k;
        expect_contacts_on_wall(at, x, surface, 1000, 400, resolution);
    }
}

TEST(ThinWalls, RoundOrificeDistanceIsTheNearestPointOfThePlate) {
    const Vec3 centre(0.0, 0.0, 0.1), normal = Vec3(0.2, 0.1, 1.0).normalized();
    const Wall w = round_orifice_wall(centre, normal, 0.02);
    const ThinWallAt at(w, WallState{});
    Vec3 u, v;
    orthonormal_basis(normal, u, v);
    // the plate out to 0.3 m from the axis: farther than any point below is from the hole
    const auto plate = [&](double a, double b) {
        const double phi = 2 * kPi * a;
        return Vec3(centre + (0.02 + 0.28 * b * b) * (std::cos(phi) * u + std::sin(phi) * v));
    };
    // points within 0.04 m of the centre on each axis: their nearest plate point is within
    // 0.07 m of the axis, where the samples are 3.1e-4 m apart around and 2e-4 m radially
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> coord(-0.04, 0.04);
    for (int k = 0; k < testing::cases_for_build(40); ++k) {
        const Vec3 x = centre + Vec3(coord(rng), coord(rng), coord(rng));
        const double brute = sampled_distance(x, plate, 1440, 1200);
        EXPECT_LE(at.distance(x), brute + 1e-12) << "point " << k;
        EXPECT_GE(at.distance(x), brute - 2e-4) << "point " << k;
        expect_contacts_on_wall(at, x, plate, 1440, 1200, 2e-4);
    }
}

TEST(ThinWalls, RectangularOrificeDistanceIsTheNearestPointOfThePlate) {
    const Vec3 centre(0.05, 0.0, 0.0), normal(0, 0, 1), direction(1, 1, 0);
    const Wall w = slot_wall(centre, normal, direction, 0.03, 0.01);
    const ThinWallAt at(w, WallState{});
    const Vec3 du = direction.normalized(), dv = normal.cross(du);
    // the plate in [-0.2, 0.2]² about the centre, the hole (|u| < 0.015, |v| < 0.005) left out
    const auto plate = [&](double a, double b) {
        const double pu = -0.2 + 0.4 * a, pv = -0.2 + 0.4 * b;
        return Vec3(centre + pu * du + pv * dv);
    };
    const auto outside_hole = [&](const Vec3& p) {
        const Vec3 rel = p - centre;
        return std::abs(rel.dot(du)) >= 0.015 - 1e-12 || std::abs(rel.dot(dv)) >= 0.005 - 1e-12;
    };
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> coord(-0.04, 0.04);
    for (int k = 0; k < testing::cases_for_build(80); ++k) {
        const Vec3 x = centre + Vec3(coord(rng), coord(rng), 0.5 * coord(rng));
        double brute = std::numeric_limits<double>::infinity();
        for (int i = 0; i <= 1600; ++i)
            for (int j = 0; j <= 1600; ++j) {
                const Vec3 p = plate(i / 1600.0, j / 1600.0);
                if (outside_hole(p)) brute = std::min(brute, (p - x).norm());
            }
        EXPECT_LE(at.distance(x), brute + 1e-12) << "point " << k;
        EXPECT_GE(at.distance(x), brute - 2.5e-4) << "point " << k;
        std::array<ThinWallPoint, 4> c;
        const int n = at.contacts(x, std::numeric_limits<double>::infinity(), c);
        for (int j = 0; j < n; ++j) EXPECT_TRUE(outside_hole(c[std::size_t(j)].point)) << "point " << k;
    }
}

TEST(ThinWalls, ASphereOnTheAxisOfAFunnelOrAHoleTouchesItAtThreePointsAndASlotAtFour) {
    // a 45° funnel with its apex at the origin: a sphere of radius r on the axis at height
    // r / sin 45° touches it all round
    const double r = 0.01;
    const ThinWallAt funnel(cone_wall(Vec3::Zero(), Vec3(0, 0, 0.1), 0.0, 0.1), WallState{});
    std::array<ThinWallPoint, 4> c;
    const Vec3 seated(0, 0, r * std::sqrt(2.0));
    ASSERT_EQ(funnel.contacts(seated, r + 1e-9, c), 3);
    Vec3 sum = Vec3::Zero();
    for (int j = 0; j < 3; ++j) {
        EXPECT_NEAR(c[std::size_t(j)].distance, r, 1e-12);
        EXPECT_NEAR(c[std::size_t(j)].normal.z(), std::sqrt(0.5), 1e-12);  // 45° up
        EXPECT_EQ(c[std::size_t(j)].feature, uint32_t(j));
        sum += c[std::size_t(j)].normal;
    }
    EXPECT_LT((sum - Vec3(0, 0, 3 * std::sqrt(0.5))).norm(), 1e-12);  // at 120° from each other
    // far from the axis, only the meridian's generator is near
    EXPECT_EQ(funnel.contacts(Vec3(0.05, 0, 0.05 + r * std::sqrt(2.0)), r + 1e-3, c), 1);

    // a sphere of radius r in a round hole of radius 0.6 r: its centre 0.8 r above the plate
    const ThinWallAt hole(round_orifice_wall(Vec3::Zero(), Vec3::UnitZ(), 0.6 * r), WallState{});
    ASSERT_EQ(hole.contacts(Vec3(0, 0, 0.8 * r), r + 1e-9, c), 3);
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(c[std::size_t(j)].normal.z(), 0.8, 1e-12);
    // resting on the plate away from the hole: one contact, the plate's normal
    ASSERT_EQ(hole.contacts(Vec3(0.1, 0.02, r), r + 1e-3, c), 1);
    EXPECT_LT((c[0].normal - Vec3::UnitZ()).norm(), 1e-12);
    EXPECT_NEAR(c[0].distance, r, 1e-15);
    // under the plate: the normal points down (the plate has two sides)
    ASSERT_EQ(hole.contacts(Vec3(0.1, 0.02, -r), r + 1e-3, c), 1);
    EXPECT_LT((c[0].normal + Vec3::UnitZ()).norm(), 1e-12);

    // a square hole of side 1.2 r: four edge contacts at 0.8 r above
    const ThinWallAt square(slot_wall(Vec3::Zero(), Vec3::UnitZ(), Vec3::UnitX(), 1.2 * r, 1.2 * r), WallState{});
    ASSERT_EQ(square.contacts(Vec3(0, 0, 0.8 * r), r + 1e-9, c), 4);
    for (int j = 0; j < 4; ++j) {
        EXPECT_NEAR(c[std::size_t(j)].distance, r, 1e-12);
        EXPECT_EQ(c[std::size_t(j)].feature, uint32_t(j + 1));
    }
}

TEST(ThinWalls, OutsideAConeIsBesideItBetweenItsEnds) {
    // where fills put no grain: beyond the cone's radius between its ends; never a plate
    const ThinWallAt funnel(cone_wall(Vec3::Zero(), Vec3(0, 0, 0.1), 0.02, 0.1), WallState{});
    EXPECT_TRUE(funnel.outside(Vec3(0.07, 0, 0.05)));    // the cone's radius there is 0.06
    EXPECT_FALSE(funnel.outside(Vec3(0.05, 0, 0.05)));
    EXPECT_FALSE(funnel.outside(Vec3(0.07, 0, 0.11)));   // above its end
    EXPECT_FALSE(funnel.outside(Vec3(0.07, 0, -0.01)));  // below its start
    const ThinWallAt plate(round_orifice_wall(Vec3::Zero(), Vec3::UnitZ(), 0.01), WallState{});
    EXPECT_FALSE(plate.outside(Vec3(0.5, 0, -0.1)));
}

TEST(ThinWalls, AMovedWallIsTheSameWallMoved) {
    // a cone rotated by a quarter turn about x and shifted: distances are those of the
    // reference pose at the point moved back
    const Wall w = cone_wall(Vec3(0, 0, 0), Vec3(0, 0, 0.1), 0.02, 0.06);
    WallState s;
    s.rotates = true;
    s.centre = Vec3(0, 0, 0.05);
    s.rotation = Eigen::AngleAxisd(0.5 * kPi, Vec3::UnitX()).toRotationMatrix();
    s.shift = Vec3(0.01, 0.02, 0.03);
    const ThinWallAt moved(w, s), still(w, WallState{});
    for (const Vec3& x : {Vec3(0.03, 0.01, 0.02), Vec3(-0.02, 0.05, 0.07), Vec3(0.0, 0.0, 0.0)})
        EXPECT_NEAR(moved.distance(s.to_world(x)), still.distance(x), 1e-15);
}

}  // namespace
}  // namespace talus
