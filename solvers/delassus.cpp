// Solvers on an assembled Delassus operator (solvers/delassus.hpp): the FCLIB path of
// `talus fclib`. The same methods as the body solvers, written on W instead of bodies;
// serial (the problems are small; the order is fixed, so the bits are too).
#include "solvers/delassus.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "solvers/cone_projection.hpp"
#include "solvers/coulomb_local.hpp"
#include "solvers/max_dissipation.hpp"
#include "solvers/polyhedral_lcp.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

using Vec = Eigen::VectorXd;
using Sparse = Eigen::SparseMatrix<double, Eigen::RowMajor>;

Vec3 block(const Vec& x, std::size_t i) { return Vec3(x[3 * i], x[3 * i + 1], x[3 * i + 2]); }
void set_block(Vec& x, std::size_t i, const Vec3& v) {
    x[3 * i] = v[0];
    x[3 * i + 1] = v[1];
    x[3 * i + 2] = v[2];
}

/// Rows 3i..3i+2 of W r.
Vec3 row_product(const Sparse& W, const Vec& r, std::size_t i) {
    Vec3 out = Vec3::Zero();
    for (int k = 0; k < 3; ++k) {
        double sum = 0.0;
        for (Sparse::InnerIterator it(W, Eigen::Index(3 * i + k)); it; ++it) sum += it.value() * r[it.col()];
        out[k] = sum;
    }
    return out;
}

/// Per-problem data every method uses: diagonal blocks, η_i, Gershgorin row sums, ‖q‖.
struct Prepared {
    const DelassusProblem& p;
    std::vector<Mat3> Wii;
    std::vector<double> eta, gersh;
    double q_scale;  ///< 1 + ‖q‖₂

    explicit Prepared(const DelassusProblem& problem) : p(problem) {
        const std::size_t n = p.contacts();
        Wii.assign(n, Mat3::Zero());
        eta.assign(n, 0.0);
        gersh.assign(n, 0.0);
        for (std::size_t i = 0; i < n; ++i) {
            for (int k = 0; k < 3; ++k) {
                double row = 0.0;
                for (Sparse::InnerIterator it(p.W, Eigen::Index(3 * i + k)); it; ++it) {
                    row += std::abs(it.value());
                    const Eigen::Index c = it.col();
                    if (c >= Eigen::Index(3 * i) && c < Eigen::Index(3 * i + 3)) Wii[i](k, c - 3 * i) = it.value();
                }
                gersh[i] = std::max(gersh[i], row);
            }
            const double tr = Wii[i].trace();
            eta[i] = tr > 0.0 ? 3.0 / tr : 0.0;
        }
        q_scale = 1.0 + p.q.norm();
    }
};

/// ‖r − Π_K(r − (u + shift))‖₂ / (1 + ‖q‖) at u = W r + q; shift per contact: the given
/// vector (CCP with a shifted normal term), or μ‖u_T‖ (coulomb) when `coulomb`.
double relative_error(const Prepared& P, const Vec& r, const Vec& Wr, const std::vector<double>* shift,
                      bool coulomb) {
    double sum = 0.0;
    for (std::size_t i = 0; i < P.p.contacts(); ++i) {
        const Vec3 u = block(Wr, i) + block(P.p.q, i);
        Vec3 F;
        if (coulomb) {
            F = coulomb_natural_map(block(r, i), u, P.p.mu[i]);
        } else {
            const Vec3 uh(u[0] + (shift ? (*shift)[i] : 0.0), u[1], u[2]);
            F = block(r, i) - project_friction_cone(block(r, i) - uh, P.p.mu[i]);
        }
        sum += F.squaredNorm();
    }
    return std::sqrt(sum) / P.q_scale;
}

class Clock {
public:
    double seconds() const {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// One solve of the CCP with q_n shifted by `shift` (or, for nsgs, of the Coulomb problem)
/// to relative error `tol`, at most `cap` iterations; returns the iterations used and leaves
/// the error reached in `error`.
struct Inner {
    const Prepared& P;
    SolverType type;
    double omega;
    const SolverSettings& settings;
    SolverResult& result;
    const Clock& clock;

    void record(int it, double err) const {
        if (settings.record_history) result.history.push_back({result.iterations + it, clock.seconds(), err});
    }

    int gauss_seidel(Vec& r, const std::vector<double>& shift, double tol, int cap, double& error) const {
        const DelassusProblem& p = P.p;
        const std::size_t n = p.contacts();
        Vec Wr(r.size());
        for (int it = 1; it <= cap; ++it) {
            double change = 0.0;  // maxdiss: Σ‖Δr_i‖² over the sweep
            for (std::size_t i = 0; i < n; ++i) {
                const Vec3 ri = block(r, i);
                Vec3 u = row_product(p.W, r, i) + block(p.q, i);
                Vec3 next;
                if (type == SolverType::NSGS) {
                    next = solve_coulomb_contact(P.Wii[i], u - P.Wii[i] * ri, p.mu[i], ri).r;
                    if (omega != 1.0) next = ri + omega * (next - ri);  // stays in K: convex
                } else if (type == SolverType::MaxDiss) {
                    next = solve_max_dissipation_contact(P.Wii[i], u - P.Wii[i] * ri, p.mu[i]).gamma;
                    change += (next - ri).squaredNorm();
                } else {
                    u[0] += shift[i];
                    next = project_friction_cone(ri - omega * P.eta[i] * u, p.mu[i]);
                }
                set_block(r, i, next);
            }
            if (type == SolverType::MaxDiss) {
                error = std::sqrt(change) / P.q_scale;  // its fixed-point residual
            } else {
                Wr.noalias() = p.W * r;
                error = relative_error(P, r, Wr, &shift, type == SolverType::NSGS);
            }
            record(it, error);
            if (error <= tol) return it;
        }
        return cap;
    }

    int jacobi(Vec& r, const std::vector<double>& shift, double tol, int cap, double& error) const {
        const DelassusProblem& p = P.p;
        const std::size_t n = p.contacts();
        Vec Wr = p.W * r;
        for (int it = 1; it <= cap; ++it) {
            for (std::size_t i = 0; i < n; ++i) {
                Vec3 u = block(Wr, i) + block(p.q, i);
                u[0] += shift[i];
                const double step = P.gersh[i] > 0.0 ? omega / P.gersh[i] : 0.0;
                set_block(r, i, project_friction_cone(block(r, i) - step * u, p.mu[i]));
            }
            Wr.noalias() = p.W * r;
            error = relative_error(P, r, Wr, &shift, false);
            record(it, error);
            if (error <= tol) return it;
        }
        return cap;
    }

    /// Nesterov's accelerated projected gradient on ½ rᵀWr + (q + s)ᵀr over K (Mazhar et al.
    /// 2015): step 1/L with backtracking (L ← 2L until ½(x−y)ᵀW(x−y) ≤ ½L‖x−y‖²), L ← 0.9L
    /// after each accepted step, restart when the gradient points along the last move; the
    /// iterate with the lowest error is returned.
    int apgd(Vec& r, const std::vector<double>& shift, double tol, int cap, double& error) const {
        const DelassusProblem& p = P.p;
        const std::size_t n = p.contacts();
        Vec qs = p.q;
        for (std::size_t i = 0; i < n; ++i) qs[3 * i] += shift[i];
        auto project = [&](Vec& x) {
            for (std::size_t i = 0; i < n; ++i) set_block(x, i, project_friction_cone(block(x, i), p.mu[i]));
        };
        Vec x = r;
        project(x);
        Vec Wx = p.W * x;
        // L₀ = ‖W d‖ / ‖d‖ for d = 1 (a cheap lower estimate of λ_max; backtracking corrects it)
        const Vec ones = Vec::Ones(x.size());
        double L = (p.W * ones).norm() / ones.norm();
        if (!(L > 0.0)) L = 1.0;
        Vec y = x, Wy = Wx, x_prev = x, Wx_prev = Wx, best = x, xn(x.size()), Wxn(x.size());
        double best_error = relative_error(P, x, Wx, &shift, false);
        error = best_error;
        if (best_error <= tol) return 0;
        double theta = 1.0;
        int it = 1;
        for (; it <= cap; ++it) {
            const Vec gy = Wy + qs;
            for (int bt = 0; bt < 60; ++bt) {
                xn = y - gy / L;
                project(xn);
                Wxn.noalias() = p.W * xn;
                const Vec dx = xn - y;
                const double curvature = dx.dot(Wxn - Wy);
                if (curvature <= L * dx.squaredNorm()) break;
                L *= 2.0;
            }
            const double theta_next = 0.5 * (-theta * theta + theta * std::sqrt(theta * theta + 4.0));
            const double beta = theta * (1.0 - theta) / (theta * theta + theta_next);
            const bool restart = gy.dot(xn - x) > 0.0;
            x_prev.swap(x);
            Wx_prev.swap(Wx);
            x = xn;
            Wx = Wxn;
            if (restart) {
                y = x;
                Wy = Wx;
                theta = 1.0;
            } else {
                y = x + beta * (x - x_prev);
                Wy = Wx + beta * (Wx - Wx_prev);
                theta = theta_next;
            }
            L *= 0.9;
            const double e = relative_error(P, x, Wx, &shift, false);
            record(it, e);
            if (e < best_error) {
                best_error = e;
                best = x;
            }
            if (e <= tol) break;
        }
        r = best;
        error = best_error;
        return std::min(it, cap);
    }

    int run(Vec& r, const std::vector<double>& shift, double tol, int cap, double& error) const {
        switch (type) {
            case SolverType::PJ: return jacobi(r, shift, tol, cap, error);
            case SolverType::APGD: return apgd(r, shift, tol, cap, error);
            default: return gauss_seidel(r, shift, tol, cap, error);
        }
    }
};

}  // namespace

DelassusAccuracy delassus_accuracy(const DelassusProblem& p, const Eigen::VectorXd& r, FrictionLaw law) {
    const Prepared P(p);
    const Vec Wr = p.W * r;
    DelassusAccuracy a;
    a.relative_error = relative_error(P, r, Wr, nullptr, law == FrictionLaw::Coulomb);
    a.error = a.relative_error * P.q_scale;
    for (std::size_t i = 0; i < p.contacts(); ++i) a.sum_rn += r[3 * i];
    return a;
}

SolverResult solve_delassus(const DelassusProblem& p, const SolverSettings& settings, Eigen::VectorXd& r) {
    const Clock clock;
    SolverResult result;
    const SolverType type = settings.type;
    if (type == SolverType::NSGS && settings.friction != FrictionLaw::Coulomb) {
        result.refused = "the \"nsgs\" solver solves the exact Coulomb law only";
        return result;
    }
    const std::size_t n = p.contacts();
    if (r.size() != Eigen::Index(3 * n)) r = Vec::Zero(Eigen::Index(3 * n));
    const Prepared P(p);
    const double omega = settings.relaxation > 0.0 ? settings.relaxation : 1.0;
    const Inner inner{P, type, omega, settings, result, clock};
    const double tol = settings.tolerance;
    if (type == SolverType::Lemke || type == SolverType::MaxDiss) {
        // Their own friction models: solved as they are, the accuracy then measured against
        // the law asked for (never exact: the cones or the laws differ).
        if (type == SolverType::Lemke) {
            const PolyhedralCone cone(settings.friction_directions);
            const std::size_t unknowns = n * cone.per_contact();
            if (settings.friction_directions < 4 || settings.friction_directions % 2 != 0) {
                result.refused = "the polyhedral cone needs an even number of friction directions ≥ 4";
                return result;
            }
            if (unknowns > kLcpMaxUnknowns) {
                result.refused = "the dense \"lemke\" solver takes at most " + std::to_string(kLcpMaxUnknowns) +
                                 " LCP unknowns, and " + std::to_string(n) + " contacts × (" +
                                 std::to_string(cone.k) + " friction directions + 2) make " +
                                 std::to_string(unknowns);
                return result;
            }
            const Eigen::MatrixXd W(p.W);
            std::vector<Vec3> d(n);
            std::vector<double> eta(n);
            for (std::size_t i = 0; i < n; ++i) {
                d[i] = block(p.q, i);
                eta[i] = P.eta[i] > 0.0 ? P.eta[i] : 1.0;
            }
            Eigen::MatrixXd M = Eigen::MatrixXd::Zero(Eigen::Index(unknowns), Eigen::Index(unknowns));
            Eigen::VectorXd lq = Eigen::VectorXd::Zero(Eigen::Index(unknowns));
            fill_contact_lcp(W, d, p.mu, eta, cone, M, lq);
            const LemkeResult lcp = solve_lcp_lemke(M, lq);
            result.iterations = lcp.pivots;
            result.converged = lcp_accepted(lcp, lq);
            if (result.converged)
                for (std::size_t i = 0; i < n; ++i) set_block(r, i, contact_impulse(lcp.z, i, eta[i], cone));
        } else {
            double own = 0.0;
            const std::vector<double> no_shift(n, 0.0);
            result.iterations = inner.run(r, no_shift, tol, settings.max_iterations, own);
            result.converged = own <= tol;
        }
        result.residual = delassus_accuracy(p, r, settings.friction).relative_error;
        result.wall_time = clock.seconds();
        return result;
    }
    std::vector<double> shift(n, 0.0);
    double error = std::numeric_limits<double>::infinity();

    if (settings.friction == FrictionLaw::CCP || type == SolverType::NSGS) {
        result.iterations = inner.run(r, shift, tol, settings.max_iterations, error);
    } else {
        // De Saxcé fixed point: CCP solves with q_n + s, s = μ‖u_T‖ of the last solution.
        // Each solve goes to a tenth of the current Coulomb error (no sharper than tol,
        // no looser than 100 tol): early solves need not be exact, the last one must.
        // W r serves both the Coulomb error and the next shifts (P is already prepared)
        Vec Wr = p.W * r;
        double coulomb = relative_error(P, r, Wr, nullptr, true);
        while (coulomb > tol && result.iterations < settings.max_iterations) {
            for (std::size_t i = 0; i < n; ++i) {
                const Vec3 u = block(Wr, i) + block(p.q, i);
                shift[i] = p.mu[i] * std::hypot(u[1], u[2]);
            }
            ++result.friction_updates;
            const double inner_tol = std::clamp(0.1 * coulomb, tol, 100.0 * tol);
            double ccp_error = 0.0;
            const int used = inner.run(r, shift, inner_tol, settings.max_iterations - result.iterations,
                                       ccp_error);
            result.iterations += std::max(used, 1);  // a solve that had nothing to do still counts
            Wr.noalias() = p.W * r;
            coulomb = relative_error(P, r, Wr, nullptr, true);
        }
        error = coulomb;
    }
    // (nsgs's `error` is already the Coulomb error of the returned r, the fixed point's too)
    result.residual = error;
    result.converged = error <= tol;
    result.wall_time = clock.seconds();
    return result;
}

}  // namespace talus
