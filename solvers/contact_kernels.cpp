// The per-contact kernels of the PGS and bgs sweeps, of the residual pass, of the two PJ
// passes and of the rolling entries' PGS step (docs/design.md §6, solvers/rolling.hpp):
// scalar, four contacts at a time with AVX, and eight at a time with AVX-512. The lane
// kernels are written once, in solvers/contact_lanes.hpp, and included here for each width.
//
// Why lanes: a contact update is a chain of about 130 dependent flops (velocity at the
// contact, cone projection with a square root and two divisions, impulse back to both
// bodies), and one core overlaps little of one contact with the next. Four contacts of a
// colour share no dynamic body, so they are independent and fill the four lanes of a
// 256-bit register; the cost per contact is then the loads and the transposes.
//
// Bit-identity: each lane performs exactly the scalar kernel's IEEE operations in the same
// order (the build has -ffp-contract=off and the AVX code uses no FMA), branches become
// blends of both outcomes, and a missing body is a zero body whose contributions are exact
// zeros (x + 0 and x − 0 are x, lever arms of missing bodies are 0). Hence which contacts
// happen to be grouped — which depends on where a range starts — never changes a bit,
// and results stay independent of the thread count. tests/unit/solvers/test_contact_kernels.cpp
// compares the kernels of every width bit for bit.
#include "solvers/contact_kernels.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "solvers/cone_projection.hpp"
#include "solvers/body_operator.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/rolling.hpp"

namespace talus {
namespace {

// The body lines are the latency: a colour spreads over the whole pile, so they come from
// L3, not L2. Ask for them this many contacts ahead (a hint: no effect on results; the
// lane kernels get through contacts faster and look further ahead, their kAhead).
constexpr std::size_t kPrefetch = 8;

TALUS_HOT void prefetch_bodies(const AssembledBatch& batch, const SolverBodies& bodies,
                               std::size_t j) {
    const int32_t a = batch.a[j], b = batch.b[j];
    if (a != kNoBody) __builtin_prefetch(&bodies.body[std::size_t(a)], 1);
    if (b != kNoBody) __builtin_prefetch(&bodies.body[std::size_t(b)], 1);
}

/// The scalar kernels are the per-block rules of solvers/contact_operator.hpp on the bodies.
TALUS_HOT double pgs_update(AssembledBatch& batch, SolverBodies& sb, std::size_t i,
                            double omega, double tol2) {
    BodyBlocks blocks(batch, sb);
    return pgs_block(blocks, i, omega, tol2);
}

template <bool Coulomb>
TALUS_HOT double bgs_update(AssembledBatch& batch, SolverBodies& sb, std::size_t i,
                            double omega, double tol2) {
    BodyBlocks blocks(batch, sb);
    return bgs_block<Coulomb>(blocks, i, omega, tol2);
}

/// bgs's step on contact i's normal row alone (AssembledBatch::normal_only: μ_i = 0 and
/// γ_t = 0, so the block's step would project the tangent to zero):
///   γ_n ← max(0, γ_n − ω p_n⁻¹ d_n),  ν += M⁻¹ n (Δγ_n) at the lever arms,
/// with d_n = n·(v_B + ω_B × r_B − v_A − ω_A × r_A) + b_n. Returns the §6 residual term's
/// excess of the row, (γ_n − max(0, γ_n − η d_n))² − tol2 η² (≤ 0: within the tolerance).
/// The lane kernels do the same operations (bgs_normal_group).
TALUS_HOT double bgs_normal_update(AssembledBatch& batch, SolverBodies& sb, std::size_t i, double omega,
                                   double tol2) {
    const int32_t a = batch.a[i], b = batch.b[i];
    const Vec3& n = batch.normal[i];
    double rel[3] = {0.0, 0.0, 0.0};
    if (b != kNoBody) add_point_velocity(sb.body[b].v, sb.body[b].w, batch.lever_b[i], 1.0, rel);
    if (a != kNoBody) add_point_velocity(sb.body[a].v, sb.body[a].w, batch.lever_a[i], -1.0, rel);
    const double dn = batch.rhs[i][0] + ((n[0] * rel[0] + n[1] * rel[1]) + n[2] * rel[2]);
    const double g0 = batch.gamma[i][0];
    const double en = batch.eta_n[i], et = batch.eta_t[i];
    const double g = en > 0.0 && et > 0.0 ? std::max(0.0, g0 - (omega * en) * dn) : 0.0;
    batch.gamma[i] = Vec3(g, 0.0, 0.0);
    const double dg = g - g0;
    const double p[3] = {n[0] * dg, n[1] * dg, n[2] * dg};
    if (b != kNoBody) push_body(sb, b, batch.lever_b[i], p, 1.0);
    if (a != kNoBody) push_body(sb, a, batch.lever_a[i], p, -1.0);
    const double eta = batch.eta[i];
    const double e = g0 - std::max(0.0, g0 - eta * dn);
    return e * e - tol2 * eta * eta;
}

/// Contact i's impulse added to its bodies' sums, as the gather adds it per end: p = A_i γ_i
/// in the world, then −p and −r_A × p on A, +p and +r_B × p on B.
TALUS_HOT double scatter_impulse(const AssembledBatch& c, const Vec3* gamma, SolverBodies& sb, std::size_t i) {
    const Vec3 p = contact_frame(c, i).to_world(gamma[i]);
    if (c.a[i] != kNoBody) {
        SolverBody& a = sb.body[std::size_t(c.a[i])];
        a.v -= p;
        a.w -= cross(c.lever_a[i], p);
    }
    if (c.b[i] != kNoBody) {
        SolverBody& b = sb.body[std::size_t(c.b[i])];
        b.v += p;
        b.w += cross(c.lever_b[i], p);
    }
    return 0.0;
}

TALUS_HOT double pj_contact(const AssembledBatch& batch, const SolverBodies& sb, const double* step,
                            Vec3* next, std::size_t i) {
    const BodyBlocksView blocks(batch, sb);  // the probe only reads
    return pj_block(blocks, i, step[i], next[i]);
}

/// The §6 residual term of contact i at the solver bodies' velocities, read only:
/// ‖γ_i − Π_K(γ_i − η_i d_i)‖ / η_i, written as pj_block writes it (`Coulomb`: with De
/// Saxcé's ĉ_i for d_i).
template <bool Coulomb = false>
TALUS_HOT double residual_term(const AssembledBatch& batch, const SolverBodies& sb, std::size_t i) {
    const Vec3 v = contact_velocity(batch, sb, i);
    const Vec3 d = Coulomb ? coulomb_velocity(v, batch.mu[i]) : v;
    const Vec3& g0 = batch.gamma[i];
    const double eta = batch.eta[i];
    const Vec3 full = residual_step(d, g0, eta, batch.mu[i]);
    const double e0 = g0[0] - full[0], e1 = g0[1] - full[1], e2 = g0[2] - full[2];
    return std::sqrt((e0 * e0 + e1 * e1) + e2 * e2) / eta;
}

TALUS_HOT void pj_apply(AssembledBatch& batch, const Vec3* next, SolverBodies& sb, std::size_t i) {
    BodyBlocks blocks(batch, sb);
    pj_apply_block(blocks, i, next[i]);
}

/// PGS's step on rolling entry k (solvers/rolling.hpp) at the current velocities:
/// γ_k ← Π_R(γ_k − ω η_k d_k) at the contact's γ_n, d_k = A_iᵀ (ω_B − ω_A), its torque
/// applied to both bodies. Returns ‖γ_k − Π_R(γ_k − η_k d_k)‖² ℓ_k² − tol2 η_k². The lane
/// kernels do the same operations (rolling_group).
TALUS_HOT double pgs_rolling_step(AssembledBatch& batch, SolverBodies& sb, std::size_t k, double omega,
                                  double tol2) {
    RollingBatch& rb = batch.rolling;
    const std::size_t i = rb.contact[k];
    const ContactFrame f = contact_frame(batch, i);
    const int32_t a = batch.a[i], b = batch.b[i];
    const Vec3 d = f.to_contact(relative_spin(sb, a, b));
    const Vec3 g0 = rb.gamma[k];
    const double gn = batch.gamma[i][0], eta = rb.eta[k];
    const Vec3 g = project_rolling(g0 - (omega * eta) * d, gn, rb.mu_r[k], rb.mu_s[k]);
    const Vec3 full = omega == 1.0 ? g : project_rolling(g0 - eta * d, gn, rb.mu_r[k], rb.mu_s[k]);
    rb.gamma[k] = g;
    apply_torque(sb, a, b, f.to_world(g - g0));
    const double len = rb.length[k];
    const double e0 = g0[0] - full[0], e1 = g0[1] - full[1], e2 = g0[2] - full[2];
    return ((e0 * e0 + e1 * e1) + e2 * e2) * (len * len) - tol2 * eta * eta;
}

/// A range one contact at a time: the largest of `init` and one(i) over [lo, hi) (a
/// Gauss–Seidel sweep's excesses from −1, a read-only pass's residual terms from 0).
/// `ahead`: prefetch the bodies of row i + kPrefetch (false where i is not a row's index).
template <bool ahead = true, class One>
double one_at_a_time(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo, std::size_t hi,
                     double init, One&& one) {
    for (std::size_t i = lo; i < hi; ++i) {
        if constexpr (ahead)
            if (i + kPrefetch < hi) prefetch_bodies(batch, bodies, i + kPrefetch);
        init = std::max(init, one(i));
    }
    return init;
}

/// The rolling entries [first, last) one at a time; the largest excess, or −1.
double rolling_one_at_a_time(AssembledBatch& batch, SolverBodies& sb, std::size_t first, std::size_t last,
                             double omega, double tol2) {
    return one_at_a_time<false>(batch, sb, first, last, -1.0,
                                [&](std::size_t k) { return pgs_rolling_step(batch, sb, k, omega, tol2); });
}

/// The body a group's missing body reads: exact zeros, never written.
alignas(64) const SolverBody kZeroBody{Vec3(0.0, 0.0, 0.0), 0.0, Vec3(0.0, 0.0, 0.0), 0.0};

// ---- four contacts at a time (AVX) ----------------------------------------------------

#pragma GCC push_options
#pragma GCC target("avx")

namespace four {

constexpr int N = 4;
// The four-lane kernel gets through contacts faster than the scalar one: it looks further ahead.
constexpr std::size_t kAhead = 16;

using V = __m256d;
using Mask = __m256d;  // all ones or all zeros per lane

struct V3 {
    V x, y, z;
};

inline V splat(double x) { return _mm256_set1_pd(x); }
inline V zero() { return _mm256_setzero_pd(); }
inline V loadu(const double* p) { return _mm256_loadu_pd(p); }
inline Mask lt(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
inline Mask le(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_LE_OQ); }
inline Mask ge(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GE_OQ); }
inline Mask gt(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
inline Mask both(Mask a, Mask b) { return _mm256_and_pd(a, b); }
inline Mask either(Mask a, Mask b) { return _mm256_or_pd(a, b); }
inline bool any(Mask m) { return _mm256_movemask_pd(m) != 0; }
inline V select(Mask m, V if_false, V if_true) { return _mm256_blendv_pd(if_false, if_true, m); }
inline V keep(Mask m, V x) { return _mm256_and_pd(x, m); }
inline V vsqrt(V x) { return _mm256_sqrt_pd(x); }
inline V vmax(V a, V b) { return _mm256_max_pd(a, b); }
inline V bit_and(V a, V b) { return _mm256_and_pd(a, b); }
inline V bit_or(V a, V b) { return _mm256_or_pd(a, b); }
inline V bit_xor(V a, V b) { return _mm256_xor_pd(a, b); }

/// Four consecutive Vec3 (12 doubles at p) as their x, y and z lanes.
inline V3 load3(const double* p) {
    // m03 = x0 y0 | x2 y2, m14 = z0 x1 | z2 x3, m25 = y1 z1 | y3 z3
    const V m03 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p)), _mm_loadu_pd(p + 6), 1);
    const V m14 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p + 2)), _mm_loadu_pd(p + 8), 1);
    const V m25 = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(p + 4)), _mm_loadu_pd(p + 10), 1);
    return {_mm256_shuffle_pd(m03, m14, 0xA), _mm256_shuffle_pd(m03, m25, 0x5),
            _mm256_shuffle_pd(m14, m25, 0xA)};
}

/// The inverse of load3.
inline void store3(double* p, const V3& a) {
    const V m03 = _mm256_shuffle_pd(a.x, a.y, 0x0);
    const V m14 = _mm256_shuffle_pd(a.z, a.x, 0xA);
    const V m25 = _mm256_shuffle_pd(a.y, a.z, 0xF);
    _mm_storeu_pd(p, _mm256_castpd256_pd128(m03));
    _mm_storeu_pd(p + 2, _mm256_castpd256_pd128(m14));
    _mm_storeu_pd(p + 4, _mm256_castpd256_pd128(m25));
    _mm_storeu_pd(p + 6, _mm256_extractf128_pd(m03, 1));
    _mm_storeu_pd(p + 8, _mm256_extractf128_pd(m14, 1));
    _mm_storeu_pd(p + 10, _mm256_extractf128_pd(m25, 1));
}

/// 4×4 transpose in place: rows r0..r3 become columns (an involution).
inline void transpose4(V& r0, V& r1, V& r2, V& r3) {
    const V t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    const V t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
    r0 = _mm256_permute2f128_pd(t0, t2, 0x20);
    r1 = _mm256_permute2f128_pd(t1, t3, 0x20);
    r2 = _mm256_permute2f128_pd(t0, t2, 0x31);
    r3 = _mm256_permute2f128_pd(t1, t3, 0x31);
}

/// Four bodies' solver state by lanes: velocity, 1/m, angular velocity, 1/J.
struct Bodies {
    V vx, vy, vz, im, wx, wy, wz, ij;
};

inline Bodies load_bodies(const SolverBody* const p[4]) {
    Bodies b;
    b.vx = _mm256_load_pd(p[0]->v.data());
    b.vy = _mm256_load_pd(p[1]->v.data());
    b.vz = _mm256_load_pd(p[2]->v.data());
    b.im = _mm256_load_pd(p[3]->v.data());
    transpose4(b.vx, b.vy, b.vz, b.im);
    b.wx = _mm256_load_pd(p[0]->w.data());
    b.wy = _mm256_load_pd(p[1]->w.data());
    b.wz = _mm256_load_pd(p[2]->w.data());
    b.ij = _mm256_load_pd(p[3]->w.data());
    transpose4(b.wx, b.wy, b.wz, b.ij);
    return b;
}

/// Write back the lanes whose body exists (the others point at the shared zero body).
inline void store_bodies(Bodies b, SolverBody* const p[4], const bool exists[4]) {
    transpose4(b.vx, b.vy, b.vz, b.im);
    transpose4(b.wx, b.wy, b.wz, b.ij);
    const V lin[4] = {b.vx, b.vy, b.vz, b.im}, ang[4] = {b.wx, b.wy, b.wz, b.ij};
    for (int k = 0; k < 4; ++k) {
        if (!exists[k]) continue;
        _mm256_store_pd(p[k]->v.data(), lin[k]);
        _mm256_store_pd(p[k]->w.data(), ang[k]);
    }
}

/// The largest lane (in lane order, as a chain of std::max would take them).
inline double hmax(V x) {
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, x);
    double m = lanes[0];
    for (int k = 1; k < 4; ++k) m = std::max(m, lanes[k]);
    return m;
}

#include "solvers/contact_lanes.hpp"  // the kernels on these lanes

double pgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi, double omega,
                 double tol2) {
    const V omega4 = splat(omega), tol24 = splat(tol2);
    const bool relaxed = omega != 1.0;
    const auto one = [&](std::size_t j) { return pgs_update(batch, bodies, j, omega, tol2); };
    return lanes_sweep(batch, bodies, lo, hi, -1.0,
        [&](std::size_t i, V& e) { return pgs_group(batch, bodies, i, omega4, tol24, relaxed, e); },
        [&](std::size_t i, std::size_t end) { return one_at_a_time(batch, bodies, i, end, -1.0, one); });
}

/// bgs over [lo, hi) four contacts at a time; returns the largest excess, or −1.
template <bool Coulomb>
double bgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi, double omega,
                 double tol2) {
    const V omega4 = splat(omega), tol24 = splat(tol2);
    const auto one = [&](std::size_t j) { return bgs_update<Coulomb>(batch, bodies, j, omega, tol2); };
    return lanes_sweep(batch, bodies, lo, hi, -1.0,
        [&](std::size_t i, V& e) { return bgs_group<Coulomb>(batch, bodies, i, omega4, tol24, e); },
        [&](std::size_t i, std::size_t end) { return one_at_a_time(batch, bodies, i, end, -1.0, one); });
}

/// The impulses of [lo, hi) added to their bodies' sums, four contacts at a time.
void scatter_range(const AssembledBatch& batch, const Vec3* gamma, SolverBodies& bodies, std::size_t lo,
                   std::size_t hi) {
    const auto one = [&](std::size_t j) { return scatter_impulse(batch, gamma, bodies, j); };
    lanes_sweep(batch, bodies, lo, hi, 0.0, [&](std::size_t i, V&) { return scatter_group(batch, gamma, bodies, i); },
                [&](std::size_t i, std::size_t end) { return one_at_a_time(batch, bodies, i, end, 0.0, one); });
}

/// bgs on the normal rows over [lo, hi) four contacts at a time; returns the largest excess, or −1.
double bgs_normal_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi, double omega,
                        double tol2) {
    const V omega4 = splat(omega), tol24 = splat(tol2);
    const auto one = [&](std::size_t j) { return bgs_normal_update(batch, bodies, j, omega, tol2); };
    return lanes_sweep(batch, bodies, lo, hi, -1.0,
        [&](std::size_t i, V& e) { return bgs_normal_group(batch, bodies, i, omega4, tol24, e); },
        [&](std::size_t i, std::size_t end) { return one_at_a_time(batch, bodies, i, end, -1.0, one); });
}

/// PGS on the rolling entries [first, last), four at a time; returns the largest excess, or −1.
double rolling_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t first, std::size_t last,
                     double omega, double tol2) {
    return rolling_sweep(batch, bodies, first, last, omega, tol2, [&](std::size_t k, std::size_t end) {
        return rolling_one_at_a_time(batch, bodies, k, end, omega, tol2);
    });
}

/// The largest residual term over [lo, hi), or 0 (read only).
template <bool Coulomb>
double residual_range(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo, std::size_t hi) {
    SolverBodies& sb = const_cast<SolverBodies&>(bodies);  // load_group only reads here
    const auto one = [&](std::size_t j) { return residual_term<Coulomb>(batch, bodies, j); };
    return lanes_sweep(batch, bodies, lo, hi, 0.0,
        [&](std::size_t i, V& w) { return residual_group<Coulomb>(batch, sb, i, w); },
        [&](std::size_t i, std::size_t end) { return one_at_a_time(batch, bodies, i, end, 0.0, one); });
}

double pj_contacts_range(const AssembledBatch& batch, SolverBodies& bodies, const double* step, Vec3* next,
                         std::size_t lo, std::size_t hi) {
    const auto one = [&](std::size_t j) { return pj_contact(batch, bodies, step, next, j); };
    return lanes_sweep(batch, bodies, lo, hi, 0.0,
        [&](std::size_t i, V& w) { return pj_contacts_group(batch, bodies, step, next, i, w); },
        [&](std::size_t i, std::size_t end) { return one_at_a_time(batch, bodies, i, end, 0.0, one); });
}

void pj_apply_range(AssembledBatch& batch, const Vec3* next, SolverBodies& bodies, std::size_t lo, std::size_t hi) {
    const auto one = [&](std::size_t j) {
        pj_apply(batch, next, bodies, j);
        return 0.0;
    };
    lanes_sweep(batch, bodies, lo, hi, 0.0,
        [&](std::size_t i, V&) { return pj_apply_group(batch, next, bodies, i); },
        [&](std::size_t i, std::size_t end) { return one_at_a_time(batch, bodies, i, end, 0.0, one); });
}

}  // namespace four

#pragma GCC pop_options

// ---- eight contacts at a time (AVX-512) -------------------------------------------------
//
// The same kernels in eight lanes, for CPUs with AVX-512 F and DQ. Why: a contact's update
// is a chain of dependent operations (the square roots and divisions of the projection),
// and on a core with 512-bit units eight independent chains cost about what four do
// (benchmarks/README.md, "Session 49"). A group of eight consecutive contacts of a colour
// shares no dynamic body, as a group of four.

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
// GCC 12's AVX-512 headers start some intrinsics from _mm512_undefined_pd(), which its
// -W(maybe-)uninitialized reports in every caller (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

namespace eight {

constexpr int N = 8;
constexpr std::size_t kAhead = 32;

using V = __m512d;
using Mask = __mmask8;

struct V3 {
    V x, y, z;
};

inline V splat(double x) { return _mm512_set1_pd(x); }
inline V zero() { return _mm512_setzero_pd(); }
inline V loadu(const double* p) { return _mm512_loadu_pd(p); }
inline Mask lt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
inline Mask le(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ); }
inline Mask ge(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ); }
inline Mask gt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ); }
inline Mask both(Mask a, Mask b) { return Mask(a & b); }
inline Mask either(Mask a, Mask b) { return Mask(a | b); }
inline bool any(Mask m) { return m != 0; }
inline V select(Mask m, V if_false, V if_true) { return _mm512_mask_blend_pd(m, if_false, if_true); }
inline V keep(Mask m, V x) { return _mm512_maskz_mov_pd(m, x); }
inline V vsqrt(V x) { return _mm512_sqrt_pd(x); }
inline V vmax(V a, V b) { return _mm512_max_pd(a, b); }
inline V bit_and(V a, V b) { return _mm512_and_pd(a, b); }
inline V bit_or(V a, V b) { return _mm512_or_pd(a, b); }
inline V bit_xor(V a, V b) { return _mm512_xor_pd(a, b); }

/// Eight consecutive Vec3 (24 doubles at p) as their x, y and z lanes: lane k of x is
/// p[3k]; the first permutation takes lanes 0–5 (or 0–4) from p[0..15], the second the
/// rest from p[16..23].
inline V3 load3(const double* p) {
    const V a = _mm512_loadu_pd(p), b = _mm512_loadu_pd(p + 8), c = _mm512_loadu_pd(p + 16);
    const __m512i x1 = _mm512_setr_epi64(0, 3, 6, 9, 12, 15, 0, 0), x2 = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 10, 13);
    const __m512i y1 = _mm512_setr_epi64(1, 4, 7, 10, 13, 0, 0, 0), y2 = _mm512_setr_epi64(0, 1, 2, 3, 4, 8, 11, 14);
    const __m512i z1 = _mm512_setr_epi64(2, 5, 8, 11, 14, 0, 0, 0), z2 = _mm512_setr_epi64(0, 1, 2, 3, 4, 9, 12, 15);
    return {_mm512_permutex2var_pd(_mm512_permutex2var_pd(a, x1, b), x2, c),
            _mm512_permutex2var_pd(_mm512_permutex2var_pd(a, y1, b), y2, c),
            _mm512_permutex2var_pd(_mm512_permutex2var_pd(a, z1, b), z2, c)};
}

/// The inverse of load3: p[0..7] = x0 y0 z0 x1 y1 z1 x2 y2, p[8..15] = z2 x3 y3 z3 x4 y4
/// z4 x5, p[16..23] = y5 z5 x6 y6 z6 x7 y7 z7 (x and y first, then z into its places).
inline void store3(double* p, const V3& v) {
    const __m512i a1 = _mm512_setr_epi64(0, 8, 0, 1, 9, 0, 2, 10), a2 = _mm512_setr_epi64(0, 1, 8, 3, 4, 9, 6, 7);
    const __m512i b1 = _mm512_setr_epi64(0, 3, 11, 0, 4, 12, 0, 5), b2 = _mm512_setr_epi64(10, 1, 2, 11, 4, 5, 12, 7);
    const __m512i c1 = _mm512_setr_epi64(13, 0, 6, 14, 0, 7, 15, 0), c2 = _mm512_setr_epi64(0, 13, 2, 3, 14, 5, 6, 15);
    _mm512_storeu_pd(p, _mm512_permutex2var_pd(_mm512_permutex2var_pd(v.x, a1, v.y), a2, v.z));
    _mm512_storeu_pd(p + 8, _mm512_permutex2var_pd(_mm512_permutex2var_pd(v.x, b1, v.y), b2, v.z));
    _mm512_storeu_pd(p + 16, _mm512_permutex2var_pd(_mm512_permutex2var_pd(v.x, c1, v.y), c2, v.z));
}

/// 8×8 transpose in place (an involution): r[k] lane j becomes r[j] lane k.
inline void transpose8(V r[8]) {
    V t[8];
    for (int k = 0; k < 4; ++k) {  // rows 2k and 2k+1, element by element
        t[2 * k] = _mm512_unpacklo_pd(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_pd(r[2 * k], r[2 * k + 1]);
    }
    // t[0] = r0_0 r1_0 r0_2 r1_2 r0_4 r1_4 r0_6 r1_6, t[1] the odd columns; t[2], t[3] rows 2, 3
    const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    V u[8];
    for (int h = 0; h < 2; ++h) {  // rows 0–3, then rows 4–7
        const V* q = t + 4 * h;
        u[4 * h + 0] = _mm512_permutex2var_pd(q[0], lo, q[2]);  // columns 0 | 4
        u[4 * h + 1] = _mm512_permutex2var_pd(q[0], hi, q[2]);  // columns 2 | 6
        u[4 * h + 2] = _mm512_permutex2var_pd(q[1], lo, q[3]);  // columns 1 | 5
        u[4 * h + 3] = _mm512_permutex2var_pd(q[1], hi, q[3]);  // columns 3 | 7
    }
    const __m512i first = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
    const __m512i second = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
    const int column[4] = {0, 2, 1, 3};
    for (int k = 0; k < 4; ++k) {
        r[column[k]] = _mm512_permutex2var_pd(u[k], first, u[4 + k]);
        r[column[k] + 4] = _mm512_permutex2var_pd(u[k], second, u[4 + k]);
    }
}

/// Eight bodies' solver state by lanes: velocity, 1/m, angular velocity, 1/J.
struct Bodies {
    V vx, vy, vz, im, wx, wy, wz, ij;
};

inline Bodies load_bodies(SolverBody* const p[8]) {
    V r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm512_load_pd(p[k]->v.data());  // a body is one aligned line
    transpose8(r);
    return {r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]};
}

/// Write back the lanes whose body exists (the others point at the shared zero body).
inline void store_bodies(const Bodies& b, SolverBody* const p[8], const bool exists[8]) {
    V r[8] = {b.vx, b.vy, b.vz, b.im, b.wx, b.wy, b.wz, b.ij};
    transpose8(r);
    for (int k = 0; k < 8; ++k)
        if (exists[k]) _mm512_store_pd(p[k]->v.data(), r[k]);
}

/// The largest lane (in lane order, as a chain of std::max would take them).
inline double hmax(V x) {
    alignas(64) double lanes[8];
    _mm512_store_pd(lanes, x);
    double m = lanes[0];
    for (int k = 1; k < 8; ++k) m = std::max(m, lanes[k]);
    return m;
}

#include "solvers/contact_lanes.hpp"  // the kernels on these lanes

// The last fewer than eight go to the four-lane range (and from there, if need be, one by
// one).

double pgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi, double omega,
                 double tol2) {
    const V omega8 = splat(omega), tol28 = splat(tol2);
    const bool relaxed = omega != 1.0;
    const auto four = [&](std::size_t i, std::size_t end) { return four::pgs_range(batch, bodies, i, end, omega, tol2); };
    return lanes_sweep(batch, bodies, lo, hi, -1.0,
        [&](std::size_t i, V& e) { return pgs_group(batch, bodies, i, omega8, tol28, relaxed, e); },
        four);
}

template <bool Coulomb>
double bgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi, double omega,
                 double tol2) {
    const V omega8 = splat(omega), tol28 = splat(tol2);
    const auto four = [&](std::size_t i, std::size_t end) {
        return four::bgs_range<Coulomb>(batch, bodies, i, end, omega, tol2);
    };
    return lanes_sweep(batch, bodies, lo, hi, -1.0,
        [&](std::size_t i, V& e) { return bgs_group<Coulomb>(batch, bodies, i, omega8, tol28, e); },
        four);
}

void scatter_range(const AssembledBatch& batch, const Vec3* gamma, SolverBodies& bodies, std::size_t lo,
                   std::size_t hi) {
    lanes_sweep(batch, bodies, lo, hi, 0.0, [&](std::size_t i, V&) { return scatter_group(batch, gamma, bodies, i); },
                [&](std::size_t i, std::size_t end) {
                    four::scatter_range(batch, gamma, bodies, i, end);
                    return 0.0;
                });
}

double bgs_normal_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi, double omega,
                        double tol2) {
    const V omega8 = splat(omega), tol28 = splat(tol2);
    const auto four = [&](std::size_t i, std::size_t end) {
        return four::bgs_normal_range(batch, bodies, i, end, omega, tol2);
    };
    return lanes_sweep(batch, bodies, lo, hi, -1.0,
        [&](std::size_t i, V& e) { return bgs_normal_group(batch, bodies, i, omega8, tol28, e); },
        four);
}

double rolling_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t first, std::size_t last,
                     double omega, double tol2) {
    return rolling_sweep(batch, bodies, first, last, omega, tol2, [&](std::size_t k, std::size_t end) {
        return four::rolling_range(batch, bodies, k, end, omega, tol2);
    });
}

template <bool Coulomb>
double residual_range(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo, std::size_t hi) {
    SolverBodies& sb = const_cast<SolverBodies&>(bodies);  // load_group only reads here
    const auto four = [&](std::size_t i, std::size_t end) {
        return four::residual_range<Coulomb>(batch, bodies, i, end);
    };
    return lanes_sweep(batch, bodies, lo, hi, 0.0,
        [&](std::size_t i, V& w) { return residual_group<Coulomb>(batch, sb, i, w); },
        four);
}

double pj_contacts_range(const AssembledBatch& batch, SolverBodies& bodies, const double* step, Vec3* next,
                         std::size_t lo, std::size_t hi) {
    const auto four = [&](std::size_t i, std::size_t end) {
        return four::pj_contacts_range(batch, bodies, step, next, i, end);
    };
    return lanes_sweep(batch, bodies, lo, hi, 0.0,
        [&](std::size_t i, V& w) { return pj_contacts_group(batch, bodies, step, next, i, w); },
        four);
}

void pj_apply_range(AssembledBatch& batch, const Vec3* next, SolverBodies& bodies, std::size_t lo, std::size_t hi) {
    const auto four = [&](std::size_t i, std::size_t end) {
        four::pj_apply_range(batch, next, bodies, i, end);
        return 0.0;
    };
    lanes_sweep(batch, bodies, lo, hi, 0.0,
        [&](std::size_t i, V&) { return pj_apply_group(batch, next, bodies, i); },
        four);
}

}  // namespace eight

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC diagnostic pop
#pragma GCC pop_options
#endif

/// AVX lanes unless the CPU lacks AVX or TALUS_PGS_SCALAR is set in the environment (to
/// measure the scalar kernel; the results are the same bits either way).
bool use_lanes() {
    static const bool use = [] {
        __builtin_cpu_init();
        const char* off = std::getenv("TALUS_PGS_SCALAR");
        return __builtin_cpu_supports("avx") && !(off && *off && std::string_view(off) != "0");
    }();
    return use;
}

/// Eight AVX-512 lanes when the CPU has AVX-512 F and DQ and the lanes are on, unless
/// TALUS_LANES=4 is set in the environment (to measure the four-lane kernels; the same bits
/// either way).
bool use_lanes8() {
    static const bool use = [] {
        const char* four = std::getenv("TALUS_LANES");
        return use_lanes() && lanes8_available() && !(four && std::string_view(four) == "4");
    }();
    return use;
}

/// The widest lanes in use: 8, 4, or 0 (the scalar kernels).
int lane_width() { return use_lanes8() ? 8 : use_lanes() ? 4 : 0; }

}  // namespace

bool pgs_lanes_available() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
}

bool lanes8_available() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

double pgs_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2) {
    return one_at_a_time(batch, bodies, lo, hi, -1.0,
                         [&](std::size_t i) { return pgs_update(batch, bodies, i, omega, tol2); });
}

double pgs_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                       std::size_t hi, double omega, double tol2, int width) {
    if (width == 8) return eight::pgs_range(batch, bodies, lo, hi, omega, tol2);
    return four::pgs_range(batch, bodies, lo, hi, omega, tol2);
}

double pgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                 double omega, double tol2, bool independent) {
    if (independent && lane_width() > 0) return pgs_range_lanes(batch, bodies, lo, hi, omega, tol2, lane_width());
    return pgs_range_scalar(batch, bodies, lo, hi, omega, tol2);
}

double bgs_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2, FrictionLaw law) {
    if (batch.normal_only)
        return one_at_a_time(batch, bodies, lo, hi, -1.0,
                             [&](std::size_t i) { return bgs_normal_update(batch, bodies, i, omega, tol2); });
    if (law == FrictionLaw::Coulomb)
        return one_at_a_time(batch, bodies, lo, hi, -1.0,
                             [&](std::size_t i) { return bgs_update<true>(batch, bodies, i, omega, tol2); });
    return one_at_a_time(batch, bodies, lo, hi, -1.0,
                         [&](std::size_t i) { return bgs_update<false>(batch, bodies, i, omega, tol2); });
}

double bgs_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                       double omega, double tol2, FrictionLaw law, int width) {
    if (batch.normal_only)
        return width == 8 ? eight::bgs_normal_range(batch, bodies, lo, hi, omega, tol2)
                          : four::bgs_normal_range(batch, bodies, lo, hi, omega, tol2);
    const bool coulomb = law == FrictionLaw::Coulomb;
    if (width == 8)
        return coulomb ? eight::bgs_range<true>(batch, bodies, lo, hi, omega, tol2)
                       : eight::bgs_range<false>(batch, bodies, lo, hi, omega, tol2);
    return coulomb ? four::bgs_range<true>(batch, bodies, lo, hi, omega, tol2)
                   : four::bgs_range<false>(batch, bodies, lo, hi, omega, tol2);
}

double bgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                 double omega, double tol2, bool independent, FrictionLaw law) {
    if (independent && lane_width() > 0)
        return bgs_range_lanes(batch, bodies, lo, hi, omega, tol2, law, lane_width());
    return bgs_range_scalar(batch, bodies, lo, hi, omega, tol2, law);
}

double pgs_rolling_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t first, std::size_t last,
                                double omega, double tol2) {
    return rolling_one_at_a_time(batch, bodies, first, last, omega, tol2);
}

double pgs_rolling_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t first, std::size_t last,
                               double omega, double tol2, int width) {
    if (width == 8) return eight::rolling_range(batch, bodies, first, last, omega, tol2);
    return four::rolling_range(batch, bodies, first, last, omega, tol2);
}

double pgs_rolling_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t first, std::size_t last,
                         double omega, double tol2, bool independent) {
    if (independent && lane_width() > 0)
        return pgs_rolling_range_lanes(batch, bodies, first, last, omega, tol2, lane_width());
    return pgs_rolling_range_scalar(batch, bodies, first, last, omega, tol2);
}

void scatter_impulses_range(const AssembledBatch& batch, const std::vector<Vec3>& gamma, SolverBodies& bodies,
                            std::size_t lo, std::size_t hi, bool independent, int width) {
    if (width < 0) width = lane_width();
    if (independent && width == 8) return eight::scatter_range(batch, gamma.data(), bodies, lo, hi);
    if (independent && width == 4) return four::scatter_range(batch, gamma.data(), bodies, lo, hi);
    one_at_a_time(batch, bodies, lo, hi, 0.0, [&](std::size_t i) { return scatter_impulse(batch, gamma.data(), bodies, i); });
}

double residual_range_lanes(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                            std::size_t hi, FrictionLaw law, int width) {
    const bool coulomb = law == FrictionLaw::Coulomb;
    if (width == 8)
        return coulomb ? eight::residual_range<true>(batch, bodies, lo, hi)
                       : eight::residual_range<false>(batch, bodies, lo, hi);
    return coulomb ? four::residual_range<true>(batch, bodies, lo, hi)
                   : four::residual_range<false>(batch, bodies, lo, hi);
}

double residual_range(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                      std::size_t hi, bool lanes, FrictionLaw law) {
    if (lanes && lane_width() > 0) return residual_range_lanes(batch, bodies, lo, hi, law, lane_width());
    if (law == FrictionLaw::Coulomb)
        return one_at_a_time(batch, bodies, lo, hi, 0.0,
                             [&](std::size_t i) { return residual_term<true>(batch, bodies, i); });
    return one_at_a_time(batch, bodies, lo, hi, 0.0,
                         [&](std::size_t i) { return residual_term<false>(batch, bodies, i); });
}

double pj_contacts_range_lanes(const AssembledBatch& batch, SolverBodies& bodies, const double* step,
                               Vec3* next, std::size_t lo, std::size_t hi, int width) {
    if (width == 8) return eight::pj_contacts_range(batch, bodies, step, next, lo, hi);
    return four::pj_contacts_range(batch, bodies, step, next, lo, hi);
}

double pj_contacts_range(const AssembledBatch& batch, SolverBodies& bodies, const double* step,
                         Vec3* next, std::size_t lo, std::size_t hi, bool lanes) {
    if (lanes && lane_width() > 0)
        return pj_contacts_range_lanes(batch, bodies, step, next, lo, hi, lane_width());
    return one_at_a_time(batch, bodies, lo, hi, 0.0,
                         [&](std::size_t i) { return pj_contact(batch, bodies, step, next, i); });
}

void pj_apply_range_lanes(AssembledBatch& batch, const Vec3* next, SolverBodies& bodies, std::size_t lo,
                          std::size_t hi, int width) {
    if (width == 8) return eight::pj_apply_range(batch, next, bodies, lo, hi);
    four::pj_apply_range(batch, next, bodies, lo, hi);
}

void pj_apply_range(AssembledBatch& batch, const Vec3* next, SolverBodies& bodies, std::size_t lo,
                    std::size_t hi, bool independent) {
    if (independent && lane_width() > 0) return pj_apply_range_lanes(batch, next, bodies, lo, hi, lane_width());
    one_at_a_time(batch, bodies, lo, hi, 0.0, [&](std::size_t i) {
        pj_apply(batch, next, bodies, i);
        return 0.0;
    });
}

}  // namespace talus
