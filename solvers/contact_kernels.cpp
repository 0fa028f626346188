// The per-contact kernels of the PGS sweep and of the two PJ passes (docs/design.md §6), scalar and
// four contacts at a time with AVX.
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
// compares the two kernels bit for bit.
#include "solvers/contact_kernels.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "solvers/cone_projection.hpp"
#include "solvers/body_operator.hpp"
#include "solvers/contact_ops.hpp"

namespace talus {
namespace {

// The body lines are the latency: a colour spreads over the whole pile, so they come from
// L3, not L2. Ask for them this many contacts ahead (a hint: no effect on results).
// The four-lane kernel gets through contacts faster, so it looks further ahead.
constexpr std::size_t kPrefetch = 8;
constexpr std::size_t kLanePrefetch = 16;

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

// ---- four contacts at a time (AVX) ----------------------------------------------------

#pragma GCC push_options
#pragma GCC target("avx")

using V = __m256d;

struct V3 {
    V x, y, z;
};

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
struct Bodies4 {
    V vx, vy, vz, im, wx, wy, wz, ij;
};

inline Bodies4 load_bodies(const SolverBody* const p[4]) {
    Bodies4 b;
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
inline void store_bodies(Bodies4 b, SolverBody* const p[4], const bool exists[4]) {
    transpose4(b.vx, b.vy, b.vz, b.im);
    transpose4(b.wx, b.wy, b.wz, b.ij);
    const V lin[4] = {b.vx, b.vy, b.vz, b.im}, ang[4] = {b.wx, b.wy, b.wz, b.ij};
    for (int k = 0; k < 4; ++k) {
        if (!exists[k]) continue;
        _mm256_store_pd(p[k]->v.data(), lin[k]);
        _mm256_store_pd(p[k]->w.data(), ang[k]);
    }
}

/// Π_K per lane, as project_friction_cone (q: its metric, 1 for the Euclidean projection):
/// polar cone → 0, inside → unchanged, else the cone's surface (computed for every lane,
/// selected by blends).
inline V3 project4(const V3& g, V mu, V q = _mm256_set1_pd(1.0)) {
    const V zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
    const V gn = g.x;
    const V t2 = g.y * g.y + g.z * g.z;
    const V mu2 = mu * mu;
    const V mq = mu * q;
    const V polar = _mm256_and_pd(_mm256_cmp_pd(gn, zero, _CMP_LE_OQ),
                                  _mm256_cmp_pd(mq * mq * t2, gn * gn, _CMP_LE_OQ));
    const V inside = _mm256_and_pd(_mm256_cmp_pd(gn, zero, _CMP_GE_OQ),
                                   _mm256_cmp_pd(t2, mu2 * gn * gn, _CMP_LE_OQ));
    const V t = _mm256_sqrt_pd(t2);
    const V m = gn + mq * t;
    const V k = one / ((one + mq * mu) * t);
    const V s = mu * m * k;
    V3 r{m * t * k, s * g.y, s * g.z};
    r.x = _mm256_blendv_pd(_mm256_blendv_pd(r.x, gn, inside), zero, polar);
    r.y = _mm256_blendv_pd(_mm256_blendv_pd(r.y, g.y, inside), zero, polar);
    r.z = _mm256_blendv_pd(_mm256_blendv_pd(r.z, g.z, inside), zero, polar);
    return r;
}

/// Adds sign · (v + ω × r) to rel, as add_point_velocity.
inline void add_point_velocity4(const Bodies4& b, const V3& r, V sign, V3& rel) {
    rel.x = rel.x + sign * (b.vx + (b.wy * r.z - b.wz * r.y));
    rel.y = rel.y + sign * (b.vy + (b.wz * r.x - b.wx * r.z));
    rel.z = rel.z + sign * (b.vz + (b.wx * r.y - b.wy * r.x));
}

/// One body side of ν += M⁻¹ D Δγ, as push_body for isotropic bodies.
inline void push_body4(Bodies4& b, const V3& r, const V3& p, V sign) {
    const V m = sign * b.im;
    b.vx = b.vx + m * p.x;
    b.vy = b.vy + m * p.y;
    b.vz = b.vz + m * p.z;
    const V tx = r.y * p.z - r.z * p.y, ty = r.z * p.x - r.x * p.z, tz = r.x * p.y - r.y * p.x;
    const V k = sign * b.ij;
    b.wx = b.wx + k * tx;
    b.wy = b.wy + k * ty;
    b.wz = b.wz + k * tz;
}

alignas(64) const SolverBody kZeroBody{Vec3(0.0, 0.0, 0.0), 0.0, Vec3(0.0, 0.0, 0.0), 0.0};

/// The largest lane (in lane order, as a chain of std::max would take them).
inline double hmax(V x) {
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, x);
    double m = lanes[0];
    for (int k = 1; k < 4; ++k) m = std::max(m, lanes[k]);
    return m;
}

/// Contacts i … i+3 (no dynamic body shared). Returns false, touching nothing, when one of
/// their bodies is anisotropic; otherwise folds their excesses into `excess`.
/// Four consecutive contacts i … i+3 with no dynamic body shared: their bodies (a missing
/// one reads the zero body and is never written) and their frames and lever arms.
struct Group4 {
    SolverBody* pa[4];
    SolverBody* pb[4];
    bool has_a[4], has_b[4];
    Bodies4 A, B;
    V3 n, u, w, ra, rb;
};

/// Loads the group; false (nothing else loaded) when one of its bodies is anisotropic.
inline bool load_group(const AssembledBatch& batch, SolverBodies& sb, std::size_t i, Group4& g) {
    SolverBody* zero = const_cast<SolverBody*>(&kZeroBody);  // read only: has_* is false
    for (int k = 0; k < 4; ++k) {
        const int32_t a = batch.a[i + k], b = batch.b[i + k];
        g.has_a[k] = a != kNoBody;
        g.has_b[k] = b != kNoBody;
        g.pa[k] = g.has_a[k] ? &sb.body[std::size_t(a)] : zero;
        g.pb[k] = g.has_b[k] ? &sb.body[std::size_t(b)] : zero;
    }
    g.A = load_bodies(g.pa);
    g.B = load_bodies(g.pb);
    const V zerov = _mm256_setzero_pd();
    if (_mm256_movemask_pd(_mm256_or_pd(_mm256_cmp_pd(g.A.ij, zerov, _CMP_LT_OQ),
                                        _mm256_cmp_pd(g.B.ij, zerov, _CMP_LT_OQ))) != 0)
        return false;
    g.n = load3(batch.normal[i].data());
    if (batch.tangent.empty()) {  // first_tangent(n) in four lanes, the same operations
        const V one = _mm256_set1_pd(1.0), sign_bit = _mm256_set1_pd(-0.0);
        const V s = _mm256_or_pd(_mm256_and_pd(g.n.z, sign_bit), one);  // copysign(1, n_z)
        const V a = _mm256_set1_pd(-1.0) / (s + g.n.z);
        const V minus_s = _mm256_xor_pd(s, sign_bit);
        g.u = {one + ((s * g.n.x) * g.n.x) * a, s * ((g.n.x * g.n.y) * a), minus_s * g.n.x};
    } else {
        g.u = load3(batch.tangent[i].data());
    }
    g.w = {g.n.y * g.u.z - g.n.z * g.u.y, g.n.z * g.u.x - g.n.x * g.u.z, g.n.x * g.u.y - g.n.y * g.u.x};
    g.ra = load3(batch.lever_a[i].data());
    g.rb = load3(batch.lever_b[i].data());
    return true;
}

/// d = Aᵀ [(v_B + ω_B × r_B) − (v_A + ω_A × r_A)] + rhs, as contact_velocity.
inline V3 contact_velocity4(const Group4& g, const V3& rhs) {
    const V zerov = _mm256_setzero_pd();
    V3 rel{zerov, zerov, zerov};
    add_point_velocity4(g.B, g.rb, _mm256_set1_pd(1.0), rel);
    add_point_velocity4(g.A, g.ra, _mm256_set1_pd(-1.0), rel);
    return {rhs.x + ((g.n.x * rel.x + g.n.y * rel.y) + g.n.z * rel.z),
            rhs.y + ((g.u.x * rel.x + g.u.y * rel.y) + g.u.z * rel.z),
            rhs.z + ((g.w.x * rel.x + g.w.y * rel.y) + g.w.z * rel.z)};
}

/// ν += M⁻¹ D Δγ on the group's bodies, written back, as apply_impulse.
inline void apply4(Group4& g, const V3& dg) {
    const V3 p{(g.n.x * dg.x + g.u.x * dg.y) + g.w.x * dg.z, (g.n.y * dg.x + g.u.y * dg.y) + g.w.y * dg.z,
               (g.n.z * dg.x + g.u.z * dg.y) + g.w.z * dg.z};
    push_body4(g.B, g.rb, p, _mm256_set1_pd(1.0));
    push_body4(g.A, g.ra, p, _mm256_set1_pd(-1.0));
    store_bodies(g.B, g.pb, g.has_b);
    store_bodies(g.A, g.pa, g.has_a);
}

/// PGS on contacts i … i+3. Returns false, touching nothing, when one of their bodies is
/// anisotropic; otherwise folds their excesses into `excess`.
inline bool pgs_update4(AssembledBatch& batch, SolverBodies& sb, std::size_t i, V omega, V tol2,
                        bool relaxed, V& excess) {
    Group4 grp;
    if (!load_group(batch, sb, i, grp)) return false;
    const V3 g0 = load3(batch.gamma[i].data());
    const V eta = _mm256_loadu_pd(&batch.eta[i]);
    const V mu = _mm256_loadu_pd(&batch.mu[i]);
    const V3 d = contact_velocity4(grp, load3(batch.rhs[i].data()));

    const V oe = omega * eta;
    const V3 g = project4({g0.x - oe * d.x, g0.y - oe * d.y, g0.z - oe * d.z}, mu);
    const V3 full = relaxed ? project4({g0.x - eta * d.x, g0.y - eta * d.y, g0.z - eta * d.z}, mu) : g;
    store3(batch.gamma[i].data(), g);
    apply4(grp, {g.x - g0.x, g.y - g0.y, g.z - g0.z});

    const V e0 = g0.x - full.x, e1 = g0.y - full.y, e2 = g0.z - full.z;
    const V x = (e0 * e0 + e1 * e1) + e2 * e2 - tol2 * eta * eta;
    excess = _mm256_max_pd(x, excess);  // as std::max(excess, x): a NaN x is dropped
    return true;
}

/// A range four contacts at a time: four(i, excess4) takes contacts i … i+3 (false when it
/// cannot: one(j) then takes them one by one), one(j) the rest; returns the largest value
/// of either, or `init` (a Gauss–Seidel sweep's excesses from −1, a read-only pass's
/// residual terms from 0).
template <class Four, class One>
double lanes_sweep(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                   std::size_t hi, double init, Four&& four, One&& one) {
    double excess = init;
    V excess4 = _mm256_set1_pd(init);
    std::size_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        for (std::size_t j = i + kLanePrefetch; j < std::min(i + kLanePrefetch + 4, hi); ++j)
            prefetch_bodies(batch, bodies, j);
        if (four(i, excess4)) continue;
        for (std::size_t j = i; j < i + 4; ++j) excess = std::max(excess, one(j));
    }
    for (; i < hi; ++i) excess = std::max(excess, one(i));
    return std::max(excess, hmax(excess4));
}

double lanes_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                   double omega, double tol2) {
    const V omega4 = _mm256_set1_pd(omega), tol24 = _mm256_set1_pd(tol2);
    const bool relaxed = omega != 1.0;
    return lanes_sweep(batch, bodies, lo, hi, -1.0,
        [&](std::size_t i, V& e4) { return pgs_update4(batch, bodies, i, omega4, tol24, relaxed, e4); },
        [&](std::size_t j) { return pgs_update(batch, bodies, j, omega, tol2); });
}

/// ĉ = d + [μ‖d_t‖, 0, 0] in four lanes, as coulomb_velocity.
inline V3 coulomb_velocity4(const V3& d, V mu) {
    return {d.x + mu * _mm256_sqrt_pd(d.y * d.y + d.z * d.z), d.y, d.z};
}

/// coulomb_block_step in four lanes, the same operations (a lane whose tangent is within
/// the disc keeps f = 1, as the scalar rule's branch does).
inline V3 coulomb_step4(const V3& g0, const V3& d, V mu, V sn, V st) {
    const V gn = _mm256_max_pd(g0.x - sn * d.x, _mm256_setzero_pd());  // as std::max(0, x)
    const V ty = g0.y - st * d.y, tz = g0.z - st * d.z;
    const V tn = _mm256_sqrt_pd(ty * ty + tz * tz);
    const V limit = mu * gn;
    const V f = _mm256_blendv_pd(_mm256_set1_pd(1.0), limit / tn, _mm256_cmp_pd(tn, limit, _CMP_GT_OQ));
    return {gn, ty * f, tz * f};
}

/// bgs on contacts i … i+3, as bgs_block lane by lane: the step in the metric
/// diag(eta_n, eta_t, eta_t), the projection in it with q = eta_n / eta_t (`Coulomb`:
/// coulomb_step4, the residual with ĉ; a lane without a metric gets γ = 0, as the scalar
/// rule gives it). False, touching nothing, when one of their bodies is anisotropic;
/// otherwise folds their excesses into `excess`.
template <bool Coulomb>
inline bool bgs_update4(AssembledBatch& batch, SolverBodies& sb, std::size_t i, V omega, V tol2, V& excess) {
    Group4 grp;
    if (!load_group(batch, sb, i, grp)) return false;
    const V3 g0 = load3(batch.gamma[i].data());
    const V eta = _mm256_loadu_pd(&batch.eta[i]);
    const V en = _mm256_loadu_pd(&batch.eta_n[i]);
    const V et = _mm256_loadu_pd(&batch.eta_t[i]);
    const V mu = _mm256_loadu_pd(&batch.mu[i]);
    const V3 d = contact_velocity4(grp, load3(batch.rhs[i].data()));

    const V zero = _mm256_setzero_pd();
    const V has = _mm256_and_pd(_mm256_cmp_pd(en, zero, _CMP_GT_OQ), _mm256_cmp_pd(et, zero, _CMP_GT_OQ));
    const V sn = omega * en, st = omega * et;
    V3 x;
    if constexpr (Coulomb) {
        x = coulomb_step4(g0, d, mu, sn, st);
    } else {
        const V q = en / et;
        x = project4({g0.x - sn * d.x, g0.y - st * d.y, g0.z - st * d.z}, mu, q);
    }
    const V3 g{_mm256_and_pd(x.x, has), _mm256_and_pd(x.y, has), _mm256_and_pd(x.z, has)};
    const V3 c = Coulomb ? coulomb_velocity4(d, mu) : d;
    const V3 full = project4({g0.x - eta * c.x, g0.y - eta * c.y, g0.z - eta * c.z}, mu);
    store3(batch.gamma[i].data(), g);
    apply4(grp, {g.x - g0.x, g.y - g0.y, g.z - g0.z});

    const V e0 = g0.x - full.x, e1 = g0.y - full.y, e2 = g0.z - full.z;
    const V y = (e0 * e0 + e1 * e1) + e2 * e2 - tol2 * eta * eta;
    excess = _mm256_max_pd(y, excess);  // as std::max(excess, y): a NaN y is dropped
    return true;
}

template <bool Coulomb>
double bgs_lanes_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                       double omega, double tol2) {
    const V omega4 = _mm256_set1_pd(omega), tol24 = _mm256_set1_pd(tol2);
    return lanes_sweep(batch, bodies, lo, hi, -1.0,
        [&](std::size_t i, V& e4) { return bgs_update4<Coulomb>(batch, bodies, i, omega4, tol24, e4); },
        [&](std::size_t j) { return bgs_update<Coulomb>(batch, bodies, j, omega, tol2); });
}

/// The §6 residual terms ‖γ_i − Π_K(γ_i − η_i d_i)‖ / η_i of four contacts, as residual_term.
inline V residual_terms4(const V3& g0, V eta, V mu, const V3& d) {
    const V3 full = project4({g0.x - eta * d.x, g0.y - eta * d.y, g0.z - eta * d.z}, mu);
    const V e0 = g0.x - full.x, e1 = g0.y - full.y, e2 = g0.z - full.z;
    return _mm256_sqrt_pd((e0 * e0 + e1 * e1) + e2 * e2) / eta;
}

/// PJ's contact pass on contacts i … i+3; false when a body is anisotropic.
inline bool pj_contacts4(const AssembledBatch& batch, SolverBodies& sb, const double* step,
                         Vec3* next, std::size_t i, V& worst) {
    Group4 grp;
    if (!load_group(batch, sb, i, grp)) return false;
    const V3 g0 = load3(batch.gamma[i].data());
    const V eta = _mm256_loadu_pd(&batch.eta[i]);
    const V mu = _mm256_loadu_pd(&batch.mu[i]);
    const V s = _mm256_loadu_pd(step + i);
    const V3 d = contact_velocity4(grp, load3(batch.rhs[i].data()));
    store3(next[i].data(), project4({g0.x - s * d.x, g0.y - s * d.y, g0.z - s * d.z}, mu));
    worst = _mm256_max_pd(residual_terms4(g0, eta, mu, d), worst);
    return true;
}

/// The residual terms of contacts i … i+3 folded into `worst` (read only; the four may
/// share bodies; `Coulomb`: with ĉ); false when a body is anisotropic.
template <bool Coulomb>
inline bool residual4(const AssembledBatch& batch, SolverBodies& sb, std::size_t i, V& worst) {
    Group4 grp;
    if (!load_group(batch, sb, i, grp)) return false;
    const V mu = _mm256_loadu_pd(&batch.mu[i]);
    const V3 v = contact_velocity4(grp, load3(batch.rhs[i].data()));
    const V3 d = Coulomb ? coulomb_velocity4(v, mu) : v;
    worst = _mm256_max_pd(residual_terms4(load3(batch.gamma[i].data()), _mm256_loadu_pd(&batch.eta[i]), mu, d),
                          worst);
    return true;
}

template <bool Coulomb>
double residual_lanes(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo, std::size_t hi) {
    SolverBodies& sb = const_cast<SolverBodies&>(bodies);  // load_group only reads here
    return lanes_sweep(batch, bodies, lo, hi, 0.0,
        [&](std::size_t i, V& w4) { return residual4<Coulomb>(batch, sb, i, w4); },
        [&](std::size_t j) { return residual_term<Coulomb>(batch, bodies, j); });
}

double pj_contacts_lanes(const AssembledBatch& batch, SolverBodies& bodies, const double* step,
                         Vec3* next, std::size_t lo, std::size_t hi) {
    return lanes_sweep(batch, bodies, lo, hi, 0.0,
        [&](std::size_t i, V& w4) { return pj_contacts4(batch, bodies, step, next, i, w4); },
        [&](std::size_t j) { return pj_contact(batch, bodies, step, next, j); });
}

void pj_apply_lanes(AssembledBatch& batch, const Vec3* next, SolverBodies& bodies, std::size_t lo,
                    std::size_t hi) {
    std::size_t i = lo;
    for (; i + 4 <= hi; i += 4) {
        for (std::size_t j = i + kLanePrefetch; j < std::min(i + kLanePrefetch + 4, hi); ++j)
            prefetch_bodies(batch, bodies, j);
        Group4 grp;
        if (!load_group(batch, bodies, i, grp)) {
            for (std::size_t j = i; j < i + 4; ++j) pj_apply(batch, next, bodies, j);
            continue;
        }
        const V3 g0 = load3(batch.gamma[i].data());
        const V3 g = load3(next[i].data());
        store3(batch.gamma[i].data(), g);
        apply4(grp, {g.x - g0.x, g.y - g0.y, g.z - g0.z});
    }
    for (; i < hi; ++i) pj_apply(batch, next, bodies, i);
}

#pragma GCC pop_options

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

}  // namespace

namespace {

/// A Gauss–Seidel range one contact at a time: the largest excess of one(i).
template <class One>
double scalar_sweep(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                    std::size_t hi, One&& one) {
    double excess = -1.0;
    for (std::size_t i = lo; i < hi; ++i) {
        if (i + kPrefetch < hi) prefetch_bodies(batch, bodies, i + kPrefetch);
        excess = std::max(excess, one(i));
    }
    return excess;
}

}  // namespace

double pgs_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2) {
    return scalar_sweep(batch, bodies, lo, hi, [&](std::size_t i) { return pgs_update(batch, bodies, i, omega, tol2); });
}

bool pgs_lanes_available() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx");
}

double pgs_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                       std::size_t hi, double omega, double tol2) {
    return lanes_range(batch, bodies, lo, hi, omega, tol2);
}

double pgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                 double omega, double tol2, bool independent) {
    if (independent && use_lanes()) return lanes_range(batch, bodies, lo, hi, omega, tol2);
    return pgs_range_scalar(batch, bodies, lo, hi, omega, tol2);
}

double bgs_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2, FrictionLaw law) {
    if (law == FrictionLaw::Coulomb)
        return scalar_sweep(batch, bodies, lo, hi, [&](std::size_t i) { return bgs_update<true>(batch, bodies, i, omega, tol2); });
    return scalar_sweep(batch, bodies, lo, hi, [&](std::size_t i) { return bgs_update<false>(batch, bodies, i, omega, tol2); });
}

double bgs_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                       std::size_t hi, double omega, double tol2, FrictionLaw law) {
    if (law == FrictionLaw::Coulomb) return bgs_lanes_range<true>(batch, bodies, lo, hi, omega, tol2);
    return bgs_lanes_range<false>(batch, bodies, lo, hi, omega, tol2);
}

double bgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                 double omega, double tol2, bool independent, FrictionLaw law) {
    if (independent && use_lanes()) return bgs_range_lanes(batch, bodies, lo, hi, omega, tol2, law);
    return bgs_range_scalar(batch, bodies, lo, hi, omega, tol2, law);
}

template <bool Coulomb>
double residual_scalar(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo, std::size_t hi) {
    double worst = 0.0;
    for (std::size_t i = lo; i < hi; ++i) {
        if (i + kPrefetch < hi) prefetch_bodies(batch, bodies, i + kPrefetch);
        worst = std::max(worst, residual_term<Coulomb>(batch, bodies, i));
    }
    return worst;
}

double residual_range(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                      std::size_t hi, bool lanes, FrictionLaw law) {
    const bool coulomb = law == FrictionLaw::Coulomb;
    if (lanes && use_lanes())
        return coulomb ? residual_lanes<true>(batch, bodies, lo, hi) : residual_lanes<false>(batch, bodies, lo, hi);
    return coulomb ? residual_scalar<true>(batch, bodies, lo, hi) : residual_scalar<false>(batch, bodies, lo, hi);
}

double pj_contacts_range(const AssembledBatch& batch, SolverBodies& bodies, const double* step,
                         Vec3* next, std::size_t lo, std::size_t hi, bool lanes) {
    if (lanes && use_lanes()) return pj_contacts_lanes(batch, bodies, step, next, lo, hi);
    double worst = 0.0;
    for (std::size_t i = lo; i < hi; ++i) {
        if (i + kPrefetch < hi) prefetch_bodies(batch, bodies, i + kPrefetch);
        worst = std::max(worst, pj_contact(batch, bodies, step, next, i));
    }
    return worst;
}

void pj_apply_range(AssembledBatch& batch, const Vec3* next, SolverBodies& bodies, std::size_t lo,
                    std::size_t hi, bool independent) {
    if (independent && use_lanes()) return pj_apply_lanes(batch, next, bodies, lo, hi);
    for (std::size_t i = lo; i < hi; ++i) {
        if (i + kPrefetch < hi) prefetch_bodies(batch, bodies, i + kPrefetch);
        pj_apply(batch, next, bodies, i);
    }
}

}  // namespace talus
