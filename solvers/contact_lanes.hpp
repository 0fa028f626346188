// The per-contact kernels of solvers/contact_kernels.cpp on N contacts at once, written
// once for every lane width. No include guard, on purpose: contact_kernels.cpp includes this
// file once per width, inside a namespace (`four`, `eight`) and under that width's target
// pragma, after defining there what the code below uses:
//
//   N                        the lanes (contacts a group takes)
//   V, Mask, V3, Bodies      a lane vector of doubles, a lane mask, three lane vectors,
//                            N bodies' solver state by lanes (vx vy vz im wx wy wz ij)
//   splat(x), zero(), loadu(p), load3(p), store3(p, v), load_bodies(p[N]),
//   store_bodies(b, p[N], exists[N]), hmax(v)
//   lt, le, ge, gt (a, b) → Mask; both(m, m'), either(m, m'), any(m)
//   select(m, if_false, if_true), keep(m, x) (x where m, +0 elsewhere)
//   vsqrt, vmax (as MAXPD: the second operand when either is NaN)
//   bit_and, bit_or, bit_xor (on the doubles' bits)
//   kAhead                   how many contacts ahead the sweeps prefetch bodies
//
// Each lane performs exactly the scalar kernel's IEEE operations in the same order (the
// build has -ffp-contract=off and nothing here fuses a multiply and an add), branches are
// selects of both outcomes, and a missing body is the zero body kZeroBody, whose
// contributions are exact zeros: so every width gives the scalar kernel's bits.

/// Π_K per lane, as project_friction_cone (q: its metric, 1 for the Euclidean projection):
/// polar cone → 0, inside → unchanged, else the cone's surface (computed for every lane,
/// selected by masks).
inline V3 project(const V3& g, V mu, V q) {
    const V zerov = zero(), one = splat(1.0);
    const V gn = g.x;
    const V t2 = g.y * g.y + g.z * g.z;
    const V mu2 = mu * mu;
    const V mq = mu * q;
    const Mask polar = both(le(gn, zerov), le(mq * mq * t2, gn * gn));
    const Mask inside = both(ge(gn, zerov), le(t2, mu2 * gn * gn));
    const V t = vsqrt(t2);
    const V m = gn + mq * t;
    const V k = one / ((one + mq * mu) * t);
    const V s = mu * m * k;
    V3 r{m * t * k, s * g.y, s * g.z};
    r.x = select(polar, select(inside, r.x, gn), zerov);
    r.y = select(polar, select(inside, r.y, g.y), zerov);
    r.z = select(polar, select(inside, r.z, g.z), zerov);
    return r;
}
inline V3 project(const V3& g, V mu) { return project(g, mu, splat(1.0)); }

/// Adds sign · (v + ω × r) to rel, as add_point_velocity.
inline void add_point_velocity(const Bodies& b, const V3& r, V sign, V3& rel) {
    rel.x = rel.x + sign * (b.vx + (b.wy * r.z - b.wz * r.y));
    rel.y = rel.y + sign * (b.vy + (b.wz * r.x - b.wx * r.z));
    rel.z = rel.z + sign * (b.vz + (b.wx * r.y - b.wy * r.x));
}

/// The world inverse inertia I⁻¹ of N bodies, row by row (m[3 r + c] = I⁻¹(r, c)), where a
/// lane's body is anisotropic (`lanes`); `any`: some lane is, and only then is m loaded.
struct LaneInertia {
    V m[9];
    Mask lanes;
    bool any = false;
};

/// One body side of ν += M⁻¹ D Δγ, as push_body: ω += sign j t on an isotropic body's
/// lane, ω += sign (I⁻¹ t) on an anisotropic one's (the same operations as the scalar
/// rule's row sums; both computed, the lane's selected).
inline void push_body(Bodies& b, const V3& r, const V3& p, V sign, const LaneInertia& inertia) {
    const V m = sign * b.im;
    b.vx = b.vx + m * p.x;
    b.vy = b.vy + m * p.y;
    b.vz = b.vz + m * p.z;
    const V tx = r.y * p.z - r.z * p.y, ty = r.z * p.x - r.x * p.z, tz = r.x * p.y - r.y * p.x;
    const V k = sign * b.ij;
    V wx = b.wx + k * tx, wy = b.wy + k * ty, wz = b.wz + k * tz;
    if (inertia.any) {
        const V* J = inertia.m;
        wx = select(inertia.lanes, wx, b.wx + sign * ((J[0] * tx + J[1] * ty) + J[2] * tz));
        wy = select(inertia.lanes, wy, b.wy + sign * ((J[3] * tx + J[4] * ty) + J[5] * tz));
        wz = select(inertia.lanes, wz, b.wz + sign * ((J[6] * tx + J[7] * ty) + J[8] * tz));
    }
    b.wx = wx;
    b.wy = wy;
    b.wz = wz;
}

/// The bodies of N consecutive contacts i … i+N−1 with no dynamic body shared (a missing
/// one reads the zero body and is never written).
struct GroupBodies {
    SolverBody* pa[N];
    SolverBody* pb[N];
    bool has_a[N], has_b[N];
    Bodies A, B;
    LaneInertia IA, IB;  // loaded only where a body is anisotropic
};

/// The group's bodies and their frames and lever arms.
struct Group : GroupBodies {
    V3 n, u, w, ra, rb;
};

/// I⁻¹ of the anisotropic bodies among `p` (inv_inertia < 0: SolverBodies::inv_inertia_world).
inline void load_inertia(const SolverBodies& sb, SolverBody* const p[N], Mask lanes, LaneInertia& out) {
    out.lanes = lanes;
    out.any = any(lanes);
    if (!out.any) return;
    alignas(64) static const double kNone[9] = {};
    const double* src[N];
    for (int k = 0; k < N; ++k)
        src[k] = p[k]->inv_inertia < 0.0 ? sb.inv_inertia_world[std::size_t(p[k] - sb.body.data())].data() : kNone;
    alignas(64) double lane[N];
    for (int e = 0; e < 9; ++e) {
        const int at = 3 * (e % 3) + e / 3;  // I⁻¹(e / 3, e % 3), stored by columns
        for (int k = 0; k < N; ++k) lane[k] = src[k][at];
        out.m[e] = loadu(lane);
    }
}

/// Points lane l at the bodies of row contact_of(l) (a missing one at the zero body, never
/// written) and loads them into g.A and g.B.
template <class ContactOf>
inline void point_group_bodies(const AssembledBatch& batch, SolverBodies& sb, ContactOf&& contact_of, GroupBodies& g) {
    SolverBody* zerob = const_cast<SolverBody*>(&kZeroBody);  // read only: has_* is false
    for (int k = 0; k < N; ++k) {
        const std::size_t i = contact_of(k);
        const int32_t a = batch.a[i], b = batch.b[i];
        g.has_a[k] = a != kNoBody;
        g.has_b[k] = b != kNoBody;
        g.pa[k] = g.has_a[k] ? &sb.body[std::size_t(a)] : zerob;
        g.pb[k] = g.has_b[k] ? &sb.body[std::size_t(b)] : zerob;
    }
    g.A = load_bodies(g.pa);
    g.B = load_bodies(g.pb);
}

/// Loads the group's bodies, and I⁻¹ where one is anisotropic when `inertia` (a pass that
/// applies impulses needs it; one that only reads velocities does not).
inline void load_group_bodies(const AssembledBatch& batch, SolverBodies& sb, std::size_t i, GroupBodies& g,
                              bool inertia = true) {
    point_group_bodies(batch, sb, [i](int k) { return i + std::size_t(k); }, g);
    if (!inertia) return;
    load_inertia(sb, g.pa, lt(g.A.ij, zero()), g.IA);
    load_inertia(sb, g.pb, lt(g.B.ij, zero()), g.IB);
}

/// first_tangent(n) by lanes, the same operations.
inline V3 first_tangent(const V3& n) {
    const V one = splat(1.0), sign_bit = splat(-0.0);
    const V s = bit_or(bit_and(n.z, sign_bit), one);  // copysign(1, n_z)
    const V a = splat(-1.0) / (s + n.z);
    const V minus_s = bit_xor(s, sign_bit);
    return {one + ((s * n.x) * n.x) * a, s * ((n.x * n.y) * a), minus_s * n.x};
}

/// x × y by lanes, as cross.
inline V3 cross(const V3& x, const V3& y) {
    return {x.y * y.z - x.z * y.y, x.z * y.x - x.x * y.z, x.x * y.y - x.y * y.x};
}

/// Loads the group: its bodies (with I⁻¹ as load_group_bodies), frames and lever arms.
inline void load_group(const AssembledBatch& batch, SolverBodies& sb, std::size_t i, Group& g, bool inertia = true) {
    load_group_bodies(batch, sb, i, g, inertia);
    g.n = load3(batch.normal[i].data());
    g.u = batch.tangent.empty() ? first_tangent(g.n) : load3(batch.tangent[i].data());
    g.w = cross(g.n, g.u);
    g.ra = load3(batch.lever_a[i].data());
    g.rb = load3(batch.lever_b[i].data());
}

/// d = Aᵀ [(v_B + ω_B × r_B) − (v_A + ω_A × r_A)] + rhs, as contact_velocity.
inline V3 contact_velocity(const Group& g, const V3& rhs) {
    const V zerov = zero();
    V3 rel{zerov, zerov, zerov};
    add_point_velocity(g.B, g.rb, splat(1.0), rel);
    add_point_velocity(g.A, g.ra, splat(-1.0), rel);
    return {rhs.x + ((g.n.x * rel.x + g.n.y * rel.y) + g.n.z * rel.z),
            rhs.y + ((g.u.x * rel.x + g.u.y * rel.y) + g.u.z * rel.z),
            rhs.z + ((g.w.x * rel.x + g.w.y * rel.y) + g.w.z * rel.z)};
}

/// A contact-frame impulse x in the world, A x = x_n n + x_u u + x_w w, as ContactFrame::to_world.
inline V3 to_world(const Group& g, const V3& x) {
    return {(g.n.x * x.x + g.u.x * x.y) + g.w.x * x.z, (g.n.y * x.x + g.u.y * x.y) + g.w.y * x.z,
            (g.n.z * x.x + g.u.z * x.y) + g.w.z * x.z};
}

/// ν += M⁻¹ D Δγ on the group's bodies, written back, as apply_impulse.
inline void apply(Group& g, const V3& dg) {
    const V3 p = to_world(g, dg);
    push_body(g.B, g.rb, p, splat(1.0), g.IB);
    push_body(g.A, g.ra, p, splat(-1.0), g.IA);
    store_bodies(g.B, g.pb, g.has_b);
    store_bodies(g.A, g.pa, g.has_a);
}

/// PGS on contacts i … i+N−1; folds their excesses into `excess`.
inline void pgs_group(AssembledBatch& batch, SolverBodies& sb, std::size_t i, V omega, V tol2, bool relaxed,
                      V& excess) {
    Group grp;
    load_group(batch, sb, i, grp);
    const V3 g0 = load3(batch.gamma[i].data());
    const V eta = loadu(&batch.eta[i]);
    const V mu = loadu(&batch.mu[i]);
    const V3 d = contact_velocity(grp, load3(batch.rhs[i].data()));

    const V oe = omega * eta;
    const V3 g = project({g0.x - oe * d.x, g0.y - oe * d.y, g0.z - oe * d.z}, mu);
    const V3 full = relaxed ? project({g0.x - eta * d.x, g0.y - eta * d.y, g0.z - eta * d.z}, mu) : g;
    store3(batch.gamma[i].data(), g);
    apply(grp, {g.x - g0.x, g.y - g0.y, g.z - g0.z});

    const V e0 = g0.x - full.x, e1 = g0.y - full.y, e2 = g0.z - full.z;
    const V x = (e0 * e0 + e1 * e1) + e2 * e2 - tol2 * eta * eta;
    excess = vmax(x, excess);  // as std::max(excess, x): a NaN x is dropped
}

/// ĉ = d + [μ‖d_t‖, 0, 0] by lanes, as coulomb_velocity.
inline V3 coulomb_velocity(const V3& d, V mu) { return {d.x + mu * vsqrt(d.y * d.y + d.z * d.z), d.y, d.z}; }

/// coulomb_block_step by lanes, the same operations (a lane whose tangent is within the
/// disc keeps f = 1, as the scalar rule's branch does).
inline V3 coulomb_step(const V3& g0, const V3& d, V mu, V sn, V st) {
    const V gn = vmax(g0.x - sn * d.x, zero());  // as std::max(0, x)
    const V ty = g0.y - st * d.y, tz = g0.z - st * d.z;
    const V tn = vsqrt(ty * ty + tz * tz);
    const V limit = mu * gn;
    const V f = select(gt(tn, limit), splat(1.0), limit / tn);
    return {gn, ty * f, tz * f};
}

/// bgs on contacts i … i+N−1, as bgs_block lane by lane: the step in the metric
/// diag(eta_n, eta_t, eta_t), the projection in it with q = eta_n / eta_t (`Coulomb`:
/// coulomb_step, the residual with ĉ; a lane without a metric gets γ = 0, as the scalar
/// rule gives it); folds their excesses into `excess`.
template <bool Coulomb>
inline void bgs_group(AssembledBatch& batch, SolverBodies& sb, std::size_t i, V omega, V tol2, V& excess) {
    Group grp;
    load_group(batch, sb, i, grp);
    const V3 g0 = load3(batch.gamma[i].data());
    const V eta = loadu(&batch.eta[i]);
    const V en = loadu(&batch.eta_n[i]);
    const V et = loadu(&batch.eta_t[i]);
    const V mu = loadu(&batch.mu[i]);
    const V3 d = contact_velocity(grp, load3(batch.rhs[i].data()));

    const V zerov = zero();
    const Mask has = both(gt(en, zerov), gt(et, zerov));
    const V sn = omega * en, st = omega * et;
    V3 x;
    if constexpr (Coulomb) {
        x = coulomb_step(g0, d, mu, sn, st);
    } else {
        const V q = en / et;
        x = project({g0.x - sn * d.x, g0.y - st * d.y, g0.z - st * d.z}, mu, q);
    }
    const V3 g{keep(has, x.x), keep(has, x.y), keep(has, x.z)};
    const V3 c = Coulomb ? coulomb_velocity(d, mu) : d;
    const V3 full = project({g0.x - eta * c.x, g0.y - eta * c.y, g0.z - eta * c.z}, mu);
    store3(batch.gamma[i].data(), g);
    apply(grp, {g.x - g0.x, g.y - g0.y, g.z - g0.z});

    const V e0 = g0.x - full.x, e1 = g0.y - full.y, e2 = g0.z - full.z;
    const V y = (e0 * e0 + e1 * e1) + e2 * e2 - tol2 * eta * eta;
    excess = vmax(y, excess);  // as std::max(excess, y): a NaN y is dropped
}

/// bgs on the normal rows of contacts i … i+N−1 (AssembledBatch::normal_only), as
/// bgs_normal_update lane by lane; folds the normal residual terms' excesses into `excess`.
inline void bgs_normal_group(AssembledBatch& batch, SolverBodies& sb, std::size_t i, V omega, V tol2, V& excess) {
    GroupBodies gb;
    load_group_bodies(batch, sb, i, gb);
    Bodies& A = gb.A;
    Bodies& B = gb.B;
    const V zerov = zero();
    const V3 n = load3(batch.normal[i].data());
    const V3 ra = load3(batch.lever_a[i].data()), rb = load3(batch.lever_b[i].data());
    V3 rel{zerov, zerov, zerov};
    add_point_velocity(B, rb, splat(1.0), rel);
    add_point_velocity(A, ra, splat(-1.0), rel);
    const V dn = load3(batch.rhs[i].data()).x + ((n.x * rel.x + n.y * rel.y) + n.z * rel.z);
    const V g0 = load3(batch.gamma[i].data()).x;
    const V en = loadu(&batch.eta_n[i]);
    const V et = loadu(&batch.eta_t[i]);
    const Mask has = both(gt(en, zerov), gt(et, zerov));
    const V g = keep(has, vmax(g0 - (omega * en) * dn, zerov));  // as std::max(0, x)
    store3(batch.gamma[i].data(), {g, zerov, zerov});
    const V dg = g - g0;
    const V3 p{n.x * dg, n.y * dg, n.z * dg};
    push_body(B, rb, p, splat(1.0), gb.IB);
    push_body(A, ra, p, splat(-1.0), gb.IA);
    store_bodies(B, gb.pb, gb.has_b);
    store_bodies(A, gb.pa, gb.has_a);
    const V eta = loadu(&batch.eta[i]);
    const V e = g0 - vmax(g0 - eta * dn, zerov);
    excess = vmax(e * e - tol2 * eta * eta, excess);  // as std::max(excess, y)
}

/// Contacts i … i+N−1's impulses added to their bodies' sums (B: +p and +r_B × p, A: −p and
/// −r_A × p, p = A_i γ_i in the world), as scatter_impulse adds them (the same for every
/// body: the sums are momenta, I⁻¹ comes after).
inline void scatter_group(const AssembledBatch& batch, const Vec3* gamma, SolverBodies& sb, std::size_t i) {
    Group grp;
    load_group(batch, sb, i, grp, false);
    const V3 p = to_world(grp, load3(gamma[i].data()));
    auto add = [&](Bodies& b, const V3& r, bool plus) {
        const V tx = r.y * p.z - r.z * p.y, ty = r.z * p.x - r.x * p.z, tz = r.x * p.y - r.y * p.x;
        if (plus) {
            b.vx = b.vx + p.x, b.vy = b.vy + p.y, b.vz = b.vz + p.z;
            b.wx = b.wx + tx, b.wy = b.wy + ty, b.wz = b.wz + tz;
        } else {
            b.vx = b.vx - p.x, b.vy = b.vy - p.y, b.vz = b.vz - p.z;
            b.wx = b.wx - tx, b.wy = b.wy - ty, b.wz = b.wz - tz;
        }
    };
    add(grp.A, grp.ra, false);
    add(grp.B, grp.rb, true);
    store_bodies(grp.B, grp.pb, grp.has_b);
    store_bodies(grp.A, grp.pa, grp.has_a);
}

/// The §6 residual terms ‖γ_i − Π_K(γ_i − η_i d_i)‖ / η_i of N contacts, as residual_term.
inline V residual_terms(const V3& g0, V eta, V mu, const V3& d) {
    const V3 full = project({g0.x - eta * d.x, g0.y - eta * d.y, g0.z - eta * d.z}, mu);
    const V e0 = g0.x - full.x, e1 = g0.y - full.y, e2 = g0.z - full.z;
    return vsqrt((e0 * e0 + e1 * e1) + e2 * e2) / eta;
}

/// PJ's contact pass on contacts i … i+N−1.
inline void pj_contacts_group(const AssembledBatch& batch, SolverBodies& sb, const double* step, Vec3* next,
                              std::size_t i, V& worst) {
    Group grp;
    load_group(batch, sb, i, grp, false);
    const V3 g0 = load3(batch.gamma[i].data());
    const V eta = loadu(&batch.eta[i]);
    const V mu = loadu(&batch.mu[i]);
    const V s = loadu(step + i);
    const V3 d = contact_velocity(grp, load3(batch.rhs[i].data()));
    store3(next[i].data(), project({g0.x - s * d.x, g0.y - s * d.y, g0.z - s * d.z}, mu));
    worst = vmax(residual_terms(g0, eta, mu, d), worst);
}

/// PJ's second pass on contacts i … i+N−1 (ν += M⁻¹ D (next − γ), γ ← next).
inline void pj_apply_group(AssembledBatch& batch, const Vec3* next, SolverBodies& sb, std::size_t i) {
    Group grp;
    load_group(batch, sb, i, grp);
    const V3 g0 = load3(batch.gamma[i].data());
    const V3 g = load3(next[i].data());
    store3(batch.gamma[i].data(), g);
    apply(grp, {g.x - g0.x, g.y - g0.y, g.z - g0.z});
}

/// The residual terms of contacts i … i+N−1 folded into `worst` (read only; they may share
/// bodies; `Coulomb`: with ĉ).
template <bool Coulomb>
inline void residual_group(const AssembledBatch& batch, SolverBodies& sb, std::size_t i, V& worst) {
    Group grp;
    load_group(batch, sb, i, grp, false);
    const V mu = loadu(&batch.mu[i]);
    const V3 v = contact_velocity(grp, load3(batch.rhs[i].data()));
    const V3 d = Coulomb ? coulomb_velocity(v, mu) : v;
    worst = vmax(residual_terms(load3(batch.gamma[i].data()), loadu(&batch.eta[i]), mu, d), worst);
}

/// Π_R(γ_n) by lanes, as project_rolling: γ_s clamped to ±μ_s γ_n, the rolling pair
/// scaled onto its disc of radius μ_r γ_n, all 0 where γ_n ≤ 0.
inline V3 project_rolling(const V3& g, V gn, V mu_r, V mu_s) {
    const V smax = mu_s * gn, rmax = mu_r * gn;
    const V lo = bit_xor(smax, splat(-0.0));  // −smax
    const V s = select(lt(g.x, lo), select(lt(smax, g.x), g.x, smax), lo);  // std::clamp
    const V t2 = g.y * g.y + g.z * g.z;
    const Mask inside = le(t2, rmax * rmax);
    const V k = rmax / vsqrt(t2);
    const Mask has = gt(gn, zero());
    return {keep(has, s), keep(has, select(inside, k * g.y, g.y)), keep(has, select(inside, k * g.z, g.z))};
}

/// PGS's step on the rolling entries k … k+N−1 (RollingBatch: the entries of one colour's
/// contacts, so no dynamic body shared), as pgs_rolling_step lane by lane; `relaxed`: ω ≠ 1.
/// False, touching nothing, when one of their bodies is anisotropic (its torque goes
/// through the world tensor: the scalar rule takes the group); otherwise folds the residual
/// terms' excesses into `excess`.
inline bool rolling_group(AssembledBatch& batch, SolverBodies& sb, std::size_t k, V omega, V tol2, bool relaxed,
                          V& excess) {
    RollingBatch& rb = batch.rolling;
    GroupBodies g_bodies;  // (I⁻¹ not loaded: an anisotropic body sends the group back)
    point_group_bodies(batch, sb, [&](int l) { return std::size_t(rb.contact[k + std::size_t(l)]); }, g_bodies);
    Bodies& A = g_bodies.A;
    Bodies& B = g_bodies.B;
    if (any(either(lt(A.ij, zero()), lt(B.ij, zero())))) return false;
    const bool stored = !batch.tangent.empty();
    alignas(64) double lane[10][N];  // n, u (if stored), γ_n by lanes
    for (int l = 0; l < N; ++l) {
        const std::size_t i = rb.contact[k + std::size_t(l)];
        for (int c = 0; c < 3; ++c) lane[c][l] = batch.normal[i][c];
        if (stored)
            for (int c = 0; c < 3; ++c) lane[3 + c][l] = batch.tangent[i][c];
        lane[6][l] = batch.gamma[i][0];
    }
    const V3 n{loadu(lane[0]), loadu(lane[1]), loadu(lane[2])};
    const V3 u = stored ? V3{loadu(lane[3]), loadu(lane[4]), loadu(lane[5])} : first_tangent(n);
    const V3 w = cross(n, u);
    // d = Aᵀ (ω_B − ω_A), as relative_spin and to_contact (a missing side's ω is 0)
    const V zerov = zero();
    const V rx = (zerov + B.wx) - A.wx, ry = (zerov + B.wy) - A.wy, rz = (zerov + B.wz) - A.wz;
    const V3 d{(n.x * rx + n.y * ry) + n.z * rz, (u.x * rx + u.y * ry) + u.z * rz, (w.x * rx + w.y * ry) + w.z * rz};
    const V3 g0 = load3(rb.gamma[k].data());
    const V eta = loadu(&rb.eta[k]);
    const V mu_r = loadu(&rb.mu_r[k]), mu_s = loadu(&rb.mu_s[k]);
    const V gn = loadu(lane[6]);
    const V oe = omega * eta;
    const V3 g = project_rolling({g0.x - oe * d.x, g0.y - oe * d.y, g0.z - oe * d.z}, gn, mu_r, mu_s);
    const V3 full = relaxed ? project_rolling({g0.x - eta * d.x, g0.y - eta * d.y, g0.z - eta * d.z}, gn, mu_r, mu_s)
                            : g;
    store3(rb.gamma[k].data(), g);
    // the torque A (γ − γ⁰) on B, its opposite on A (to_world, then ω ± j τ)
    const V dx = g.x - g0.x, dy = g.y - g0.y, dz = g.z - g0.z;
    const V tx = (n.x * dx + u.x * dy) + w.x * dz, ty = (n.y * dx + u.y * dy) + w.y * dz,
            tz = (n.z * dx + u.z * dy) + w.z * dz;
    B.wx = B.wx + B.ij * tx;
    B.wy = B.wy + B.ij * ty;
    B.wz = B.wz + B.ij * tz;
    A.wx = A.wx - A.ij * tx;
    A.wy = A.wy - A.ij * ty;
    A.wz = A.wz - A.ij * tz;
    store_bodies(B, g_bodies.pb, g_bodies.has_b);
    store_bodies(A, g_bodies.pa, g_bodies.has_a);
    const V len = loadu(&rb.length[k]);
    const V e0 = g0.x - full.x, e1 = g0.y - full.y, e2 = g0.z - full.z;
    excess = vmax(((e0 * e0 + e1 * e1) + e2 * e2) * (len * len) - tol2 * eta * eta, excess);
    return true;
}

/// The rolling entries [first, last) N at a time (rolling_group), the groups it refuses and
/// the last fewer than N by narrower(k', k''); the largest excess, or −1.
template <class Narrower>
double rolling_sweep(AssembledBatch& batch, SolverBodies& sb, std::size_t first, std::size_t last, double omega,
                     double tol2, Narrower&& narrower) {
    const V omegav = splat(omega), tol2v = splat(tol2);
    const bool relaxed = omega != 1.0;
    double result = -1.0;
    V lanes = splat(-1.0);
    std::size_t k = first;
    for (; k + N <= last; k += N)
        if (!rolling_group(batch, sb, k, omegav, tol2v, relaxed, lanes)) result = std::max(result, narrower(k, k + N));
    if (k < last) result = std::max(result, narrower(k, last));
    return std::max(result, hmax(lanes));
}

/// A range N contacts at a time: group(i, lanes) takes contacts i … i+N−1 into the lanes'
/// running value; narrower(lo', hi') takes the last fewer than N with the next narrower
/// kernel, returning their largest value. Returns the largest value of all, or `init` (a Gauss–Seidel sweep's excesses from
/// −1, a read-only pass's residual terms from 0). A max is exact in any order, so how the
/// range is cut changes no bit.
template <class GroupFn, class Narrower>
double lanes_sweep(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo, std::size_t hi,
                   double init, GroupFn&& group, Narrower&& narrower) {
    double result = init;
    V lanes = splat(init);
    std::size_t i = lo;
    for (; i + N <= hi; i += N) {
        for (std::size_t j = i + kAhead; j < std::min(i + kAhead + N, hi); ++j) prefetch_bodies(batch, bodies, j);
        group(i, lanes);
    }
    if (i < hi) result = std::max(result, narrower(i, hi));
    return std::max(result, hmax(lanes));
}
