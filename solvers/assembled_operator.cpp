// An assembled Delassus operator as a contact operator (solvers/assembled_operator.hpp).
#include "solvers/assembled_operator.hpp"

#include <algorithm>
#include <cmath>

#include "solvers/contact_operator.hpp"

namespace talus {
namespace {
using Sparse = Eigen::SparseMatrix<double, Eigen::RowMajor>;

static_assert(sizeof(Vec3) == 3 * sizeof(double), "a vector of Vec3 is 3n contiguous doubles");

/// Rows 3i..3i+2 of W z, z given per contact (read as its 3n contiguous values).
Vec3 row_product(const Sparse& W, const std::vector<Vec3>& z, std::size_t i) {
    const double* flat = z.empty() ? nullptr : z[0].data();
    Vec3 out = Vec3::Zero();
    for (int k = 0; k < 3; ++k) {
        double sum = 0.0;
        for (Sparse::InnerIterator it(W, Eigen::Index(3 * i + k)); it; ++it) sum += it.value() * flat[it.col()];
        out[k] = sum;
    }
    return out;
}
}  // namespace

AssembledOperator::AssembledOperator(const DelassusProblem& problem, const Eigen::VectorXd& r)
    : p_(problem) {
    const std::size_t n = p_.contacts();
    gamma_.assign(n, Vec3::Zero());
    if (r.size() == Eigen::Index(3 * n))
        for (std::size_t i = 0; i < n; ++i) gamma_[i] = Vec3(r[3 * i], r[3 * i + 1], r[3 * i + 2]);
    q_scale_ = 1.0 + p_.q.norm();
    q_.resize(n);
    diag_.assign(n, Mat3::Zero());
    eta_.assign(n, 0.0);
    gersh_.assign(n, 0.0);
    for (std::size_t i = 0; i < n; ++i) {
        q_[i] = Vec3(p_.q[3 * i], p_.q[3 * i + 1], p_.q[3 * i + 2]);
        for (int k = 0; k < 3; ++k) {
            double row = 0.0;
            for (Sparse::InnerIterator it(p_.W, Eigen::Index(3 * i + k)); it; ++it) {
                row += std::abs(it.value());
                const Eigen::Index c = it.col();
                if (c >= Eigen::Index(3 * i) && c < Eigen::Index(3 * i + 3)) diag_[i](k, c - 3 * i) = it.value();
            }
            gersh_[i] = std::max(gersh_[i], row);
        }
        const double tr = diag_[i].trace();
        eta_[i] = tr > 0.0 ? 3.0 / tr : 1.0;
    }
}

Vec3 AssembledOperator::velocity(std::size_t i) const { return row_product(p_.W, gamma_, i) + q_[i]; }

double AssembledOperator::seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

double AssembledOperator::residual() const {
    if (law_ == FrictionLaw::Coulomb) return coulomb_residual();
    return natural_map_error(gamma_, [&](std::size_t i) { return velocity(i); });
}

double AssembledOperator::coulomb_residual() const {
    return natural_map_error(gamma_, [&](std::size_t i) {
        const Vec3 d = velocity(i);
        return Vec3(d[0] + mu(i) * std::hypot(d[1], d[2]), d[1], d[2]);
    });
}

double AssembledOperator::refine_residual(double, const std::vector<Vec3>& g, const std::vector<Vec3>& ng,
                                          const std::vector<Vec3>& p) const {
    return natural_map_error(g, [&](std::size_t i) { return Vec3(ng[i] + p[i]); });
}

void AssembledOperator::finish(double tolerance, bool, SolverResult& result) const {
    result.residual = residual();
    result.converged = result.residual <= tolerance;
    result.wall_time = seconds();
}

double AssembledOperator::pgs_sweep(double omega, double tol2) {
    double excess = -1.0;
    for (std::size_t i = 0; i < size(); ++i) excess = std::max(excess, pgs_block(*this, i, omega, tol2));
    return excess;
}

double AssembledOperator::bgs_sweep(double omega, double tol2) {
    double excess = -1.0;
    const bool coulomb = law_ == FrictionLaw::Coulomb;
    for (std::size_t i = 0; i < size(); ++i)
        excess = std::max(excess, coulomb ? bgs_block<true>(*this, i, omega, tol2) : bgs_block(*this, i, omega, tol2));
    return excess;
}

void AssembledOperator::pj_prepare(double omega) {
    step_.resize(size());
    next_.resize(size());
    for (std::size_t i = 0; i < size(); ++i) step_[i] = gersh_[i] > 0.0 ? 2.0 * omega / gersh_[i] : 0.0;
}

double AssembledOperator::pj_probe() {
    double sum = 0.0;  // the terms are ‖F_i‖ / (1 + ‖q‖): their 2-norm is residual()
    for (std::size_t i = 0; i < size(); ++i) {
        const double t = pj_block(*this, i, step_[i], next_[i]);
        sum += t * t;
    }
    return std::sqrt(sum);
}

void AssembledOperator::pj_apply() {
    for (std::size_t i = 0; i < size(); ++i) pj_apply_block(*this, i, next_[i]);
}

Vec3 AssembledOperator::product_row(const std::vector<Vec3>& z, std::size_t i) const {
    return row_product(p_.W, z, i);
}

Eigen::VectorXd AssembledOperator::impulses() const {
    Eigen::VectorXd r(Eigen::Index(3 * size()));
    for (std::size_t i = 0; i < size(); ++i)
        for (int k = 0; k < 3; ++k) r[Eigen::Index(3 * i + k)] = gamma_[i][k];
    return r;
}

}  // namespace talus
