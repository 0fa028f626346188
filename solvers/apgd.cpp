// Accelerated projected gradient descent (APGD) on the CCP's quadratic program
//   min f(γ) = ½ γᵀ N γ + pᵀ γ  s.t. γ_i ∈ K_i,   N = Dᵀ M⁻¹ D,  p = Dᵀ ν* + rhs
// after Mazhar, Heyn, Tasora and Negrut 2015 (Nesterov's method with adaptive step and
// restart), matrix-free, as docs/design.md §6 lays out:
//  - N z is two passes over the contacts: M⁻¹ D z accumulated on per-body scratch colour by
//    colour (no two contacts of a colour share a body: parallel without races, and each
//    body sums in the fixed colour order), then D_iᵀ of it per contact; the gradient at γ
//    is N γ + p, i.e. the contact velocities d(γ). (A body-major gather instead of the
//    colour scatter was measured 1.8× slower per iteration: it reads every contact twice,
//    from scattered places.) The pass after the scatter takes every dot product and the
//    residual an iteration needs, and momentum, step and projection share one pass: an
//    iteration is three passes over the contacts (it was nine).
//  - L₀ = ‖N(γ₀ − γ̂₀)‖/‖γ₀ − γ̂₀‖ with γ̂₀ = γ₀ + 1, or the previous step's accepted L
//    carried by the warm start; step t = 1/L.
//  - x_{k+1} = Π_K(y_k − t ∇f(y_k)); backtrack L ← 2L while
//    ½ (x−y)ᵀ N (x−y) > ½ L ‖x − y‖² (the sufficient-decrease test, written with the
//    products we keep: (x−y)ᵀ(Nx − Ny) ≤ L ‖x−y‖²); after acceptance L ← 0.9 L.
//  - θ_{k+1} = (−θ_k² + θ_k √(θ_k² + 4))/2, β = θ_k(1 − θ_k)/(θ_k² + θ_{k+1}),
//    y_{k+1} = x_{k+1} + β (x_{k+1} − x_k), and N y_{k+1} = (1+β) N x_{k+1} − β N x_k, so
//    an accepted iteration costs one product by N.
//  - restart (θ = 1, y = x) when ∇f(y_k)ᵀ(x_{k+1} − x_k) > 0;
//  - the docs/design.md §6 residual of every iterate comes from N x + p (no extra pass), and the
//    iterate with the lowest residual is returned, not the last.
//  - idle contacts: a contact at γ = 0 in x_k and x_{k+1} whose velocity d = N x + p
//    separates it (d_n ≥ μ‖d_t‖ + 10 tol, so Π_K(−t d) = 0: its next x is 0 again, its
//    residual term 0) leaves the scatter, the gather and the projection. Every 5
//    iterations, and before the solve may stop (r ≤ tol, or the cap), a gather over the
//    idle contacts alone (the scratch still holds M⁻¹ D x_{k+1}) gives their exact
//    N x_{k+1} and residual terms: the stopping test and the choice of the best iterate
//    only use such complete residuals. A contact that no longer
//    separates comes back, with a momentum restart (its N x_{k−1} was not kept). In a
//    bed hit by falling grains most contacts are speculative (margins grow with the
//    speeds) and sit idle: the peer bed's impact steps gather 5–10 % of their
//    130–180 k contacts (benchmarks/README.md). Without idle contacts the iteration is
//    the same, bit for bit.
// Joint rows (solvers/bilateral.hpp) join the QP as unconstrained variables λ_j (their
// projection is the identity): N and p grow by the rows G_j, the scatter adds M⁻¹ G_j λ_j
// in the contacts' colours (each joint's rows one block, solvers/colouring.cpp), and every
// sum and max takes the rows' terms too, serially in row order after the contacts'.
// Without rows nothing changes.
// The contacts' sums are exact (ReductionSums, core/exact_sum.hpp), so the result depends
// neither on the thread count nor on the order the contacts and bodies are held in.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/parallel.hpp"
#include "solvers/assembled_operator.hpp"
#include "solvers/body_operator.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/iteration.hpp"
#include "solvers/methods.hpp"
#include "solvers/rank_operator.hpp"

namespace talus {
namespace {

// Idle contacts: a contact at γ = 0 whose velocity d separates it by more than
// kIdleMargin × tolerance (d_n ≥ μ ‖d_t‖ + margin) leaves the gathers and projections until
// the next check, every kIdleCheck iterations.
constexpr double kIdleMargin = 10.0;
constexpr int kIdleCheck = 5;

bool is_zero(const Vec3& g) { return g[0] == 0.0 && g[1] == 0.0 && g[2] == 0.0; }

/// Σ_j f(j) over the rows, serially (0 without rows).
template <class F>
double row_sum(std::size_t m, F&& f) {
    double s = 0.0;
    for (std::size_t j = 0; j < m; ++j) s += f(j);
    return s;
}

}  // namespace

template <class Op>
SolverResult apgd_method(Op& op, const SolverSettings& settings) {
    SolverResult result;
    const std::size_t n = op.size();
    const double tol = settings.tolerance;
    std::vector<ReductionSums> partial;
    std::vector<Vec3>& p = op.scratch(0);    // Dᵀ ν* + rhs
    std::vector<Vec3>& nx = op.scratch(1);   // N x_k
    std::vector<Vec3>& y = op.scratch(2);    // y_k
    std::vector<Vec3>& ny = op.scratch(3);   // N y_k
    std::vector<Vec3>& xn = op.scratch(4);   // x_{k+1}
    std::vector<Vec3>& nxn = op.scratch(5);  // N x_{k+1}
    std::vector<Vec3>& best = op.scratch(6); // lowest-residual iterate
    std::vector<Vec3>& x = op.gamma();
    const std::size_t m = op.row_count();
    // the rows' parts of the same vectors (empty without joints)
    std::vector<double> lp(m), lnx, ly, lny, lxn(m), lnxn, lbest;
    std::vector<double>& lx = op.lambda();
    // (no contacts and no rows: on a rank, none on any rank)
    bool stopped_early = op.empty();

    if (!stopped_early) {
        op.begin_products();
        p.resize(n);
        xn.resize(n);
        y.resize(n);
        ny.resize(n);
        parallel_each(n, [&](std::size_t i) { p[i] = op.free_velocity(i); });
        for (std::size_t j = 0; j < m; ++j) lp[j] = op.row_velocity(j);

        // contact i's residual term at impulse g with N g = ng where it may exceed `floor`
        // (the square root and the division were a fifth of the gather's time)
        auto residual_term = [&](std::size_t i, const Vec3& g, const Vec3& ng, double floor) {
            return residual_term_above(op, i, g, Vec3(ng + p[i]), floor);
        };
        auto rows_residual = [&](const std::vector<double>& lng, double r) {
            for (std::size_t j = 0; j < m; ++j) r = std::max(r, std::abs(lng[j] + lp[j]));
            return r;
        };
        // Idle contacts (the header's last item): γ = 0 in x_k and x_{k−1} (so y_k = 0 too),
        // and separating by more than `idle_margin`, so that x_{k+1} = Π_K(−t d) = 0 again.
        // Their scatter, gather and projection are skipped between checks. `live` lists the
        // others, in contact order.
        const double idle_margin = kIdleMargin * tol;
        auto separating = [&](std::size_t i, const Vec3& ng) {
            const Vec3 d = ng + p[i];
            return d[0] >= op.mu(i) * std::hypot(d[1], d[2]) + idle_margin * (op.sigma(i) / op.rho(i));
        };
        std::vector<uint32_t> live(n), idle;
        for (std::size_t i = 0; i < n; ++i) live[i] = uint32_t(i);
        // Rebuilds live/idle from N x_{k+1} of every contact (fresh), x_{k+1} and x_k:
        // returns whether a contact that was idle must come back.
        std::vector<uint8_t> idle_flag(n, 0);
        auto sort_contacts = [&](const std::vector<Vec3>& g_new, const std::vector<Vec3>& g_old,
                                 const std::vector<Vec3>& ng_new) {
            bool woke = false;
            live.clear();
            idle.clear();
            for (std::size_t i = 0; i < n; ++i) {
                const bool rest = is_zero(g_new[i]) && is_zero(g_old[i]) && separating(i, ng_new[i]);
                if (!rest && idle_flag[i]) woke = true;
                idle_flag[i] = rest;
                if (rest) {  // x_{k+1} = x_k = y_{k+1} = 0 from here on
                    idle.push_back(uint32_t(i));
                    xn[i] = Vec3::Zero();
                    y[i] = Vec3::Zero();
                } else {
                    live.push_back(uint32_t(i));
                }
            }
            return woke;
        };

        const Reductions start = op.product(live, x, lx, nx, lnx, partial,
                                         [&](std::size_t i, const Vec3& nxi, double floor) {
            Reductions t;
            t.max = residual_term(i, x[i], nxi, floor);
            return t;
        });
        double r_best = op.refine_residual(rows_residual(lnx, start.max), x, nx, p);
        // Where the lowest-residual iterate is: still in x or xn, whose vectors swap every
        // iteration, or copied to `best` when the projection is about to overwrite it. It
        // usually is the latest iterate, and then is never copied (at 180 k contacts a copy
        // is 4 MB, and it used to be made almost every iteration).
        enum class Best { InX, InXn, Stored } best_in = Best::InX;
        if (r_best <= tol) stopped_early = true;

        // L₀: the last step's accepted estimate when the batch carries one (contacts and
        // masses change little between steps, so it spares the backtracking that an
        // underestimate costs: a product by N per doubling); otherwise
        // ‖N(γ₀ − γ̂₀)‖/‖γ₀ − γ̂₀‖ with γ₀ − γ̂₀ = −1, a vector of ones.
        double L = op.lipschitz();
        if (!stopped_early && !(L > 0.0)) {
            // xn is free until the first iteration writes it: no vector of its own
            // (at a million contacts, 24 MB on the first step's peak).
            std::vector<Vec3>& ones = xn;
            std::vector<double>& lones = lxn;
            std::fill(ones.begin(), ones.end(), Vec3::Ones());
            std::fill(lones.begin(), lones.end(), 1.0);
            // (live still lists every contact: the idle ones are sorted out below)
            const Reductions r = op.product(live, ones, lones, ny, lny, partial,
                                         [](std::size_t, const Vec3& v, double) {
                Reductions t;
                t.sum[0] = v.squaredNorm();
                return t;
            });
            double norm2 = r.sum[0];
            if (m > 0) norm2 += row_sum(m, [&](std::size_t j) { return lny[j] * lny[j]; });
            L = std::sqrt(norm2 / (3.0 * double(op.contact_total()) + double(m)));
            if (!(L > 0.0)) L = 1.0;
        }
        if (!stopped_early) sort_contacts(x, x, nx);
        // y₀ = x₀ (the first "momentum" step below has β = 0 and leaves y = x, N y = N x).
        double theta = 1.0, beta = 0.0;
        bool first = true;

        if (!stopped_early) stopped_early = iterate(op, settings, result, [&](IterationContext& ctx) {
            const int it = ctx.k;
            // gradient at y is ny + p; projected step with backtracking on L. The first
            // trial also forms y_k = x_k + β (x_k − x_{k−1}) and N y_k from the products
            // kept (x_{k−1} and N x_{k−1} sit in xn and nxn after the swaps below).
            Reductions acc;
            for (int bt = 0; bt < 60; ++bt) {
                const double t = 1.0 / L;
                const bool momentum = bt == 0;
                if (momentum && m > 0) {
                    if (first) {
                        ly = lx;
                        lny = lnx;
                    } else {
                        for (std::size_t j = 0; j < m; ++j) {
                            ly[j] = lx[j] + beta * (lx[j] - lxn[j]);
                            lny[j] = (1.0 + beta) * lnx[j] - beta * lnxn[j];
                        }
                    }
                }
                for (std::size_t j = 0; j < m; ++j) lxn[j] = ly[j] - t * (lny[j] + lp[j]);
                // x_{k+1,i} (a pass of its own: riding on the colour scatter was measured
                // 10 % slower, its small colours running serially)
                parallel_each(live.size(), [&, first](std::size_t q) {
                    const std::size_t i = live[q];
                    if (momentum) {
                        if (first) {
                            y[i] = x[i];
                            ny[i] = nx[i];
                        } else {
                            y[i] = x[i] + beta * (x[i] - xn[i]);
                            ny[i] = (1.0 + beta) * nx[i] - beta * nxn[i];
                        }
                    }
                    xn[i] = project_friction_cone(y[i] - t * (ny[i] + p[i]), op.mu(i));
                });
                first = false;
                // ‖x−y‖², (x−y)ᵀ(Nx − Ny), ∇f(y)ᵀ(x_{k+1} − x_k) and the residual at x_{k+1}
                // (idle contacts add zeros to the sums: x = y = x_{k+1} = 0 there)
                result.gathers += live.size();
                acc = op.product(live, xn, lxn, nxn, lnxn, partial,
                              [&](std::size_t i, const Vec3& nxni, double floor) {
                    const Vec3 step = xn[i] - y[i];
                    Reductions r;
                    r.sum[0] = step.squaredNorm();
                    r.sum[1] = step.dot(nxni - ny[i]);
                    r.sum[2] = (ny[i] + p[i]).dot(xn[i] - x[i]);
                    r.max = residual_term(i, xn[i], nxni, floor);
                    return r;
                });
                double dist2 = acc.sum[0], curv = acc.sum[1];
                if (m > 0) {
                    dist2 += row_sum(m, [&](std::size_t j) { return (lxn[j] - ly[j]) * (lxn[j] - ly[j]); });
                    curv += row_sum(m, [&](std::size_t j) { return (lxn[j] - ly[j]) * (lnxn[j] - lny[j]); });
                }
                if (curv <= L * dist2 * (1.0 + 1e-12)) break;
                L *= 2.0;
            }
            const double theta_next = 0.5 * (-theta * theta + theta * std::sqrt(theta * theta + 4.0));
            double restart_test = acc.sum[2];
            if (m > 0)
                restart_test += row_sum(m, [&](std::size_t j) { return (lny[j] + lp[j]) * (lxn[j] - lx[j]); });

            double r = rows_residual(lnxn, acc.max);
            // The idle contacts' residual terms are known only when they are gathered: every
            // kIdleCheck iterations, and before the solve may stop (converged or at the cap).
            // The scratch still holds M⁻¹ D x_{k+1}: a gather alone gives their N x_{k+1}.
            // (over every rank: the gather below is a collective, and so is the stop)
            bool known = !op.any_rank(!idle.empty());
            bool woke = false;
            if (!known && (r <= tol || it % kIdleCheck == 0 || it == settings.max_iterations)) {
                const Reductions rest = op.gather(idle.data(), idle.size(), nxn, partial,
                                               [&](std::size_t i, const Vec3& nxni, double floor) {
                    Reductions t;
                    t.max = residual_term(i, xn[i], nxni, floor);
                    return t;
                });
                r = std::max(r, rest.max);
                result.gathers += idle.size();
                known = true;
                woke = op.any_rank(sort_contacts(xn, x, nxn));
            }
            if (known) r = op.refine_residual(r, xn, nxn, p);
            if (known && r < r_best) {
                r_best = r;
                best_in = Best::InXn;
            }
            op.lipschitz() = L;  // the estimate this iteration was accepted with
            if (known && r <= tol) return IterationStep{r, true};
            if (restart_test > 0.0 || woke) {
                // momentum points uphill, or a contact came back from idle with no N x_{k−1}
                // kept: restart from x_{k+1}
                beta = 0.0;
                theta = 1.0;
                first = woke;
            } else {
                beta = theta * (1.0 - theta) / (theta * theta + theta_next);
                theta = theta_next;
            }
            if (best_in == Best::InX) {  // x_k moves to xn, which the next step overwrites
                best = x;
                if (m > 0) lbest = lx;
                best_in = Best::Stored;
            } else if (best_in == Best::InXn) {
                best_in = Best::InX;
            }
            x.swap(xn);
            nx.swap(nxn);
            lx.swap(lxn);
            lnx.swap(lnxn);
            L *= 0.9;
            return IterationStep{r, false};
        });
        // the growth test looks at the last iterate, where an unbounded ray shows
        if (!stopped_early) result.unbounded_contacts = op.unbounded_contacts(tol);
        if (best_in == Best::InXn) {
            x.swap(xn);
            lx.swap(lxn);
        } else if (best_in == Best::Stored) {
            x = best;
            if (m > 0) lx = lbest;
        }
    }
    op.finish(tol, false, result);
    return result;
}

template SolverResult apgd_method(BodyOperator&, const SolverSettings&);
template SolverResult apgd_method(AssembledOperator&, const SolverSettings&);
template SolverResult apgd_method(RankOperator&, const SolverSettings&);

}  // namespace talus
