// The contact part of the polyhedral-cone LCP (solvers/polyhedral_lcp.hpp).
#include "solvers/polyhedral_lcp.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace talus {

PolyhedralCone::PolyhedralCone(int directions)
    : k(directions), ct(std::size_t(directions)), st(std::size_t(directions)) {
    for (int l = 0; l < k / 2; ++l) {
        const double theta = 2.0 * std::numbers::pi * double(l) / double(k);
        ct[l] = std::cos(theta);
        st[l] = std::sin(theta);
        ct[l + k / 2] = -ct[l];
        st[l + k / 2] = -st[l];
    }
}

void fill_contact_lcp(const Eigen::MatrixXd& W, const std::vector<Vec3>& d, const std::vector<double>& mu,
                      const std::vector<double>& eta, const PolyhedralCone& cone, Eigen::MatrixXd& M,
                      Eigen::VectorXd& q) {
    using Eigen::Index;
    const std::size_t m = d.size();
    const int k = cone.k;
    const std::vector<double>& ct = cone.ct;
    const std::vector<double>& st = cone.st;
    const std::size_t per = cone.per_contact();
    for (std::size_t i = 0; i < m; ++i) {
        const Index ri = Index(i * per);
        q[ri] = d[i][0];
        for (int l = 0; l < k; ++l) q[ri + 1 + l] = ct[l] * d[i][1] + st[l] * d[i][2];
        for (std::size_t j = 0; j < m; ++j) {
            const Index cj = Index(j * per);
            const auto B = W.block<3, 3>(Index(3 * i), Index(3 * j));
            if (B.isZero(0.0)) continue;
            const double e = eta[j];
            // B Tᵀ columns: the response of (n, u, w)_i to a unit β_jm.
            M(ri, cj) = e * B(0, 0);
            for (int mm = 0; mm < k; ++mm) {
                const double bn = B(0, 1) * ct[mm] + B(0, 2) * st[mm];
                const double bu = B(1, 1) * ct[mm] + B(1, 2) * st[mm];
                const double bw = B(2, 1) * ct[mm] + B(2, 2) * st[mm];
                M(ri, cj + 1 + mm) = e * bn;
                for (int l = 0; l < k; ++l) M(ri + 1 + l, cj + 1 + mm) = e * (ct[l] * bu + st[l] * bw);
            }
            for (int l = 0; l < k; ++l) M(ri + 1 + l, cj) = e * (ct[l] * B(1, 0) + st[l] * B(2, 0));
        }
        const Index lam = ri + 1 + k;
        for (int l = 0; l < k; ++l) {
            M(ri + 1 + l, lam) = 1.0;   // E λ
            M(lam, ri + 1 + l) = -1.0;  // −Eᵀβ (row divided by η_i, columns scaled by η_i)
        }
        M(lam, ri) = mu[i];
    }
}

Vec3 contact_impulse(const Eigen::VectorXd& z, std::size_t i, double eta, const PolyhedralCone& cone) {
    const Eigen::Index ri = Eigen::Index(i * cone.per_contact());
    double gu = 0.0, gw = 0.0;
    for (int l = 0; l < cone.k; ++l) {
        const double beta = std::max(z[ri + 1 + l], 0.0);
        gu += beta * cone.ct[l];
        gw += beta * cone.st[l];
    }
    return Vec3(eta * std::max(z[ri], 0.0), eta * gu, eta * gw);
}

bool lcp_accepted(const LemkeResult& lcp, const Eigen::VectorXd& q) {
    return lcp.status == LemkeStatus::Solved ||
           (lcp.status != LemkeStatus::InvalidInput && lcp.z.size() == q.size() &&
            lcp.residual <= 1e-9 * std::max(q.cwiseAbs().maxCoeff(), 1e-300));
}

}  // namespace talus
