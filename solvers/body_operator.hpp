#pragma once
/// The contact operator of a step (solvers/contact_operator.hpp): the batch's contacts on
/// the solver bodies, matrix-free. d_i = D_iᵀ ν + rhs_i, a change Δγ_i moves both bodies by
/// M⁻¹ D_i Δγ_i (solvers/contact_ops.hpp). Blocks are visited colour by colour
/// (solvers/colour_sweep.hpp), so every pass is parallel and its result independent of the
/// thread count. Besides the contacts, the colours hold the step's other block types:
/// rolling/spinning torque rows (solvers/rolling.hpp), swept with their contact, and joint
/// rows (solvers/bilateral.hpp), one block per joint, coloured with the contacts
/// (solvers/colouring.cpp, colour_joint_rows) so that a colour's contacts and joints are
/// swept together in parallel. PGS's sweep, PJ's update and APGD's scatter take this one
/// traversal; the read-only passes (PJ's probe, the residual, the gathers) read the rows
/// in row order. Constructing one starts the solve (detail::SolveScope): loads ν* from the
/// store, builds the body-major view and colours the joint rows; finish() writes
/// ν⁺ = ν* + M⁻¹ D γ back.
#include <optional>
#include <type_traits>
#include <vector>

#include "core/parallel.hpp"
#include "solvers/colour_sweep.hpp"
#include "solvers/contact_operator.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/solver.hpp"

namespace talus {

/// The blocks alone: the batch's contacts on the solver bodies, what the per-block rules of
/// solvers/contact_operator.hpp need (the contact kernels use it without a solve around).
/// Two views of the same blocks: BodyBlocks reads and writes (γ, and the bodies through
/// apply), BodyBlocksView only reads (a probe, a residual term), so that a pass that must
/// not write holds const references and nothing else.
template <bool Writes>
class BodyBlocksOf {
    using Batch = std::conditional_t<Writes, AssembledBatch, const AssembledBatch>;
    using Bodies = std::conditional_t<Writes, SolverBodies, const SolverBodies>;

public:
    BodyBlocksOf(Batch& batch, Bodies& bodies) : batch_(batch), sb_(bodies) {}

    std::size_t size() const { return batch_.size(); }
    const std::vector<Vec3>& gamma() const { return batch_.gamma; }
    std::vector<Vec3>& gamma() requires Writes { return batch_.gamma; }
    double mu(std::size_t i) const { return batch_.mu[i]; }
    double eta(std::size_t i) const { return batch_.eta[i]; }
    BlockMetric metric(std::size_t i) const { return {batch_.eta_n[i], batch_.eta_t[i]}; }
    double rho(std::size_t i) const { return batch_.eta[i]; }
    double sigma(std::size_t i) const { return batch_.eta[i]; }
    TALUS_HOT Vec3 velocity(std::size_t i) const { return contact_velocity(batch_, sb_, i); }
    TALUS_HOT void apply(std::size_t i, const Vec3& dg) requires Writes {
        apply_impulse(batch_, contact_frame(batch_, i), sb_, i, dg);
    }
    Mat3 diagonal(std::size_t i) const { return delassus_block(batch_, sb_, i); }
    template <class F>
    double sweep(std::size_t grain, double init, F&& f) requires Writes {
        return sweep_colours(batch_, grain, init, f);
    }

protected:
    Batch& batch_;
    Bodies& sb_;
};

using BodyBlocks = BodyBlocksOf<true>;
using BodyBlocksView = BodyBlocksOf<false>;

/// The blocks and the solve around them.
class BodyOperator : public BodyBlocks {
public:
    BodyOperator(AssembledBatch& batch, BodyStore& store, SolverWorkspace& work)
        : BodyBlocks(batch, work.bodies), store_(store), work_(work) {
        scope_.emplace(batch, store, work);
        if (!batch.bilateral.empty()) colour_joint_rows(store.size(), batch);
    }

    /// Nothing to solve: no contacts and no joint rows.
    bool empty() const { return batch_.size() == 0 && batch_.bilateral.empty(); }

    // ---- the solve around the iterations -------------------------------------------------
    /// ν = ν* + M⁻¹ D γ⁰ (+ rolling torques and M⁻¹ G λ⁰): the warm start's velocities.
    void warm_start();
    /// The friction law the sweeps enforce and residual() measures (CCP unless a method
    /// that solves exact Coulomb natively, bgs, says otherwise).
    void set_friction(FrictionLaw law) { law_ = law; }
    FrictionLaw friction() const { return law_; }
    double residual() const { return law_residual(batch_, sb_, law_); }
    /// A residual pass costs a sweep here: methods ask for it only behind their gates (0).
    int residual_check_interval() const { return 0; }
    double coulomb_residual() const { return talus::coulomb_residual(batch_, sb_); }
    void note_iteration(int k, int cap) { detail::note_iteration(k, cap, batch_.gamma, work_); }
    double seconds() const { return scope_->seconds(); }
    /// ν⁺ into the store; residual, convergence, wall time and (check_unbounded) the
    /// over-constrained contacts into `result`.
    void finish(double tolerance, bool check_unbounded, SolverResult& result) {
        scope_->finish(batch_, store_, tolerance, check_unbounded, result, law_);
    }

    /// Keep the store's ν*, for restart().
    void keep_free_velocities() {
        kept_v_ = store_.velocity;
        kept_w_ = store_.angular_velocity;
    }
    /// Start the solve again from the kept ν* (finish() wrote ν⁺ into the store).
    void restart() {
        store_.velocity = kept_v_;
        store_.angular_velocity = kept_w_;
        scope_.reset();
        scope_.emplace(batch_, store_, work_);
    }
    /// rhs_n,i += s (the De Saxcé fixed point shifts and restores it).
    void shift_normal(std::size_t i, double s) { batch_.rhs[i][0] += s; }

    // ---- passes over every block type ----------------------------------------------------
    /// One PGS sweep (colour by colour: contact kernels with their rolling rows, and the
    /// joint rows); returns the largest ‖γ − Π(γ − η d)‖² − tol2 η² when visited.
    double pgs_sweep(double omega, double tol2);
    /// One block Gauss–Seidel sweep ("bgs": bgs_block on the contacts, PGS's step on their
    /// rolling rows and on the joint rows, colour by colour); returns what pgs_sweep does.
    double bgs_sweep(double omega, double tol2);
    /// bgs's metric of each contact (batch eta_n, eta_t) from its block W_ii, for the rows
    /// past those that already hold it (a batch's rows appended after an earlier solve).
    void bgs_prepare();
    /// bgs's cluster sweeps (solvers/cluster_sweeps.cpp): when at most kClusterSeeds
    /// contacts are above `tol`, sweep them and kClusterRings rings of contacts around them
    /// alone, serially (the local sweeps accelerated as NNCG), until they are within tol / 2
    /// or kClusterLocalSweeps local sweeps.
    /// Returns the contact steps taken, 0 (nothing done) when more are above it, none is, or
    /// the batch has rolling or joint rows; and whether the cluster came within tol / 2, or
    /// none was above it.
    ClusterOutcome cluster_sweeps(double tol, double omega);
    /// Whether two moving bodies in contact differ in mass by more than SolverSettings::kClusterMassRatio:
    /// where bgs runs its cluster sweeps unless the settings say (solvers/cluster_sweeps.cpp).
    bool graded_masses() const;
    /// PJ's step sizes ω η_i / max(k_A, k_B), k a body's count of contacts and rows.
    void pj_prepare(double omega) { pj_steps(omega, block_counts()); }
    /// k of every body: its contacts, joint rows and rolling/spinning entries.
    std::vector<uint32_t> block_counts() const;
    /// PJ's step sizes from k of every body (block_counts, or a rank's with its ghosts'
    /// counts from their owners).
    void pj_steps(double omega, const std::vector<uint32_t>& k);
    /// next = Π(γ − s d) for every block at the same ν; returns the §6 residual there.
    double pj_probe();
    /// ν += M⁻¹ D (next − γ), γ ← next (contacts and joint rows colour by colour; then the
    /// rolling rows serially in order).
    void pj_apply();

    // ---- APGD's products (docs/design.md §6; solvers/apgd.cpp) ------------------------------
    /// q_i = D_iᵀ ν* + rhs_i: before warm_start() the solver bodies still hold ν*.
    Vec3 free_velocity(std::size_t i) const { return contact_velocity(batch_, sb_, i); }
    /// Per-contact vectors kept between steps (k < 7), so that the iterations allocate nothing.
    std::vector<Vec3>& scratch(int k) {
        std::vector<Vec3>* v[7] = {&work_.c0, &work_.c1, &work_.c2, &work_.c3, &work_.c4, &work_.c5, &work_.c6};
        return *v[k];
    }
    std::size_t row_count() const { return batch_.bilateral.size(); }
    std::vector<double>& lambda() { return batch_.bilateral.lambda; }
    double row_velocity(std::size_t j) const { return talus::row_velocity(batch_.bilateral, sb_, j); }
    /// The number of contacts of the whole problem (a rank's operator: over every rank).
    std::size_t contact_total() const { return batch_.size(); }
    /// Whether `x` holds anywhere (a rank's operator: on any rank; every rank calls it).
    bool any_rank(bool x) const { return x; }
    /// The accepted Lipschitz estimate, carried to the next step by the warm start.
    double& lipschitz() { return batch_.lipschitz; }
    /// The residual of an iterate g with N g = ng, given the max of its terms: that max.
    double refine_residual(double max_term, const std::vector<Vec3>&, const std::vector<Vec3>&,
                           const std::vector<Vec3>&) const {
        return max_term;
    }
    /// Load the inverse masses into the per-body scratch the products accumulate on.
    void begin_products() {
        work_.scratch.body = sb_.body;  // velocities are overwritten by every product
        work_.scratch.inv_inertia_world = sb_.inv_inertia_world;
    }
    /// After a solve that hit its cap: the over-constrained contacts at the batch's γ.
    std::vector<uint32_t> unbounded_contacts(double tolerance) {
        detail::rebuild_velocities(batch_, nullptr, work_);
        return detail::find_unbounded(batch_, store_, work_, tolerance);
    }
    /// out_i = D_iᵀ (the per-body scratch) for the contacts i = list[k], k < count, and
    /// terms(i, out_i, max) reduced over them: exact sums (ReductionSums), so the same bits
    /// for any order of the list (`max`: the running max of the chunk so far, below which a
    /// term need not be computed exactly).
    /// With `exact`, the exact sums before rounding go there too (a rank merges them with
    /// the other ranks').
    template <class Terms>
    Reductions gather(const uint32_t* list, std::size_t count, std::vector<Vec3>& out,
                      std::vector<ReductionSums>& partial, Terms&& terms, ReductionSums* exact = nullptr);
    /// (out, out_l) = N (z, z_l) over the contacts of `live` and the joint rows: M⁻¹ (D z +
    /// G z_l) accumulated on the per-body scratch (contacts and rows colour by colour), then
    /// Dᵀ of it for the contacts of `live` and Gᵀ for the rows.
    /// The pass writing `out` also reduces terms over `live` (gather), so an iteration's
    /// dot products and residual cost no pass of their own. Contacts outside `live` keep
    /// their `out`; the scratch then holds M⁻¹ D z for a later gather over them.
    template <class Terms>
    Reductions product(const std::vector<uint32_t>& live, const std::vector<Vec3>& z,
                       const std::vector<double>& z_l, std::vector<Vec3>& out,
                       std::vector<double>& out_l, std::vector<ReductionSums>& partial, Terms&& terms) {
        scatter_product(live, z, z_l);
        return gather_product(live, out, out_l, partial, terms);
    }
    /// product's first half: the per-body scratch set to M⁻¹ (D z + G z_l) over the
    /// contacts of `live` and the joint rows.
    void scatter_product(const std::vector<uint32_t>& live, const std::vector<Vec3>& z,
                         const std::vector<double>& z_l);
    /// product's second half, from the scratch: gather over `live`, Gᵀ for the rows.
    template <class Terms>
    Reductions gather_product(const std::vector<uint32_t>& live, std::vector<Vec3>& out,
                              std::vector<double>& out_l, std::vector<ReductionSums>& partial, Terms&& terms) {
        out.resize(batch_.size());
        const Reductions total = gather(live.data(), live.size(), out, partial, terms);
        const BilateralBatch& rows = batch_.bilateral;
        out_l.resize(rows.size());
        for (std::size_t j = 0; j < rows.size(); ++j) out_l[j] = row_jacobian_velocity(rows, work_.scratch, j);
        return total;
    }

    AssembledBatch& batch() { return batch_; }
    SolverWorkspace& work() { return work_; }
    BodyStore& store() { return store_; }

private:
    BodyStore& store_;
    SolverWorkspace& work_;
    std::optional<detail::SolveScope> scope_;
    FrictionLaw law_ = FrictionLaw::CCP;
    std::vector<Vec3> kept_v_, kept_w_;  // the store's ν* (keep_free_velocities)
    // cluster_sweeps' scratch: the scan's finds per chunk, the cluster, and the flags of
    // the contacts and bodies it holds (all clear between calls)
    std::vector<std::vector<uint32_t>> cluster_found_;
    std::vector<uint32_t> cluster_;
    std::vector<uint8_t> cluster_in_, cluster_body_in_;
    std::vector<Vec3> cluster_start_, cluster_before_, cluster_dir_;  // γ at the call's start and before a local sweep, NNCG's p
    // PJ's state: proposed values and step sizes of contacts, rolling entries, joint rows
    std::vector<Vec3> next_r_;
    std::vector<double> step_r_, next_l_, step_l_;
};

/// Cluster sweeps (BodyOperator::cluster_sweeps; docs/design.md §6): the most contacts
/// above the tolerance a cluster starts from, the rings of contacts added around them, and
/// the most local sweeps of one cluster. Measured on the random-pack twin's settled bed and
/// the deep 100k pack (64 seeds: 65 sweeps to 1e-4 m/s from the warm start, 256: 20, 1024:
/// 18; benchmarks/README.md, "Cluster sweeps").
inline constexpr std::size_t kClusterSeeds = 256;
inline constexpr int kClusterRings = 2;
inline constexpr int kClusterLocalSweeps = 500;
/// A cluster of more than 1 / kClusterShare of the batch's contacts is not swept alone.
inline constexpr std::size_t kClusterShare = 8;

// The per-body scratch lines are what both passes over the contacts wait for (measured with
// perf: the loads of a contact's bodies were a quarter of the gather's time): ask for them
// this many contacts ahead. A hint only, no effect on results.
inline constexpr std::size_t kProductPrefetch = 8;

inline void prefetch_contact_bodies(const AssembledBatch& c, const SolverBodies& s, std::size_t j) {
    const int32_t a = c.a[j], b = c.b[j];
    if (a != kNoBody) __builtin_prefetch(&s.body[std::size_t(a)], 1);
    if (b != kNoBody) __builtin_prefetch(&s.body[std::size_t(b)], 1);
}

template <class Terms>
Reductions BodyOperator::gather(const uint32_t* list, std::size_t count, std::vector<Vec3>& out,
                                std::vector<ReductionSums>& partial, Terms&& terms, ReductionSums* exact) {
    const AssembledBatch& c = batch_;
    SolverBodies& s = work_.scratch;
    const std::size_t chunks = (count + kReduceChunk - 1) / kReduceChunk;
    partial.assign(chunks, ReductionSums{});
    parallel_each(chunks, [&](std::size_t k) {
        ReductionSums r;
        {
            ExactSumBins b0(r.sum[0]), b1(r.sum[1]), b2(r.sum[2]);
            const std::size_t end = std::min(count, (k + 1) * kReduceChunk);
            for (std::size_t q = k * kReduceChunk; q < end; ++q) {
                if (q + kProductPrefetch < end) prefetch_contact_bodies(c, s, list[q + kProductPrefetch]);
                const std::size_t i = list[q];
                out[i] = jacobian_velocity(c, contact_frame(c, i), s, i);
                const Reductions t = terms(i, out[i], r.max);
                if (t.sum[0] != 0.0) b0.add(t.sum[0]);
                if (t.sum[1] != 0.0) b1.add(t.sum[1]);
                if (t.sum[2] != 0.0) b2.add(t.sum[2]);
                r.max = std::max(r.max, t.max);
            }
        }  // the bins flush into r
        partial[k] = r;
    }, 1);
    ReductionSums total;
    for (const ReductionSums& r : partial) total.merge(r);
    if (exact) *exact = total;
    return total.value();
}

}  // namespace talus
