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
// projection is the identity): N and p grow by the rows G_j, every sum and max takes the
// rows' terms too, serially in row order after the contacts'. Without rows nothing changes.
// Every sum is a fixed-order reduction, so the result does not depend on the thread count.
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "solvers/cone_projection.hpp"
#include "solvers/contact_ops.hpp"
#include "core/parallel.hpp"
#include "solvers/solver.hpp"

namespace talus {
namespace {

constexpr std::size_t kGrain = 2048;  // contacts per task of the colour scatter (fixed)

// Idle contacts: a contact at γ = 0 whose velocity d separates it by more than
// kIdleMargin × tolerance (d_n ≥ μ ‖d_t‖ + margin) leaves the gathers and projections until
// the next check, every kIdleCheck iterations.
constexpr double kIdleMargin = 10.0;
constexpr int kIdleCheck = 5;

// The per-body scratch lines are what both passes over the contacts wait for (measured with
// perf: the loads of a contact's bodies were a quarter of the gather's time): ask for them
// this many contacts ahead. A hint only, no effect on results.
constexpr std::size_t kPrefetch = 8;

void prefetch_bodies(const AssembledBatch& c, const SolverBodies& s, std::size_t j) {
    const int32_t a = c.a[j], b = c.b[j];
    if (a != kNoBody) __builtin_prefetch(&s.body[std::size_t(a)], 1);
    if (b != kNoBody) __builtin_prefetch(&s.body[std::size_t(b)], 1);
}

bool is_zero(const Vec3& g) { return g[0] == 0.0 && g[1] == 0.0 && g[2] == 0.0; }

/// What the pass after a product by N reduces over the contacts, in one go: three sums
/// (taken per fixed chunk and combined in chunk order) and a max.
struct Reductions {
    double sum[3] = {0.0, 0.0, 0.0};
    double max = 0.0;
};

/// out_i = D_iᵀ (the per-body scratch) for the contacts i = list[k], k < count, and
/// terms(i, out_i, max) reduced over them: per fixed chunk of the list, combined in chunk
/// order (`max`: the running max of the chunk so far, below which a term need not be
/// computed exactly).
template <class Terms>
Reductions gather(const AssembledBatch& c, SolverWorkspace& work, const uint32_t* list,
                  std::size_t count, std::vector<Vec3>& out, std::vector<Reductions>& partial,
                  Terms&& terms) {
    SolverBodies& s = work.scratch;
    const std::size_t chunks = (count + kReduceChunk - 1) / kReduceChunk;
    partial.assign(chunks, Reductions{});
    tbb::parallel_for(std::size_t(0), chunks, [&](std::size_t k) {
        Reductions r;
        const std::size_t end = std::min(count, (k + 1) * kReduceChunk);
        for (std::size_t q = k * kReduceChunk; q < end; ++q) {
            if (q + kPrefetch < end) prefetch_bodies(c, s, list[q + kPrefetch]);
            const std::size_t i = list[q];
            out[i] = jacobian_velocity(c, contact_frame(c, i), s, i);
            const Reductions t = terms(i, out[i], r.max);
            for (int j = 0; j < 3; ++j) r.sum[j] += t.sum[j];
            r.max = std::max(r.max, t.max);
        }
        partial[k] = r;
    });
    Reductions total;
    for (const Reductions& r : partial) {
        for (int j = 0; j < 3; ++j) total.sum[j] += r.sum[j];
        total.max = std::max(total.max, r.max);
    }
    return total;
}

/// (out, out_l) = N (z, z_l) over the contacts of `live` and the joint rows, using the
/// workspace's per-body scratch (its inverse masses loaded): M⁻¹ (D z + G z_l) accumulated
/// on it (contacts colour by colour, then the rows serially in order), then Dᵀ of it for the
/// contacts of `live` and Gᵀ for the rows. The pass writing `out` also reduces terms over
/// `live` (gather above), so the step's dot products and residual cost no pass of their
/// own. Contacts outside `live` keep their `out`; the scratch then holds M⁻¹ D z for a
/// later gather over them.
template <class Terms>
Reductions apply_n(const AssembledBatch& c, SolverWorkspace& work, const std::vector<uint32_t>& live,
                   const std::vector<Vec3>& z, const std::vector<double>& z_l, std::vector<Vec3>& out,
                   std::vector<double>& out_l, std::vector<Reductions>& partial, Terms&& terms) {
    SolverBodies& s = work.scratch;
    parallel_each(s.size(), [&](std::size_t b) {
        s.body[b].v = Vec3::Zero();
        s.body[b].w = Vec3::Zero();
    });
    // The contacts of `live` colour by colour: `live` is in contact order, so each colour's
    // live contacts are one run of it. Contacts outside `live` hold γ = 0 and would add
    // nothing; not even reading them spares streaming the whole batch once per product.
    auto scatter = [&](std::size_t lo, std::size_t hi) {
        for (std::size_t q = lo; q < hi; ++q) {
            const std::size_t i = live[q];
            if (q + kPrefetch < hi && !is_zero(z[live[q + kPrefetch]]))
                prefetch_bodies(c, s, live[q + kPrefetch]);
            // A zero impulse adds only zeros: skipping it changes no bit (the sums start at
            // +0 and never become −0), and spares the bodies' cache lines.
            if (is_zero(z[i])) continue;
            apply_impulse(c, contact_frame(c, i), s, i, z[i]);
        }
    };
    const std::size_t colours = c.colour_start.size() < 2 ? 0 : c.colour_start.size() - 1;
    for (std::size_t k = 0; k < colours; ++k) {
        const std::size_t lo = std::lower_bound(live.begin(), live.end(), c.colour_start[k]) - live.begin();
        const std::size_t hi = std::lower_bound(live.begin() + lo, live.end(), c.colour_start[k + 1]) - live.begin();
        // contacts of the overflow colour may share bodies: in order, serially
        if ((c.overflow_colour && k + 1 == colours) || hi - lo <= kGrain) {
            scatter(lo, hi);
            continue;
        }
        tbb::parallel_for(tbb::blocked_range<std::size_t>(lo, hi, kGrain),
                          [&](const tbb::blocked_range<std::size_t>& r) { scatter(r.begin(), r.end()); });
    }
    const BilateralBatch& rows = c.bilateral;
    if (!rows.empty()) add_row_impulses(rows, z_l, s);
    out.resize(c.size());
    const Reductions total = gather(c, work, live.data(), live.size(), out, partial, terms);
    out_l.resize(rows.size());
    for (std::size_t j = 0; j < rows.size(); ++j)
        out_l[j] = row_jacobian_velocity(rows, s, j);
    return total;
}

/// Σ_j f(j) over the rows, serially (0 without rows).
template <class F>
double row_sum(std::size_t m, F&& f) {
    double s = 0.0;
    for (std::size_t j = 0; j < m; ++j) s += f(j);
    return s;
}

}  // namespace

SolverResult solve_apgd(AssembledBatch& batch, BodyStore& bodies, const SolverSettings& settings,
                        SolverWorkspace& work) {
    const detail::SolveScope scope(batch, bodies, work);
    SolverResult result;
    const std::size_t n = batch.size();
    const double tol = settings.tolerance;
    std::vector<Reductions> partial;
    std::vector<Vec3>& p = work.c0;    // Dᵀ ν* + rhs
    std::vector<Vec3>& nx = work.c1;   // N x_k
    std::vector<Vec3>& y = work.c2;    // y_k
    std::vector<Vec3>& ny = work.c3;   // N y_k
    std::vector<Vec3>& xn = work.c4;   // x_{k+1}
    std::vector<Vec3>& nxn = work.c5;  // N x_{k+1}
    std::vector<Vec3>& best = work.c6; // lowest-residual iterate
    std::vector<Vec3>& x = batch.gamma;
    BilateralBatch& rows = batch.bilateral;
    const std::size_t m = rows.size();
    // the rows' parts of the same vectors (empty without joints)
    std::vector<double> lp(m), lnx, ly, lny, lxn(m), lnxn, lbest;
    std::vector<double>& lx = rows.lambda;
    bool stopped_early = n == 0 && m == 0;

    if (n > 0 || m > 0) {
        work.scratch.body = work.bodies.body;  // inverse masses; velocities are overwritten
        work.scratch.inv_inertia_world = work.bodies.inv_inertia_world;
        p.resize(n);
        xn.resize(n);
        y.resize(n);
        ny.resize(n);
        parallel_each(n, [&](std::size_t i) { p[i] = contact_velocity(batch, work.bodies, i); });
        for (std::size_t j = 0; j < m; ++j) lp[j] = row_velocity(rows, work.bodies, j);

        // docs/design.md §6's residual term ‖g − Π_K(g − η d)‖/η of contact i at impulse g with
        // N g = ng, where it may exceed `floor`; else 0, which leaves a max above `floor`
        // unchanged. The square root and the division were a fifth of the gather's time,
        // and most terms lie far below the running max: a term whose square is below
        // 0.999 (floor η)² is below floor whatever the rounding, so the max keeps its bits.
        auto residual_term = [&](std::size_t i, const Vec3& g, const Vec3& ng, double floor) {
            const Vec3 d = ng + p[i];
            const double eta = batch.eta[i];
            const double e2 = (g - project_friction_cone(g - eta * d, batch.mu[i])).squaredNorm();
            const double bound = floor * eta;
            if (e2 < 0.999 * (bound * bound)) return 0.0;
            return std::sqrt(e2) / eta;
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
            return d[0] >= batch.mu[i] * std::hypot(d[1], d[2]) + idle_margin;
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

        const Reductions start = apply_n(batch, work, live, x, lx, nx, lnx, partial,
                                         [&](std::size_t i, const Vec3& nxi, double floor) {
            Reductions t;
            t.max = residual_term(i, x[i], nxi, floor);
            return t;
        });
        double r_best = rows_residual(lnx, start.max);
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
        double L = batch.lipschitz;
        if (!stopped_early && !(L > 0.0)) {
            // xn is free until the first iteration writes it: no vector of its own
            // (at a million contacts, 24 MB on the first step's peak).
            std::vector<Vec3>& ones = xn;
            std::vector<double>& lones = lxn;
            std::fill(ones.begin(), ones.end(), Vec3::Ones());
            std::fill(lones.begin(), lones.end(), 1.0);
            // (live still lists every contact: the idle ones are sorted out below)
            const Reductions r = apply_n(batch, work, live, ones, lones, ny, lny, partial,
                                         [](std::size_t, const Vec3& v, double) {
                Reductions t;
                t.sum[0] = v.squaredNorm();
                return t;
            });
            double norm2 = r.sum[0];
            if (m > 0) norm2 += row_sum(m, [&](std::size_t j) { return lny[j] * lny[j]; });
            L = std::sqrt(norm2 / (3.0 * double(n) + double(m)));
            if (!(L > 0.0)) L = 1.0;
        }
        if (!stopped_early) sort_contacts(x, x, nx);
        // y₀ = x₀ (the first "momentum" step below has β = 0 and leaves y = x, N y = N x).
        double theta = 1.0, beta = 0.0;
        bool first = true;

        for (int it = 1; it <= settings.max_iterations && !stopped_early; ++it) {
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
                    xn[i] = project_friction_cone(y[i] - t * (ny[i] + p[i]), batch.mu[i]);
                });
                first = false;
                // ‖x−y‖², (x−y)ᵀ(Nx − Ny), ∇f(y)ᵀ(x_{k+1} − x_k) and the residual at x_{k+1}
                // (idle contacts add zeros to the sums: x = y = x_{k+1} = 0 there)
                result.gathers += live.size();
                acc = apply_n(batch, work, live, xn, lxn, nxn, lnxn, partial,
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
            bool known = idle.empty();
            bool woke = false;
            if (!known && (r <= tol || it % kIdleCheck == 0 || it == settings.max_iterations)) {
                const Reductions rest = gather(batch, work, idle.data(), idle.size(), nxn, partial,
                                               [&](std::size_t i, const Vec3& nxni, double floor) {
                    Reductions t;
                    t.max = residual_term(i, xn[i], nxni, floor);
                    return t;
                });
                r = std::max(r, rest.max);
                result.gathers += idle.size();
                known = true;
                woke = sort_contacts(xn, x, nxn);
            }
            result.iterations = it;
            if (settings.record_history) result.history.push_back({it, scope.seconds(), r});
            if (known && r < r_best) {
                r_best = r;
                best_in = Best::InXn;
            }
            batch.lipschitz = L;  // the estimate this iteration was accepted with
            if (known && r <= tol) {
                stopped_early = true;
                break;
            }
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
            detail::note_iteration(it, settings.max_iterations, x, work);
        }
        // the growth test looks at the last iterate, where an unbounded ray shows
        if (!stopped_early) {
            detail::finish_solve(batch, nullptr, work);
            result.unbounded_contacts = detail::find_unbounded(batch, bodies, work, tol);
        }
        if (best_in == Best::InXn) {
            x.swap(xn);
            lx.swap(lxn);
        } else if (best_in == Best::Stored) {
            x = best;
            if (m > 0) lx = lbest;
        }
    }
    scope.finish(batch, bodies, tol, false, result);
    return result;
}

}  // namespace talus
