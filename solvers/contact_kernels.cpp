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

// ---- eight contacts at a time (AVX-512) -------------------------------------------------
//
// bgs's update in eight lanes, for CPUs with AVX-512 (F and DQ): the same IEEE operations
// in the same order as the four-lane and scalar kernels, lane by lane, so the same bits
// (tests/unit/solvers/test_contact_kernels.cpp). A group of eight consecutive contacts of a
// colour shares no dynamic body, as a group of four. Why: a contact's update is a chain of
// dependent operations (the square roots and divisions of the projection), and on a core
// with 512-bit units eight independent chains cost about what four do.

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512dq"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512dq")
// GCC 12's AVX-512 headers start some intrinsics from _mm512_undefined_pd(), which its
// -Wmaybe-uninitialized reports in every caller (GCC bug 105593, fixed in GCC 13).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

using W = __m512d;
using M = __mmask8;

struct W3 {
    W x, y, z;
};

inline W splat8(double x) { return _mm512_set1_pd(x); }

/// Eight consecutive Vec3 (24 doubles at p) as their x, y and z lanes: lane k of x is
/// p[3k]; the first permutation takes lanes 0–5 (or 0–4) from p[0..15], the second the
/// rest from p[16..23].
inline W3 load3x8(const double* p) {
    const W a = _mm512_loadu_pd(p), b = _mm512_loadu_pd(p + 8), c = _mm512_loadu_pd(p + 16);
    const __m512i x1 = _mm512_setr_epi64(0, 3, 6, 9, 12, 15, 0, 0), x2 = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 10, 13);
    const __m512i y1 = _mm512_setr_epi64(1, 4, 7, 10, 13, 0, 0, 0), y2 = _mm512_setr_epi64(0, 1, 2, 3, 4, 8, 11, 14);
    const __m512i z1 = _mm512_setr_epi64(2, 5, 8, 11, 14, 0, 0, 0), z2 = _mm512_setr_epi64(0, 1, 2, 3, 4, 9, 12, 15);
    return {_mm512_permutex2var_pd(_mm512_permutex2var_pd(a, x1, b), x2, c),
            _mm512_permutex2var_pd(_mm512_permutex2var_pd(a, y1, b), y2, c),
            _mm512_permutex2var_pd(_mm512_permutex2var_pd(a, z1, b), z2, c)};
}

/// The inverse of load3x8: p[0..7] = x0 y0 z0 x1 y1 z1 x2 y2, p[8..15] = z2 x3 y3 z3 x4 y4
/// z4 x5, p[16..23] = y5 z5 x6 y6 z6 x7 y7 z7 (x and y first, then z into its places).
inline void store3x8(double* p, const W3& v) {
    const __m512i a1 = _mm512_setr_epi64(0, 8, 0, 1, 9, 0, 2, 10), a2 = _mm512_setr_epi64(0, 1, 8, 3, 4, 9, 6, 7);
    const __m512i b1 = _mm512_setr_epi64(0, 3, 11, 0, 4, 12, 0, 5), b2 = _mm512_setr_epi64(10, 1, 2, 11, 4, 5, 12, 7);
    const __m512i c1 = _mm512_setr_epi64(13, 0, 6, 14, 0, 7, 15, 0), c2 = _mm512_setr_epi64(0, 13, 2, 3, 14, 5, 6, 15);
    _mm512_storeu_pd(p, _mm512_permutex2var_pd(_mm512_permutex2var_pd(v.x, a1, v.y), a2, v.z));
    _mm512_storeu_pd(p + 8, _mm512_permutex2var_pd(_mm512_permutex2var_pd(v.x, b1, v.y), b2, v.z));
    _mm512_storeu_pd(p + 16, _mm512_permutex2var_pd(_mm512_permutex2var_pd(v.x, c1, v.y), c2, v.z));
}

/// 8×8 transpose in place (an involution): r[k] lane j becomes r[j] lane k.
inline void transpose8(W r[8]) {
    W t[8];
    for (int k = 0; k < 4; ++k) {  // pairs of rows, element by element: (r2k_j, r2k+1_j) for even, odd j
        t[2 * k] = _mm512_unpacklo_pd(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_pd(r[2 * k], r[2 * k + 1]);
    }
    // t[0] = r0_0 r1_0 r0_2 r1_2 r0_4 r1_4 r0_6 r1_6, t[1] the odd columns; t[2], t[3] rows 2, 3
    const __m512i lo = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13), hi = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    W u[8];
    for (int h = 0; h < 2; ++h) {  // rows 0–3, then rows 4–7
        const W* q = t + 4 * h;
        u[4 * h + 0] = _mm512_permutex2var_pd(q[0], lo, q[2]);  // columns 0 | 4
        u[4 * h + 1] = _mm512_permutex2var_pd(q[0], hi, q[2]);  // columns 2 | 6
        u[4 * h + 2] = _mm512_permutex2var_pd(q[1], lo, q[3]);  // columns 1 | 5
        u[4 * h + 3] = _mm512_permutex2var_pd(q[1], hi, q[3]);  // columns 3 | 7
    }
    const __m512i first = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11), second = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
    const int column[4] = {0, 2, 1, 3};
    for (int k = 0; k < 4; ++k) {
        r[column[k]] = _mm512_permutex2var_pd(u[k], first, u[4 + k]);
        r[column[k] + 4] = _mm512_permutex2var_pd(u[k], second, u[4 + k]);
    }
}

/// Eight bodies' solver state by lanes: velocity, 1/m, angular velocity, 1/J.
struct Bodies8 {
    W vx, vy, vz, im, wx, wy, wz, ij;
};

inline Bodies8 load_bodies8(SolverBody* const p[8]) {
    W r[8];
    for (int k = 0; k < 8; ++k) r[k] = _mm512_load_pd(p[k]->v.data());  // a body is one aligned line
    transpose8(r);
    return {r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]};
}

/// Write back the lanes whose body exists (the others point at the shared zero body).
inline void store_bodies8(const Bodies8& b, SolverBody* const p[8], const bool exists[8]) {
    W r[8] = {b.vx, b.vy, b.vz, b.im, b.wx, b.wy, b.wz, b.ij};
    transpose8(r);
    for (int k = 0; k < 8; ++k)
        if (exists[k]) _mm512_store_pd(p[k]->v.data(), r[k]);
}

/// Eight consecutive contacts i … i+7 with no dynamic body shared, as Group4.
struct Group8 {
    SolverBody* pa[8];
    SolverBody* pb[8];
    bool has_a[8], has_b[8];
    Bodies8 A, B;
    W3 n, u, w, ra, rb;
};

/// As load_group: false (nothing else loaded) when one of the bodies is anisotropic.
inline bool load_group8(const AssembledBatch& batch, SolverBodies& sb, std::size_t i, Group8& g) {
    SolverBody* zero = const_cast<SolverBody*>(&kZeroBody);  // read only: has_* is false
    for (int k = 0; k < 8; ++k) {
        const int32_t a = batch.a[i + k], b = batch.b[i + k];
        g.has_a[k] = a != kNoBody;
        g.has_b[k] = b != kNoBody;
        g.pa[k] = g.has_a[k] ? &sb.body[std::size_t(a)] : zero;
        g.pb[k] = g.has_b[k] ? &sb.body[std::size_t(b)] : zero;
    }
    g.A = load_bodies8(g.pa);
    g.B = load_bodies8(g.pb);
    const W zerov = _mm512_setzero_pd();
    if ((_mm512_cmp_pd_mask(g.A.ij, zerov, _CMP_LT_OQ) | _mm512_cmp_pd_mask(g.B.ij, zerov, _CMP_LT_OQ)) != 0)
        return false;
    g.n = load3x8(batch.normal[i].data());
    if (batch.tangent.empty()) {  // first_tangent(n) in eight lanes, the same operations
        const W one = splat8(1.0), sign_bit = splat8(-0.0);
        const W s = _mm512_or_pd(_mm512_and_pd(g.n.z, sign_bit), one);  // copysign(1, n_z)
        const W a = splat8(-1.0) / (s + g.n.z);
        const W minus_s = _mm512_xor_pd(s, sign_bit);
        g.u = {one + ((s * g.n.x) * g.n.x) * a, s * ((g.n.x * g.n.y) * a), minus_s * g.n.x};
    } else {
        g.u = load3x8(batch.tangent[i].data());
    }
    g.w = {g.n.y * g.u.z - g.n.z * g.u.y, g.n.z * g.u.x - g.n.x * g.u.z, g.n.x * g.u.y - g.n.y * g.u.x};
    g.ra = load3x8(batch.lever_a[i].data());
    g.rb = load3x8(batch.lever_b[i].data());
    return true;
}

/// As add_point_velocity4.
inline void add_point_velocity8(const Bodies8& b, const W3& r, W sign, W3& rel) {
    rel.x = rel.x + sign * (b.vx + (b.wy * r.z - b.wz * r.y));
    rel.y = rel.y + sign * (b.vy + (b.wz * r.x - b.wx * r.z));
    rel.z = rel.z + sign * (b.vz + (b.wx * r.y - b.wy * r.x));
}

/// As contact_velocity4.
inline W3 contact_velocity8(const Group8& g, const W3& rhs) {
    const W zerov = _mm512_setzero_pd();
    W3 rel{zerov, zerov, zerov};
    add_point_velocity8(g.B, g.rb, splat8(1.0), rel);
    add_point_velocity8(g.A, g.ra, splat8(-1.0), rel);
    return {rhs.x + ((g.n.x * rel.x + g.n.y * rel.y) + g.n.z * rel.z),
            rhs.y + ((g.u.x * rel.x + g.u.y * rel.y) + g.u.z * rel.z),
            rhs.z + ((g.w.x * rel.x + g.w.y * rel.y) + g.w.z * rel.z)};
}

/// As push_body4.
inline void push_body8(Bodies8& b, const W3& r, const W3& p, W sign) {
    const W m = sign * b.im;
    b.vx = b.vx + m * p.x;
    b.vy = b.vy + m * p.y;
    b.vz = b.vz + m * p.z;
    const W tx = r.y * p.z - r.z * p.y, ty = r.z * p.x - r.x * p.z, tz = r.x * p.y - r.y * p.x;
    const W k = sign * b.ij;
    b.wx = b.wx + k * tx;
    b.wy = b.wy + k * ty;
    b.wz = b.wz + k * tz;
}

/// As apply4.
inline void apply8(Group8& g, const W3& dg) {
    const W3 p{(g.n.x * dg.x + g.u.x * dg.y) + g.w.x * dg.z, (g.n.y * dg.x + g.u.y * dg.y) + g.w.y * dg.z,
               (g.n.z * dg.x + g.u.z * dg.y) + g.w.z * dg.z};
    push_body8(g.B, g.rb, p, splat8(1.0));
    push_body8(g.A, g.ra, p, splat8(-1.0));
    store_bodies8(g.B, g.pb, g.has_b);
    store_bodies8(g.A, g.pa, g.has_a);
}

/// As project4 (masks for its blends).
inline W3 project8(const W3& g, W mu, W q = splat8(1.0)) {
    const W zero = _mm512_setzero_pd(), one = splat8(1.0);
    const W gn = g.x;
    const W t2 = g.y * g.y + g.z * g.z;
    const W mu2 = mu * mu;
    const W mq = mu * q;
    const M polar = _mm512_cmp_pd_mask(gn, zero, _CMP_LE_OQ) & _mm512_cmp_pd_mask(mq * mq * t2, gn * gn, _CMP_LE_OQ);
    const M inside = _mm512_cmp_pd_mask(gn, zero, _CMP_GE_OQ) & _mm512_cmp_pd_mask(t2, mu2 * gn * gn, _CMP_LE_OQ);
    const W t = _mm512_sqrt_pd(t2);
    const W m = gn + mq * t;
    const W k = one / ((one + mq * mu) * t);
    const W s = mu * m * k;
    W3 r{m * t * k, s * g.y, s * g.z};
    r.x = _mm512_mask_blend_pd(polar, _mm512_mask_blend_pd(inside, r.x, gn), zero);
    r.y = _mm512_mask_blend_pd(polar, _mm512_mask_blend_pd(inside, r.y, g.y), zero);
    r.z = _mm512_mask_blend_pd(polar, _mm512_mask_blend_pd(inside, r.z, g.z), zero);
    return r;
}

/// As coulomb_velocity4.
inline W3 coulomb_velocity8(const W3& d, W mu) {
    return {d.x + mu * _mm512_sqrt_pd(d.y * d.y + d.z * d.z), d.y, d.z};
}

/// As coulomb_step4.
inline W3 coulomb_step8(const W3& g0, const W3& d, W mu, W sn, W st) {
    const W gn = _mm512_max_pd(g0.x - sn * d.x, _mm512_setzero_pd());  // as std::max(0, x)
    const W ty = g0.y - st * d.y, tz = g0.z - st * d.z;
    const W tn = _mm512_sqrt_pd(ty * ty + tz * tz);
    const W limit = mu * gn;
    const W f = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(tn, limit, _CMP_GT_OQ), splat8(1.0), limit / tn);
    return {gn, ty * f, tz * f};
}

/// As bgs_update4, on contacts i … i+7.
template <bool Coulomb>
inline bool bgs_update8(AssembledBatch& batch, SolverBodies& sb, std::size_t i, W omega, W tol2, W& excess) {
    Group8 grp;
    if (!load_group8(batch, sb, i, grp)) return false;
    const W3 g0 = load3x8(batch.gamma[i].data());
    const W eta = _mm512_loadu_pd(&batch.eta[i]);
    const W en = _mm512_loadu_pd(&batch.eta_n[i]);
    const W et = _mm512_loadu_pd(&batch.eta_t[i]);
    const W mu = _mm512_loadu_pd(&batch.mu[i]);
    const W3 d = contact_velocity8(grp, load3x8(batch.rhs[i].data()));

    const W zero = _mm512_setzero_pd();
    const M has = _mm512_cmp_pd_mask(en, zero, _CMP_GT_OQ) & _mm512_cmp_pd_mask(et, zero, _CMP_GT_OQ);
    const W sn = omega * en, st = omega * et;
    W3 x;
    if constexpr (Coulomb) {
        x = coulomb_step8(g0, d, mu, sn, st);
    } else {
        const W q = en / et;
        x = project8({g0.x - sn * d.x, g0.y - st * d.y, g0.z - st * d.z}, mu, q);
    }
    const W3 g{_mm512_maskz_mov_pd(has, x.x), _mm512_maskz_mov_pd(has, x.y), _mm512_maskz_mov_pd(has, x.z)};
    const W3 c = Coulomb ? coulomb_velocity8(d, mu) : d;
    const W3 full = project8({g0.x - eta * c.x, g0.y - eta * c.y, g0.z - eta * c.z}, mu);
    store3x8(batch.gamma[i].data(), g);
    apply8(grp, {g.x - g0.x, g.y - g0.y, g.z - g0.z});

    const W e0 = g0.x - full.x, e1 = g0.y - full.y, e2 = g0.z - full.z;
    const W y = (e0 * e0 + e1 * e1) + e2 * e2 - tol2 * eta * eta;
    excess = _mm512_max_pd(y, excess);  // as std::max(excess, y): a NaN y is dropped
    return true;
}

/// As residual_terms4.
inline W residual_terms8(const W3& g0, W eta, W mu, const W3& d) {
    const W3 full = project8({g0.x - eta * d.x, g0.y - eta * d.y, g0.z - eta * d.z}, mu);
    const W e0 = g0.x - full.x, e1 = g0.y - full.y, e2 = g0.z - full.z;
    return _mm512_sqrt_pd((e0 * e0 + e1 * e1) + e2 * e2) / eta;
}

/// As residual4, on contacts i … i+7 (read only: they may share bodies).
template <bool Coulomb>
inline bool residual8(const AssembledBatch& batch, SolverBodies& sb, std::size_t i, W& worst) {
    Group8 grp;
    if (!load_group8(batch, sb, i, grp)) return false;
    const W mu = _mm512_loadu_pd(&batch.mu[i]);
    const W3 v = contact_velocity8(grp, load3x8(batch.rhs[i].data()));
    const W3 d = Coulomb ? coulomb_velocity8(v, mu) : v;
    worst = _mm512_max_pd(residual_terms8(load3x8(batch.gamma[i].data()), _mm512_loadu_pd(&batch.eta[i]), mu, d),
                          worst);
    return true;
}

/// The largest lane (in lane order, as a chain of std::max would take them).
inline double hmax8(W x) {
    alignas(64) double lanes[8];
    _mm512_store_pd(lanes, x);
    double m = lanes[0];
    for (int k = 1; k < 8; ++k) m = std::max(m, lanes[k]);
    return m;
}

// The eight-lane kernel gets through contacts faster again: it asks further ahead.
constexpr std::size_t kLane8Prefetch = 32;

/// bgs over [lo, hi) eight contacts at a time: a group with an anisotropic body goes as two
/// groups of four (each, if need be, one by one), the last fewer than eight to the
/// four-lane range. The largest excess of all, as the other kernels return it.
template <bool Coulomb>
double bgs_lanes8_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                        double omega, double tol2) {
    const W omega8 = splat8(omega), tol28 = splat8(tol2);
    const V omega4 = _mm256_set1_pd(omega), tol24 = _mm256_set1_pd(tol2);
    W excess8 = splat8(-1.0);
    V excess4 = _mm256_set1_pd(-1.0);
    double excess = -1.0;
    std::size_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        for (std::size_t j = i + kLane8Prefetch; j < std::min(i + kLane8Prefetch + 8, hi); ++j)
            prefetch_bodies(batch, bodies, j);
        if (bgs_update8<Coulomb>(batch, bodies, i, omega8, tol28, excess8)) continue;
        for (std::size_t h = i; h < i + 8; h += 4) {
            if (bgs_update4<Coulomb>(batch, bodies, h, omega4, tol24, excess4)) continue;
            for (std::size_t j = h; j < h + 4; ++j)
                excess = std::max(excess, bgs_update<Coulomb>(batch, bodies, j, omega, tol2));
        }
    }
    if (i < hi) excess = std::max(excess, bgs_lanes_range<Coulomb>(batch, bodies, i, hi, omega, tol2));
    return std::max(std::max(excess, hmax(excess4)), hmax8(excess8));
}

/// residual_lanes eight contacts at a time, the same fallbacks as bgs_lanes8_range.
template <bool Coulomb>
double residual_lanes8(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo, std::size_t hi) {
    SolverBodies& sb = const_cast<SolverBodies&>(bodies);  // load_group8 only reads here
    W worst8 = _mm512_setzero_pd();
    V worst4 = _mm256_setzero_pd();
    double worst = 0.0;
    std::size_t i = lo;
    for (; i + 8 <= hi; i += 8) {
        for (std::size_t j = i + kLane8Prefetch; j < std::min(i + kLane8Prefetch + 8, hi); ++j)
            prefetch_bodies(batch, bodies, j);
        if (residual8<Coulomb>(batch, sb, i, worst8)) continue;
        for (std::size_t h = i; h < i + 8; h += 4) {
            if (residual4<Coulomb>(batch, sb, h, worst4)) continue;
            for (std::size_t j = h; j < h + 4; ++j) worst = std::max(worst, residual_term<Coulomb>(batch, bodies, j));
        }
    }
    if (i < hi) worst = std::max(worst, residual_lanes<Coulomb>(batch, bodies, i, hi));
    return std::max(std::max(worst, hmax(worst4)), hmax8(worst8));
}

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

/// Eight AVX-512 lanes for bgs when the CPU has AVX-512 F and DQ and the lanes are on,
/// unless TALUS_LANES=4 is set in the environment (to measure the four-lane kernel; the
/// same bits either way).
bool use_lanes8() {
    static const bool use = [] {
        __builtin_cpu_init();
        const char* four = std::getenv("TALUS_LANES");
        return use_lanes() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
               !(four && std::string_view(four) == "4");
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

bool bgs_lanes8_available() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

double bgs_range_lanes8(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2, FrictionLaw law) {
    if (law == FrictionLaw::Coulomb) return bgs_lanes8_range<true>(batch, bodies, lo, hi, omega, tol2);
    return bgs_lanes8_range<false>(batch, bodies, lo, hi, omega, tol2);
}

double bgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                 double omega, double tol2, bool independent, FrictionLaw law) {
    if (independent && use_lanes8()) return bgs_range_lanes8(batch, bodies, lo, hi, omega, tol2, law);
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

double residual_range_lanes(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                            std::size_t hi, FrictionLaw law) {
    return law == FrictionLaw::Coulomb ? residual_lanes<true>(batch, bodies, lo, hi)
                                       : residual_lanes<false>(batch, bodies, lo, hi);
}

double residual_range_lanes8(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                             std::size_t hi, FrictionLaw law) {
    return law == FrictionLaw::Coulomb ? residual_lanes8<true>(batch, bodies, lo, hi)
                                       : residual_lanes8<false>(batch, bodies, lo, hi);
}

double residual_range(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                      std::size_t hi, bool lanes, FrictionLaw law) {
    const bool coulomb = law == FrictionLaw::Coulomb;
    if (lanes && use_lanes8()) return residual_range_lanes8(batch, bodies, lo, hi, law);
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
