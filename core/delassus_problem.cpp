// Well-formedness of an assembled contact problem (core/delassus_problem.hpp).
#include "core/delassus_problem.hpp"

#include <cmath>

namespace talus {

std::string check_delassus(const DelassusProblem& p) {
    using Sparse = Eigen::SparseMatrix<double, Eigen::RowMajor>;
    const std::size_t n = p.contacts();
    const Eigen::Index m = Eigen::Index(3 * n);
    if (p.W.rows() != m || p.W.cols() != m || p.q.size() != m)
        return "W must be 3n × 3n and q of length 3n for n = " + std::to_string(n) + " contacts (W is " +
               std::to_string(p.W.rows()) + " × " + std::to_string(p.W.cols()) + ", q has " +
               std::to_string(p.q.size()) + ")";
    for (std::size_t i = 0; i < n; ++i)
        if (!(p.mu[i] >= 0.0) || !std::isfinite(p.mu[i]))
            return "mu[" + std::to_string(i) + "] = " + std::to_string(p.mu[i]) + " is not a finite value ≥ 0";
    if (!p.q.allFinite()) return "q has entries that are not finite";
    for (Eigen::Index k = 0; k < p.W.outerSize(); ++k)
        for (Sparse::InnerIterator it(p.W, k); it; ++it)
            if (!std::isfinite(it.value())) return "W has entries that are not finite";
    for (std::size_t i = 0; i < n; ++i) {
        double wnn = 0.0;  // the normal diagonal entry W(3i, 3i) (0 when not stored)
        for (Sparse::InnerIterator it(p.W, Eigen::Index(3 * i)); it; ++it)
            if (it.col() == Eigen::Index(3 * i)) wnn += it.value();
        if (!(wnn > 0.0)) return "contact " + std::to_string(i) + " has W_nn ≤ 0 (no body can move it)";
    }
    return {};
}

}  // namespace talus
