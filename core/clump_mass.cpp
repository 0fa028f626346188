// Mass properties of a union of overlapping spheres (core/clump.hpp).
//
// Why not the sum: overlapping spheres share their lens, which the sum counts twice.
// Method: slice the union by planes x = const. A slice is a union of disks (centre
// (y_k, z_k), radius ρ_k = √(r_k² − (x − x_k)²)). Its area moments ∫∫ yᵖ z^q dA
// (p + q ≤ 2) follow from Green's theorem, ∫∫ ∂Q/∂y dA = ∮ Q dz, on the boundary of the
// union, which is the set of arcs of each circle not covered by another disk, each run
// counter-clockwise about its own disk (this also handles holes). A disk j covers the arc
// φ_jk ± α of circle k, cos α = (ρ_k² + d² − ρ_j²) / (2 ρ_k d). On an arc, Q(t) dz/dt is a
// trigonometric polynomial of degree ≤ 4, integrated by 10-point Gauss–Legendre on pieces
// of at most π/4 (error below 1e-14 relative). The slice moments, smooth between the x where
// a sphere begins or ends or the intersection circle of two spheres begins or ends, are
// integrated over x by adaptive Gauss–Kronrod 7–15 on each such interval, to the relative
// tolerance asked for. Everything is computed about the volume-weighted centroid of the
// sphere centres, so far-off user frames lose no digits.
// Then: V, first moments S, second moments P; centre c = S/V; central second moments
// C = P − V c cᵀ; inertia per unit density J = tr(C) I − C; principal axes by Eigen's
// SelfAdjointEigenSolver (ascending), the sign of each axis fixed so that its largest
// component is positive, the third axis = first × second (a right-handed frame).
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "core/clump.hpp"

namespace talus {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int kMoments = 10;  // A, xA, Ay, Az, x²A, Ayy, Azz, xAy, xAz, Ayz
using Moments = std::array<double, kMoments>;

constexpr double kGLx[5] = {0.148874338981631210884826001129720, 0.433395394129247190799265943165784,
                            0.679409568299024406234327365114874, 0.865063366688984510732096688423493,
                            0.973906528517171720077964012084452};
constexpr double kGLw[5] = {0.295524224714752870173892994651338, 0.269266719309996355091226921569469,
                            0.219086362515982043995534934228163, 0.149451349150580593145776339657697,
                            0.066671344308688137593568809893332};

constexpr double kGKx[8] = {0.991455371120812639206854697526329, 0.949107912342758524526189684047851,
                            0.864864423359769072789712788640926, 0.741531185599394439863864773280788,
                            0.586087235467691130294144845693013, 0.405845151377397166906606412076961,
                            0.207784955007898467600689403773245, 0.0};
constexpr double kGKw[8] = {0.022935322010529224963732008058970, 0.063092092629978553290700663189204,
                            0.104790010322250183839876322541518, 0.140653259715525918745189590510238,
                            0.169004726639267902826583426598550, 0.190350578064785409913256402421014,
                            0.204432940075298892414161999234649, 0.209482141084727828012999174891714};
// 7-point Gauss weights at kGKx[1], kGKx[3], kGKx[5], kGKx[7]
constexpr double kG7w[4] = {0.129484966168869693270611432679082, 0.279705391489276667901467771423780,
                            0.381830050505118944950369775488975, 0.417959183673469387755102040816327};

struct Disk {
    double y, z, rho;
};

/// Area moments (A, Ay, Az, Ayy, Azz, Ayz) of the arc t ∈ [t0, t1] of circle k, added to m.
void add_arc(const Disk& c, double t0, double t1, std::array<double, 6>& m) {
    const int pieces = std::max(1, int(std::ceil((t1 - t0) / (0.25 * kPi))));
    const double h = (t1 - t0) / pieces;
    for (int p = 0; p < pieces; ++p) {
        const double mid = t0 + (p + 0.5) * h, half = 0.5 * h;
        for (int g = 0; g < 10; ++g) {
            const double t = mid + (g < 5 ? -kGLx[g] : kGLx[g - 5]) * half;
            const double w = kGLw[g < 5 ? g : g - 5] * half;
            const double ct = std::cos(t), st = std::sin(t);
            const double y = c.y + c.rho * ct, z = c.z + c.rho * st;
            const double dz = w * c.rho * ct;
            m[0] += y * dz;                  // Q = y
            m[1] += 0.5 * y * y * dz;        // Q = y²/2
            m[2] += y * z * dz;              // Q = y z
            m[3] += y * y * y / 3.0 * dz;    // Q = y³/3
            m[4] += y * z * z * dz;          // Q = y z²
            m[5] += 0.5 * y * y * z * dz;    // Q = y² z / 2
        }
    }
}

/// Area moments of a union of disks.
std::array<double, 6> union_of_disks(const std::vector<Disk>& disks) {
    std::array<double, 6> m{};
    std::vector<std::pair<double, double>> cover;
    const std::size_t n = disks.size();
    for (std::size_t k = 0; k < n; ++k) {
        const Disk& a = disks[k];
        cover.clear();
        bool hidden = false;
        for (std::size_t j = 0; j < n && !hidden; ++j) {
            if (j == k) continue;
            const Disk& b = disks[j];
            const double dy = b.y - a.y, dz = b.z - a.z;
            const double d = std::sqrt(dy * dy + dz * dz);
            if (d >= a.rho + b.rho) continue;                    // apart
            if (d + a.rho < b.rho || (d + a.rho == b.rho && (a.rho < b.rho || j < k))) {
                hidden = true;                                   // k inside j (ties: lower index wins)
                continue;
            }
            if (d + b.rho <= a.rho) continue;                    // j inside k
            const double ca = (a.rho * a.rho + d * d - b.rho * b.rho) / (2.0 * a.rho * d);
            const double alpha = std::acos(std::clamp(ca, -1.0, 1.0));
            double s = std::atan2(dz, dy) - alpha;                // covered [s, s + 2α]
            s -= 2.0 * kPi * std::floor(s / (2.0 * kPi));
            const double e = s + 2.0 * alpha;
            if (e <= 2.0 * kPi) {
                cover.emplace_back(s, e);
            } else {
                cover.emplace_back(s, 2.0 * kPi);
                cover.emplace_back(0.0, e - 2.0 * kPi);
            }
        }
        if (hidden) continue;
        std::sort(cover.begin(), cover.end());
        double at = 0.0;  // start of the next uncovered arc
        for (const auto& [s, e] : cover) {
            if (s > at) add_arc(a, at, s, m);
            at = std::max(at, e);
        }
        if (at < 2.0 * kPi) add_arc(a, at, 2.0 * kPi, m);
    }
    return m;
}

struct Integrand {
    const std::vector<Vec3>& c;
    const std::vector<double>& r;
    mutable std::vector<Disk> disks;

    Moments operator()(double x) const {
        disks.clear();
        for (std::size_t k = 0; k < c.size(); ++k) {
            const double dx = x - c[k].x();
            const double rho2 = r[k] * r[k] - dx * dx;
            if (rho2 > 0.0) disks.push_back({c[k].y(), c[k].z(), std::sqrt(rho2)});
        }
        Moments out{};
        if (disks.empty()) return out;
        const std::array<double, 6> a = union_of_disks(disks);
        out[0] = a[0];
        out[1] = x * a[0];
        out[2] = a[1];
        out[3] = a[2];
        out[4] = x * x * a[0];
        out[5] = a[3];
        out[6] = a[4];
        out[7] = x * a[1];
        out[8] = x * a[2];
        out[9] = a[5];
        return out;
    }
};

/// Adaptive Gauss–Kronrod on [lo, hi]: accepted when every moment's |K15 − G7| is within
/// tol_k · (hi − lo) (tol_k: the absolute tolerance per unit length of moment k).
/// Subintervals one union may take. A union of a few hundred spheres of sane sizes needs a
/// few thousand; scales 10⁸⁰ apart never converge (fuzzing), and are refused instead.
constexpr long kMaxIntervals = 1L << 18;

void integrate(const Integrand& f, double lo, double hi, const Moments& tol, int depth,
               Moments& sum, long& budget) {
    if (--budget < 0)
        throw std::invalid_argument("union_mass_properties: the integration does not converge "
                                    "(radii or distances too far apart in scale)");
    const double mid = 0.5 * (lo + hi), half = 0.5 * (hi - lo);
    Moments k{}, g{};
    for (int i = 0; i < 8; ++i) {
        const int signs = i == 7 ? 1 : 2;
        for (int s = 0; s < signs; ++s) {
            const Moments v = f(mid + (s == 0 ? 1.0 : -1.0) * kGKx[i] * half);
            for (int m = 0; m < kMoments; ++m) {
                k[m] += kGKw[i] * v[m];
                if (i % 2 == 1) g[m] += kG7w[i / 2] * v[m];
            }
        }
    }
    bool ok = true;
    for (int m = 0; m < kMoments; ++m) {
        if (!std::isfinite(k[m]))
            throw std::invalid_argument("union_mass_properties: the moments overflow (spheres too large)");
        ok = ok && std::abs(k[m] - g[m]) * half <= tol[m] * (hi - lo);
    }
    if (ok || depth >= 40) {
        for (int m = 0; m < kMoments; ++m) sum[m] += k[m] * half;
        return;
    }
    integrate(f, lo, mid, tol, depth + 1, sum, budget);
    integrate(f, mid, hi, tol, depth + 1, sum, budget);
}

/// Principal moments and axes of out.inertia (ascending; signs and handedness fixed).
void principal_axes(UnionMassProperties& out) {
    const Eigen::SelfAdjointEigenSolver<Mat3> eig(out.inertia);
    out.principal = eig.eigenvalues();
    Mat3 axes = eig.eigenvectors();
    for (int col = 0; col < 2; ++col) {
        Eigen::Index big;
        axes.col(col).cwiseAbs().maxCoeff(&big);
        if (axes(big, col) < 0.0) axes.col(col) = -axes.col(col);
    }
    axes.col(2) = axes.col(0).cross(axes.col(1));
    out.axes = axes;
}

}  // namespace

UnionMassProperties union_mass_properties(const std::vector<Vec3>& centres,
                                          const std::vector<double>& radii, double tolerance) {
    const std::size_t n = centres.size();
    if (n == 0 || radii.size() != n)
        throw std::invalid_argument("union_mass_properties: need as many radii as centres, at least one");
    for (double r : radii)
        if (!(r > 0.0) || !std::isfinite(r))
            throw std::invalid_argument("union_mass_properties: radii must be finite and > 0");
    // A sphere inside another adds nothing to the union: leave it out (the first of two
    // identical ones stays). Fuzzing found a 10⁸¹ m sphere holding 27 small ones.
    {
        std::vector<char> inside(n, 0);
        for (std::size_t k = 0; k < n; ++k)
            for (std::size_t j = 0; j < n && !inside[k]; ++j) {
                if (j == k || inside[j]) continue;
                const double d = (centres[k] - centres[j]).norm();
                const bool contained = d + radii[k] <= radii[j] && (radii[k] < radii[j] || d > 0.0 || j < k);
                if (contained) inside[k] = 1;
            }
        if (std::find(inside.begin(), inside.end(), 1) != inside.end()) {
            std::vector<Vec3> c;
            std::vector<double> r;
            for (std::size_t k = 0; k < n; ++k)
                if (!inside[k]) {
                    c.push_back(centres[k]);
                    r.push_back(radii[k]);
                }
            return union_mass_properties(c, r, tolerance);
        }
    }
    // Spheres that do not overlap share no volume: each connected group is integrated about
    // its own centroid and the groups are summed (parallel axes). Integrating them together
    // about one far centroid lost the slices' digits: fuzzing found a clump with one sphere
    // 8 m from two overlapping ones (r = 1 cm) whose integration ran for half a minute.
    {
        std::vector<std::size_t> group(n);
        for (std::size_t k = 0; k < n; ++k) group[k] = k;
        auto root = [&](std::size_t k) {
            while (group[k] != k) k = group[k] = group[group[k]];
            return k;
        };
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t k = j + 1; k < n; ++k)
                if ((centres[k] - centres[j]).norm() < radii[j] + radii[k]) group[root(k)] = root(j);
        std::vector<std::size_t> roots;
        for (std::size_t k = 0; k < n; ++k)
            if (root(k) == k) roots.push_back(k);
        if (roots.size() > 1) {
            std::vector<UnionMassProperties> parts;
            for (std::size_t g : roots) {
                std::vector<Vec3> c;
                std::vector<double> r;
                for (std::size_t k = 0; k < n; ++k)
                    if (root(k) == g) {
                        c.push_back(centres[k]);
                        r.push_back(radii[k]);
                    }
                parts.push_back(union_mass_properties(c, r, tolerance));
            }
            UnionMassProperties out;
            Vec3 moment = Vec3::Zero();
            for (const UnionMassProperties& q : parts) {
                out.volume += q.volume;
                moment += q.volume * q.centre;
            }
            out.centre = moment / out.volume;
            for (const UnionMassProperties& q : parts) {
                const Vec3 d = q.centre - out.centre;
                out.inertia += q.inertia + q.volume * (d.squaredNorm() * Mat3::Identity() - d * d.transpose());
            }
            principal_axes(out);
            return out;
        }
    }
    // Work about the r³-weighted centroid of the centres.
    Vec3 origin = Vec3::Zero();
    double w = 0.0, v0 = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
        const double r3 = radii[k] * radii[k] * radii[k];
        origin += r3 * centres[k];
        w += r3;
        v0 += 4.0 / 3.0 * kPi * r3;
    }
    origin /= w;
    std::vector<Vec3> c(n);
    double reach = 0.0;
    for (std::size_t k = 0; k < n; ++k) {
        c[k] = centres[k] - origin;
        reach = std::max(reach, c[k].norm() + radii[k]);
    }
    // Breakpoints: the ends of each sphere and of each intersection circle along x.
    std::vector<double> br;
    for (std::size_t k = 0; k < n; ++k) {
        br.push_back(c[k].x() - radii[k]);
        br.push_back(c[k].x() + radii[k]);
    }
    for (std::size_t j = 0; j < n; ++j)
        for (std::size_t k = j + 1; k < n; ++k) {
            const Vec3 d = c[k] - c[j];
            const double dist = d.norm();
            if (dist >= radii[j] + radii[k] || dist <= std::abs(radii[j] - radii[k])) continue;
            const Vec3 u = d / dist;
            const double a = (dist * dist + radii[j] * radii[j] - radii[k] * radii[k]) / (2.0 * dist);
            const double rho = std::sqrt(std::max(0.0, radii[j] * radii[j] - a * a));
            const double mx = c[j].x() + a * u.x();
            const double ext = rho * std::sqrt(std::max(0.0, 1.0 - u.x() * u.x()));
            br.push_back(mx - ext);
            br.push_back(mx + ext);
        }
    std::sort(br.begin(), br.end());
    br.erase(std::unique(br.begin(), br.end()), br.end());
    const double length = br.back() - br.front();
    Moments tol{};
    for (int m = 0; m < kMoments; ++m) {
        const int order = m == 0 ? 0 : m <= 3 ? 1 : 2;
        tol[m] = tolerance * v0 * std::pow(reach, order) / length;
    }
    long budget = kMaxIntervals;
    const Integrand f{c, radii, {}};
    Moments s{};
    for (std::size_t i = 0; i + 1 < br.size(); ++i)
        if (br[i + 1] > br[i]) integrate(f, br[i], br[i + 1], tol, 0, s, budget);

    UnionMassProperties out;
    out.volume = s[0];
    const Vec3 first(s[1], s[2], s[3]);
    const Vec3 centre = first / s[0];
    Mat3 p;
    p << s[4], s[7], s[8], s[7], s[5], s[9], s[8], s[9], s[6];
    const Mat3 central = p - s[0] * centre * centre.transpose();
    out.inertia = central.trace() * Mat3::Identity() - central;
    out.centre = origin + centre;
    principal_axes(out);
    return out;
}

}  // namespace talus
