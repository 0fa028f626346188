// Mass properties of unions of spheres (core/clump_mass.cpp) against exact values.
// Collinear equal spheres form a solid of revolution whose section radius² is
// ρ²(s) = r² − (s − nearest centre)², a polynomial of degree 2 in s between breakpoints
// (sphere ends and midpoints between neighbouring centres): V = ∫ π ρ² ds,
// J_axis = ∫ π ρ⁴/2 ds, J_transverse = ∫ (π ρ⁴/4 + π ρ² (s − s̄)²) ds (per unit density),
// integrated exactly by 3-point Gauss–Legendre (exact to degree 5) on each piece.
// The lens of two equal spheres at distance d < 2r: two caps of height h = r − d/2, each
// π h² (3r − h)/3, so V = 2·4/3 π r³ − 2π h² (3r − h)/3.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/body_store.hpp"
#include "core/clump.hpp"

namespace talus {
namespace {

constexpr double kPi = 3.14159265358979323846;

struct Revolution {
    double volume, axial, transverse;  // per unit density, about the centroid s̄
};

/// Exact V, J_axis, J_transverse of equal spheres (radius r) at positions s_k on one line.
Revolution collinear(std::vector<double> s, double r) {
    std::sort(s.begin(), s.end());
    std::vector<double> br;
    for (double c : s) { br.push_back(c - r); br.push_back(c + r); }
    for (std::size_t k = 0; k + 1 < s.size(); ++k) br.push_back(0.5 * (s[k] + s[k + 1]));
    std::sort(br.begin(), br.end());
    const double gx[3] = {-std::sqrt(0.6), 0.0, std::sqrt(0.6)}, gw[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
    auto rho2 = [&](double x) {
        double best = -1e300;
        for (double c : s) best = std::max(best, r * r - (x - c) * (x - c));
        return std::max(best, 0.0);
    };
    double v = 0, sx = 0;
    for (int pass = 0; pass < 2; ++pass) {
        const double mean = pass == 1 ? sx / v : 0.0;
        double vol = 0, first = 0, ax = 0, tr = 0;
        for (std::size_t i = 0; i + 1 < br.size(); ++i) {
            const double a = br[i], b = br[i + 1], m = 0.5 * (a + b), h = 0.5 * (b - a);
            for (int g = 0; g < 3; ++g) {
                const double x = m + gx[g] * h, w = gw[g] * h, q = rho2(x);
                vol += w * kPi * q;
                first += w * kPi * q * x;
                ax += w * kPi * q * q / 2;
                tr += w * (kPi * q * q / 4 + kPi * q * (x - mean) * (x - mean));
            }
        }
        if (pass == 0) { v = vol; sx = first; }
        else return {vol, ax, tr};
    }
    return {};
}

void expect_rel(double got, double want, double tol, const char* what) {
    EXPECT_NEAR(got, want, tol * std::abs(want)) << what;
}

// Two equal spheres along an oblique axis (so slices are unions of offset disks), at
// d < 2r (lens), and the same far apart. Tolerance 1e-9 relative; the method aims at 1e-11.
TEST(ClumpMass, TwoOverlappingSpheresMatchTheLensFormulas) {
    const double r = 0.3;
    const Vec3 axis = Vec3(1, 2, 3).normalized();
    const Vec3 origin(5.0, -2.0, 1.0);  // far from the user origin: no loss of digits
    for (double d : {0.1, 0.3, 0.45, 0.59}) {
        const UnionMassProperties mp =
            union_mass_properties({origin - 0.5 * d * axis, origin + 0.5 * d * axis}, {r, r});
        const double h = r - 0.5 * d;
        const double lens = 2.0 * kPi * h * h * (3 * r - h) / 3.0;
        expect_rel(mp.volume, 2.0 * 4.0 / 3.0 * kPi * r * r * r - lens, 1e-9, "volume");
        const Revolution ref = collinear({-0.5 * d, 0.5 * d}, r);
        expect_rel(mp.volume, ref.volume, 1e-9, "volume (revolution)");
        EXPECT_NEAR((mp.centre - origin).norm(), 0.0, 1e-9 * r);
        // Principal moments ascending: the axis carries the smallest one.
        expect_rel(mp.principal[0], ref.axial, 1e-9, "axial");
        expect_rel(mp.principal[1], ref.transverse, 1e-9, "transverse");
        expect_rel(mp.principal[2], ref.transverse, 1e-9, "transverse");
        EXPECT_NEAR(std::abs(mp.axes.col(0).dot(axis)), 1.0, 1e-9);
        EXPECT_NEAR(mp.axes.determinant(), 1.0, 1e-12);
        // The inertia tensor in the user frame is diag(J) in the principal axes.
        const Mat3 back = mp.axes * mp.principal.asDiagonal() * mp.axes.transpose();
        EXPECT_LT((back - mp.inertia).norm(), 1e-9 * mp.principal.maxCoeff());
    }
}

TEST(ClumpMass, SeparateSpheresSumWithParallelAxisTerms) {
    const double r = 0.2, d = 0.7;  // d > 2r: no overlap
    const UnionMassProperties mp = union_mass_properties({Vec3(0, 0, 0), Vec3(0, d, 0)}, {r, r});
    const double v1 = 4.0 / 3.0 * kPi * r * r * r;
    expect_rel(mp.volume, 2 * v1, 1e-10, "volume");
    EXPECT_NEAR((mp.centre - Vec3(0, 0.5 * d, 0)).norm(), 0.0, 1e-10);
    expect_rel(mp.principal[0], 2 * 0.4 * v1 * r * r, 1e-10, "axial");
    const double jt = 2 * (0.4 * v1 * r * r + v1 * 0.25 * d * d);
    expect_rel(mp.principal[1], jt, 1e-10, "transverse");
    expect_rel(mp.principal[2], jt, 1e-10, "transverse");
    // axis along user y
    EXPECT_NEAR(std::abs(mp.axes.col(0).y()), 1.0, 1e-10);
}

// Found by tools/fuzz: two overlapping spheres (r = 1 cm) and a third 8 m away took half a
// minute, the slices integrated about a centroid metres from them. Separate groups are now
// integrated apart: volume = lens pair + sphere, centre and inertia by parallel axes, to
// 1e-9 relative, and at once.
TEST(ClumpMass, FarSphereBesideAnOverlappingPairIsExact) {
    const double r = 0.01;
    const Vec3 a(0.007, 0, 0), b(0, 0.014, 0), far(1.0, 8.0, 0.0);
    const UnionMassProperties mp = union_mass_properties({far, a, b}, {r, r, r});
    const UnionMassProperties pair = union_mass_properties({a, b}, {r, r});
    const double d = (a - b).norm(), h = r - 0.5 * d;
    const double v1 = 4.0 / 3.0 * kPi * r * r * r, lens = 2.0 * kPi * h * h * (3 * r - h) / 3.0;
    expect_rel(pair.volume, 2 * v1 - lens, 1e-9, "pair volume");
    expect_rel(mp.volume, 3 * v1 - lens, 1e-9, "volume");
    const Vec3 centre = (pair.volume * 0.5 * (a + b) + v1 * far) / mp.volume;
    EXPECT_LT((mp.centre - centre).norm(), 1e-9 * centre.norm());
    Mat3 inertia = pair.inertia + 0.4 * v1 * r * r * Mat3::Identity();
    for (const auto& [v, c] : {std::pair{pair.volume, Vec3(0.5 * (a + b))}, std::pair{v1, far}}) {
        const Vec3 e = c - centre;
        inertia += v * (e.squaredNorm() * Mat3::Identity() - e * e.transpose());
    }
    EXPECT_LT((mp.inertia - inertia).norm(), 1e-9 * inertia.norm());
}

// Found by tools/fuzz: a 4·10⁸¹ m sphere holding 27 small ones. The small ones are inside
// it and count for nothing; the big one's r⁵ overflows, which is refused at once (the
// scene reader also refuses spheres beyond 1 km, fuzz_clump_sphere_beyond_a_km.toml).
TEST(ClumpMass, ContainedSpheresAreLeftOutAndOverflowIsRefused) {
    const UnionMassProperties big = union_mass_properties({Vec3(0, 0, 0), Vec3(0.1, 0, 0), Vec3(0, 0.2, 0.1)},
                                                          {1.0, 0.01, 0.3});
    const double v = 4.0 / 3.0 * kPi;
    expect_rel(big.volume, v, 1e-12, "volume of the outer sphere alone");
    EXPECT_LT(big.centre.norm(), 1e-12);
    expect_rel(big.principal[0], 0.4 * v, 1e-12, "inertia");
    EXPECT_THROW(union_mass_properties({Vec3(0, 0, 0), Vec3(0.009, 0, 0)}, {0.006, 4.4e81}),
                 std::invalid_argument);
}

TEST(ClumpMass, ThreeSphereLineMatchesTheSolidOfRevolution) {
    const double r = 0.25, s = 0.3;
    const UnionMassProperties mp =
        union_mass_properties({Vec3(0, 0, -s), Vec3(0, 0, 0), Vec3(0, 0, s)}, {r, r, r});
    const Revolution ref = collinear({-s, 0.0, s}, r);
    expect_rel(mp.volume, ref.volume, 1e-9, "volume");
    expect_rel(mp.principal[0], ref.axial, 1e-9, "axial");
    expect_rel(mp.principal[1], ref.transverse, 1e-9, "transverse");
    expect_rel(mp.principal[2], ref.transverse, 1e-9, "transverse");
    EXPECT_NEAR(std::abs(mp.axes.col(0).z()), 1.0, 1e-9);
}

// Regular tetrahedron of edge a with r in (a/2, a/√3): pairs overlap, no three spheres
// share a point, so V = 4 V_s − 6 V_lens exactly, and by symmetry the inertia about the
// centroid is isotropic, J = (2/3) ∫|x|² dV, with ∫|x|² over the union = Σ spheres − Σ lenses,
// each lens's about its own centre (a solid of revolution, exact) plus V_lens |m|².
TEST(ClumpMass, TetrahedralClumpIsIsotropicWithExactVolume) {
    const double a = 1.0, r = 0.55;
    std::vector<Vec3> c = {Vec3(1, 1, 1), Vec3(1, -1, -1), Vec3(-1, 1, -1), Vec3(-1, -1, 1)};
    for (Vec3& v : c) v *= a / (2.0 * std::sqrt(2.0));  // edge a, centroid at 0
    const UnionMassProperties mp = union_mass_properties(c, {r, r, r, r});
    const double vs = 4.0 / 3.0 * kPi * r * r * r;
    const double h = r - 0.5 * a;
    const double lens = 2.0 * kPi * h * h * (3 * r - h) / 3.0;
    expect_rel(mp.volume, 4 * vs - 6 * lens, 1e-9, "volume");
    EXPECT_NEAR(mp.centre.norm(), 0.0, 1e-9);
    // Lens about its centre: section ρ² = r² − (|s| + a/2)² for |s| ≤ h; ∫|x|² = ∫ π ρ² s² +
    // π ρ⁴/2 ds (the transverse part of |x|²: ∫ over the disk of y² + z² = π ρ⁴/2).
    const double gx[3] = {-std::sqrt(0.6), 0.0, std::sqrt(0.6)}, gw[3] = {5.0 / 9, 8.0 / 9, 5.0 / 9};
    double lens_r2 = 0;
    for (int side = 0; side < 2; ++side)
        for (int g = 0; g < 3; ++g) {
            const double s = 0.5 * h + gx[g] * 0.5 * h, w = gw[g] * 0.5 * h;
            const double q = r * r - (s + 0.5 * a) * (s + 0.5 * a);
            lens_r2 += w * (kPi * q * s * s + kPi * q * q / 2);
        }
    double r2 = 0;
    for (const Vec3& v : c) r2 += vs * (0.6 * r * r + v.squaredNorm());
    for (int j = 0; j < 4; ++j)
        for (int k = j + 1; k < 4; ++k) r2 -= lens_r2 + lens * (0.5 * (c[j] + c[k])).squaredNorm();
    const double jiso = 2.0 / 3.0 * r2;
    for (int k = 0; k < 3; ++k) expect_rel(mp.principal[k], jiso, 1e-9, "isotropic moment");
}

TEST(ClumpMass, TemplateIsExpressedAboutTheCentreOnPrincipalAxes) {
    // An L of three spheres: the body-frame spheres have zero mean (equal radii, no
    // overlap: the centre of mass is the mean) and the body inertia is diagonal.
    ClumpTable t;
    const std::vector<Vec3> user = {Vec3(0, 0, 0), Vec3(1, 0, 0), Vec3(0, 2, 0)};
    const uint32_t id = t.add(user, {0.3, 0.3, 0.3});
    ASSERT_EQ(id, 0u);
    Vec3 mean = Vec3::Zero();
    for (uint32_t k = t.begin(0); k < t.end(0); ++k) mean += t.centre[k];
    EXPECT_NEAR(mean.norm(), 0.0, 1e-12);
    EXPECT_NEAR((t.user_centre[0] - Vec3(1.0 / 3, 2.0 / 3, 0)).norm(), 0.0, 1e-10);
    // Recompute the inertia from the body-frame spheres: diagonal, equal to unit_inertia.
    const UnionMassProperties body = union_mass_properties(
        std::vector<Vec3>(t.centre.begin(), t.centre.end()), {0.3, 0.3, 0.3});
    const Mat3 off = body.inertia - Mat3(body.inertia.diagonal().asDiagonal());
    EXPECT_LT(off.norm(), 1e-9 * body.inertia.norm());
    EXPECT_LT((body.inertia.diagonal() - t.unit_inertia[0]).norm(), 1e-9 * body.inertia.norm());
    // Body → world with the user frame at the identity: principal * body centre + centre
    // gives back the user's spheres.
    for (uint32_t k = 0; k < 3; ++k)
        EXPECT_NEAR((t.principal[0] * t.centre[k] + t.user_centre[0] - user[k]).norm(), 0.0, 1e-12);
    double bound = 0.0;
    for (uint32_t k = 0; k < 3; ++k) bound = std::max(bound, t.centre[k].norm() + 0.3);
    EXPECT_EQ(t.bounding[0], bound);
}

TEST(ClumpMass, IdenticalAndNestedSpheresCountOnce) {
    const double r = 0.2;
    const double vs = 4.0 / 3.0 * kPi * r * r * r;
    const UnionMassProperties same = union_mass_properties({Vec3(0.1, 0, 0), Vec3(0.1, 0, 0)}, {r, r});
    expect_rel(same.volume, vs, 1e-10, "identical spheres");
    const UnionMassProperties nested =
        union_mass_properties({Vec3(0, 0, 0), Vec3(0.05, 0.02, 0)}, {r, 0.1});
    expect_rel(nested.volume, vs, 1e-10, "nested sphere");
    expect_rel(nested.principal[0], 0.4 * vs * r * r, 1e-10, "nested sphere inertia");
}

}  // namespace
}  // namespace talus
