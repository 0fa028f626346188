// The exact single-contact Coulomb solve (solvers/coulomb_local.hpp).
//
// Sliding: with r = r_n (1, μ e), e = (cos θ, sin θ) the friction direction, u_n = 0 gives
// r_n = a / D(θ) with a = −q_n > 0 and D(θ) = W_nn + μ W_nT e, and then
//   D u_T = a (W_Tn + μ W_TT e) + D q_T =: v(θ).
// A sliding solution is a θ with D > 0, v × e = 0 and v·e < 0 (friction opposes the slip).
// g(θ) = v(θ) × e is a trigonometric polynomial of degree 2, so it has at most four roots
// on [0, 2π). Newton from the hint's direction finds the right one in a few steps when the
// contact slid the same way in the last sweep; otherwise 64 samples bracket every simple
// root and bisection pins it to rounding.
#include "solvers/coulomb_local.hpp"

#include <Eigen/LU>
#include <cmath>
#include <limits>

#include "solvers/cone_projection.hpp"

namespace talus {
namespace {

using Vec2 = Eigen::Vector2d;
using Mat2 = Eigen::Matrix2d;

constexpr double kPi = 3.14159265358979323846;

struct Sliding {
    double a, mu, Wnn;
    Vec2 WnT, WTn, qT;
    Mat2 WTT;

    Vec2 dir(double t) const { return Vec2(std::cos(t), std::sin(t)); }
    double D(const Vec2& e) const { return Wnn + mu * WnT.dot(e); }
    Vec2 v(const Vec2& e) const { return a * (WTn + mu * (WTT * e)) + D(e) * qT; }
    double g(double t) const {
        const Vec2 e = dir(t);
        const Vec2 w = v(e);
        return w[0] * e[1] - w[1] * e[0];
    }
    /// g'(θ) = v' × e + v × e', with e' = (−sin θ, cos θ) and v' = aμ W_TT e' + μ (W_nT e') q_T.
    double dg(double t) const {
        const Vec2 e = dir(t);
        const Vec2 ep(-e[1], e[0]);
        const Vec2 w = v(e);
        const Vec2 wp = a * mu * (WTT * ep) + mu * WnT.dot(ep) * qT;
        return (wp[0] * e[1] - wp[1] * e[0]) + (w[0] * ep[1] - w[1] * ep[0]);
    }
    /// The impulse of a root θ when it is a valid sliding solution.
    bool impulse(double t, Vec3& r) const {
        const Vec2 e = dir(t);
        const double d = D(e);
        if (!(d > 0.0)) return false;
        const Vec2 w = v(e);
        // v·e < 0, allowing rounding where the slip vanishes (the stick/slide boundary)
        if (w.dot(e) > 1e-12 * (w.norm() + a * WTT.norm() + std::abs(d) * qT.norm())) return false;
        const double rn = a / d;
        r = Vec3(rn, mu * rn * e[0], mu * rn * e[1]);
        return r.allFinite();
    }
    /// |g| small enough to call θ a root [same units as g]
    double scale() const { return a * (WTn.norm() + mu * WTT.norm()) + (Wnn + mu * WnT.norm()) * qT.norm(); }
};

/// Local projected fixed point r ← Π_K(r − ρ û(r)), ρ = 1/trace(W): always defined, slow.
Vec3 local_fixed_point(const Mat3& W, const Vec3& q, double mu, Vec3 r) {
    const double rho = 1.0 / W.trace();
    for (int it = 0; it < 2000; ++it) {
        const Vec3 u = W * r + q;
        const Vec3 uh(u[0] + mu * std::hypot(u[1], u[2]), u[1], u[2]);
        const Vec3 next = project_friction_cone(r - rho * uh, mu);
        const bool done = (next - r).norm() <= 1e-15 * (next.norm() + 1e-300);
        r = next;
        if (done) break;
    }
    return r;
}

}  // namespace

Vec3 coulomb_natural_map(const Vec3& r, const Vec3& u, double mu) {
    const Vec3 uh(u[0] + mu * std::hypot(u[1], u[2]), u[1], u[2]);
    return r - project_friction_cone(r - uh, mu);
}

CoulombContact solve_coulomb_contact(const Mat3& W, const Vec3& q, double mu, const Vec3& hint) {
    using State = CoulombContact::State;
    CoulombContact out;
    if (!(q[0] < 0.0)) return out;  // opens (also a NaN q: leave it to the caller's checks)
    if (mu <= 0.0 || (q[1] == 0.0 && q[2] == 0.0 && W(1, 0) == 0.0 && W(2, 0) == 0.0)) {
        // frictionless, or nothing pushes tangentially: r = (−q_n / W_nn, 0, 0) sticks
        if (W(0, 0) > 0.0) {
            out.r = Vec3(-q[0] / W(0, 0), 0.0, 0.0);
            out.state = mu <= 0.0 ? State::Sliding : State::Sticking;
            return out;
        }
    }
    // W need not be symmetric (FCLIB problems from finite-element and Bullet models are not)
    const double det = W.determinant();
    if (std::abs(det) > 1e-14 * std::pow(W.norm(), 3)) {
        const Vec3 rs = -(W.inverse() * q);
        if (rs.allFinite() && rs[0] > 0.0 && std::hypot(rs[1], rs[2]) <= mu * rs[0]) {
            out.r = rs;
            out.state = State::Sticking;
            return out;
        }
    }

    Sliding s;
    s.a = -q[0];
    s.mu = mu;
    s.Wnn = W(0, 0);
    s.WnT = Vec2(W(0, 1), W(0, 2));
    s.WTn = Vec2(W(1, 0), W(2, 0));
    s.WTT = W.block<2, 2>(1, 1);
    s.qT = Vec2(q[1], q[2]);
    const double gscale = s.scale();
    const double gtol = 1e-13 * gscale;

    // 1. Newton from the hint's friction direction, or against the free slip.
    double t0;
    if (std::hypot(hint[1], hint[2]) > 0.0) t0 = std::atan2(hint[2], hint[1]);
    else t0 = std::atan2(-q[2], -q[1]);
    {
        double t = t0;
        for (int it = 0; it < 30; ++it) {
            const double gv = s.g(t), d = s.dg(t);
            if (std::abs(gv) <= gtol) break;
            if (!(std::abs(d) > 0.0)) break;
            double step = -gv / d;
            if (std::abs(step) > 0.5) step = step > 0.0 ? 0.5 : -0.5;  // stay in the basin
            t += step;
        }
        Vec3 r;
        if (std::abs(s.g(t)) <= 1e-10 * gscale && s.impulse(t, r)) {
            out.r = r;
            out.state = State::Sliding;
            return out;
        }
    }

    // 2. Every root: 64 samples, bisection on each sign change; keep the valid root whose
    //    impulse is closest to the hint.
    constexpr int kSamples = 64;
    const double step = 2.0 * kPi / kSamples;
    bool found = false;
    double best = std::numeric_limits<double>::infinity();
    double t_prev = t0, g_prev = s.g(t0);
    for (int k = 1; k <= kSamples; ++k) {
        const double t_next = t0 + k * step;
        const double g_next = s.g(t_next);
        double root = 0.0;
        bool bracket = false;
        if (g_prev == 0.0) {
            root = t_prev;
            bracket = true;
        } else if ((g_prev < 0.0) != (g_next < 0.0) && g_next != 0.0) {
            double lo = t_prev, hi = t_next, glo = g_prev;
            for (int it = 0; it < 60 && hi - lo > 1e-15; ++it) {
                const double mid = 0.5 * (lo + hi);
                const double gm = s.g(mid);
                if ((gm < 0.0) == (glo < 0.0)) { lo = mid; glo = gm; } else { hi = mid; }
            }
            root = 0.5 * (lo + hi);
            bracket = true;
        }
        Vec3 r;
        if (bracket && s.impulse(root, r)) {
            const double dist = (r - hint).squaredNorm();
            if (dist < best) {
                best = dist;
                out.r = r;
                found = true;
            }
        }
        t_prev = t_next;
        g_prev = g_next;
    }
    if (found) {
        out.state = State::Sliding;
        return out;
    }

    // 3. Rounding defeated the exact cases (W nearly singular): approximate.
    out.r = local_fixed_point(W, q, mu, project_friction_cone(hint, mu));
    out.state = State::Approximate;
    return out;
}

}  // namespace talus
