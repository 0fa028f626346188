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
            return std::max(e, pgs_rolling_contacts(batch_, sb_, lo, hi, omega, tol2, independent));
        },
        [&](std::size_t j) { return pgs_row(rows, sb_, j, omega, tol2); });
}

void BodyOperator::bgs_prepare() {
    // Only the rows that lack their metric: the batch's first `from` rows kept theirs from
    // an earlier solve of the same step (rows appended for a resolve, the push-out's pass),
    // whose blocks have not changed since (same bodies, same orientations).
    const std::size_t n = batch_.size();
    const std::size_t kept = batch_.eta_n.size();
    const std::size_t from = kept == batch_.eta_t.size() && kept <= n ? kept : 0;
    batch_.eta_n.resize(n);
    batch_.eta_t.resize(n);
    parallel_each(n - from, [&](std::size_t k) {
        const std::size_t i = from + k;
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
            const double e = bgs_range(batch_, sb_, lo, hi, omega, tol2, independent, law_);
            if (batch_.rolling.empty()) return e;
            return std::max(e, pgs_rolling_contacts(batch_, sb_, lo, hi, omega, tol2, independent));
        },
        [&](std::size_t j) { return pgs_row(rows, sb_, j, omega, tol2); });
}

std::vector<uint32_t> BodyOperator::block_counts() const {
    // A body pushed by k blocks at once needs the step shrunk by k (solvers/pj.cpp).
    const BodyContacts& bc = work_.body_contacts;
    const BilateralBatch& rows = batch_.bilateral;
    const RollingBatch& rolling = batch_.rolling;
    std::vector<uint32_t> k(store_.size());
    for (std::size_t b = 0; b < k.size(); ++b) k[b] = bc.start[b + 1] - bc.start[b];
    for (std::size_t j = 0; j < rows.size(); ++j) {
        if (rows.a[j] != kNoBody) ++k[std::size_t(rows.a[j])];
        if (rows.b[j] != kNoBody) ++k[std::size_t(rows.b[j])];
    }
    for (std::size_t e = 0; e < rolling.size(); ++e) {
        const std::size_t i = rolling.contact[e];
        if (batch_.a[i] != kNoBody) ++k[std::size_t(batch_.a[i])];
        if (batch_.b[i] != kNoBody) ++k[std::size_t(batch_.b[i])];
    }
    return k;
}

void BodyOperator::pj_steps(double omega, const std::vector<uint32_t>& k) {
    const std::size_t n = batch_.size();
    const BilateralBatch& rows = batch_.bilateral;
    const std::size_t m = rows.size();
    const RollingBatch& rolling = batch_.rolling;
    const std::size_t nr = rolling.size();
    auto count = [&](int32_t body) { return body == kNoBody ? 1u : k[std::size_t(body)]; };
    next_r_.resize(nr);
    step_r_.resize(nr);
    for (std::size_t e = 0; e < nr; ++e) {
        const std::size_t i = rolling.contact[e];
        step_r_[e] = omega * rolling.eta[e] / double(std::max(count(batch_.a[i]), count(batch_.b[i])));
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

void BodyOperator::scatter_product(const std::vector<uint32_t>& live, const std::vector<Vec3>& z,
                                   const std::vector<double>& z_l) {
    const AssembledBatch& c = batch_;
    SolverBodies& s = work_.scratch;
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
            if (q + kProductPrefetch < hi && !(z[live[q + kProductPrefetch]].array() == 0.0).all())
                prefetch_contact_bodies(c, s, live[q + kProductPrefetch]);
            // A zero impulse adds only zeros: skipping it changes no bit (the sums start at
            // +0 and never become −0), and spares the bodies' cache lines.
            const Vec3& g = z[i];
            if (g[0] == 0.0 && g[1] == 0.0 && g[2] == 0.0) continue;
            apply_impulse(c, contact_frame(c, i), s, i, g);
        }
    };
    // The colour's row blocks: M⁻¹ G_j z_j of each row, a block's rows in row order.
    const BilateralBatch& rows = c.bilateral;
    auto row_blocks = [&](std::size_t first, std::size_t last) {
        auto row = [&](std::size_t j) {
            apply_row(rows, s, j, z_l[j]);
            return 0.0;
        };
        sweep_row_blocks(c.joint_colours, first, last, 0.0, row);
        return 0.0;
    };
    auto contacts = [&](std::size_t lo, std::size_t hi, bool) {
        scatter(lo, hi);
        return 0.0;
    };
    for_each_colour(c, [&](std::size_t c_lo, std::size_t c_hi, std::size_t b_lo, std::size_t b_hi, bool serial) {
        const std::size_t lo = std::lower_bound(live.begin(), live.end(), c_lo) - live.begin();
        const std::size_t hi = std::lower_bound(live.begin() + lo, live.end(), c_hi) - live.begin();
        // the overflow colour's blocks may share bodies: in order, serially
        scatter_colour(lo, hi, b_lo, b_hi, serial, grain::kContacts, contacts, row_blocks);
    });
}

}  // namespace talus
