#pragma once
/// The contact operator of an assembled problem (solvers/contact_operator.hpp): a Delassus
/// matrix W and free velocities q (core/delassus_problem.hpp, FCLIB's local form), so that
/// d_i = (W γ + q)_i. Velocities are computed from γ when asked (a row block of W times γ),
/// so apply() has nothing to do. η_i = 3 / trace(W_ii) as on bodies; the residual is FCLIB's
/// natural map (ρ = 1) relative to 1 + ‖q‖₂ (σ). Serial, in contact order: the problems are
/// small, and the bits are fixed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "core/delassus_problem.hpp"
#include "core/math.hpp"
#include "core/solver_table.hpp"
#include "solvers/contact_operator.hpp"
#include "solvers/solver_result.hpp"

namespace talus {

class AssembledOperator {
public:
    /// γ⁰ from r (3n entries, normal first per contact; zero when its size is wrong).
    AssembledOperator(const DelassusProblem& problem, const Eigen::VectorXd& r);

    // ---- blocks ------------------------------------------------------------------------
    std::size_t size() const { return p_.contacts(); }
    bool empty() const { return size() == 0; }
    std::vector<Vec3>& gamma() { return gamma_; }
    const std::vector<Vec3>& gamma() const { return gamma_; }
    double mu(std::size_t i) const { return p_.mu[i]; }
    double eta(std::size_t i) const { return eta_[i]; }
    BlockMetric metric(std::size_t i) const { return block_metric(diag_[i]); }
    double rho(std::size_t) const { return 1.0; }
    double sigma(std::size_t) const { return q_scale_; }
    /// (W γ + q)_i, with the normal shift of the De Saxcé fixed point (shift_normal).
    Vec3 velocity(std::size_t i) const;
    void apply(std::size_t, const Vec3&) {}  // velocity() reads γ itself
    Mat3 diagonal(std::size_t i) const { return diag_[i]; }
    template <class F>
    double sweep(std::size_t, double init, F&& f) {
        return empty() ? init : std::max(init, f(std::size_t(0), size(), false));
    }

    // ---- the solve around the iterations -------------------------------------------------
    void warm_start() {}
    void keep_free_velocities() {}
    void restart() {}
    void note_iteration(int, int) {}
    double seconds() const;
    /// ‖γ − Π_K(γ − d)‖₂ / (1 + ‖q‖₂) at the current γ: FCLIB's relative error (of the CCP
    /// with the current normal shift). The per-block terms of the methods are its
    /// contacts' shares, whose max never exceeds it: a method gates on them, then asks this.
    double residual() const;
    /// A residual pass costs no more than a sweep on these small problems: every sweep may ask.
    int residual_check_interval() const { return 1; }
    /// The same with d_n + μ‖d_t‖ for d_n (zero at a Coulomb solution): FCLIB's measure.
    double coulomb_residual() const;
    /// The friction law bgs_sweep enforces and residual() then measures (as BodyOperator).
    void set_friction(FrictionLaw law) { law_ = law; }
    void finish(double tolerance, bool check_unbounded, SolverResult& result) const;
    /// q_n,i += s (the fixed point shifts and restores it).
    void shift_normal(std::size_t i, double s) { q_[i][0] += s; }

    // ---- passes ----------------------------------------------------------------------------
    double pgs_sweep(double omega, double tol2);
    double bgs_sweep(double omega, double tol2);
    void bgs_prepare() {}  // metric(i) comes from the stored diagonal blocks
    /// PJ's step sizes 2ω / R_i, R_i the largest absolute row sum of contact i's rows (block
    /// Gershgorin: R ⪰ W, so the default ω = 0.5 takes the safe step 1/R_i; ω < 1 converges).
    void pj_prepare(double omega);
    double pj_probe();
    void pj_apply();
    // ---- APGD's products (solvers/apgd.cpp): no joint rows here ------------------------------
    Vec3 free_velocity(std::size_t i) const { return q_[i]; }
    std::vector<Vec3>& scratch(int k) { return scratch_[k]; }
    std::size_t row_count() const { return 0; }
    std::vector<double>& lambda() { return no_rows_; }
    double row_velocity(std::size_t) const { return 0.0; }
    std::size_t contact_total() const { return size(); }
    bool any_rank(bool x) const { return x; }
    double& lipschitz() { return lipschitz_; }
    void begin_products() {}
    /// The exact residual (2-norm over the contacts) of an iterate g with W g = ng, q = p.
    double refine_residual(double max_term, const std::vector<Vec3>& g, const std::vector<Vec3>& ng,
                           const std::vector<Vec3>& p) const;
    std::vector<uint32_t> unbounded_contacts(double) const { return {}; }
    /// out_i = (W z)_i for the contacts i = list[k] of the last product's z, and terms(i,
    /// out_i, max) reduced over them (exact sums: ReductionSums).
    template <class Terms>
    Reductions gather(const uint32_t* list, std::size_t count, std::vector<Vec3>& out,
                      std::vector<ReductionSums>&, Terms&& terms) const {
        ReductionSums r;
        for (std::size_t k = 0; k < count; ++k) {
            const std::size_t i = list[k];
            out[i] = product_row(*last_z_, i);
            r.add(terms(i, out[i], r.max));
        }
        return r.value();
    }
    /// out = W z over the contacts of `live`, terms reduced in the same pass.
    template <class Terms>
    Reductions product(const std::vector<uint32_t>& live, const std::vector<Vec3>& z,
                       const std::vector<double>&, std::vector<Vec3>& out, std::vector<double>&,
                       std::vector<ReductionSums>& partial, Terms&& terms) {
        last_z_ = &z;
        out.resize(size());
        return gather(live.data(), live.size(), out, partial, terms);
    }
    /// Rows 3i..3i+2 of W z.
    Vec3 product_row(const std::vector<Vec3>& z, std::size_t i) const;

    /// γ as 3n values, normal first.
    Eigen::VectorXd impulses() const;

private:
    /// ‖g − Π_K(g − d)‖₂ / (1 + ‖q‖₂), FCLIB's relative error of the natural map at impulses
    /// g and velocities d(i), summed in contact order: the one loop of the residuals above.
    template <class Velocity>
    double natural_map_error(const std::vector<Vec3>& g, Velocity&& d) const {
        double sum = 0.0;
        for (std::size_t i = 0; i < size(); ++i)
            sum += (g[i] - project_friction_cone(g[i] - d(i), mu(i))).squaredNorm();
        return std::sqrt(sum) / q_scale_;
    }

    const DelassusProblem& p_;
    std::vector<Vec3> gamma_, q_;
    std::vector<Mat3> diag_;
    std::vector<double> eta_, gersh_;
    double q_scale_ = 1.0;  // 1 + ‖q‖₂
    std::vector<Vec3> next_;
    std::vector<double> step_;
    std::vector<Vec3> scratch_[7];
    std::vector<double> no_rows_;
    FrictionLaw law_ = FrictionLaw::CCP;
    double lipschitz_ = 0.0;
    const std::vector<Vec3>* last_z_ = nullptr;
    std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace talus
