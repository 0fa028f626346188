#pragma once
/// A frictional contact problem given by an assembled Delassus operator instead of bodies:
/// FCLIB's local form (io/fclib.hpp reads one; solvers/delassus.hpp solves it),
///   u = W r + q,  K* ∋ u + [μ_i‖u_T,i‖, 0, 0] ⊥ r ∈ K_μ  per contact,
/// contacts being blocks of three rows, normal first. Plain data: the reader and the solvers
/// meet here, so io/ need not see solvers/.
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

namespace talus {

struct DelassusProblem {
    Eigen::SparseMatrix<double, Eigen::RowMajor> W;  ///< 3n × 3n, symmetric positive semi-definite
    Eigen::VectorXd q;                                ///< 3n, the velocities at r = 0
    std::vector<double> mu;                           ///< n friction coefficients

    std::size_t contacts() const { return mu.size(); }
};

/// Empty when the problem is well formed (sizes agree, finite entries, μ ≥ 0, a positive
/// normal entry on every diagonal block); otherwise what is wrong.
std::string check_delassus(const DelassusProblem& p);

}  // namespace talus
