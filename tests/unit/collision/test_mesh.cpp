// Triangle-mesh walls: closest points, the AABB tree query against brute force, and which
// features make contacts (one face contact on a flat surface wherever the sphere is; edge
// and vertex contacts at convex edges and corners; two face contacts in a concave valley).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/support/mesh_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

/// Brute-force closest point: the minimum over a fine barycentric sample is an upper bound
/// on the distance, so the exact routine must never be farther than it.
TEST(Mesh, ClosestPointIsNoFartherThanAnySamplePoint) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int trial = 0; trial < 200; ++trial) {
        const Vec3 a(u(rng), u(rng), u(rng)), b(u(rng), u(rng), u(rng)), c(u(rng), u(rng), u(rng));
        const Vec3 p = 2.0 * Vec3(u(rng), u(rng), u(rng));
        const TrianglePoint q = closest_point_on_triangle(p, a, b, c);
        const double d = (p - q.point).norm();
        const int n = 40;
        for (int i = 0; i <= n; ++i)
            for (int j = 0; i + j <= n; ++j) {
                const Vec3 s = a + (double(i) / n) * (b - a) + (double(j) / n) * (c - a);
                ASSERT_LE(d, (p - s).norm() + 1e-12);
            }
        // The reported region holds the point.
        if (q.region == TriangleRegion::Vertex) {
            const Vec3 corners[3] = {a, b, c};
            EXPECT_EQ(q.point, corners[q.index]);
        }
    }
}

TEST(Mesh, TreeQueryMatchesBruteForce) {
    // A bumpy 24 × 24 terrain (1152 triangles) plus 300 random triangles.
    TriangleSoup soup = flat_grid(24, 0.1, -1.2, -1.2);
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (Vec3& v : soup.vertices) v.z() = 0.05 * u(rng);
    for (int t = 0; t < 300; ++t) {
        const uint32_t base = uint32_t(soup.vertices.size());
        const Vec3 c(1.2 * u(rng), 1.2 * u(rng), 0.5 * u(rng));
        for (int k = 0; k < 3; ++k) soup.vertices.push_back(c + 0.15 * Vec3(u(rng), u(rng), u(rng)));
        soup.triangles.push_back({base, base + 1, base + 2});
    }
    const auto mesh = make_mesh(soup);
    ASSERT_EQ(mesh->size(), soup.triangles.size());
    std::vector<uint32_t> found;
    std::size_t total = 0;
    for (int q = 0; q < 500; ++q) {
        const Vec3 x(1.5 * u(rng), 1.5 * u(rng), 0.6 * u(rng));
        const double r = 0.01 + 0.2 * (0.5 + 0.5 * u(rng));
        mesh->query(x, r, found);
        std::vector<uint32_t> brute;
        for (uint32_t t = 0; t < mesh->size(); ++t)
            if (mesh->distance(t, x) <= r) brute.push_back(t);
        ASSERT_EQ(found, brute) << "query " << q;
        total += brute.size();
    }
    EXPECT_GT(total, 1000u) << "the random spheres should touch triangles";
}

TEST(Mesh, FlatGridGivesOneFaceContactAnywhere) {
    // Above cell interiors, inner edges (both diagonals and grid lines) and inner vertices
    // alike: exactly one contact, the plane's normal and gap, bit for bit.
    const auto mesh = make_mesh(flat_grid(20, 0.1, -1.0, -1.0));
    const double r = 0.05;
    TriangleMesh::Scratch scratch;
    std::vector<MeshContact> out;
    const double xs[] = {0.0, 0.1, 0.05, 0.0371, -0.3, 0.2 + 1e-17, 0.55};
    for (double x : xs)
        for (double y : xs)
            for (double z : {0.05, 0.0499, 0.0501, 0.07}) {
                const Vec3 c(x, y, z);
                mesh->collide_sphere(c, r, 0.03, out, scratch);
                ASSERT_EQ(out.size(), 1u) << c.transpose();
                EXPECT_EQ(out[0].normal, Vec3::UnitZ());
                EXPECT_EQ(out[0].gap, z - r);
                EXPECT_EQ(out[0].point, c - r * Vec3::UnitZ());
            }
    // Out of the envelope: nothing.
    mesh->collide_sphere(Vec3(0.0, 0.0, 0.2), r, 0.03, out, scratch);
    EXPECT_TRUE(out.empty());
}

TEST(Mesh, ConvexEdgeAndCornerContactsPointFromTheClosestPoint) {
    const auto mesh = make_mesh(box_mesh(Vec3(-0.5, -0.5, -1.0), Vec3(0.5, 0.5, 0.0)));
    const double r = 0.05;
    TriangleMesh::Scratch scratch;
    std::vector<MeshContact> out;
    // Beyond the top +x edge, off its midpoint, touching it.
    const Vec3 dir = Vec3(1.0, 0.0, 2.0).normalized();
    const Vec3 q(0.5, 0.13, 0.0);
    mesh->collide_sphere(q + 0.99 * r * dir, r, 0.01, out, scratch);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_LT((out[0].normal - dir).norm(), 1e-14);
    EXPECT_NEAR(out[0].gap, -0.01 * r, 1e-15);
    // Beyond the top corner (0.5, 0.5, 0).
    const Vec3 corner(0.5, 0.5, 0.0);
    const Vec3 diag = Vec3(1.0, 2.0, 3.0).normalized();
    mesh->collide_sphere(corner + 1.01 * r * diag, r, 0.01, out, scratch);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_LT((out[0].normal - diag).norm(), 1e-14);
    EXPECT_NEAR(out[0].gap, 0.01 * r, 1e-15);
    EXPECT_LT((out[0].point - (corner + 0.01 * r * diag)).norm(), 1e-15);
    // Above the top face near the edge: the face alone, even though the side faces and the
    // edge are within reach.
    mesh->collide_sphere(Vec3(0.49, 0.1, r), r, 0.02, out, scratch);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].normal, Vec3::UnitZ());
}

TEST(Mesh, ConcaveValleyGivesTwoFaceContactsAndNoEdge) {
    // Two planes meeting at the x axis: z = −y/2 for y < 0 ... i.e. a V opening upward.
    TriangleSoup soup;
    soup.vertices = {Vec3(-1, -1, 0.5), Vec3(1, -1, 0.5), Vec3(-1, 0, 0), Vec3(1, 0, 0),
                     Vec3(-1, 1, 0.5), Vec3(1, 1, 0.5)};
    soup.triangles = {{0, 1, 3}, {0, 3, 2}, {2, 3, 5}, {2, 5, 4}};
    const auto mesh = make_mesh(soup);
    const double r = 0.1;
    // In the valley, touching both slopes: the centre is r / cos(atan(1/2)) above the edge.
    const double h = r * std::sqrt(1.25);
    TriangleMesh::Scratch scratch;
    std::vector<MeshContact> out;
    mesh->collide_sphere(Vec3(0.3, 0.0, h), r, 0.01, out, scratch);
    ASSERT_EQ(out.size(), 2u);
    const Vec3 n0 = Vec3(0.0, 0.5, 1.0).normalized(), n1 = Vec3(0.0, -0.5, 1.0).normalized();
    EXPECT_LT((out[0].normal - n0).norm(), 1e-15);
    EXPECT_LT((out[1].normal - n1).norm(), 1e-15);
    for (const MeshContact& c : out) EXPECT_NEAR(c.gap, 0.0, 1e-15);
}

}  // namespace
}  // namespace talus
