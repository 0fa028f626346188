// Spheres against STL-style triangle-mesh walls (collision/mesh.cpp).
//  * A flat mesh is the plane z = 0: a sphere resting on it gets the same contact impulse
//    (m g h per step) and height as on the analytic plane, to 1e-12 relative, whether it
//    sits on a triangle, on the shared diagonal of a two-triangle floor, or on a vertex
//    where eight triangles meet. Face contacts use the plane's own formula, so the
//    agreement is in fact exact; 1e-12 leaves room for a different summation order.
//  * Rolling across 800 small triangles it feels no edges: v_z stays below 1e-9 m/s and
//    the speed is constant to 1e-9 relative (rolling on a level plane is force free; the
//    solver tolerance is 1e-10 m/s), as on the plane.
//  * Down a tilted mesh it rolls as down the tilted plane (a = 5/7 g sin θ).
//  * Where edges and corners do matter (a convex box edge, a corner) the contact normal is
//    (centre − closest point)/‖…‖, and a frictionless sphere balanced on an edge starts to
//    slide off it with the velocity the constraint allows (gravity minus its normal part).
//  * Capsules: near a closed box at random poses their deepest contact is the brute-force
//    least distance from the core to the mesh less r (1e-9 m), and a rod lying across a
//    bar rests on its two top edges, points inside its segment. An ellipsoid that comes
//    near a mesh stops the run with a message.
//  * The same mesh scene gives the same bits on 1 and 2 threads.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "collision/narrow_phase.hpp"
#include "tests/support/mesh_builder.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

constexpr double kG = 9.81, kH = 1e-3, kR = 0.05;

struct Track {
    std::vector<double> z, gamma_n;
    std::vector<Vec3> velocity;
    std::vector<std::size_t> contacts;
    std::vector<uint32_t> iterations;
};

/// Runs a sphere of radius kR from (x, v, ω) for `steps`, with a plane z = 0 or the mesh.
Track run(const TriangleSoup* floor, const Vec3& x, const Vec3& v, const Vec3& omega, int steps,
          double mu = 0.5) {
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_material(w, 2500.0, mu);
    if (floor)
        add_mesh(w, *floor, m);
    else
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, x, kR, m, v, omega);
    Track t;
    for (int k = 0; k < steps; ++k) {
        const StepStatus s = w.step();
        if (!s.ok) throw std::runtime_error(s.message);
        t.z.push_back(w.bodies.position[0].z());
        t.velocity.push_back(w.bodies.velocity[0]);
        t.contacts.push_back(w.contacts().size());
        t.iterations.push_back(w.diagnostics().iterations);
        double g = 0.0;
        for (std::size_t i = 0; i < w.contacts().size(); ++i) g += w.batch().gamma[i][0];
        t.gamma_n.push_back(g);
    }
    return t;
}

double sphere_mass() { return 2500.0 * 4.0 / 3.0 * kPi * kR * kR * kR; }

TriangleSoup two_triangle_floor() {
    TriangleSoup s;
    s.vertices = {Vec3(-1, -1, 0), Vec3(1, -1, 0), Vec3(1, 1, 0), Vec3(-1, 1, 0)};
    s.triangles = {{0, 1, 2}, {0, 2, 3}};  // the diagonal runs through the origin
    return s;
}

void expect_rests_as_on_plane(const TriangleSoup& floor, const Vec3& x0) {
    const int steps = 200;
    const Track plane = run(nullptr, x0, Vec3::Zero(), Vec3::Zero(), steps);
    const Track mesh = run(&floor, x0, Vec3::Zero(), Vec3::Zero(), steps);
    const double mgh = sphere_mass() * kG * kH;
    for (int k = 0; k < steps; ++k) {
        ASSERT_EQ(mesh.contacts[k], plane.contacts[k]) << "step " << k;
        ASSERT_LE(mesh.contacts[k], 1u) << "step " << k;
        EXPECT_NEAR(mesh.z[k], plane.z[k], 1e-12 * kR) << "step " << k;
        EXPECT_NEAR(mesh.gamma_n[k], plane.gamma_n[k], 1e-12 * mgh) << "step " << k;
        // The contact keeps its name (triangle) from step to step, so it is warm-started
        // as on the plane and the solver needs the same number of sweeps.
        EXPECT_EQ(mesh.iterations[k], plane.iterations[k]) << "step " << k;
    }
    // At rest: the impulse carries the weight over the step, the sphere sits at z = r.
    EXPECT_NEAR(mesh.gamma_n.back(), mgh, 1e-12 * mgh);
    EXPECT_NEAR(mesh.z.back(), kR, 1e-12 * kR);
}

TEST(MeshWalls, SphereRestsOnTwoTrianglesAsOnThePlane) {
    expect_rests_as_on_plane(two_triangle_floor(), Vec3(0.0, 0.0, kR));   // on the diagonal
    expect_rests_as_on_plane(two_triangle_floor(), Vec3(0.3, -0.2, kR));  // inside a face
    expect_rests_as_on_plane(two_triangle_floor(), Vec3(0.3, -0.2, kR + 2e-3));  // dropped
}

TEST(MeshWalls, SphereRestsOnAVertexOfAGridAsOnThePlane) {
    // (0, 0) is a grid vertex shared by 8 triangles ((i + j) even cells meet there).
    expect_rests_as_on_plane(flat_grid(20, 0.1, -1.0, -1.0), Vec3(0.0, 0.0, kR));
    expect_rests_as_on_plane(flat_grid(20, 0.1, -1.0, -1.0), Vec3(0.1, 0.05, kR + 1e-3));
}

TEST(MeshWalls, RollingAcrossManySmallTrianglesFeelsNoEdges) {
    const TriangleSoup grid = flat_grid(20, 0.1, -1.0, -1.0);  // 800 triangles
    ASSERT_EQ(grid.triangles.size(), 800u);
    // Rolling without slipping: v + ω × (−r e_z) = 0.
    const Vec3 v(1.0, 0.23, 0.0);
    const Vec3 omega(-v.y() / kR, v.x() / kR, 0.0);
    const Vec3 x0(-0.8, -0.37, kR);
    const int steps = 1500;  // 1.5 m in x: about 15 grid lines, 7 in y, and the diagonals
    const Track plane = run(nullptr, x0, v, omega, steps);
    const Track mesh = run(&grid, x0, v, omega, steps);
    const double speed = v.norm();
    double worst_vz = 0.0, worst_speed = 0.0, worst_diff = 0.0;
    for (int k = 0; k < steps; ++k) {
        ASSERT_EQ(mesh.contacts[k], 1u) << "step " << k;
        worst_vz = std::max(worst_vz, std::abs(mesh.velocity[k].z()));
        worst_speed = std::max(worst_speed, std::abs(mesh.velocity[k].norm() - speed) / speed);
        worst_diff = std::max(worst_diff, (mesh.velocity[k] - plane.velocity[k]).norm() / speed);
    }
    EXPECT_LT(worst_vz, 1e-9);
    EXPECT_LT(worst_speed, 1e-9);
    EXPECT_LT(worst_diff, 1e-9) << "the mesh run must match the plane run";
    EXPECT_NEAR(mesh.z.back(), plane.z.back(), 1e-12 * kR);
}

/// Rolls a sphere down a 20° incline (normal (−sin θ, 0, cos θ), as in test_sphere_plane)
/// for 0.5 s: the plane, or a tilted 20 × 20 grid mesh of it (800 triangles, cells of
/// 2.5 cm against a 5 cm sphere; it rolls 0.30 m of the mesh's 0.4 m downhill of the start,
/// over 12 grid lines and 12 diagonals). Returns the distance travelled downhill and the
/// largest speed normal to the incline.
std::pair<double, double> incline_run(bool mesh) {
    const double theta = 20.0 * kPi / 180.0;
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    const Vec3 n(-std::sin(theta), 0.0, std::cos(theta));
    if (mesh) {
        TriangleSoup grid = flat_grid(20, 0.025, -0.4, -0.25);
        for (Vec3& v : grid.vertices) v = Vec3(v.x() * std::cos(theta), v.y(), v.x() * std::sin(theta));
        add_mesh(w, grid, m);
    } else {
        add_plane(w, Vec3::Zero(), n, m);
    }
    add_sphere(w, kR * n, kR, m);
    const Vec3 x0 = w.bodies.position[0];
    double worst_vn = 0.0;
    for (int k = 0; k < 500; ++k) {
        const StepStatus st = w.step();
        if (!st.ok) throw std::runtime_error(st.message);
        worst_vn = std::max(worst_vn, std::abs(w.bodies.velocity[0].dot(n)));
    }
    const Vec3 downhill(-std::cos(theta), 0.0, -std::sin(theta));
    return {(w.bodies.position[0] - x0).dot(downhill), worst_vn};
}

TEST(MeshWalls, RollsDownATiltedMeshAsDownThePlane) {
    // a = 5/7 g sin θ without slipping (tan θ ≤ 7/2 μ); 1 % as in test_sphere_plane. The
    // tilted mesh's normals differ from the plane's in the last bits only, so the runs agree
    // to far better than the solver tolerance (1e-10 m/s over 500 steps: 1e-9 relative).
    const double theta = 20.0 * kPi / 180.0, t = 0.5;
    const double expected = 0.5 * (5.0 / 7.0) * kG * std::sin(theta) * t * t;
    const auto [d_mesh, vn_mesh] = incline_run(true);
    const auto [d_plane, vn_plane] = incline_run(false);
    EXPECT_NEAR(d_mesh, expected, 0.01 * expected);
    EXPECT_NEAR(d_mesh, d_plane, 1e-9 * d_plane);
    EXPECT_LT(vn_mesh, 1e-9) << "no bumps at the edges";
}

TEST(MeshWalls, FrictionlessSphereOnABoxEdgeSlidesOffAlongTheEdgeNormal) {
    // Balanced on the top +x edge of a mesh box, the centre along n = (1, 0, 1)/√2 from
    // the edge: the contact normal is n, and after one step the velocity is gravity's
    // impulse with its normal part removed, g h (1/2, 0, −1/2).
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-12, 500);
    const uint32_t m = add_material(w, 2500.0, 0.0);
    add_mesh(w, box_mesh(Vec3(-0.5, -0.5, -1.0), Vec3(0.5, 0.5, 0.0)), m);
    const Vec3 n = Vec3(1.0, 0.0, 1.0).normalized();
    add_sphere(w, Vec3(0.5, 0.1, 0.0) + kR * n, kR, m);
    ASSERT_TRUE(w.step().ok);
    ASSERT_EQ(w.contacts().size(), 1u);
    EXPECT_LT((w.contacts().normal[0] - n).norm(), 1e-14);
    EXPECT_NEAR(w.contacts().gap[0], 0.0, 1e-15);
    const Vec3 expected = kG * kH * Vec3(0.5, 0.0, -0.5);
    EXPECT_LT((w.bodies.velocity[0] - expected).norm(), 1e-9 * kG * kH);
}

TEST(MeshWalls, SphereDroppedOnACornerIsPushedAlongCentreMinusCorner) {
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_material(w, 2500.0, 0.3);
    add_mesh(w, box_mesh(Vec3(-0.5, -0.5, -1.0), Vec3(0.5, 0.5, 0.0)), m);
    const Vec3 corner(0.5, 0.5, 0.0);
    add_sphere(w, corner + Vec3(0.01, 0.02, 0.1), kR, m);
    int corner_steps = 0;
    for (int k = 0; k < 300; ++k) {
        const Vec3 x = w.bodies.position[0];
        ASSERT_TRUE(w.step().ok);
        for (std::size_t i = 0; i < w.contacts().size(); ++i) {
            // Centre above the top and beyond both side faces: the corner is the closest point.
            if (!(x.z() > 0.0 && x.x() > 0.5 && x.y() > 0.5)) continue;
            const Vec3 expected = (x - corner).normalized();
            EXPECT_LT((w.contacts().normal[i] - expected).norm(), 1e-12) << "step " << k;
            EXPECT_NEAR(w.contacts().gap[i], (x - corner).norm() - kR, 1e-15);
            ++corner_steps;
        }
    }
    EXPECT_GT(corner_steps, 10);
    // It rolls off outwards and falls past the top.
    EXPECT_GT(w.bodies.velocity[0].x(), 0.0);
    EXPECT_GT(w.bodies.velocity[0].y(), 0.0);
    EXPECT_LT(w.bodies.position[0].z(), 0.0);
}

TEST(MeshWalls, EllipsoidNearAMeshStopsTheRunWithAMessage) {
    World w = make_world(kH, Vec3(0, 0, -kG));
    const uint32_t m = add_material(w, 2500.0, 0.3);
    add_mesh(w, two_triangle_floor(), m);
    w.bodies.add_ellipsoid(7, Vec3(0.0, 0.0, 0.2), Vec3(0.07, 0.04, 0.02), 2500.0, m);
    int steps = 0;
    StepStatus s;
    while (steps < 1000 && (s = w.step()).ok) ++steps;
    ASSERT_FALSE(s.ok);
    EXPECT_NE(s.message.find("mesh walls collide with spheres, clumps and capsules only"), std::string::npos)
        << s.message;
    EXPECT_EQ(s.bad_bodies, std::vector<uint64_t>{7});
    // It stops before the ellipsoid's surface reaches the floor: when its bounding sphere
    // plus the envelope first does.
    EXPECT_GT(w.bodies.position[0].z(), 0.05);
}

// Capsules at random poses near a closed box mesh (convex: edges and corners where the
// core's nearest point lies inside the segment), the core outside the box: the deepest of
// their contacts is the brute-force least distance from the core to the mesh, less r
// (20,001 points along the segment, each against every triangle, then 2,001 around the
// best; the distance to a convex box is convex along the segment: 1e-9 m), and no contact
// is deeper than that. Without the core's inner points a rod across an edge has no contact.
TEST(MeshWalls, CapsuleGapsMatchBruteForceNearABox) {
    const TriangleSoup soup = box_mesh(Vec3(-0.05, -0.04, -0.03), Vec3(0.05, 0.04, 0.03));
    const std::shared_ptr<const TriangleMesh> mesh = make_mesh(soup);
    Wall wall;
    wall.type = WallType::Mesh;
    wall.mesh = mesh;
    std::mt19937_64 rng(3);
    std::normal_distribution<double> g;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const auto to_mesh = [&](const Vec3& p) {
        double d = std::numeric_limits<double>::infinity();
        for (std::size_t t = 0; t < mesh->size(); ++t) d = std::min(d, mesh->distance(t, p));
        return d;
    };
    int tested = 0, inner = 0;
    for (int trial = 0; tested < 40 && trial < 400; ++trial) {
        BodyStore b;
        const double r = 0.005 + 0.01 * unit(rng), half = 0.06 * unit(rng);
        const Vec3 x = Vec3(0.07 * g(rng), 0.06 * g(rng), 0.05 * g(rng));
        const Quat q = Quat(g(rng), g(rng), g(rng), g(rng)).normalized();
        b.add_capsule(0, x, r, half, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), q);
        const Vec3 a = q * Vec3::UnitX();
        double best = 0.0, brute = std::numeric_limits<double>::infinity();
        const auto scan = [&](double lo, double hi, int n) {
            for (int k = 0; k <= n; ++k) {
                const double t = lo + (hi - lo) * k / n;
                const double d = to_mesh(x + t * a);
                if (d < brute) {
                    brute = d;
                    best = t;
                }
            }
        };
        scan(-half, half, 20000);
        if (!(brute > 1e-4) || brute - r > 0.02) continue;  // the core outside, the capsule near
        scan(std::max(-half, best - half / 10000), std::min(half, best + half / 10000), 2000);
        const bool inside_segment = std::abs(best) < half * (1.0 - 1e-6);
        std::vector<MeshContact> c;
        CapsuleMeshScratch scratch;
        collide_capsule_mesh(b, 0, wall, WallState{}, 0.05, c, scratch);
        ASSERT_FALSE(c.empty()) << "trial " << trial;
        double deepest = std::numeric_limits<double>::infinity();
        for (const MeshContact& m : c) deepest = std::min(deepest, m.gap);
        EXPECT_NEAR(deepest, brute - r, 1e-9) << "trial " << trial << (inside_segment ? " (inner point)" : "");
        ++tested;
        inner += inside_segment;
    }
    EXPECT_EQ(tested, 40);
    EXPECT_GT(inner, 5) << "too few poses test the core's inner points";
}

// A rod lying across a bar (a box mesh 2 cm wide) with both ends overhanging: it rests on
// the bar's two top edges, points inside its segment (sub-feature 2), at z = top + r
// (1e-9 m), still and carrying its weight, where its end spheres alone would fall through.
TEST(MeshWalls, RodAcrossABarRestsOnItsEdges) {
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-10, 500);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_mesh(w, box_mesh(Vec3(-0.01, -0.5, 0.0), Vec3(0.01, 0.5, 0.1)), m);
    const double r = 0.01;
    w.bodies.add_capsule(0, Vec3(0.0, 0.0, 0.1 + r + 0.002), r, 0.1, 2500.0, m);
    for (int k = 0; k < 400; ++k) ASSERT_TRUE(w.step().ok) << "step " << k;
    EXPECT_NEAR(w.bodies.position[0].z(), 0.1 + r, 1e-9);
    EXPECT_LT(w.bodies.velocity[0].norm(), 1e-8);
    std::size_t inner = 0;
    for (std::size_t i = 0; i < w.contacts().size(); ++i)
        inner += (w.contacts().feature[i] >> kMeshSubFeatureShift) == 2 && w.contacts().gap[i] < 1e-9;
    EXPECT_GE(inner, 2u);
}

std::vector<double> bumpy_run(int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    World w = make_world(kH, Vec3(0, 0, -kG), 1e-8, 100);
    const uint32_t m = add_material(w, 2500.0, 0.4);
    TriangleSoup ground = flat_grid(16, 0.05, -0.4, -0.4);
    for (Vec3& v : ground.vertices)
        v.z() = 0.02 * std::sin(9.0 * v.x()) * std::cos(7.0 * v.y()) - 0.05 * v.x();
    add_mesh(w, ground, m);
    fill_lattice(w, Vec3(-0.3, -0.3, 0.05), Vec3(0.3, 0.3, 0.25), 0.02, m);
    run_steps(w, 150);
    return state_vector(w);
}

TEST(MeshWalls, SameBitsOnOneAndTwoThreads) {
    const std::vector<double> one = bumpy_run(1), two = bumpy_run(2);
    ASSERT_EQ(one.size(), two.size());
    EXPECT_EQ(0, std::memcmp(one.data(), two.data(), one.size() * sizeof(double)));
}

}  // namespace
}  // namespace talus
