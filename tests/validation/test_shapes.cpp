// Capsules and ellipsoids: mass properties, narrow-phase geometry and whole-scene physics.
//  - mass and inertia against slice-by-slice numerical integration (Simpson, 1e-8
//    relative: the integrands are smooth polynomials of the slice radius) and against the
//    sphere for the degenerate shapes (1e-12 relative, round-off only);
//  - capsule–sphere, capsule–capsule and ellipsoid–sphere gaps against brute-force
//    minimisation over sampled points with local refinement (1e-6 m); ellipsoid–ellipsoid
//    gaps against the least distance from the surface of one to the other, and overlaps
//    against the translation along the normal that parts the pair (1e-6 m);
//  - a capsule lying on a plane rests on two contacts, one per end, whose normal impulses
//    carry m g h (1e-6 relative: solver tolerance 1e-10 m/s);
//  - a tilted capsule touches with its lower end first, within one step of free fall;
//  - a clump meets a capsule or an ellipsoid sphere by sphere, each gap as brute force
//    gives it, and a bed of clumps, rods and ellipsoids together settles;
//  - an ellipsoid rests at the height of its semi-axis along the normal (1e-4 relative);
//  - Stewart–Trinkle's spinning rod, read from a scene file, first hits the plane near
//    t = 0.383 s (within 0.01 s at h = 5 ms; the flight is ballistic).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <vector>

#include "collision/narrow_phase.hpp"
#include "io/scene.hpp"
#include "tests/support/paper_scenes.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

/// Simpson's rule of f on [a, b] with n (even) intervals.
double simpson(const std::function<double(double)>& f, double a, double b, int n) {
    const double h = (b - a) / n;
    double s = f(a) + f(b);
    for (int i = 1; i < n; ++i) s += (i % 2 ? 4.0 : 2.0) * f(a + i * h);
    return s * h / 3.0;
}

/// Mass properties of a solid of revolution about x with slice radius ρ(x) on [a, b] and
/// density rho: a disc of radius ρ at x has mass ρ_m π ρ² dx, axial moment ½ ρ², and
/// transverse moment ¼ ρ² + x² per unit mass.
MassProperties revolution(const std::function<double(double)>& radius, double a, double b,
                          double rho) {
    const int n = 20000;
    auto disc = [&](double x) { const double r = radius(x); return rho * kPi * r * r; };
    const double m = simpson(disc, a, b, n);
    const double jx = simpson([&](double x) { const double r = radius(x); return disc(x) * 0.5 * r * r; }, a, b, n);
    const double jt = simpson([&](double x) { const double r = radius(x); return disc(x) * (0.25 * r * r + x * x); }, a, b, n);
    return {m, Vec3(jx, jt, jt)};
}

TEST(Shapes, CapsuleMassPropertiesMatchSliceIntegration) {
    const double r = 0.05, h = 0.25, rho = 1234.0;
    // The capsule's slices: r on the cylinder, √(r² − (|x| − h)²) on the caps. Integrate
    // each piece separately so Simpson sees smooth integrands.
    auto cap = [&](double x) { const double d = std::abs(x) - h; return std::sqrt(std::max(0.0, r * r - d * d)); };
    const MassProperties cyl = revolution([&](double) { return r; }, -h, h, rho);
    const MassProperties c1 = revolution(cap, h, h + r, rho);
    const MassProperties c2 = revolution(cap, -h - r, -h, rho);
    const double m = cyl.mass + c1.mass + c2.mass;
    const Vec3 j = cyl.inertia + c1.inertia + c2.inertia;
    const MassProperties mp = capsule_mass_properties(r, h, rho);
    EXPECT_NEAR(mp.mass, m, 1e-8 * m);
    for (int k = 0; k < 3; ++k) EXPECT_NEAR(mp.inertia[k], j[k], 1e-8 * j[k]) << "axis " << k;
}

TEST(Shapes, EllipsoidMassPropertiesMatchSliceIntegration) {
    // Slices across x are ellipses with semi-axes b', c' = (b, c)·√(1 − x²/a²): mass
    // ρ π b'c' dx, J_x += m (b'² + c'²)/4, J_y += m (c'²/4 + x²), J_z += m (b'²/4 + x²).
    const Vec3 s(0.3, 0.2, 0.1);
    const double rho = 800.0;
    const int n = 200000;
    auto k = [&](double x) { return std::sqrt(std::max(0.0, 1.0 - x * x / (s.x() * s.x()))); };
    auto dm = [&](double x) { return rho * kPi * s.y() * s.z() * k(x) * k(x); };
    // The slice integrands are polynomials in x (k² is): Simpson is exact up to round-off.
    const double m = simpson(dm, -s.x(), s.x(), n);
    const double jx = simpson([&](double x) { return dm(x) * 0.25 * (s.y() * s.y() + s.z() * s.z()) * k(x) * k(x); }, -s.x(), s.x(), n);
    const double jy = simpson([&](double x) { return dm(x) * (0.25 * s.z() * s.z() * k(x) * k(x) + x * x); }, -s.x(), s.x(), n);
    const double jz = simpson([&](double x) { return dm(x) * (0.25 * s.y() * s.y() * k(x) * k(x) + x * x); }, -s.x(), s.x(), n);
    const MassProperties mp = ellipsoid_mass_properties(s, rho);
    EXPECT_NEAR(mp.mass, m, 1e-8 * m);
    EXPECT_NEAR(mp.inertia.x(), jx, 1e-8 * jx);
    EXPECT_NEAR(mp.inertia.y(), jy, 1e-8 * jy);
    EXPECT_NEAR(mp.inertia.z(), jz, 1e-8 * jz);
}

TEST(Shapes, DegenerateCapsuleAndEllipsoidAreSpheres) {
    const double r = 0.07, rho = 2500.0;
    const MassProperties sphere = sphere_mass_properties(r, rho);
    const MassProperties cap = capsule_mass_properties(r, 0.0, rho);
    const MassProperties ell = ellipsoid_mass_properties(Vec3::Constant(r), rho);
    for (const MassProperties& mp : {cap, ell}) {
        EXPECT_NEAR(mp.mass, sphere.mass, 1e-12 * sphere.mass);
        for (int k = 0; k < 3; ++k) EXPECT_NEAR(mp.inertia[k], sphere.inertia[k], 1e-12 * sphere.inertia[k]);
    }
}

TEST(Shapes, PermuteMovesShapeParameters) {
    BodyStore b;
    b.add_sphere(0, Vec3(0, 0, 0), 0.1, 1000.0, 0);
    b.add_capsule(1, Vec3(1, 0, 0), 0.05, 0.2, 1000.0, 0);
    b.add_ellipsoid(2, Vec3(2, 0, 0), Vec3(0.3, 0.2, 0.1), 1000.0, 0);
    b.permute({2, 0, 1});
    EXPECT_EQ(b.id[0], 2u);
    EXPECT_EQ(b.shape[0], Shape::Ellipsoid);
    EXPECT_EQ(b.shape_param[0], Vec3(0.3, 0.2, 0.1));
    EXPECT_EQ(b.shape[2], Shape::Capsule);
    EXPECT_EQ(b.shape_param[2], Vec3(0.05, 0.2, 0.0));
    EXPECT_DOUBLE_EQ(b.radius[2], 0.25);
}

// ---------------------------------------------------------------------------------------
// Geometry against brute force

/// Minimises f over the box [lo, hi] ⊂ R^d by a grid of `n` points per axis, then refines
/// around the best point with the window shrunk 5× per round. Returns the minimum.
template <int D>
double brute_min(const std::function<double(const std::array<double, D>&)>& f,
                 std::array<double, D> lo, std::array<double, D> hi, int n, int rounds) {
    const std::array<double, D> lo0 = lo, hi0 = hi;
    std::array<double, D> best{};
    double fbest = INFINITY;
    for (int round = 0; round < rounds; ++round) {
        std::array<int, D> idx{};
        while (true) {
            std::array<double, D> x;
            for (int k = 0; k < D; ++k) x[k] = lo[k] + (hi[k] - lo[k]) * idx[k] / (n - 1);
            const double v = f(x);
            if (v < fbest) fbest = v, best = x;
            int k = 0;
            while (k < D && ++idx[k] == n) idx[k++] = 0;
            if (k == D) break;
        }
        for (int k = 0; k < D; ++k) {
            const double w = (hi[k] - lo[k]) / 5.0;
            lo[k] = std::max(lo0[k], best[k] - w / 2.0);
            hi[k] = std::min(hi0[k], best[k] + w / 2.0);
        }
    }
    return fbest;
}

Quat random_rotation(std::mt19937_64& rng) {
    std::normal_distribution<double> g;
    Quat q(g(rng), g(rng), g(rng), g(rng));
    q.normalize();
    return q;
}

TEST(Shapes, CapsuleSphereAndCapsuleCapsuleGapsMatchBruteForce) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-0.6, 0.6);
    const double rc = 0.05, hc = 0.25, rs = 0.08;
    int tested = 0;
    for (int trial = 0; trial < 40; ++trial) {
        BodyStore b;
        b.add_capsule(0, Vec3(0.1, -0.2, 0.3), rc, hc, 1000.0, 0, Vec3::Zero(), Vec3::Zero(),
                      random_rotation(rng));
        const Vec3 s(0.1 + u(rng), -0.2 + u(rng), 0.3 + u(rng));
        b.add_sphere(1, s, rs, 1000.0, 0);
        b.add_capsule(2, Vec3(0.1 + u(rng), -0.2 + u(rng), 0.3 + u(rng)), 0.03, 0.15, 1000.0, 0,
                      Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        const Vec3 a0 = b.orientation[0] * Vec3::UnitX(), a2 = b.orientation[2] * Vec3::UnitX();
        ShapeContact c[kMaxShapeContacts];

        // capsule (A) – sphere (B), then the swapped order
        const double brute = brute_min<1>(
            [&](const std::array<double, 1>& t) { return (b.position[0] + t[0] * a0 - s).norm(); },
            {-hc}, {hc}, 2001, 12) - rc - rs;
        ASSERT_EQ(collide_pair(b, 0, 1, INFINITY, c), 1);
        EXPECT_NEAR(c[0].gap, brute, 1e-6);
        const Vec3 n01 = c[0].normal;
        // the point lies midway across the gap along n from the capsule's surface
        EXPECT_NEAR((s - c[0].point).dot(n01), rs + 0.5 * c[0].gap, 1e-9);
        ASSERT_EQ(collide_pair(b, 1, 0, INFINITY, c), 1);
        EXPECT_NEAR(c[0].gap, brute, 1e-6);
        EXPECT_NEAR((c[0].normal + n01).norm(), 0.0, 1e-12) << "normal from A to B";

        // capsule – capsule
        const double brute2 = brute_min<2>(
            [&](const std::array<double, 2>& t) {
                return (b.position[0] + t[0] * a0 - b.position[2] - t[1] * a2).norm();
            },
            {-hc, -0.15}, {hc, 0.15}, 201, 12) - rc - 0.03;
        const int k = collide_pair(b, 0, 2, INFINITY, c);
        ASSERT_GE(k, 1);
        EXPECT_NEAR(c[0].gap, brute2, 1e-6);
        ++tested;
    }
    EXPECT_EQ(tested, 40);
}

TEST(Shapes, ParallelCapsulesTouchAtBothEndsOfTheirOverlap) {
    BodyStore b;
    b.add_capsule(0, Vec3(0, 0, 0), 0.05, 0.25, 1000.0, 0);
    b.add_capsule(1, Vec3(0.1, 0, 0.09), 0.05, 0.25, 1000.0, 0);
    ShapeContact c[kMaxShapeContacts];
    ASSERT_EQ(collide_pair(b, 0, 1, INFINITY, c), 2);
    for (int k = 0; k < 2; ++k) {
        EXPECT_NEAR(c[k].gap, -0.01, 1e-12);
        EXPECT_NEAR((c[k].normal - Vec3::UnitZ()).norm(), 0.0, 1e-12);
    }
    EXPECT_NEAR(c[0].point.x(), -0.15, 1e-12);
    EXPECT_NEAR(c[1].point.x(), 0.25, 1e-12);
    EXPECT_NE(c[0].feature, c[1].feature);
}

// Two capsules side by side at 2° (issue 22's survey: a poured bed of capsules overlapped by
// 17 % of their diameter where one pair's far ends swung through each other, since only
// pairs within 0.06° of parallel got two contacts). The closest pair is at one end; the
// far end gets a second contact, the first end pair a quarter radius away from it
// (capsule 0's end; capsule 1's end lies within that of it along capsule 0): the exact distance of
// capsule 0's end sphere to capsule 1, kept when it is within the envelope. Crossed
// capsules keep one.
TEST(Shapes, CapsulesAtASmallAngleTouchAtTheFarEndToo) {
    const double r = 0.05, h = 0.25, theta = 2.0 * M_PI / 180.0;
    const double zc = 2.0 * r + h * std::sin(theta) - 1e-3;  // the near end 1 mm deep
    BodyStore b;
    b.add_capsule(0, Vec3(0, 0, 0), r, h, 1000.0, 0);
    b.add_capsule(1, Vec3(0, 0, zc), r, h, 1000.0, 0, Vec3::Zero(), Vec3::Zero(),
                  Quat(Eigen::AngleAxisd(-theta, Vec3::UnitY())));  // axis (cos θ, 0, sin θ)
    const Vec3 a1 = b.orientation[1] * Vec3::UnitX();
    ASSERT_NEAR(a1.z(), std::sin(theta), 1e-12);
    ShapeContact c[kMaxShapeContacts];
    // the closest pair, the far end, and (near parallel) the inner points within the
    // envelope: NearParallelCapsulesGetInnerContacts
    ASSERT_GE(collide_pair(b, 0, 1, 0.02, c), 2);
    EXPECT_NEAR(c[0].gap, -1e-3, 1e-12);
    EXPECT_NEAR(c[0].point.x(), -h * std::cos(theta), 1e-9);
    // capsule 0's far end sphere against capsule 1
    const Vec3 end(h, 0, 0);
    const double brute = brute_min<1>(
        [&](const std::array<double, 1>& t) { return (b.position[1] + t[0] * a1 - end).norm(); },
        {-h}, {h}, 2001, 12) - 2.0 * r;
    EXPECT_NEAR(c[1].gap, brute, 1e-9);
    EXPECT_GT(c[1].gap, c[0].gap);
    EXPECT_GT(c[1].point.x(), 0.9 * h);
    EXPECT_NE(c[0].feature, c[1].feature);
    // outside the envelope the far end is left out, and every inner point farther still
    const int near = collide_pair(b, 0, 1, 0.5 * brute, c);
    for (int j = 1; j < near; ++j) EXPECT_GE(c[j].feature >> kSubFeatureShift, 5u);
    for (int j = 1; j < near; ++j) EXPECT_LE(c[j].gap, 0.5 * brute);
    // crossed at right angles: one contact, however wide the envelope short of the ends
    b.orientation[1] = Quat(Eigen::AngleAxisd(0.5 * M_PI, Vec3::UnitZ()));
    b.position[1] = Vec3(0, 0, 2.0 * r - 1e-3);
    EXPECT_EQ(collide_pair(b, 0, 1, 0.1, c), 1);
}

// Two capsules within 45° of parallel also get inner points: a quarter, half and three
// quarters of each segment against the other capsule. The pair of the capsule bed (r = 1
// mm, 4 mm long) that passed 61 µm into each other at the middle in one step crossed at
// 18°, its closest pair at a fifth of one capsule and every end clear. Here: crossing at
// 18°, 10 µm apart, near one end. Every contact's gap is the exact distance of its sphere
// (on either axis) to the other capsule, found by brute force, so none forbids a legal
// motion; the points along capsule 0 are at most a quarter of its length apart, where
// the closest pair and the ends alone left half its length bare; crossed at 60°, none.
TEST(Shapes, NearParallelCapsulesGetInnerContacts) {
    const double r = 1e-3, h = 2e-3, theta = 18.0 * M_PI / 180.0;
    BodyStore b;
    b.add_capsule(0, Vec3::Zero(), r, h, 2500.0, 0);
    const Vec3 cross(-0.6 * h, 0, 2.0 * r + 10e-6);  // where capsule 1 crosses over capsule 0
    const Quat q1(Eigen::AngleAxisd(theta, Vec3::UnitZ()));
    const Vec3 a1 = q1 * Vec3::UnitX();
    b.add_capsule(1, cross + 0.3 * h * a1, r, h, 2500.0, 0, Vec3::Zero(), Vec3::Zero(), q1);
    const double envelope = 1e-3;
    ShapeContact c[kMaxShapeContacts];
    const int k = collide_pair(b, 0, 1, envelope, c);
    ASSERT_GE(k, 5);
    EXPECT_NEAR(c[0].gap, 10e-6, 1e-9);
    int inner = 0;
    std::vector<double> along;  // the contacts' places along capsule 0's axis
    for (int j = 0; j < k; ++j) {
        const uint32_t f = c[j].feature >> kSubFeatureShift;
        inner += f >= 5 ? 1 : 0;
        // the sphere of this contact: a point of capsule 0's axis (sub-features 0, 1, 2, 5-7)
        // or of capsule 1's (3, 4, 8-10), the other end of the pair its closest point
        const Vec3 x0 = c[j].point - (r + 0.5 * c[j].gap) * c[j].normal;
        const Vec3 x1 = c[j].point + (r + 0.5 * c[j].gap) * c[j].normal;
        const bool on_0 = f <= 2 || (f >= 5 && f <= 7);
        const Vec3 centre = on_0 ? x0 : x1;
        const Vec3 other_c = on_0 ? b.position[1] : b.position[0];
        const Vec3 other_a = on_0 ? a1 : Vec3::UnitX();
        const double brute = brute_min<1>(
            [&](const std::array<double, 1>& t) { return (other_c + t[0] * other_a - centre).norm(); },
            {-h}, {h}, 2001, 12) - 2.0 * r;
        EXPECT_NEAR(c[j].gap, brute, 1e-9) << "contact " << j << ", sub-feature " << f;
        EXPECT_LE(c[j].gap, envelope);
        along.push_back(std::clamp(x0.x(), -h, h));
    }
    EXPECT_GE(inner, 2);
    along.push_back(-h);
    along.push_back(h);
    std::sort(along.begin(), along.end());
    for (std::size_t j = 1; j < along.size(); ++j) EXPECT_LE(along[j] - along[j - 1], 0.5 * h + 1e-12);
    // crossed at 60°: the closest pair and whichever ends are near, no inner point
    b.orientation[1] = Quat(Eigen::AngleAxisd(M_PI / 3.0, Vec3::UnitZ()));
    b.position[1] = cross;
    const int crossed = collide_pair(b, 0, 1, envelope, c);
    for (int j = 0; j < crossed; ++j) EXPECT_LT(c[j].feature >> kSubFeatureShift, 5u);
}

// The pair of the survey's capsule bed whose overlap reached 269 µm (13 % of the diameter),
// as it was a step before (capsules 600 and 1163, r = 1 mm, 4 mm long, quaternions w, x,
// y, z): the closest pair is 600's end against 1163's side, 96 µm apart, and 1163's end,
// about 0.2 mm above 600's middle and spinning at 300 rad/s, went through it in the next
// step. Its end pair is among the contacts, with the exact gap of 1163's end sphere to
// capsule 600 (one more contact, the nearest end pair, was 600's far end and let a pair
// like it through at 11 % of the diameter).
TEST(Shapes, CapsuleEndSwingingOntoAnotherCapsuleHasItsContact) {
    const double r = 0.001, h = 0.002;
    BodyStore b;
    b.add_capsule(600, Vec3(0.01711903176568526, 0.020062098868836118, 0.004689101481199774), r, h, 2500.0, 0,
                  Vec3::Zero(), Vec3::Zero(),
                  Quat(-0.8998410631894086, 0.3851545836415165, 0.04946190058987658, 0.19873481850979755).normalized());
    b.add_capsule(1163, Vec3(0.018502941256300486, 0.020824374770643538, 0.006756768968842311), r, h, 2500.0, 0,
                  Vec3::Zero(), Vec3::Zero(),
                  Quat(0.05323812635650682, -0.240280086041592, -0.6684455935576319, 0.7018629998847917).normalized());
    const Vec3 a0 = b.orientation[0] * Vec3::UnitX(), a1 = b.orientation[1] * Vec3::UnitX();
    ShapeContact c[kMaxShapeContacts];
    const int k = collide_pair(b, 0, 1, 1e-3, c);
    ASSERT_GE(k, 2);
    EXPECT_NEAR(c[0].gap, 96.2e-6, 0.5e-6);
    // which end of 1163 is the nearer to capsule 600, and its exact gap
    double best = INFINITY;
    for (double sign : {-1.0, 1.0}) {
        const Vec3 end = b.position[1] + sign * h * a1;
        best = std::min(best, brute_min<1>([&](const std::array<double, 1>& t) {
            return (b.position[0] + t[0] * a0 - end).norm();
        }, {-h}, {h}, 2001, 12) - 2.0 * r);
    }
    EXPECT_LT(best, 0.3e-3);
    int found = 0;
    for (int j = 1; j < k; ++j) found += std::abs(c[j].gap - best) < 1e-9 ? 1 : 0;
    EXPECT_EQ(found, 1) << "1163's end has its own contact";
}

TEST(Shapes, EllipsoidSphereGapMatchesBruteForce) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    const Vec3 axes(0.3, 0.2, 0.1);
    const double rs = 0.05;
    int inside = 0;
    for (int trial = 0; trial < 40; ++trial) {
        BodyStore b;
        const Quat q = random_rotation(rng);
        b.add_ellipsoid(0, Vec3(0.2, 0.1, -0.3), axes, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), q);
        // Spheres around the ellipsoid: far, near and (some) with the centre just inside.
        Vec3 y(u(rng), u(rng), u(rng));
        if (trial % 4 == 0) y = 0.97 * y.normalized().cwiseProduct(axes);  // just inside
        const Vec3 s = b.position[0] + q * y;
        b.add_sphere(1, s, rs, 1000.0, 0);
        const bool in = y.cwiseQuotient(axes).squaredNorm() < 1.0;
        inside += in;
        // Brute force: distance from y to the surface point (a sinθ cosφ, b sinθ sinφ, c cosθ).
        const double dist = brute_min<2>(
            [&](const std::array<double, 2>& t) {
                const Vec3 p(axes.x() * std::sin(t[0]) * std::cos(t[1]),
                             axes.y() * std::sin(t[0]) * std::sin(t[1]), axes.z() * std::cos(t[0]));
                return (p - y).norm();
            },
            {0.0, -kPi}, {kPi, kPi}, 151, 12);
        const double brute = (in ? -dist : dist) - rs;
        ShapeContact c[kMaxShapeContacts];
        ASSERT_EQ(collide_pair(b, 0, 1, INFINITY, c), 1);
        EXPECT_NEAR(c[0].gap, brute, 1e-6) << "trial " << trial << (in ? " (inside)" : "");
        // The surface point (point − gap/2 n) lies on the ellipsoid, the normal is its
        // outward normal, and the sphere centre is on the normal line.
        const Vec3 surf = q.conjugate() * (c[0].point - 0.5 * c[0].gap * c[0].normal - b.position[0]);
        EXPECT_NEAR(surf.cwiseQuotient(axes).squaredNorm(), 1.0, 1e-9);
        const Vec3 grad = surf.cwiseQuotient(axes.cwiseProduct(axes)).normalized();
        EXPECT_NEAR((q * grad - c[0].normal).norm(), 0.0, 1e-9);
        EXPECT_NEAR((s - (b.position[0] + q * surf)).cross(c[0].normal).norm(), 0.0, 1e-9);
        ShapeContact d[kMaxShapeContacts];
        ASSERT_EQ(collide_pair(b, 1, 0, INFINITY, d), 1);
        EXPECT_NEAR(d[0].gap, c[0].gap, 1e-15);
        EXPECT_NEAR((d[0].normal + c[0].normal).norm(), 0.0, 1e-15);
    }
    EXPECT_GT(inside, 5);
}

// A capsule and an ellipsoid at random poses, apart and overlapping: the gap is the least
// signed distance from the capsule's core segment to the ellipsoid, less r (brute force:
// 2,001 points along the segment, each point's distance exact by ellipsoid_closest_point,
// then 2,001 more around the best, spaced 1e-6 of the segment). Where the core crosses the
// ellipsoid's medial disc the distance has a crease, which sampling finds only to its
// spacing times the slope, so the gap may lie below the brute force by up to 1e-7 m and
// above it by no more than 1e-9 m. Both orders agree; with an envelope below the gap the
// pair gives no contact, and with one above it, its contact.
TEST(Shapes, CapsuleEllipsoidGapMatchesBruteForce) {
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> u(-0.5, 0.5), unit(0.0, 1.0);
    const Vec3 axes(0.3, 0.2, 0.1);
    const double rc = 0.05;
    int overlapping = 0;
    for (int trial = 0; trial < 60; ++trial) {
        BodyStore b;
        const Quat q = random_rotation(rng);
        b.add_ellipsoid(0, Vec3(0.2, 0.1, -0.3), axes, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), q);
        const double half = trial % 10 == 0 ? 0.0 : 0.3 * unit(rng);
        Vec3 y(u(rng), u(rng), u(rng));
        if (trial % 3 == 0) y = 0.9 * y.normalized().cwiseProduct(axes);  // centre just inside
        b.add_capsule(1, b.position[0] + q * y, rc, half, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        const Vec3 a = b.orientation[1] * Vec3::UnitX();
        const auto signed_distance = [&](double t) {
            Vec3 point, normal;
            return ellipsoid_closest_point(axes, q.conjugate() * (b.position[1] + t * a - b.position[0]), point, normal);
        };
        double best = 0.0, brute = std::numeric_limits<double>::infinity();
        const auto scan = [&](double lo, double hi) {
            for (int k = 0; k <= 2000; ++k) {
                const double t = lo + (hi - lo) * k / 2000.0;
                const double d = signed_distance(t);
                if (d < brute) {
                    brute = d;
                    best = t;
                }
            }
        };
        scan(-half, half);
        const double step = half / 1000.0;
        scan(std::max(-half, best - step), std::min(half, best + step));
        brute -= rc;
        overlapping += brute < 0.0;
        ShapeContact c[kMaxShapeContacts], d[kMaxShapeContacts];
        ASSERT_EQ(collide_pair(b, 0, 1, INFINITY, c), 1);
        EXPECT_LE(c[0].gap, brute + 1e-9) << "trial " << trial;
        EXPECT_GE(c[0].gap, brute - 1e-7) << "trial " << trial;
        ASSERT_EQ(collide_pair(b, 1, 0, INFINITY, d), 1);
        EXPECT_NEAR(d[0].gap, c[0].gap, 1e-15);
        EXPECT_NEAR((d[0].normal + c[0].normal).norm(), 0.0, 1e-15);
        EXPECT_EQ(collide_pair(b, 0, 1, c[0].gap - 1e-6, d), 0) << "trial " << trial;
        EXPECT_EQ(collide_pair(b, 0, 1, c[0].gap + 1e-6, d), 1) << "trial " << trial;
    }
    EXPECT_GT(overlapping, 10);
    EXPECT_LT(overlapping, 50);
}

// Two ellipsoids at random orientations and distances (semi-axes up to 3:1). Apart, the gap
// is the least signed distance from a point of A's surface to B (brute force over A's
// surface angles, each point's distance to B exact: ellipsoid_closest_point). Overlapping,
// B moved along the normal by the overlap and 1 mm more is 1 mm apart by the same brute
// force: the overlap is the translation that parts them. Both orders agree, and two
// spheres written as ellipsoids give the sphere formula.
TEST(Shapes, EllipsoidEllipsoidGapMatchesBruteForce) {
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const Vec3 axes_a(0.3, 0.15, 0.1), axes_b(0.12, 0.2, 0.08);
    // brute force: least signed distance from A's surface to B
    const auto apart = [&](const BodyStore& b) {
        return brute_min<2>(
            [&](const std::array<double, 2>& t) {
                const Vec3 y(axes_a.x() * std::sin(t[0]) * std::cos(t[1]), axes_a.y() * std::sin(t[0]) * std::sin(t[1]),
                             axes_a.z() * std::cos(t[0]));
                const Vec3 p = b.position[0] + b.orientation[0] * y;
                Vec3 surf, n;
                return ellipsoid_closest_point(axes_b, b.orientation[1].conjugate() * (p - b.position[1]), surf, n);
            },
            {0.0, -kPi}, {kPi, kPi}, 121, 14);
    };
    int overlapping = 0;
    for (int trial = 0; trial < 30; ++trial) {
        BodyStore b;
        b.add_ellipsoid(0, Vec3(0.1, -0.2, 0.3), axes_a, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        // centres 0.2–0.6 m apart: from deep overlaps to well apart
        const Vec3 dir = Vec3(u(rng), u(rng), u(rng)).normalized();
        const double dist = 0.2 + 0.4 * double(trial) / 29.0;
        b.add_ellipsoid(1, b.position[0] + dist * dir, axes_b, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        ShapeContact c[kMaxShapeContacts], d[kMaxShapeContacts];
        ASSERT_EQ(collide_pair(b, 0, 1, INFINITY, c), 1);
        ASSERT_EQ(collide_pair(b, 1, 0, INFINITY, d), 1);
        EXPECT_NEAR(d[0].gap, c[0].gap, 1e-12) << "trial " << trial;
        EXPECT_NEAR((d[0].normal + c[0].normal).norm(), 0.0, 1e-9) << "trial " << trial;
        EXPECT_NEAR(c[0].normal.norm(), 1.0, 1e-12);
        if (c[0].gap > 0.0) {
            EXPECT_NEAR(c[0].gap, apart(b), 1e-6) << "trial " << trial;
        } else {
            ++overlapping;
            b.position[1] += (1e-3 - c[0].gap) * c[0].normal;
            EXPECT_NEAR(apart(b), 1e-3, 1e-6) << "trial " << trial << ", overlap " << -c[0].gap;
        }
        // the point lies midway across the gap, on the line of the normal through the
        // support points: A's surface at point − gap/2 n has outward normal n
        const Vec3 ya = b.orientation[0].conjugate() * (c[0].point - 0.5 * c[0].gap * c[0].normal - b.position[0]);
        EXPECT_NEAR(ya.cwiseQuotient(axes_a).squaredNorm(), 1.0, 1e-9) << "trial " << trial;
        EXPECT_NEAR((b.orientation[0] * ya.cwiseQuotient(axes_a.cwiseProduct(axes_a)).normalized() - c[0].normal).norm(),
                    0.0, 1e-8) << "trial " << trial;
    }
    EXPECT_GT(overlapping, 5);
    // spheres as ellipsoids
    BodyStore s;
    s.add_ellipsoid(0, Vec3::Zero(), Vec3(0.1, 0.1, 0.1), 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
    s.add_ellipsoid(1, Vec3(0.1, 0.2, -0.05), Vec3(0.05, 0.05, 0.05), 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
    ShapeContact c[kMaxShapeContacts];
    ASSERT_EQ(collide_pair(s, 0, 1, INFINITY, c), 1);
    EXPECT_NEAR(c[0].gap, std::sqrt(0.01 + 0.04 + 0.0025) - 0.15, 1e-12);
    EXPECT_NEAR((c[0].normal - s.position[1].normalized()).norm(), 0.0, 1e-9);
}

TEST(Shapes, EllipsoidClosestPointHandlesTheCentreAndAxes) {
    const Vec3 s(0.3, 0.2, 0.1);
    Vec3 p, n;
    EXPECT_NEAR(ellipsoid_closest_point(s, Vec3::Zero(), p, n), -0.1, 1e-15);  // centre
    EXPECT_NEAR(std::abs(p.z()), 0.1, 1e-15);
    EXPECT_NEAR(ellipsoid_closest_point(s, Vec3(1.0, 0, 0), p, n), 0.7, 1e-12);
    EXPECT_NEAR(p.x(), 0.3, 1e-15);
    EXPECT_NEAR((n - Vec3::UnitX()).norm(), 0.0, 1e-15);
}

// ---------------------------------------------------------------------------------------
// Physics

TEST(Shapes, CapsuleLyingOnAPlaneRestsOnItsTwoEnds) {
    const double r = 0.05, hl = 0.2, g = 9.81, h = 1e-3;
    World w = make_world(h, Vec3(0, 0, -g), 1e-10, 1000);
    const uint32_t mat = add_material(w, 1000.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), mat);
    w.bodies.add_capsule(0, Vec3(0, 0, r + 1e-3), r, hl, 1000.0, mat);
    run_steps(w, 400);
    const double m = w.bodies.mass(0);
    const ContactList& c = w.contacts();
    ASSERT_EQ(c.size(), 2u);
    EXPECT_NE(c.feature[0], c.feature[1]);
    double impulse = 0.0;
    for (std::size_t i = 0; i < c.size(); ++i) {
        EXPECT_GT(c.gap[i], -1e-3 * r) << "penetration below 0.1 % of r";
        EXPECT_NEAR(std::abs(c.point[i].x()), hl, 1e-9) << "contacts under the end centres";
        impulse += w.batch().gamma[i][0];
    }
    std::printf("[ capsule  ] at rest: impulse / (m g h) − 1 = %.2e, gaps %.2e %.2e m\n",
                impulse / (m * g * h) - 1.0, c.gap[0], c.gap[1]);
    EXPECT_NEAR(impulse, m * g * h, 1e-6 * m * g * h);
    EXPECT_NEAR(w.batch().gamma[0][0], w.batch().gamma[1][0], 1e-6 * m * g * h) << "symmetric";
    EXPECT_LT(w.bodies.velocity[0].norm(), 1e-6);
    EXPECT_LT(w.bodies.angular_velocity[0].norm(), 1e-6);
    EXPECT_NEAR(w.bodies.position[0].z(), r, 1e-3 * r);
}

TEST(Shapes, TiltedCapsuleLandsOnItsLowerEndFirst) {
    const double r = 0.05, hl = 0.25, g = 9.81, h = 1e-3, tilt = 30.0 * kPi / 180.0;
    World w = make_world(h, Vec3(0, 0, -g), 1e-10, 500);
    const uint32_t mat = add_material(w, 1000.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), mat);
    // Rotation by +tilt about y takes the body +x end down: it is the lower end (feature 0).
    const Quat q(Eigen::AngleAxisd(tilt, Vec3::UnitY()));
    const double z0 = 0.5;
    w.bodies.add_capsule(0, Vec3(0, 0, z0), r, hl, 1000.0, mat, Vec3::Zero(), Vec3::Zero(), q);
    const double drop = z0 - hl * std::sin(tilt) - r;  // height of the lowest point
    const double t_hit = std::sqrt(2.0 * drop / g);
    for (int k = 1; k < 1000; ++k) {
        ASSERT_TRUE(w.step().ok);
        const ContactList& c = w.contacts();
        int pushing = -1;
        for (std::size_t i = 0; i < c.size(); ++i)
            if (w.batch().gamma[i][0] > 0.0) pushing = int(i);
        if (pushing < 0) continue;
        const double t = k * h;
        std::printf("[ capsule  ] first impulse at t = %.4f s, free fall of the lowest point %.4f s\n",
                    t, t_hit);
        EXPECT_NEAR(t, t_hit, h) << "first impulse at the free-fall time of the lowest point";
        EXPECT_EQ(c.feature[pushing] >> kSubFeatureShift, 0u) << "the +x end is the lower one";
        EXPECT_GT(c.point[pushing].x(), 0.0);
        for (std::size_t i = 0; i < c.size(); ++i)
            if (int(i) != pushing) {
                EXPECT_EQ(w.batch().gamma[i][0], 0.0);
            }
        return;
    }
    FAIL() << "the capsule never touched the plane";
}

double ellipsoid_rest_height(const Quat& q, const Vec3& axes, double& speed) {
    const double g = 9.81, h = 1e-3;
    World w = make_world(h, Vec3(0, 0, -g), 1e-10, 500);
    const uint32_t mat = add_material(w, 1000.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), mat);
    const Vec3 along_z = (q.conjugate() * Vec3::UnitZ()).cwiseAbs().cwiseProduct(axes);
    w.bodies.add_ellipsoid(0, Vec3(0, 0, along_z.norm() + 1e-3), axes, 1000.0, mat,
                           Vec3::Zero(), Vec3::Zero(), q);
    run_steps(w, 500);
    speed = w.bodies.velocity[0].norm() + w.bodies.angular_velocity[0].norm();
    std::printf("[ ellipsoid] rest height / semi-axis − 1 = %.2e, speed %.1e\n",
                w.bodies.position[0].z() / along_z.norm() - 1.0, speed);
    return w.bodies.position[0].z();
}

TEST(Shapes, EllipsoidRestsAtTheHeightOfItsVerticalSemiAxis) {
    const Vec3 axes(0.12, 0.06, 0.04);
    double speed = 0.0;
    // long axis horizontal (x): rests on c
    EXPECT_NEAR(ellipsoid_rest_height(Quat::Identity(), axes, speed), axes.z(), 1e-4 * axes.z());
    EXPECT_LT(speed, 1e-6);
    // long axis vertical: rotated 90° about y (body x → world −z), balanced on its tip
    const Quat up(Eigen::AngleAxisd(0.5 * kPi, Vec3::UnitY()));
    EXPECT_NEAR(ellipsoid_rest_height(up, axes, speed), axes.x(), 1e-4 * axes.x());
    EXPECT_LT(speed, 1e-6);
    // middle axis vertical
    const Quat mid(Eigen::AngleAxisd(0.5 * kPi, Vec3::UnitX()));
    EXPECT_NEAR(ellipsoid_rest_height(mid, axes, speed), axes.y(), 1e-4 * axes.y());
    EXPECT_LT(speed, 1e-6);
}

TEST(Shapes, EllipsoidAndCapsuleStayInsideABox) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-8, 300);
    const uint32_t mat = add_material(w, 1000.0, 0.3);
    add_box(w, Vec3(-0.3, -0.3, 0.0), Vec3(0.3, 0.3, 1.0), mat);
    w.bodies.add_capsule(0, Vec3(0.0, 0.0, 0.3), 0.04, 0.2, 1000.0, mat, Vec3(2.0, 1.0, 0.0),
                         Vec3(0.0, 3.0, 5.0));
    w.bodies.add_ellipsoid(1, Vec3(0.0, 0.0, 0.7), Vec3(0.1, 0.06, 0.05), 1000.0, mat,
                           Vec3(-1.5, 2.0, 0.0), Vec3(4.0, 0.0, 2.0));
    std::array<WallFace, 6> faces;
    wall_faces(w.walls[0], 0.0, faces);
    double worst = 0.0;
    for (int k = 0; k < 1500; ++k) {
        ASSERT_TRUE(w.step().ok);
        for (std::size_t i = 0; i < 2; ++i)
            for (uint32_t f = 0; f < 6; ++f) {
                ShapeContact c[kMaxShapeContacts];
                const int n = collide_face(w.bodies, i, faces[f], f, INFINITY, c);
                for (int j = 0; j < n; ++j) worst = std::min(worst, c[j].gap);
            }
    }
    EXPECT_GT(worst, -2e-3) << "penetration into a box face";
    EXPECT_LT(w.bodies.position[0].z(), 0.2);
    EXPECT_LT(w.bodies.position[1].z(), 0.2);
}

TEST(Shapes, StewartTrinkleSpinningRodFirstImpact) {
    // Rod: capsule of length 0.5 m between end centres, end radius 0.05 m, mass 1 kg,
    // transverse inertia 0.002 kg m², tilted 30° (+x end up), spinning at 4 rad/s so the
    // +x end keeps rising, centre 1 m above the plane z = 0, μ = 0.6.
    const std::string scene = std::string("[simulation]\ndt = 0.005\nduration = 1.0\n") +
                              kSpinningRodBodies;
    Scene s = parse_scene(scene, "mem/rod.toml");
    World& w = s.world;
    ASSERT_EQ(w.bodies.size(), 1u);
    EXPECT_DOUBLE_EQ(w.bodies.mass(0), 1.0);
    EXPECT_DOUBLE_EQ(1.0 / w.bodies.inv_inertia[0].y(), 0.002);
    // world ω = (0, −4, 0) stored in the body frame: the rotation is about y, so unchanged
    EXPECT_NEAR((w.bodies.orientation[0] * w.bodies.angular_velocity[0] - Vec3(0, -4, 0)).norm(), 0.0, 1e-12);
    // The +x end starts 0.125 m above the centre.
    EXPECT_NEAR((w.bodies.orientation[0] * Vec3::UnitX()).z(), 0.5, 1e-12);

    // Ballistic reference: the lowest end (the −x end, going down) reaches the plane when
    // 1 − g t²/2 − 0.25 |sin(30° + 4t)| − 0.05 = 0.
    auto lowest = [](double t) { return 1.0 - 0.5 * 9.81 * t * t - 0.25 * std::abs(std::sin(kPi / 6 + 4.0 * t)) - 0.05; };
    double lo = 0.2, hi = 0.6;
    for (int k = 0; k < 100; ++k) (lowest(0.5 * (lo + hi)) > 0.0 ? lo : hi) = 0.5 * (lo + hi);
    const double t_ballistic = 0.5 * (lo + hi);

    double t_impact = -1.0;
    for (int k = 1; k <= 200 && t_impact < 0.0; ++k) {
        ASSERT_TRUE(w.step().ok);
        for (std::size_t i = 0; i < w.contacts().size(); ++i)
            if (w.batch().gamma[i][0] > 0.0) t_impact = w.time;
    }
    ASSERT_GT(t_impact, 0.0) << "no impact within 1 s";
    std::printf("[ rod      ] first impulse at t = %.4f s (ballistic contact %.4f s)\n", t_impact,
                t_ballistic);
    EXPECT_NEAR(t_impact, 0.383, 0.01);
    EXPECT_NEAR(t_impact, t_ballistic, 0.005 + 1e-9) << "within one step of the ballistic time";
}

// A clump against a capsule or an ellipsoid, at random poses, the clump as body A or B:
// one contact per sphere of the clump (infinite envelope), each with that sphere's gap by
// brute force: the capsule's core at 20,001 points (1e-9 m), the ellipsoid's surface on a
// 400 × 800 grid of angles (its sampled least distance is off by at most s (π/400)²/2 ≈
// 4e-7 m for s ≤ 12 mm: 1e-6 m). The contact lies on the line through the sphere's centre
// along the normal, r_k + Φ/2 from it, and the normal points from A to B.
TEST(Shapes, ClumpsMeetCapsulesAndEllipsoidsSphereBySphereAsBruteForceSays) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::normal_distribution<double> g;
    std::vector<Vec3> grid;  // unit-sphere grid for the ellipsoid's surface
    for (int i = 0; i <= 400; ++i)
        for (int j = 0; j < 800; ++j) {
            const double th = kPi * i / 400.0, ph = 2.0 * kPi * j / 800.0;
            grid.emplace_back(std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th));
        }
    int checked = 0;
    for (int trial = 0; trial < 24; ++trial) {
        const bool ellipsoid = trial % 2 == 1, clump_a = trial % 4 < 2;
        BodyStore b;
        std::vector<Vec3> centres;
        std::vector<double> radii;
        for (int k = 0; k < 3; ++k) {
            centres.emplace_back(0.006 * g(rng), 0.006 * g(rng), 0.006 * g(rng));
            radii.push_back(0.003 + 0.003 * unit(rng));
        }
        const uint32_t t = b.clumps.add(centres, radii);
        const Vec3 other = 0.03 * Vec3(g(rng), g(rng), g(rng)).normalized();
        const auto add_clump = [&](uint64_t id) {
            b.add_clump(id, Vec3::Zero(), t, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        };
        const auto add_other = [&](uint64_t id) {
            if (ellipsoid)
                b.add_ellipsoid(id, other, Vec3(0.004 + 0.008 * unit(rng), 0.004 + 0.008 * unit(rng), 0.004 + 0.008 * unit(rng)),
                                1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
            else
                b.add_capsule(id, other, 0.002 + 0.003 * unit(rng), 0.015 * unit(rng), 1000.0, 0, Vec3::Zero(),
                              Vec3::Zero(), random_rotation(rng));
        };
        if (clump_a) {
            add_clump(0);
            add_other(1);
        } else {
            add_other(0);
            add_clump(1);
        }
        const std::size_t cl = clump_a ? 0 : 1, o = clump_a ? 1 : 0;
        std::vector<ShapeContact> c;
        const int m = collide_pair(b, 0, 1, kInf, c);
        ASSERT_EQ(m, 3) << "trial " << trial;
        const ClumpTable& table = b.clumps;
        const uint32_t first = table.begin(b.clump_of(cl));
        for (const ShapeContact& k : c) {
            const uint32_t sphere = k.feature >> kSubFeatureShift;
            ASSERT_LT(sphere, 3u);
            const Vec3 ck = b.position[cl] + b.orientation[cl] * table.centre[first + sphere];
            const double rk = table.radius[first + sphere];
            double brute = kInf;
            if (ellipsoid) {
                const Vec3& s = b.shape_param[o];
                const Mat3 rot = b.orientation[o].toRotationMatrix();
                if ((rot.transpose() * (ck - b.position[o])).cwiseQuotient(s).norm() <= 1.0) continue;  // centre inside
                for (const Vec3& d : grid) brute = std::min(brute, (ck - b.position[o] - rot * s.cwiseProduct(d)).norm());
                brute -= rk;
            } else {
                const Vec3 a = b.orientation[o] * Vec3::UnitX();
                const double half = b.shape_param[o].y();
                for (int j = 0; j <= 20000; ++j)
                    brute = std::min(brute, (ck - b.position[o] - (-1.0 + j / 10000.0) * half * a).norm());
                brute -= rk + b.shape_param[o].x();
            }
            EXPECT_NEAR(k.gap, brute, ellipsoid ? 1e-6 : 1e-9) << "trial " << trial << " sphere " << sphere;
            const Vec3 from_centre = clump_a ? Vec3(k.point - ck) : Vec3(ck - k.point);
            EXPECT_LT((from_centre - (rk + 0.5 * k.gap) * k.normal).norm(), 1e-9) << "trial " << trial;
            ++checked;
        }
    }
    EXPECT_GE(checked, 60);
}

// Steps `w` to `until` (each step must go through), then expects its largest penetration
// over the run below `deepest` [m] and its kinetic energy below 1e-5 J (issue 22's "at rest").
void expect_settled_within(World& w, double until, double deepest) {
    double worst = 0.0;
    while (w.time < until - 1e-12) {
        const StepStatus st = w.step(until);
        ASSERT_TRUE(st.ok) << st.message;
        worst = std::max(worst, w.diagnostics().contact_infeasibility);
    }
    EXPECT_LT(worst, deepest);
    EXPECT_LT(w.kinetic_energy(), 1e-5);
}

// An ellipsoid resting on another, both long axes horizontal, on a plane: the upper one
// comes to rest at 2 c_A + c_B (its contact on the lower one's top, 1e-4 relative).
TEST(Shapes, EllipsoidRestsOnAnEllipsoid) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-10, 1000);
    const uint32_t mat = add_material(w, 1000.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), mat);
    const Vec3 lower(0.12, 0.06, 0.04), upper(0.08, 0.05, 0.03);
    const Quat turned(Eigen::AngleAxisd(0.7, Vec3::UnitZ()));  // crossing the lower one
    w.bodies.add_ellipsoid(0, Vec3(0, 0, lower.z()), lower, 1000.0, mat);
    w.bodies.add_ellipsoid(1, Vec3(0, 0, 2 * lower.z() + upper.z() + 0.01), upper, 1000.0, mat, Vec3::Zero(),
                           Vec3::Zero(), turned);
    for (int k = 0; k < 800; ++k) ASSERT_TRUE(w.step().ok);
    EXPECT_NEAR(w.bodies.position[1].z(), 2 * lower.z() + upper.z(), 1e-4 * upper.z());
    EXPECT_LT(w.bodies.velocity[1].norm(), 1e-6);
}

// A scene may hold a bed of ellipsoids (each a [[body]]): 60 of them, at random
// orientations, dropped into a box with the defaults, settle without overlapping by more
// than 1 % of the smallest diameter (the quality line's measure: issue 22's bound) and come
// to rest (kinetic energy below 1e-5 J, issue 22's "at rest"), within the bottom 8 cm.
TEST(Shapes, ABedOfEllipsoidsSettles) {
    std::ostringstream bed;
    bed.precision(17);
    bed << "[simulation]\nduration = 2\n[[material]]\nname = \"m\"\ndensity = 1000\nfriction = 0.4\n"
           "[[wall]]\ntype = \"box\"\nmin = [-0.1, -0.1, 0]\nmax = [0.1, 0.1, 1]\nmaterial = \"m\"\n";
    std::mt19937_64 rng(5);
    for (int k = 0; k < 60; ++k) {
        const double x = -0.06 + 0.04 * (k % 4), y = -0.06 + 0.04 * ((k / 4) % 4), z = 0.05 + 0.05 * (k / 16);
        const Quat q = random_rotation(rng);
        bed << "[[body]]\nshape = \"ellipsoid\"\nsemi_axes = [0.018, 0.012, 0.008]\nmaterial = \"m\"\n"
            << "position = [" << x << ", " << y << ", " << z << "]\n"
            << "orientation = [" << q.w() << ", " << q.x() << ", " << q.y() << ", " << q.z() << "]\n";
    }
    Scene scene = parse_scene(bed.str(), "mem/ellipsoids.toml");
    World& w = scene.world;
    expect_settled_within(w, 2.0, 0.01 * 2 * 0.008);
    for (std::size_t i = 0; i < w.bodies.size(); ++i) EXPECT_LT(w.bodies.position[i].z(), 0.08) << "body " << i;
}

/// A scene of glass grains poured for 0.6 s into a 3 × 3 × 20 cm box, up to its
/// [[particles]] entry's shape lines (`grain`) and material; the fill's table follows.
std::string fill_in_a_box(const std::string& grain) {
    return R"([simulation]
duration = 0.6
[[material]]
name = "glass"
density = 2500
friction = 0.5
restitution = 0.3
[[wall]]
type = "box"
min = [-0.015, -0.015, 0.0]
max = [0.015, 0.015, 0.2]
material = "glass"
[[particles]]
)" + grain + "material = \"glass\"\n";
}

// [[particles]] fills of ellipsoids: a random fill turns each at random and spaces their
// bounding spheres, and its pour settles with the defaults (largest overlap under 1 % of
// the smallest diameter, at rest); a lattice keeps the world's axes; `volume_fraction`,
// which counts sphere volumes, is refused at its key.
TEST(Shapes, EllipsoidFillsArePlacedAndPoured) {
    const std::string head = fill_in_a_box("shape = \"ellipsoid\"\nsemi_axes = [0.003, 0.002, 0.0015]\n");
    Scene scene = parse_scene(head + "random = { min = [-0.011, -0.011, 0.004], max = [0.011, 0.011, 0.1], "
                                     "count = 150, seed = 3 }\n",
                              "mem/ellipsoid_fill.toml");
    World& w = scene.world;
    ASSERT_EQ(w.bodies.size(), 150u);
    std::size_t turned = 0;
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        ASSERT_EQ(w.bodies.shape[i], Shape::Ellipsoid);
        EXPECT_EQ(w.bodies.shape_param[i], Vec3(0.003, 0.002, 0.0015));
        turned += std::abs(w.bodies.orientation[i].w()) < 0.999;
        for (std::size_t j = 0; j < i; ++j)  // bounding spheres apart
            EXPECT_GE((w.bodies.position[i] - w.bodies.position[j]).norm(), 0.006 * (1 - 1e-9));
    }
    EXPECT_GT(turned, 140u);
    expect_settled_within(w, 0.6, 0.01 * 2 * 0.0015);
    // a lattice keeps the axes
    const Scene lattice = parse_scene(head + "lattice = { min = [-0.01, -0.01, 0.004], max = [0.01, 0.01, 0.02], "
                                             "spacing = [0.0065, 0.0065, 0.0065] }\n",
                                      "mem/ellipsoid_lattice.toml");
    ASSERT_GT(lattice.world.bodies.size(), 8u);
    for (std::size_t i = 0; i < lattice.world.bodies.size(); ++i)
        EXPECT_EQ(lattice.world.bodies.orientation[i].coeffs(), Quat::Identity().coeffs());
    try {
        parse_scene(head + "random = { min = [-0.01, -0.01, 0.004], max = [0.01, 0.01, 0.1], volume_fraction = 0.2, "
                           "seed = 1 }\n",
                    "mem/fraction.toml");
        FAIL() << "accepted";
    } catch (const SceneError& e) {
        EXPECT_NE(std::string(e.what()).find("particles.0.random.volume_fraction: ellipsoid fills take 'count'"),
                  std::string::npos)
            << e.what();
    }
}

TEST(Shapes, SceneOverlapCheckUsesTheExactShape) {
    // A capsule lying on the plane: its bounding sphere (radius 0.3) crosses the plane,
    // the capsule does not. Tilted by 30°, its lower end does.
    const std::string base = R"(
[[material]]
name = "m"
[[wall]]
type = "plane"
point = [0, 0, 0]
normal = [0, 0, 1]
material = "m"
[[body]]
shape = "capsule"
radius = 0.05
length = 0.5
material = "m"
position = [0, 0, 0.05]
)";
    EXPECT_NO_THROW(parse_scene(base, "mem/flat.toml"));
    try {
        parse_scene(base + "orientation = [0.9659258262890683, 0, 0.25881904510252074, 0]\n",
                    "mem/tilted.toml");
        FAIL() << "accepted";
    } catch (const SceneError& e) {
        EXPECT_NE(std::string(e.what()).find("overlaps plane wall.0"), std::string::npos) << e.what();
    }
}

// [[particles]] fills of capsules: `radius` and `length` as for a [[body]]; a random fill
// spaces their bounding spheres (radius + length/2) and turns each at random, and its pour
// settles with the defaults (largest overlap under 1 % of the diameter, at rest); a
// lattice keeps the world's axes; a radius distribution and `volume_fraction` are refused
// at their keys.
TEST(Shapes, CapsuleFillsArePlacedAndPoured) {
    const std::string head = fill_in_a_box("shape = \"capsule\"\nlength = 0.004\n");
    Scene scene = parse_scene(head + "radius = 0.001\nrandom = { min = [-0.011, -0.011, 0.004], max = [0.011, 0.011, 0.1], "
                                     "count = 150, seed = 3 }\n",
                              "mem/capsule_fill.toml");
    World& w = scene.world;
    ASSERT_EQ(w.bodies.size(), 150u);
    std::size_t turned = 0;
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        ASSERT_EQ(w.bodies.shape[i], Shape::Capsule);
        EXPECT_EQ(w.bodies.shape_param[i].x(), 0.001);
        EXPECT_EQ(w.bodies.shape_param[i].y(), 0.002);
        turned += std::abs(w.bodies.orientation[i].w()) < 0.999;
        for (std::size_t j = 0; j < i; ++j)  // bounding spheres apart
            EXPECT_GE((w.bodies.position[i] - w.bodies.position[j]).norm(), 0.006 * (1 - 1e-9));
    }
    EXPECT_GT(turned, 140u);
    expect_settled_within(w, 0.6, 0.01 * 2 * 0.001);
    const Scene lattice = parse_scene(head + "radius = 0.001\nlattice = { min = [-0.01, -0.01, 0.004], "
                                             "max = [0.01, 0.01, 0.02], spacing = [0.0065, 0.0065, 0.0065] }\n",
                                      "mem/capsule_lattice.toml");
    ASSERT_GT(lattice.world.bodies.size(), 8u);
    for (std::size_t i = 0; i < lattice.world.bodies.size(); ++i)
        EXPECT_EQ(lattice.world.bodies.orientation[i].coeffs(), Quat::Identity().coeffs());
    const std::vector<std::pair<std::string, std::string>> refused{
        {"radius = 0.001\nrandom = { min = [-0.01, -0.01, 0.004], max = [0.01, 0.01, 0.1], volume_fraction = 0.2, "
         "seed = 1 }\n",
         "particles.0.random.volume_fraction: capsule fills take 'count'"},
        {"radius = { distribution = \"uniform\", min = 0.001, max = 0.002 }\n"
         "random = { min = [-0.01, -0.01, 0.004], max = [0.01, 0.01, 0.1], count = 10, seed = 1 }\n",
         "particles.0.radius: a fill of capsules takes one radius, not a distribution"},
        {"radius = 0.001\nlattice = { min = [-0.01, -0.01, 0.004], max = [0.01, 0.01, 0.02], "
         "spacing = [0.005, 0.0065, 0.0065] }\n",
         "less than the capsule's bounding diameter 0.006"},
    };
    for (const auto& [tail, expected] : refused) {
        try {
            parse_scene(head + tail, "mem/refused.toml");
            ADD_FAILURE() << "accepted: " << tail;
        } catch (const SceneError& e) {
            EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
        }
    }
}

// Capsules and ellipsoids against a cylinder wall, inside (a drum) and outside (a pillar),
// at random poses: the narrow phase's gap against brute force over the body. Capsule: the
// core segment sampled at 20,001 points (1e-9 m; inside the deepest point is an end, so the
// search is exact there). Ellipsoid: its surface sampled on a 400 × 800 grid of angles
// (the sampled extreme of ρ is off by at most s (π/400)²/2 ≈ 4e-7 m for s ≤ 12 mm: 1e-6 m).
// The ellipsoid's contact point lies on its surface at the radial distance the gap gives,
// with a radial normal (1e-9).
TEST(Shapes, CapsulesAndEllipsoidsMeetACylinderAsBruteForceSays) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const double R = 0.05;
    // unit-sphere grid for the ellipsoid's surface
    std::vector<Vec3> sphere;
    for (int i = 0; i <= 400; ++i)
        for (int j = 0; j < 800; ++j) {
            const double th = kPi * i / 400.0, ph = 2.0 * kPi * j / 800.0;
            sphere.emplace_back(std::sin(th) * std::cos(ph), std::sin(th) * std::sin(ph), std::cos(th));
        }
    int contacts = 0;
    for (int trial = 0; trial < 32; ++trial) {
        const bool inside = trial % 2 == 0, ellipsoid = trial % 4 >= 2;
        std::normal_distribution<double> g;
        Wall wall;
        wall.type = WallType::Cylinder;
        wall.point = Vec3(0.01 * g(rng), 0.01 * g(rng), 0.01 * g(rng));
        wall.axis = Vec3(g(rng), g(rng), g(rng)).normalized();
        wall.radius = R;
        wall.inside = inside;
        const CylinderAt cyl(wall, WallState{});
        Vec3 u, v;
        orthonormal_basis(cyl.axis, u, v);
        const double angle = 2.0 * kPi * unit(rng);
        const Vec3 radial = std::cos(angle) * u + std::sin(angle) * v;
        const double depth = 0.004 + 0.012 * unit(rng);  // the centre's distance from the wall
        const Vec3 x = cyl.point + 0.03 * g(rng) * cyl.axis + (inside ? R - depth : R + depth) * radial;
        const auto rho = [&](const Vec3& p) {
            const Vec3 rel = p - cyl.point;
            return (rel - rel.dot(cyl.axis) * cyl.axis).norm();
        };
        BodyStore b;
        double brute;
        if (ellipsoid) {
            const Vec3 s(0.004 + 0.008 * unit(rng), 0.004 + 0.008 * unit(rng), 0.004 + 0.008 * unit(rng));
            b.add_ellipsoid(0, x, s, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
            const Mat3 rot = b.orientation[0].toRotationMatrix();
            double lo = kInf, hi = 0.0;
            for (const Vec3& d : sphere) {
                const double r = rho(x + rot * s.cwiseProduct(d));
                lo = std::min(lo, r);
                hi = std::max(hi, r);
            }
            brute = inside ? R - hi : lo - R;
        } else {
            const double r = 0.002 + 0.004 * unit(rng), half = 0.02 * unit(rng);
            b.add_capsule(0, x, r, half, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
            const Vec3 a = b.orientation[0] * Vec3::UnitX();
            double lo = kInf, hi = 0.0;
            for (int k = 0; k <= 20000; ++k) {
                const double q = rho(x + (-1.0 + k / 10000.0) * half * a);
                lo = std::min(lo, q);
                hi = std::max(hi, q);
            }
            brute = inside ? R - hi - r : lo - R - r;
        }
        ShapeContact c[kMaxShapeContacts];
        const int m = collide_cylinder(b, 0, cyl, kInf, c);
        ASSERT_GE(m, 1) << "trial " << trial;
        double gap = kInf;
        for (int k = 0; k < m; ++k) gap = std::min(gap, c[k].gap);
        EXPECT_NEAR(gap, brute, ellipsoid ? 1e-6 : 1e-9) << "trial " << trial << (inside ? " inside" : " outside");
        if (ellipsoid) {
            const Vec3 body = b.orientation[0].conjugate() * (c[0].point - x);
            EXPECT_NEAR(body.cwiseQuotient(b.shape_param[0]).norm(), 1.0, 1e-9) << "trial " << trial;
            EXPECT_NEAR(rho(c[0].point), inside ? R - c[0].gap : R + c[0].gap, 1e-9) << "trial " << trial;
            const Vec3 rel = c[0].point - cyl.point;
            const Vec3 out = (rel - rel.dot(cyl.axis) * cyl.axis).normalized();
            EXPECT_LT((c[0].normal - (inside ? Vec3(-out) : out)).norm(), 1e-9) << "trial " << trial;
        }
        contacts += m;
    }
    EXPECT_GE(contacts, 32);
    // a capsule along a pillar's axis rests on it by both ends
    Wall pillar;
    pillar.type = WallType::Cylinder;
    pillar.point = Vec3::Zero();
    pillar.axis = Vec3::UnitZ();
    pillar.radius = R;
    pillar.inside = false;
    BodyStore b;
    b.add_capsule(0, Vec3(R + 0.003, 0, 0), 0.003, 0.02, 1000.0, 0, Vec3::Zero(), Vec3::Zero(),
                  Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY())));
    ShapeContact c[kMaxShapeContacts];
    ASSERT_EQ(collide_cylinder(b, 0, CylinderAt(pillar, WallState{}), 1e-3, c), 2);
    EXPECT_NEAR(c[0].gap, 0.0, 1e-15);
    EXPECT_NEAR(c[1].gap, 0.0, 1e-15);
}

// Rods and ellipsoids tumble in a rotating drum (the defaults: adaptive step, the engine's
// solver): 32 capsules and 31 ellipsoids, 1 s in a drum of radius 5 cm turning at
// 3 rad/s about +y, closed by two planes. None leaves the drum, none overlaps anything by
// more than 1 % of the thinnest diameter (issue 22's bound), and the bed is carried up the
// side the drum's bottom moves to (−x for a turn about +y): its centre of mass lies on
// that side.
TEST(Shapes, RodsAndEllipsoidsTumbleInADrum) {
    std::ostringstream scene;
    scene.precision(17);
    scene << "[simulation]\nduration = 1.0\n[[material]]\nname = \"m\"\ndensity = 2500\nfriction = 0.5\n"
             "restitution = 0.3\n"
             "[[wall]]\ntype = \"cylinder\"\npoint = [0, 0, 0]\naxis = [0, 1, 0]\nradius = 0.05\ninside = true\n"
             "material = \"m\"\nmotion = { type = \"rotation\", centre = [0, 0, 0], axis = [0, 1, 0], omega = 3.0 }\n"
             "[[wall]]\ntype = \"plane\"\npoint = [0, -0.02, 0]\nnormal = [0, 1, 0]\nmaterial = \"m\"\n"
             "[[wall]]\ntype = \"plane\"\npoint = [0, 0.02, 0]\nnormal = [0, -1, 0]\nmaterial = \"m\"\n";
    std::mt19937_64 rng(13);
    int k = 0;
    for (int iy = -1; iy <= 1; ++iy)
        for (int ix = -2; ix <= 2; ++ix)
            for (int iz = -2; iz <= 2; ++iz) {
                if (std::abs(ix) == 2 && std::abs(iz) == 2) continue;  // not the corners: 21 a layer
                const Quat q = random_rotation(rng);
                scene << "[[body]]\nmaterial = \"m\"\nposition = [" << 0.014 * ix << ", " << 0.012 * iy << ", "
                      << 0.014 * iz << "]\norientation = [" << q.w() << ", " << q.x() << ", " << q.y() << ", "
                      << q.z() << "]\n";
                if (k++ % 2 == 0)
                    scene << "shape = \"capsule\"\nradius = 0.002\nlength = 0.008\n";
                else
                    scene << "shape = \"ellipsoid\"\nsemi_axes = [0.005, 0.003, 0.002]\n";
            }
    Scene s = parse_scene(scene.str(), "mem/drum.toml");
    World& w = s.world;
    ASSERT_EQ(w.bodies.size(), 63u);
    double worst = 0.0;
    while (w.time < 1.0 - 1e-12) {
        const StepStatus st = w.step(1.0);
        ASSERT_TRUE(st.ok) << st.message;
        worst = std::max(worst, w.diagnostics().contact_infeasibility);
    }
    EXPECT_LT(worst, 0.01 * 2 * 0.002);
    double mean_x = 0.0;
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        const Vec3& x = w.bodies.position[i];
        EXPECT_LT(std::hypot(x.x(), x.z()), 0.05) << "body " << i;
        EXPECT_LT(std::abs(x.y()), 0.02) << "body " << i;
        mean_x += x.x() / double(w.bodies.size());
    }
    std::printf("[ drum ] largest overlap %.3g m, centre of mass at x = %.4g m\n", worst, mean_x);
    EXPECT_LT(mean_x, -0.005);
}

// A bed of every non-spherical shape together: 40 dumbbell clumps (two 5 mm spheres),
// 40 rods (4 mm across, 8 mm long) and 40 ellipsoids (10 × 6 × 5 mm) poured into a
// 6 × 6 cm box with the defaults settle for 1.5 s without any overlap past 1 % of the
// thinnest diameter (4 mm) and come to rest. Before, a clump within reach of a capsule or
// an ellipsoid stopped the run.
TEST(Shapes, AMixedBedOfClumpsRodsAndEllipsoidsSettles) {
    const std::string text = R"([simulation]
duration = 1.5
[[material]]
name = "m"
density = 2500
friction = 0.5
restitution = 0.3
[[wall]]
type = "box"
min = [-0.03, -0.03, 0.0]
max = [0.03, 0.03, 0.4]
material = "m"
[[particles]]
shape = "clump"
spheres = [[-0.0025, 0, 0, 0.0025], [0.0025, 0, 0, 0.0025]]
material = "m"
random = { min = [-0.025, -0.025, 0.005], max = [0.025, 0.025, 0.3], count = 40, seed = 1 }
[[particles]]
shape = "capsule"
radius = 0.002
length = 0.004
material = "m"
random = { min = [-0.025, -0.025, 0.005], max = [0.025, 0.025, 0.3], count = 40, seed = 2 }
[[particles]]
shape = "ellipsoid"
semi_axes = [0.005, 0.003, 0.0025]
material = "m"
random = { min = [-0.025, -0.025, 0.005], max = [0.025, 0.025, 0.3], count = 40, seed = 3 }
)";
    Scene scene = parse_scene(text, "mem/mixed.toml");
    World& w = scene.world;
    ASSERT_EQ(w.bodies.size(), 120u);
    expect_settled_within(w, 1.5, 0.01 * 0.004);
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        const Vec3& x = w.bodies.position[i];
        EXPECT_LT(std::max(std::abs(x.x()), std::abs(x.y())), 0.03) << "body " << i;
        EXPECT_GT(x.z(), 0.0) << "body " << i;
    }
}

}  // namespace
}  // namespace talus
