// Solvers on an assembled Delassus operator (solvers/delassus.hpp): the FCLIB path of
// `talus fclib`. The iterative methods are the production ones (solvers/methods.hpp) on an
// AssembledOperator; only Lemke's dense pivoting, and FCLIB's accuracy measure, live here.
//
// The operator's residual is FCLIB's relative error ‖F‖₂ / (1 + ‖q‖₂), F = r − Π_K(r − û)
// (solvers/assembled_operator.hpp), so the methods stop on FCLIB's own measure.
#include "solvers/delassus.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "solvers/assembled_operator.hpp"
#include "solvers/cone_projection.hpp"
#include "solvers/coulomb_local.hpp"
#include "solvers/methods.hpp"
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

/// ‖r − Π_K(r − û)‖₂ / (1 + ‖q‖), u = W r + q, û with the shift μ‖u_T‖ when `coulomb`.
double relative_error(const DelassusProblem& p, const Vec& r, bool coulomb) {
    const Vec Wr = p.W * r;
    double sum = 0.0;
    for (std::size_t i = 0; i < p.contacts(); ++i) {
        const Vec3 u = block(Wr, i) + block(p.q, i);
        const Vec3 F = coulomb ? coulomb_natural_map(block(r, i), u, p.mu[i])
                               : Vec3(block(r, i) - project_friction_cone(block(r, i) - u, p.mu[i]));
        sum += F.squaredNorm();
    }
    return std::sqrt(sum) / (1.0 + p.q.norm());
}

/// Lemke on the Stewart–Trinkle LCP of the problem (its own friction model).
void solve_lemke(const DelassusProblem& p, const SolverSettings& settings, Vec& r, SolverResult& result) {
    const std::size_t n = p.contacts();
    const PolyhedralCone cone(settings.friction_directions);
    const std::size_t unknowns = n * cone.per_contact();
    if (settings.friction_directions < 4 || settings.friction_directions % 2 != 0) {
        result.refused = "the polyhedral cone needs an even number of friction directions ≥ 4";
        return;
    }
    if (unknowns > kLcpMaxUnknowns) {
        result.refused = "the dense \"lemke\" solver takes at most " + std::to_string(kLcpMaxUnknowns) +
                         " LCP unknowns, and " + std::to_string(n) + " contacts × (" +
                         std::to_string(cone.k) + " friction directions + 2) make " + std::to_string(unknowns);
        return;
    }
    const Eigen::MatrixXd W(p.W);
    std::vector<Vec3> d(n);
    std::vector<double> eta(n);
    for (std::size_t i = 0; i < n; ++i) {
        d[i] = block(p.q, i);
        const double tr = W(3 * i, 3 * i) + W(3 * i + 1, 3 * i + 1) + W(3 * i + 2, 3 * i + 2);
        eta[i] = tr > 0.0 ? 3.0 / tr : 1.0;
    }
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(Eigen::Index(unknowns), Eigen::Index(unknowns));
    Eigen::VectorXd lq = Eigen::VectorXd::Zero(Eigen::Index(unknowns));
    fill_contact_lcp(W, d, p.mu, eta, cone, M, lq);
    const LemkeResult lcp = solve_lcp_lemke(M, lq);
    result.iterations = lcp.pivots;
    result.converged = lcp_accepted(lcp, lq);
    if (result.converged)
        for (std::size_t i = 0; i < n; ++i) set_block(r, i, contact_impulse(lcp.z, i, eta[i], cone));
}

}  // namespace

DelassusAccuracy delassus_accuracy(const DelassusProblem& p, const Eigen::VectorXd& r, FrictionLaw law) {
    DelassusAccuracy a;
    a.relative_error = relative_error(p, r, law == FrictionLaw::Coulomb);
    a.error = a.relative_error * (1.0 + p.q.norm());
    for (std::size_t i = 0; i < p.contacts(); ++i) a.sum_rn += r[3 * i];
    return a;
}

SolverResult solve_delassus(const DelassusProblem& p, const SolverSettings& settings, Eigen::VectorXd& r) {
    const auto start = std::chrono::steady_clock::now();
    auto seconds = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    SolverResult result;
    const SolverType type = settings.type;
    if (type == SolverType::NSGS && settings.friction != FrictionLaw::Coulomb) {
        result.refused = "the \"nsgs\" solver solves the exact Coulomb law only";
        return result;
    }
    const std::size_t n = p.contacts();
    if (r.size() != Eigen::Index(3 * n)) r = Vec::Zero(Eigen::Index(3 * n));
    const double tol = settings.tolerance;
    if (type == SolverType::Lemke) {
        solve_lemke(p, settings, r, result);
        if (result.refused.empty()) result.residual = delassus_accuracy(p, r, settings.friction).relative_error;
        result.wall_time = seconds();
        return result;
    }
    // maxdiss solves its own model: one round, converged by its own criterion, and the
    // accuracy against the law asked for (never exact: the laws differ).
    const bool own_model = type == SolverType::MaxDiss;
    AssembledOperator op(p, r);
    const SolverResult solved = run_method(op, settings);
    result.iterations = solved.iterations;
    result.friction_updates = solved.friction_updates;
    result.history = solved.history;
    r = op.impulses();
    const double error = delassus_accuracy(p, r, settings.friction).relative_error;
    result.converged = own_model ? solved.converged : error <= tol;
    result.residual = error;
    result.wall_time = seconds();
    return result;
}

}  // namespace talus
