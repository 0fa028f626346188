// The bodies' passes over every block type (solvers/body_operator.hpp): what PGS and PJ
// (solvers/pgs.cpp, solvers/pj.cpp) run on a step. Contacts go through the kernels of
// solvers/contact_kernels.cpp (the per-block rules of solvers/contact_operator.hpp, scalar
// or four at a time with AVX, same bits); rolling rows ride with their contact's range;
// joint rows are coloured with the contacts (solvers/colouring.cpp, colour_joint_rows) and
// swept in the same colours, a joint's rows by one task in row order.
#include "solvers/body_operator.hpp"

#include <algorithm>

#include "core/parallel.hpp"
#include "solvers/contact_kernels.hpp"

namespace talus {

void BodyOperator::warm_start() {
    solver_velocities(batch_, work_.body_contacts, batch_.gamma, sb_);
    if (!batch_.rolling.empty()) add_rolling_impulses(batch_, sb_);  // + torques of γ_r⁰, γ_s⁰
    if (!batch_.bilateral.empty()) add_row_impulses(batch_.bilateral, batch_.bilateral.lambda, sb_);
}

double BodyOperator::pgs_sweep(double omega, double tol2) {
    BilateralBatch& rows = batch_.bilateral;
    return sweep_colours(batch_, grain::kContacts, -1.0,
        [&](std::size_t lo, std::size_t hi, bool independent) {
            const double e = pgs_range(batch_, sb_, lo, hi, omega, tol2, independent);
            if (batch_.rolling.empty()) return e;
            return std::max(e, pgs_rolling_contacts(batch_, sb_, lo, hi, omega, tol2));
        },
        [&](std::size_t j) { return pgs_row(rows, sb_, j, omega, tol2); });
}

void BodyOperator::bgs_prepare() {
    const std::size_t n = batch_.size();
    batch_.eta_n.resize(n);
    batch_.eta_t.resize(n);
    parallel_each(n, [&](std::size_t i) {
        const BlockMetric m = block_metric(delassus_block(batch_, sb_, i));
        batch_.eta_n[i] = m.n;
        batch_.eta_t[i] = m.t;
    }, grain::kContacts);
}

double BodyOperator::bgs_sweep(double omega, double tol2) {
    // Contacts take bgs's block step; rolling/spinning torque rows and joint rows, whose
    // blocks are not a contact's, take PGS's (their own scalar η), in the same colours.
    BilateralBatch& rows = batch_.bilateral;
    return sweep_colours(batch_, grain::kContacts, -1.0,
        [&](std::size_t lo, std::size_t hi, bool independent) {
            const double e = bgs_range(batch_, sb_, lo, hi, omega, tol2, independent);
            if (batch_.rolling.empty()) return e;
            return std::max(e, pgs_rolling_contacts(batch_, sb_, lo, hi, omega, tol2));
        },
        [&](std::size_t j) { return pgs_row(rows, sb_, j, omega, tol2); });
}

void BodyOperator::pj_prepare(double omega) {
    // A body pushed by k blocks at once needs the step shrunk by k (solvers/pj.cpp).
    const std::size_t n = batch_.size();
    const BodyContacts& bc = work_.body_contacts;
    const BilateralBatch& rows = batch_.bilateral;
    const std::size_t m = rows.size();
    const RollingBatch& rolling = batch_.rolling;
    const std::size_t nr = rolling.size();
    const bool extra = m > 0 || nr > 0;
    std::vector<uint32_t> row_count;  // rows and torque entries per body (only with either)
    if (extra) {
        row_count.assign(store_.size(), 0);
        for (std::size_t j = 0; j < m; ++j) {
            if (rows.a[j] != kNoBody) ++row_count[std::size_t(rows.a[j])];
            if (rows.b[j] != kNoBody) ++row_count[std::size_t(rows.b[j])];
        }
        for (std::size_t k = 0; k < nr; ++k) {
            const std::size_t i = rolling.contact[k];
            if (batch_.a[i] != kNoBody) ++row_count[std::size_t(batch_.a[i])];
            if (batch_.b[i] != kNoBody) ++row_count[std::size_t(batch_.b[i])];
        }
    }
    auto count = [&](int32_t body) {
        if (body == kNoBody) return 1u;
        const uint32_t k = bc.start[body + 1] - bc.start[body];
        return extra ? k + row_count[std::size_t(body)] : k;
    };
    next_r_.resize(nr);
    step_r_.resize(nr);
    for (std::size_t k = 0; k < nr; ++k) {
        const std::size_t i = rolling.contact[k];
        step_r_[k] = omega * rolling.eta[k] / double(std::max(count(batch_.a[i]), count(batch_.b[i])));
    }
    next_l_.resize(m);
    step_l_.resize(m);
    for (std::size_t j = 0; j < m; ++j)
        step_l_[j] = omega * rows.eta[j] / double(std::max(count(rows.a[j]), count(rows.b[j])));
    std::vector<Vec3>& next = work_.c0;
    next.resize(n);
    std::vector<double>& step = work_.s0;  // ω s_i η_i
    step.resize(n);
    parallel_each(n, [&](std::size_t i) {
        step[i] = omega * batch_.eta[i] / double(std::max(count(batch_.a[i]), count(batch_.b[i])));
    });
}

double BodyOperator::pj_probe() {
    const std::size_t n = batch_.size();
    Vec3* next = work_.c0.data();
    const double* step = work_.s0.data();
    double r = n == 0 ? 0.0 : parallel_max_ranges(0, n, grain::kContacts, 0.0, [&](std::size_t lo, std::size_t hi) {
        return pj_contacts_range(batch_, sb_, step, next, lo, hi);
    });
    if (!batch_.rolling.empty()) r = std::max(r, pj_rolling_pass(batch_, sb_, step_r_.data(), next_r_.data()));
    const BilateralBatch& rows = batch_.bilateral;
    for (std::size_t j = 0; j < rows.size(); ++j) {  // rows: serial, in fixed order
        const double d = talus::row_velocity(rows, sb_, j);
        next_l_[j] = rows.lambda[j] - step_l_[j] * d;
        r = std::max(r, std::abs(d));
    }
    return r;
}

void BodyOperator::pj_apply() {
    const Vec3* next = work_.c0.data();
    BilateralBatch& rows = batch_.bilateral;
    sweep_colours(batch_, grain::kContacts, 0.0,
        [&](std::size_t lo, std::size_t hi, bool independent) {
            pj_apply_range(batch_, next, sb_, lo, hi, independent);
            return 0.0;
        },
        [&](std::size_t j) {  // ν += M⁻¹ G_j Δλ_j
            const double dl = next_l_[j] - rows.lambda[j];
            rows.lambda[j] = next_l_[j];
            apply_row(rows, sb_, j, dl);
            return 0.0;
        });
    if (!batch_.rolling.empty()) pj_rolling_apply(batch_, next_r_.data(), sb_);
}

}  // namespace talus
