// The maximum-dissipation contact model (Preclik & Rüde 2017; solvers/max_dissipation.hpp).
// Single contact: the exact solution matches a brute-force minimiser over the feasible set
// (objective within 1e-9 of the energy scale E = ½ bᵀW⁻¹b, γ within 1e-6 relative); a
// colliding contact ends with d_n = 0 inside the cone, a separating one gets γ = 0; it
// dissipates at least as much as the impulsive Coulomb law on the same plane; the CCP
// reaches a lower energy only by lifting off, and coincides with it when it does not.
// Sweep: a sphere sliding on a plane decelerates at μ g with zero normal velocity and then
// rolls at 5/7 of its speed; a pile converges to a fixed point of the exact block solves,
// the same on 1 and 2 threads; a squeezed sphere is reported; the scene type "maxdiss".
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <vector>

#include "io/scene.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/max_dissipation.hpp"
#include "solvers/solver.hpp"
#include "tests/support/instrumented.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

constexpr double kMus[] = {0.0, 0.1, 0.5, 1.0, 2.0};

/// Random SPD matrix: random rotation, eigenvalues log-uniform in [s, s·cond].
Mat3 random_spd(std::mt19937_64& rng, double cond) {
    std::normal_distribution<double> n01(0.0, 1.0);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    Mat3 a;
    for (int i = 0; i < 9; ++i) a(i) = n01(rng);
    const Mat3 q = Eigen::HouseholderQR<Mat3>(a).householderQ();
    const double s = 0.5 + 1.5 * u01(rng);
    Vec3 e;
    for (int k = 0; k < 3; ++k) e[k] = s * std::exp(std::log(cond) * u01(rng));
    const Mat3 w = q * e.asDiagonal() * q.transpose();
    return 0.5 * (w + w.transpose());
}

/// Random colliding free velocity: b_n ∈ [−2, −0.05], b_t of a random scale (0 allowed).
Vec3 random_colliding_b(std::mt19937_64& rng) {
    std::normal_distribution<double> n01(0.0, 1.0);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    constexpr double scales[] = {0.0, 0.01, 0.3, 1.0, 5.0};
    const double st = scales[std::size_t(u01(rng) * 5.0) % 5];
    return Vec3(-0.05 - 1.95 * u01(rng), st * n01(rng), st * n01(rng));
}

/// E = ½ bᵀW⁻¹b [J]: the kinetic energy of the free velocity, the scale of f.
double energy_scale(const Mat3& W, const Vec3& b) { return 0.5 * b.dot(W.ldlt().solve(b)); }

double f_of(const Mat3& W, const Vec3& b, const Vec3& g) { return impact_energy_change(W, b, g); }

/// Points of the plane (Wγ + b)_n = 0 by polar coordinates of γ_t: γ_t = ρ e(φ),
/// γ_n = (−b_n − W_ntᵀγ_t) / W_nn; the cone bounds ρ ≤ ρ_max(φ) (∞ when unbounded).
struct PlaneRay {
    Vec3 g0, v;  // γ(ρ) = g0 + ρ v
    double rho_max;
};
PlaneRay plane_ray(const Mat3& W, const Vec3& b, double mu, double phi) {
    const Vec3 e(0.0, std::cos(phi), std::sin(phi));
    const double beta = -b[0] / W(0, 0);
    const double c = W.row(0).dot(e) / W(0, 0);
    PlaneRay r{Vec3(beta, 0.0, 0.0), Vec3(-c, e[1], e[2]), 0.0};
    const double coef = 1.0 + mu * c;  // ρ ≤ μ γ_n = μ (β − ρ c)
    r.rho_max = coef > 0.0 ? mu * beta / coef : std::numeric_limits<double>::infinity();
    return r;
}

/// Brute force: along each ray the objective is a quadratic in ρ, minimised in closed form
/// on [0, ρ_max]; then a grid over φ and golden-section refinement of the best grid minima.
struct Best {
    Vec3 gamma;
    double f;
};
Best brute_force(const Mat3& W, const Vec3& b, double mu) {
    auto on_ray = [&](double phi) {
        const PlaneRay r = plane_ray(W, b, mu, phi);
        const double a2 = r.v.dot(W * r.v), a1 = r.v.dot(W * r.g0) + b.dot(r.v);
        const double rho = std::clamp(-a1 / a2, 0.0, r.rho_max);
        const Vec3 g = r.g0 + rho * r.v;
        return Best{g, f_of(W, b, g)};
    };
    constexpr int n = 4096;
    const double dphi = 2.0 * kPi / n;
    std::vector<double> h(n);
    for (int k = 0; k < n; ++k) h[k] = on_ray(k * dphi).f;
    std::vector<int> minima;
    for (int k = 0; k < n; ++k)
        if (h[k] <= h[(k + n - 1) % n] && h[k] <= h[(k + 1) % n]) minima.push_back(k);
    std::sort(minima.begin(), minima.end(), [&](int x, int y) { return h[x] < h[y]; });
    Best best = on_ray(0.0);
    const double ratio = 0.5 * (std::sqrt(5.0) - 1.0);
    for (std::size_t m = 0; m < std::min<std::size_t>(3, minima.size()); ++m) {
        double lo = (minima[m] - 1) * dphi, hi = (minima[m] + 1) * dphi;
        double x1 = hi - ratio * (hi - lo), x2 = lo + ratio * (hi - lo);
        double f1 = on_ray(x1).f, f2 = on_ray(x2).f;
        for (int it = 0; it < 200; ++it) {
            if (f1 <= f2) {
                hi = x2; x2 = x1; f2 = f1;
                x1 = hi - ratio * (hi - lo); f1 = on_ray(x1).f;
            } else {
                lo = x1; x1 = x2; f1 = f2;
                x2 = lo + ratio * (hi - lo); f2 = on_ray(x2).f;
            }
        }
        const Best c = on_ray(0.5 * (lo + hi));
        if (c.f < best.f) best = c;
    }
    return best;
}

/// The CCP solution of the single contact, K ∋ γ ⊥ Wγ + b ∈ K*: the fixed point of
/// γ ← Π_K(γ − η (Wγ + b)) with η = 1 / λ_max(W) (a convergent projected gradient).
Vec3 ccp_solution(const Mat3& W, const Vec3& b, double mu) {
    const double eta = 1.0 / Eigen::SelfAdjointEigenSolver<Mat3>(W).eigenvalues().maxCoeff();
    Vec3 g = Vec3::Zero();
    for (int it = 0; it < 2000000; ++it) {
        const Vec3 next = project_friction_cone(g - eta * (W * g + b), mu);
        const double change = (next - g).norm();
        g = next;
        if (change <= 1e-16 * std::max(g.norm(), 1e-300)) break;
    }
    return g;
}

/// Solutions of the impulsive Coulomb law on the plane d_n = 0 (Stewart): the sticking
/// impulse −W⁻¹b if it lies in K, and every boundary point whose slip d_t directly opposes
/// γ_t (d_t = −κ e, κ > 0), found by a φ scan and bisection on the sign of d_t × e.
std::vector<Vec3> coulomb_solutions(const Mat3& W, const Vec3& b, double mu) {
    std::vector<Vec3> out;
    const Vec3 stick = -W.ldlt().solve(b);
    if (stick.tail<2>().norm() <= mu * stick[0]) out.push_back(stick);
    if (mu == 0.0) {
        if (out.empty()) out.push_back(Vec3(-b[0] / W(0, 0), 0.0, 0.0));
        return out;
    }
    struct Point {
        bool valid;
        Vec3 g;
        double cross, along;
    };
    auto at = [&](double phi) {
        const PlaneRay r = plane_ray(W, b, mu, phi);
        Point p{std::isfinite(r.rho_max), Vec3::Zero(), 0.0, 0.0};
        if (!p.valid) return p;
        p.g = r.g0 + r.rho_max * r.v;
        const Vec3 d = W * p.g + b;
        const double c = std::cos(phi), s = std::sin(phi);
        p.cross = d[1] * s - d[2] * c;
        p.along = d[1] * c + d[2] * s;
        return p;
    };
    constexpr int n = 20000;
    const double dphi = 2.0 * kPi / n;
    Point prev = at(0.0);
    for (int k = 1; k <= n; ++k) {
        const Point cur = at(k * dphi);
        if (prev.valid && cur.valid && (prev.cross > 0.0) != (cur.cross > 0.0)) {
            double lo = (k - 1) * dphi, hi = k * dphi;
            const bool lo_positive = prev.cross > 0.0;
            for (int it = 0; it < 200 && hi - lo > 1e-15; ++it) {
                const double mid = 0.5 * (lo + hi);
                ((at(mid).cross > 0.0) == lo_positive ? lo : hi) = mid;
            }
            const Point root = at(0.5 * (lo + hi));
            if (root.along < 0.0) out.push_back(root.g);
        }
        prev = cur;
    }
    return out;
}

/// Checks of any colliding solution: finite, d_n = 0, inside K; on K's surface when sliding.
void expect_feasible(const Mat3& W, const Vec3& b, double mu, const MaxDissipationImpulse& r,
                     const char* what) {
    const Vec3& g = r.gamma;
    ASSERT_TRUE(g.allFinite()) << what;
    const Vec3 d = W * g + b;
    const double vscale = std::abs(b[0]) + W.norm() * g.norm();  // [m/s]
    EXPECT_LE(std::abs(d[0]), 1e-12 * vscale) << what << ": d_n = " << d[0];
    EXPECT_GT(g[0], 0.0) << what;
    EXPECT_LE(g.tail<2>().norm(), mu * g[0] * (1.0 + 1e-12)) << what;
    if (r.state == ImpactState::Sticking) {
        EXPECT_LE(d.norm(), 1e-12 * vscale) << what << ": sticking but d = " << d.transpose();
    } else {
        ASSERT_EQ(r.state, ImpactState::Sliding) << what;
        EXPECT_NEAR(g.tail<2>().norm(), mu * g[0], 1e-12 * mu * g[0]) << what << ": not on ∂K";
    }
}

// For many random SPD W (condition ≤ 100), colliding b and μ ∈ {0, 0.1, 0.5, 1, 2}, fixed
// seed: the exact solution's objective agrees with the brute force within 1e-9 E and is
// never worse by more than 1e-12 E (E = ½ bᵀW⁻¹b); γ agrees within 1e-6 ‖γ‖ (the brute
// force locates φ to about √ε).
TEST(MaxDissipation, MatchesBruteForceOnRandomContacts) {
    std::mt19937_64 rng(20170601);
    int sliding = 0, sticking = 0;
    for (double mu : kMus)
        for (int k = 0; k < 200; ++k) {
            const Mat3 W = random_spd(rng, 100.0);
            const Vec3 b = random_colliding_b(rng);
            const MaxDissipationImpulse r = solve_max_dissipation_contact(W, b, mu);
            expect_feasible(W, b, mu, r, "random");
            const Best bf = brute_force(W, b, mu);
            const double E = energy_scale(W, b), f = f_of(W, b, r.gamma);
            EXPECT_NEAR(f, bf.f, 1e-9 * E) << "mu " << mu << " case " << k;
            EXPECT_LE(f, bf.f + 1e-12 * E) << "mu " << mu << " case " << k;
            EXPECT_LE((r.gamma - bf.gamma).norm(), 1e-6 * bf.gamma.norm())
                << "mu " << mu << " case " << k << ": " << r.gamma.transpose() << " vs "
                << bf.gamma.transpose();
            (r.state == ImpactState::Sticking ? sticking : sliding) += 1;
        }
    EXPECT_GT(sliding, 300);  // both branches are exercised
    EXPECT_GT(sticking, 100);
}

// Colliding contacts, including hard ones: strongly anisotropic W (condition 1e6), W
// diagonal, b_t = 0 exactly, tiny and huge scales: d_n = 0 within 1e-12 of the velocity
// scale, ‖γ_t‖ ≤ μ γ_n (1 + 1e-12), sticking ⇒ d = 0, sliding ⇒ on ∂K; and the objective
// still within 1e-9 E of the brute force.
TEST(MaxDissipation, CollidingContactStopsInTheNormalAndStaysInTheCone) {
    std::mt19937_64 rng(4);
    for (double mu : kMus)
        for (int k = 0; k < 200; ++k) {
            const double cond = k % 4 == 0 ? 1e6 : k % 4 == 1 ? 1e4 : 10.0;
            Mat3 W = random_spd(rng, cond);
            if (k % 5 == 0) W = Vec3(1.0 + k, 0.5, 3.0).asDiagonal();  // diagonal
            Vec3 b = random_colliding_b(rng);
            if (k % 7 == 0) b.tail<2>().setZero();                      // b_t = 0 exactly
            const double unit = k % 3 == 0 ? 1e-9 : k % 3 == 1 ? 1.0 : 1e6;
            b *= unit;
            const MaxDissipationImpulse r = solve_max_dissipation_contact(W, b, mu);
            expect_feasible(W, b, mu, r, "hard");
            const Best bf = brute_force(W, b, mu);
            EXPECT_NEAR(f_of(W, b, r.gamma), bf.f, 1e-9 * energy_scale(W, b))
                << "mu " << mu << " case " << k << " cond " << cond;
        }
}

// Robustness: 20000 random contacts far outside physical ranges (W and b scaled by up to
// 1e±50, ‖b_t‖/|b_n| up to 1e±10, condition of W up to 1e12, μ from 1e-8 to 1e8): γ is
// always finite; colliding ones have γ_n > 0, ‖γ_t‖ ≤ μ γ_n (1 + 1e-12) and |d_n| ≤ 1e-12
// of the velocity scale (norms taken overflow-safe).
TEST(MaxDissipation, ExtremeInputsStayFiniteAndFeasible) {
    std::mt19937_64 rng(1234);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    auto pow10 = [&](double span) { return std::pow(10.0, span * (u01(rng) - 0.5)); };
    for (int k = 0; k < 20000; ++k) {
        const Mat3 W = random_spd(rng, std::pow(10.0, 12.0 * u01(rng))) * pow10(100.0);
        Vec3 b = random_colliding_b(rng);
        b[0] *= pow10(10.0);
        b.tail<2>() *= pow10(10.0);
        b *= pow10(100.0);
        const double mu = k % 10 == 0 ? 0.0 : pow10(16.0);
        const MaxDissipationImpulse r = solve_max_dissipation_contact(W, b, mu);
        ASSERT_TRUE(r.gamma.allFinite()) << "case " << k;
        ASSERT_NE(r.state, ImpactState::Separating);
        const Vec3 d = W * r.gamma + b;
        EXPECT_LE(std::abs(d[0]), 1e-12 * (std::abs(b[0]) + W.norm() * r.gamma.stableNorm()))
            << "case " << k;
        EXPECT_GT(r.gamma[0], 0.0) << "case " << k;
        EXPECT_LE(r.gamma.tail<2>().stableNorm(), mu * r.gamma[0] * (1.0 + 1e-12)) << "case " << k;
    }
}

// b_n ≥ 0 (including b_n = 0 and −0.0 < b_n) gives exactly γ = 0; so does non-finite input.
TEST(MaxDissipation, SeparatingContactGetsNoImpulse) {
    std::mt19937_64 rng(7);
    for (double mu : kMus)
        for (int k = 0; k < 50; ++k) {
            const Mat3 W = random_spd(rng, 100.0);
            Vec3 b = random_colliding_b(rng);
            b[0] = k % 3 == 0 ? 0.0 : k % 3 == 1 ? 1e-300 : -b[0];
            const MaxDissipationImpulse r = solve_max_dissipation_contact(W, b, mu);
            EXPECT_EQ(r.state, ImpactState::Separating);
            EXPECT_EQ(r.gamma, Vec3::Zero());
        }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(solve_max_dissipation_contact(Mat3::Identity(), Vec3(-1, nan, 0), 0.5).gamma,
              Vec3::Zero());
    EXPECT_EQ(solve_max_dissipation_contact(Mat3::Identity(), Vec3(-1, 1, 0), nan).gamma,
              Vec3::Zero());
}

// Closed forms. μ = 0: γ = (−b_n / W_nn, 0, 0). W diagonal with equal tangential entries
// (a sphere): the impulsive Coulomb law, γ_t = −μ γ_n b_t/‖b_t‖ when ‖b_t‖ > μ γ_n W_tt,
// else sticking, γ_t = −b_t / W_tt. b_t = 0 with W_nt = 0: γ = (β, 0, 0), d = 0. Nearly
// sticking: the sticking impulse placed 1e-9 inside or outside ∂K gives it back (inside:
// sticking, within 1e-12; outside: sliding, within 1e-8, on ∂K). Else to 1e-14 relative.
TEST(MaxDissipation, ClosedFormsAndNearlySticking) {
    std::mt19937_64 rng(11);
    const Mat3 W = random_spd(rng, 30.0);
    const Vec3 b(-0.7, 0.4, -1.3);
    const Vec3 g0 = solve_max_dissipation_contact(W, b, 0.0).gamma;
    EXPECT_NEAR(g0[0], 0.7 / W(0, 0), 1e-14 * g0[0]);
    EXPECT_EQ(g0[1], 0.0);
    EXPECT_EQ(g0[2], 0.0);

    const Mat3 sphere = Vec3(0.5, 1.75, 1.75).asDiagonal();  // 1/m, 1/m + r²/J (solid sphere)
    for (double mu : {0.1, 0.5, 0.7, 1.0}) {
        const Vec3 bs(-2.0, 3.0, -4.0);  // ‖b_t‖ = 5; sliding iff 5 > μ γ_n W_tt = 7 μ
        const MaxDissipationImpulse r = solve_max_dissipation_contact(sphere, bs, mu);
        const double gn = 2.0 / 0.5;
        const double gt = 5.0 > 7.0 * mu ? mu * gn : 5.0 / 1.75;  // ‖γ_t‖
        EXPECT_EQ(r.state, 5.0 > 7.0 * mu ? ImpactState::Sliding : ImpactState::Sticking);
        EXPECT_NEAR(r.gamma[0], gn, 1e-14 * gn);
        EXPECT_NEAR(r.gamma[1], -gt * 3.0 / 5.0, 1e-14 * gn);
        EXPECT_NEAR(r.gamma[2], -gt * -4.0 / 5.0, 1e-14 * gn);
    }
    {
        const MaxDissipationImpulse r = solve_max_dissipation_contact(sphere, Vec3(-2, 0, 0), 0.5);
        EXPECT_EQ(r.state, ImpactState::Sticking);
        EXPECT_EQ(r.gamma, Vec3(4.0, 0.0, 0.0));
    }
    for (double mu : {0.1, 0.5, 2.0})
        for (int k = 0; k < 20; ++k) {
            const Mat3 Wk = random_spd(rng, 100.0);
            const double phi = 0.3 * k;
            for (double tilt : {1.0 - 1e-9, 1.0 + 1e-9}) {
                const Vec3 target(1.0, tilt * mu * std::cos(phi), tilt * mu * std::sin(phi));
                const Vec3 bk = -Wk * target;  // so that −W⁻¹b = target
                if (!(bk[0] < 0.0)) continue;
                const MaxDissipationImpulse r = solve_max_dissipation_contact(Wk, bk, mu);
                expect_feasible(Wk, bk, mu, r, "nearly sticking");
                if (tilt < 1.0) {
                    EXPECT_EQ(r.state, ImpactState::Sticking);
                    EXPECT_LE((r.gamma - target).norm(), 1e-12 * target.norm());
                } else {
                    EXPECT_EQ(r.state, ImpactState::Sliding);
                    EXPECT_LE((r.gamma - target).norm(), 1e-8 * target.norm());
                }
            }
        }
}

// The paper's claim: among the impulses with d_n = 0 inside K, max-dissipation leaves the
// least energy, in particular no more than any solution of the impulsive Coulomb law on the
// same plane (f_md ≤ f_C + 1e-12 E). The two coincide when W_nt = 0 (within 1e-9 E) and
// differ by more than 1e-6 E in some coupled cases.
TEST(MaxDissipation, DissipatesAtLeastAsMuchAsTheImpulsiveCoulombLaw) {
    std::mt19937_64 rng(1995);
    int compared = 0, strictly_better = 0;
    for (double mu : kMus)
        for (int k = 0; k < 60; ++k) {
            Mat3 W = random_spd(rng, 20.0);
            const bool uncoupled = k % 4 == 0;
            if (uncoupled) W(0, 1) = W(1, 0) = W(0, 2) = W(2, 0) = 0.0;  // still SPD
            const Vec3 b = random_colliding_b(rng);
            const Vec3 g = solve_max_dissipation_contact(W, b, mu).gamma;
            const double E = energy_scale(W, b), f = f_of(W, b, g);
            for (const Vec3& c : coulomb_solutions(W, b, mu)) {
                const double fc = f_of(W, b, c);
                EXPECT_LE(f, fc + 1e-12 * E) << "mu " << mu << " case " << k;
                if (uncoupled) {
                    EXPECT_NEAR(f, fc, 1e-9 * E) << "mu " << mu << " case " << k;
                }
                if (fc - f > 1e-6 * E) ++strictly_better;
                ++compared;
            }
        }
    EXPECT_GT(compared, 250);
    EXPECT_GT(strictly_better, 10);
}

// Against the CCP of the same contact (K ∋ γ ⊥ Wγ + b ∈ K*). Note the direction: the CCP
// is the minimiser of the same f = ½γᵀWγ + bᵀγ over all of K, a superset of the
// max-dissipation set K ∩ {d_n = 0}, so f_CCP ≤ f_md always; the CCP gets there by letting
// the contact separate (d_n = μ‖d_t‖ > 0 when sliding). When the CCP solution has d_n = 0
// (sticking, or μ = 0) it is feasible for, hence equal to, the max-dissipation solution.
// Tolerances: energies 1e-10 E (projected gradient to 1e-16); γ 1e-8 relative.
TEST(MaxDissipation, CcpReachesLessEnergyOnlyByLiftingOffAndAgreesWithoutLiftOff) {
    std::mt19937_64 rng(2017);
    int equal = 0, lifted = 0;
    for (double mu : kMus)
        for (int k = 0; k < 40; ++k) {
            const Mat3 W = random_spd(rng, 10.0);
            const Vec3 b = random_colliding_b(rng);
            const Vec3 g = solve_max_dissipation_contact(W, b, mu).gamma;
            const Vec3 c = ccp_solution(W, b, mu);
            const double E = energy_scale(W, b);
            const double f = f_of(W, b, g), fc = f_of(W, b, c);
            EXPECT_LE(fc, f + 1e-10 * E) << "mu " << mu << " case " << k;
            const Vec3 dc = W * c + b;
            const double vscale = std::abs(b[0]) + W.norm() * c.norm();
            if (dc[0] <= 1e-9 * vscale) {  // CCP without lift-off
                EXPECT_LE((g - c).norm(), 1e-8 * c.norm()) << "mu " << mu << " case " << k;
                EXPECT_NEAR(f, fc, 1e-10 * E);
                ++equal;
            } else {
                EXPECT_NEAR(dc[0], mu * dc.tail<2>().norm(), 1e-9 * vscale);  // lift-off
                EXPECT_LT(fc, f);
                ++lifted;
            }
        }
    EXPECT_GT(equal, 40);
    EXPECT_GT(lifted, 40);
}

// A sliding contact (large tangential b): max-dissipation gives d_n = 0 (within 1e-12 of
// the velocity scale); the CCP's solution has d_n = μ‖d_t‖ > 0 (within 1e-9), the lift-off
// of docs/design.md §4, for a sphere-like W and for a coupled W.
TEST(MaxDissipation, NoLiftOffWhereTheCcpLiftsOff) {
    std::mt19937_64 rng(3);
    const Mat3 sphere = Vec3(1.0, 3.5, 3.5).asDiagonal();
    for (const Mat3& W : {sphere, random_spd(rng, 5.0)})
        for (double mu : {0.1, 0.5, 1.0}) {
            const Vec3 b(-0.2, 4.0, -3.0);
            const MaxDissipationImpulse r = solve_max_dissipation_contact(W, b, mu);
            ASSERT_EQ(r.state, ImpactState::Sliding);
            const Vec3 d = W * r.gamma + b;
            EXPECT_LE(std::abs(d[0]), 1e-12 * (0.2 + W.norm() * r.gamma.norm()));
            EXPECT_GT(d.tail<2>().norm(), 0.1);
            const Vec3 c = ccp_solution(W, b, mu);
            const Vec3 dc = W * c + b;
            EXPECT_NEAR(dc[0], mu * dc.tail<2>().norm(), 1e-9 * (0.2 + W.norm() * c.norm()));
            EXPECT_GT(dc[0], 0.01) << "the CCP lifts off at μ‖d_t‖";
        }
}

// The seed's Figures 2–4: a contact whose plane of maximum compression cuts the cone in a
// hyperbola, so the objective along the conic section has two local minima of which only
// one is global. The exact solution is the global one (objective within 1e-9 E of the
// brute force, γ within 1e-6 ‖γ‖), strictly below the other local minimum. Writes
// <build>/validation/max_dissipation_hyperbola.csv (W, b, μ, both solutions, and the
// objective along the section) for tools/validation/plot_max_dissipation.py.
TEST(MaxDissipation, HyperbolaWithTwoLocalMinimaFindsTheGlobalOne) {
    std::mt19937_64 rng(4);
    for (int attempt = 0; attempt < 100000; ++attempt) {
        const Mat3 W = random_spd(rng, 30.0);
        const Vec3 b = random_colliding_b(rng);
        const double mu = 0.8;
        const Vec3 a = W.row(0).transpose() / W(0, 0);  // plane: γ_n = β − a_t·γ_t
        if (mu * a.tail<2>().norm() <= 1.05) continue;  // the section is not a hyperbola
        // objective along the section, by the angle of γ_t
        constexpr int n = 3600;
        std::vector<double> phi(n), f(n, std::numeric_limits<double>::quiet_NaN());
        for (int k = 0; k < n; ++k) {
            phi[k] = 2.0 * kPi * k / n;
            const PlaneRay r = plane_ray(W, b, mu, phi[k]);
            if (std::isfinite(r.rho_max) && r.rho_max > 0.0) f[k] = f_of(W, b, r.g0 + r.rho_max * r.v);
        }
        std::vector<int> minima;
        for (int k = 0; k < n; ++k) {
            const double l = f[(k + n - 1) % n], r = f[(k + 1) % n];
            if (std::isfinite(f[k]) && std::isfinite(l) && std::isfinite(r) && f[k] < l && f[k] < r)
                minima.push_back(k);
        }
        const MaxDissipationImpulse sol = solve_max_dissipation_contact(W, b, mu);
        if (minima.size() != 2 || sol.state != ImpactState::Sliding) continue;
        const double E = energy_scale(W, b);
        const double f_other = std::max(f[minima[0]], f[minima[1]]);
        const double f_global = std::min(f[minima[0]], f[minima[1]]);
        if (f_other - f_global < 1e-3 * E) continue;  // want two clearly distinct minima
        const Best bf = brute_force(W, b, mu);
        const double fs = f_of(W, b, sol.gamma);
        std::printf("[ maxdiss  ] hyperbola case after %d draws: f = %.6g, brute force %.6g, "
                    "other local minimum %.6g (E = %.4g)\n", attempt + 1, fs, bf.f, f_other, E);
        EXPECT_NEAR(fs, bf.f, 1e-9 * E);
        EXPECT_LE((sol.gamma - bf.gamma).norm(), 1e-6 * bf.gamma.norm());
        EXPECT_LT(fs, f_other - 1e-3 * E);
        EXPECT_LE(fs, f_global + 1e-6 * E);

        const std::filesystem::path dir = std::filesystem::path(TALUS_BINARY_DIR) / "validation";
        std::filesystem::create_directories(dir);
        std::ofstream csv(dir / "max_dissipation_hyperbola.csv");
        csv.precision(17);
        csv << "kind,i,a,b,c\n";
        for (int r = 0; r < 3; ++r) csv << "W," << r << ',' << W(r, 0) << ',' << W(r, 1) << ',' << W(r, 2) << '\n';
        csv << "b,0," << b[0] << ',' << b[1] << ',' << b[2] << '\n';
        csv << "mu,0," << mu << ",0,0\n";
        csv << "gamma,0," << sol.gamma[0] << ',' << sol.gamma[1] << ',' << sol.gamma[2] << '\n';
        csv << "brute,0," << bf.gamma[0] << ',' << bf.gamma[1] << ',' << bf.gamma[2] << '\n';
        for (int k = 0; k < n; ++k) csv << "section," << k << ',' << phi[k] << ',' << f[k] << ",0\n";
        return;
    }
    FAIL() << "no hyperbola case with two local minima found";
}

// Sweep on one contact: a sphere (r = 5 cm) sliding at 2 m/s on a plane with μ = 0.3
// decelerates at exactly μ g (v(t) = v0 − μ g t within 1e-9 m/s) with normal velocity
// zero (≤ 1e-12 m/s) and angular acceleration 5/2 μ g / r, until it rolls; from then on it
// rolls at 5/7 v0 (angular momentum about the contact point), within 1e-9 m/s. The same
// with PGS lifts off at about μ v0 in the first step.
TEST(MaxDissipation, SlidingSphereDeceleratesAtMuGWithoutLiftOff) {
    const double r = 0.05, g = 9.81, h = 1e-3, mu = 0.3, v0 = 2.0;
    auto make = [&](SolverType type) {
        World w = make_world(h, Vec3(0, 0, -g), 1e-12, 200);
        w.solver.type = type;
        const uint32_t m = add_material(w, 2500.0, mu);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0, 0, r), r, m, Vec3(v0, 0, 0));
        return w;
    };
    World w = make(SolverType::MaxDiss);
    World p = make(SolverType::PGS);
    // Both trajectories for docs/validation (tools/validation/plot_max_dissipation.py).
    const std::filesystem::path dir = std::filesystem::path(TALUS_BINARY_DIR) / "validation";
    std::filesystem::create_directories(dir);
    std::ofstream csv(dir / "max_dissipation_sliding_sphere.csv");
    csv << "model,t,vx,vz,omega_r\n";
    auto record = [&](const char* model, const World& x) {
        csv << model << ',' << x.time << ',' << x.bodies.velocity[0].x() << ','
            << x.bodies.velocity[0].z() << ',' << x.bodies.angular_velocity[0].y() * r << '\n';
    };
    for (int s = 0; s < 300; ++s) {
        ASSERT_TRUE(p.step().ok);
        record("pgs", p);
    }
    csv.flush();
    const double t_roll = 2.0 * v0 / (7.0 * mu * g);  // ≈ 0.194 s
    int k = 1;
    for (; k * h < t_roll - 2 * h; ++k) {
        ASSERT_TRUE(w.step().ok);
        record("maxdiss", w);
        ASSERT_TRUE(w.diagnostics().converged);
        const double t = k * h;
        EXPECT_NEAR(w.bodies.velocity[0].x(), v0 - mu * g * t, 1e-9) << "step " << k;
        EXPECT_LE(std::abs(w.bodies.velocity[0].z()), 1e-12) << "step " << k;
        EXPECT_NEAR(w.bodies.position[0].z(), r, 1e-12) << "step " << k;
        EXPECT_NEAR(w.bodies.angular_velocity[0].y() * r, 2.5 * mu * g * t, 1e-9) << "step " << k;
    }
    for (; k * h < 0.3; ++k) {
        ASSERT_TRUE(w.step().ok);
        record("maxdiss", w);
    }
    EXPECT_NEAR(w.bodies.velocity[0].x(), 5.0 / 7.0 * v0, 1e-9);
    EXPECT_NEAR(w.bodies.angular_velocity[0].y() * r, 5.0 / 7.0 * v0, 1e-9);
    EXPECT_LE(std::abs(w.bodies.velocity[0].z()), 1e-12);

    World first = make(SolverType::PGS);
    ASSERT_TRUE(first.step().ok);
    EXPECT_GT(first.bodies.velocity[0].z(), 0.5 * mu * v0) << "PGS (CCP) lift-off expected";
}

// Multi-contact: on a settled pile, 20 steps with maxdiss each converge (fixed-point
// residual ≤ 1e-4 m/s, the default tolerance). After the last, delassus_block(i) is the
// response of d_i to a unit impulse of contact i (within 1e-9 ‖W‖: velocities of the pile
// enter by cancellation) with trace 3/η_i (1e-12), every contact is a fixed
// point of its exact block solve (‖γ_i − solve(W_ii, d_i − W_ii γ_i)‖ / η_i ≤ 10 tol) and
// no contact approaches faster than 10 tol. (Like PGS, the sweep slows down at tight
// tolerances: a grain stuck in a corner between floor and wall can have no joint sticking
// solution, and the impulses then creep along a null direction of N, leaving ν unchanged,
// at a rate set by the inconsistency, until one contact reaches the cone's surface.)
TEST(MaxDissipation, GaussSeidelReachesAFixedPointOnAPile) {
    World w = settled_pile();
    w.solver.type = SolverType::MaxDiss;
    const double tol = 1e-4;
    w.solver.tolerance = tol;
    w.solver.max_iterations = 5000;
    for (int k = 0; k < 20; ++k) {
        ASSERT_TRUE(w.step().ok);
        EXPECT_TRUE(w.diagnostics().converged) << "step " << k << ": residual "
                                               << w.diagnostics().residual;
        EXPECT_LE(w.diagnostics().residual, tol);
    }
    const AssembledBatch& c = w.batch();
    ASSERT_GT(c.size(), 100u);
    double worst = 0.0, approach = 0.0;
    const SolverBodies sb(w.bodies);
    for (std::size_t i = 0; i < c.size(); ++i) {
        const Vec3 d = contact_velocity(c, sb, i);
        const Mat3 W = delassus_block(c, sb, i);
        // W_ii is the response of d_i to the contact's own impulse, and trace(W_ii) = 3/η_i
        EXPECT_NEAR(W.trace(), 3.0 / c.eta[i], 1e-12 * W.trace());
        for (int k = 0; k < 3; ++k) {
            SolverBodies probe = sb;
            apply_impulse(c, contact_frame(c, i), probe, i, Vec3::Unit(k));
            const Vec3 column = contact_velocity(c, probe, i) - d;
            EXPECT_LE((column - W.col(k)).norm(), 1e-9 * W.norm()) << "contact " << i;
        }
        const Vec3 g = solve_max_dissipation_contact(W, d - W * c.gamma[i], c.mu[i]).gamma;
        worst = std::max(worst, (g - c.gamma[i]).norm() / c.eta[i]);
        approach = std::max(approach, -d[0]);
    }
    EXPECT_LE(worst, 10.0 * tol);
    EXPECT_LE(approach, 10.0 * tol);
}

std::vector<double> state_after(int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    World w = make_world(2e-3, Vec3(0, 0, -9.81), 1e-5, 25);
    w.solver.type = SolverType::MaxDiss;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(-0.05, -0.05, 0), Vec3(0.05, 0.05, 0.4), m);
    fill_lattice(w, Vec3(-0.05, -0.05, 0), Vec3(0.05, 0.05, 0.15), 0.004, m);
    run_steps(w, steps_for_build(40));  // fewer under a sanitizer: instrumented.hpp
    return state_vector(w);
}

// The sweep uses the contact colouring like PGS: bit-identical on 1 and 2 threads.
TEST(MaxDissipation, GaussSeidelIsBitIdenticalOnOneAndTwoThreads) {
    const auto one = state_after(1), two = state_after(2);
    ASSERT_EQ(one.size(), two.size());
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)), 0);
}

// A sphere squeezed between the floor and a descending press is reported as
// over-constrained (docs/design.md §4) by the shared check, as for the CCP solvers, 15–80 steps in.
TEST(MaxDissipation, SqueezedSphereIsReportedAsOverConstrained) {
    const double r = 0.01;
    World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-6, 100);
    w.solver.type = SolverType::MaxDiss;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_plane(w, Vec3(0, 0, 2 * r + 0.002), -Vec3::UnitZ(), m, Vec3(0, 0, -0.1));
    add_sphere(w, Vec3(0, 0, r), r, m);
    StepStatus status;
    int k = 0;
    for (; k < 500 && status.ok; ++k) status = w.step();
    ASSERT_FALSE(status.ok) << "the squeeze went unnoticed";
    EXPECT_NE(status.message.find("over-constrained"), std::string::npos) << status.message;
    EXPECT_NE(status.message.find("body 0 against wall 1"), std::string::npos) << status.message;
    // noticed soon after the press closes the 2 mm gap (20 steps), before a blow-up
    EXPECT_GT(k, 15);
    EXPECT_LT(k, 80);
    EXPECT_TRUE(w.bodies.position[0].allFinite());
}

// Scene files select it as type = "maxdiss".
TEST(MaxDissipation, SceneTypeMaxdiss) {
    const std::string text = R"(
[solver]
type = "maxdiss"

[[material]]
name = "glass"
density = 2500
friction = 0.5

[[body]]
shape = "sphere"
radius = 0.1
material = "glass"
position = [0, 0, 1]
)";
    const Scene s = parse_scene(text, "mem/scene.toml", {});
    EXPECT_EQ(s.world.solver.type, SolverType::MaxDiss);
    EXPECT_STREQ(solver_name(s.world.solver.type), "maxdiss");
}

}  // namespace
}  // namespace talus
