// The two versions of each contact kernel (solvers/contact_kernels.cpp: PGS, PJ's contact
// pass and PJ's apply pass) compute the same bits: the AVX one that handles four contacts at
// once and the scalar one, on a random independent range with
// walls (missing bodies), anisotropic bodies (in the lanes with their world I⁻¹), all
// three cases of the cone projection, with and without relaxation, and ranges that start
// off a multiple of four. Bit-identity is what keeps PGS thread-count independent: which
// contacts end up grouped depends on where a parallel range starts.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "solvers/cone_projection.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/contact_kernels.hpp"
#include "solvers/contact_operator.hpp"
#include "solvers/rolling.hpp"

namespace talus {
namespace {

struct Case {
    AssembledBatch batch;
    SolverBodies bodies;
};

/// `contacts` contacts over distinct bodies (one colour); about 1 in 6 has a wall on one
/// side and about 1 in 10 bodies is anisotropic (when `anisotropic`).
Case random_case(std::size_t contacts, bool anisotropic, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> U(-1.0, 1.0), P(0.0, 1.0);
    Case c;
    const std::size_t n_bodies = 2 * contacts;
    c.bodies.body.resize(n_bodies);
    if (anisotropic) c.bodies.inv_inertia_world.resize(n_bodies);
    for (std::size_t k = 0; k < n_bodies; ++k) {
        SolverBody& b = c.bodies.body[k];
        b.v = Vec3(U(rng), U(rng), U(rng));
        b.w = Vec3(U(rng), U(rng), U(rng)) * 10.0;
        b.inv_mass = 1.0 / (0.5 + P(rng));
        b.inv_inertia = 1.0 / (1e-3 + 1e-2 * P(rng));
        if (anisotropic && k % 10 == 3) {
            b.inv_inertia = -1.0;
            const Mat3 q = Eigen::Quaterniond(U(rng), U(rng), U(rng), U(rng)).normalized().toRotationMatrix();
            c.bodies.inv_inertia_world[k] = q * Vec3(200.0, 300.0, 500.0).asDiagonal() * q.transpose();
        }
    }
    c.bodies.v_free.assign(n_bodies, Vec3::Zero());
    c.bodies.w_free.assign(n_bodies, Vec3::Zero());
    AssembledBatch& B = c.batch;
    for (std::size_t i = 0; i < contacts; ++i) {
        int32_t a = int32_t(2 * i), b = int32_t(2 * i + 1);
        const int wall = int(rng() % 12);
        if (wall == 0) a = kNoBody;
        if (wall == 1) b = kNoBody;
        B.a.push_back(a);
        B.b.push_back(b);
        const Vec3 n = Vec3(U(rng), U(rng), U(rng)).normalized();
        const Vec3 u = n.unitOrthogonal();
        B.normal.push_back(n);
        B.tangent.push_back(u);
        B.lever_a.push_back(a == kNoBody ? Vec3::Zero() : Vec3(-0.01 * n + 0.002 * Vec3(U(rng), U(rng), U(rng))));
        B.lever_b.push_back(b == kNoBody ? Vec3::Zero() : Vec3(0.01 * n + 0.002 * Vec3(U(rng), U(rng), U(rng))));
        B.rhs.push_back(Vec3(U(rng), 0.1 * U(rng), 0.1 * U(rng)));
        B.stab.push_back(B.rhs.back()[0]);
        B.mu.push_back(i % 7 == 0 ? 0.0 : P(rng));
        B.gamma.push_back(Vec3(P(rng), 0.3 * U(rng), 0.3 * U(rng)) * 0.1);
        B.eta.push_back(0.0);
    }
    B.colour_start = {0, uint32_t(contacts)};
    for (std::size_t i = 0; i < contacts; ++i)
        B.eta[i] = 3.0 / delassus_block(B, c.bodies, i).trace();
    return c;
}

/// bgs's metric for every row, as BodyOperator::bgs_prepare makes it, except one row in 50
/// without its normal part (the kernels then leave γ at zero).
void fill_block_metric(Case& c) {
    AssembledBatch& B = c.batch;
    B.eta_n.resize(B.size());
    B.eta_t.resize(B.size());
    for (std::size_t i = 0; i < B.size(); ++i) {
        const BlockMetric m = block_metric(delassus_block(B, c.bodies, i));
        B.eta_n[i] = i % 50 == 17 ? 0.0 : m.n;
        B.eta_t[i] = m.t;
    }
}

void expect_same_bits(const Case& x, const Case& y) {
    ASSERT_EQ(x.batch.size(), y.batch.size());
    EXPECT_EQ(0, std::memcmp(x.batch.gamma.data(), y.batch.gamma.data(), x.batch.size() * sizeof(Vec3)));
    EXPECT_EQ(0, std::memcmp(x.bodies.body.data(), y.bodies.body.data(),
                             x.bodies.size() * sizeof(SolverBody)));
}

// W_ii = D_iᵀ M⁻¹ D_i as delassus_block forms it (a closed form for isotropic bodies, the
// general one for the rest) equals the brute-force block: column k is the change of the
// contact's velocity when a unit impulse along its k-th axis is applied to its bodies.
TEST(PgsKernels, DelassusBlockIsTheVelocityResponseToUnitImpulses) {
    Case c = random_case(200, true, 11);
    for (std::size_t i = 0; i < c.batch.size(); ++i) {
        const Mat3 W = delassus_block(c.batch, c.bodies, i);
        for (int k = 0; k < 3; ++k) {
            SolverBodies moved = c.bodies;
            const Vec3 before = contact_velocity(c.batch, moved, i);
            apply_impulse(c.batch, contact_frame(c.batch, i), moved, i, Vec3::Unit(k));
            const Vec3 column = contact_velocity(c.batch, moved, i) - before;
            for (int row = 0; row < 3; ++row)
                EXPECT_NEAR(W(row, k), column[row], 1e-9 * (1.0 + std::abs(column[row])))
                    << "contact " << i << " entry (" << row << ", " << k << ")";
        }
        EXPECT_NEAR((W - W.transpose()).norm(), 0.0, 1e-9 * W.norm());
    }
}

TEST(PgsKernels, LanesMatchScalarBitForBit) {
    if (!pgs_lanes_available()) GTEST_SKIP() << "this CPU has no AVX";
    for (bool anisotropic : {false, true}) {
        for (double omega : {1.0, 1.3}) {
            Case scalar = random_case(403, anisotropic, 7 + unsigned(anisotropic));
            Case lanes = scalar, lanes8 = scalar;
            int polar = 0, inside = 0, surface = 0;
            for (int sweep = 0; sweep < 4; ++sweep) {
                // Ranges [1, 203) and [203, 403): neither starts on a multiple of four.
                const double tol2 = 1e-6;
                const double e1 = pgs_range_scalar(scalar.batch, scalar.bodies, 1, 203, omega, tol2) ;
                const double e2 = pgs_range_scalar(scalar.batch, scalar.bodies, 203, 403, omega, tol2);
                const double f1 = pgs_range_lanes(lanes.batch, lanes.bodies, 1, 203, omega, tol2);
                const double f2 = pgs_range_lanes(lanes.batch, lanes.bodies, 203, 403, omega, tol2);
                EXPECT_EQ(0, std::memcmp(&e1, &f1, sizeof e1));
                EXPECT_EQ(0, std::memcmp(&e2, &f2, sizeof e2));
                expect_same_bits(scalar, lanes);
                if (lanes8_available()) {
                    const double h1 = pgs_range_lanes(lanes8.batch, lanes8.bodies, 1, 203, omega, tol2, 8);
                    const double h2 = pgs_range_lanes(lanes8.batch, lanes8.bodies, 203, 403, omega, tol2, 8);
                    EXPECT_EQ(0, std::memcmp(&e1, &h1, sizeof e1));
                    EXPECT_EQ(0, std::memcmp(&e2, &h2, sizeof e2));
                    expect_same_bits(scalar, lanes8);
                }
                for (std::size_t i = 1; i < 403; ++i) {
                    const Vec3& g = scalar.batch.gamma[i];
                    const double t = std::hypot(g[1], g[2]);
                    if (g == Vec3::Zero()) ++polar;
                    else if (t < scalar.batch.mu[i] * g[0] * (1 - 1e-12)) ++inside;
                    else ++surface;
                }
            }
            // Every branch of the projection was taken, in both kernels alike.
            EXPECT_GT(polar, 20);
            EXPECT_GT(inside, 20);
            EXPECT_GT(surface, 20);
        }
    }
}

// bgs's kernel (solvers/bgs.cpp) likewise, under the CCP and under exact Coulomb friction
// (coulomb_block_step, its residual with De Saxcé's ĉ): its metric from each contact's
// block, as BodyOperator::bgs_prepare computes it, and a few contacts without one (γ = 0
// then); in four lanes and, on a CPU with AVX-512, in eight, anisotropic bodies in the
// lanes with the rest. The residual pass of either law,
// scalar, four and eight lanes, alike too.
TEST(PgsKernels, BgsLanesMatchScalarBitForBit) {
    if (!pgs_lanes_available()) GTEST_SKIP() << "this CPU has no AVX";
    for (FrictionLaw law : {FrictionLaw::CCP, FrictionLaw::Coulomb}) {
        for (bool anisotropic : {false, true}) {
            for (double omega : {1.0, 1.6}) {
                Case scalar = random_case(403, anisotropic, 11 + unsigned(anisotropic));
                fill_block_metric(scalar);
                Case lanes = scalar, lanes8 = scalar;
                int moved = 0;
                for (int sweep = 0; sweep < 4; ++sweep) {
                    const double tol2 = 1e-6;
                    const std::vector<Vec3> before = scalar.batch.gamma;
                    const double e1 = bgs_range_scalar(scalar.batch, scalar.bodies, 1, 203, omega, tol2, law);
                    const double e2 = bgs_range_scalar(scalar.batch, scalar.bodies, 203, 403, omega, tol2, law);
                    const double f1 = bgs_range_lanes(lanes.batch, lanes.bodies, 1, 203, omega, tol2, law);
                    const double f2 = bgs_range_lanes(lanes.batch, lanes.bodies, 203, 403, omega, tol2, law);
                    EXPECT_EQ(0, std::memcmp(&e1, &f1, sizeof e1));
                    EXPECT_EQ(0, std::memcmp(&e2, &f2, sizeof e2));
                    expect_same_bits(scalar, lanes);
                    if (lanes8_available()) {
                        // eight lanes: [1, 203) ends in a group of four and two alone
                        const double h1 = bgs_range_lanes(lanes8.batch, lanes8.bodies, 1, 203, omega, tol2, law, 8);
                        const double h2 = bgs_range_lanes(lanes8.batch, lanes8.bodies, 203, 403, omega, tol2, law, 8);
                        EXPECT_EQ(0, std::memcmp(&e1, &h1, sizeof e1));
                        EXPECT_EQ(0, std::memcmp(&e2, &h2, sizeof e2));
                        expect_same_bits(scalar, lanes8);
                    }
                    for (std::size_t i = 1; i < 403; ++i) moved += scalar.batch.gamma[i] != before[i];
                    const double r1 = residual_range(scalar.batch, scalar.bodies, 1, 403, false, law);
                    const double r2 = residual_range_lanes(lanes.batch, lanes.bodies, 1, 403, law);
                    EXPECT_EQ(0, std::memcmp(&r1, &r2, sizeof r1));
                    if (lanes8_available()) {
                        const double r3 = residual_range_lanes(lanes8.batch, lanes8.bodies, 1, 403, law, 8);
                        EXPECT_EQ(0, std::memcmp(&r1, &r3, sizeof r1));
                    }
                    EXPECT_GT(r1, 0.0);
                }
                EXPECT_GT(moved, 400);  // the sweeps did something to compare
                if (law != FrictionLaw::Coulomb) continue;
                // every branch of the Coulomb step was taken: open, inside the disc, on its rim
                int open = 0, inside = 0, rim = 0;
                for (std::size_t i = 1; i < 403; ++i) {
                    const Vec3& g = scalar.batch.gamma[i];
                    const double t = std::hypot(g[1], g[2]);
                    EXPECT_LE(t, scalar.batch.mu[i] * g[0] * (1 + 1e-12)) << i << ": outside the disc";
                    if (g[0] == 0.0) ++open;
                    else if (t < scalar.batch.mu[i] * g[0] * (1 - 1e-12)) ++inside;
                    else ++rim;
                }
                EXPECT_GT(open, 5);
                EXPECT_GT(inside, 5);
                EXPECT_GT(rim, 5);
            }
        }
    }
}

/// Rolling entries on about two contacts in three of a case (solvers/rolling.hpp): random
/// μ_r (a few large enough that the rolling torque stays inside its disc) and μ_s, some of
/// them 0, η, ℓ and a warm start; every ninth contact without a normal impulse (Π_R gives 0).
void add_rolling(Case& c, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> U(-1.0, 1.0), P(0.0, 1.0);
    RollingBatch& rb = c.batch.rolling;
    for (std::size_t i = 0; i < c.batch.size(); i += 1 + rng() % 2) {
        if (i % 9 == 4) c.batch.gamma[i][0] = 0.0;
        rb.contact.push_back(uint32_t(i));
        rb.mu_r.push_back(i % 5 == 0 ? 0.0 : (i % 3 == 0 ? 10.0 : 1e-3) * P(rng));
        rb.mu_s.push_back(i % 7 == 0 ? 0.0 : 1e-3 * P(rng));
        rb.eta.push_back(1e-3 * (0.5 + P(rng)));
        rb.length.push_back(1e-3 * (0.5 + P(rng)));
        rb.gamma.push_back(Vec3(U(rng), U(rng), U(rng)) * 1e-5);
    }
}

// The rolling entries' PGS step (pgs_rolling_range) in four and eight lanes gives the scalar
// rule's bits, with and without relaxation, with anisotropic bodies (whose groups the
// scalar rule takes), with the tangent stored or derived from the normal, and with ranges
// that start off a multiple of the width.
TEST(PgsKernels, RollingLanesMatchScalarBitForBit) {
    if (!pgs_lanes_available()) GTEST_SKIP() << "this CPU has no AVX";
    std::vector<int> widths{4};
    if (lanes8_available()) widths.push_back(8);
    for (bool anisotropic : {false, true})
        for (double omega : {1.0, 1.3})
            for (int width : widths)
                for (std::size_t start : {0, 1, 3}) {
                    Case scalar = random_case(403, anisotropic, 21 + unsigned(anisotropic));
                    add_rolling(scalar, 5);
                    if (start == 1) scalar.batch.tangent.clear();  // u from n, as assemble() leaves it
                    Case lanes = scalar;
                    const std::size_t n = scalar.batch.rolling.size();
                    int moved = 0, inside = 0;
                    for (int sweep = 0; sweep < 3; ++sweep) {
                        const std::vector<Vec3> before = scalar.batch.rolling.gamma;
                        const double e = pgs_rolling_range_scalar(scalar.batch, scalar.bodies, start, n, omega, 1e-10);
                        const double f =
                            pgs_rolling_range_lanes(lanes.batch, lanes.bodies, start, n, omega, 1e-10, width);
                        EXPECT_EQ(0, std::memcmp(&e, &f, sizeof e)) << e << " " << f;
                        EXPECT_EQ(0, std::memcmp(scalar.batch.rolling.gamma.data(), lanes.batch.rolling.gamma.data(),
                                                 n * sizeof(Vec3)));
                        expect_same_bits(scalar, lanes);
                        for (std::size_t k = start; k < n; ++k) moved += scalar.batch.rolling.gamma[k] != before[k];
                    }
                    for (std::size_t k = start; k < n; ++k) {
                        const std::size_t i = scalar.batch.rolling.contact[k];
                        const Vec3& g = scalar.batch.rolling.gamma[k];
                        const double rmax = scalar.batch.rolling.mu_r[k] * scalar.batch.gamma[i][0];
                        inside += std::hypot(g[1], g[2]) < rmax * (1.0 - 1e-9);
                    }
                    EXPECT_GT(moved, 300);  // the sweeps did something to compare
                    EXPECT_GT(inside, 5);   // and took the branch inside the disc too
                }
}

// The push-out pass's rows (AssembledBatch::normal_only: μ = 0, no tangential impulse) step
// the normal row alone: scalar, four and eight lanes give the same bits (ranges starting off
// a multiple of eight, walls, anisotropic bodies falling back), and the step is the full
// block's with μ = 0 (which projects the tangent to zero) to within rounding.
TEST(PgsKernels, BgsNormalRowsLanesMatchScalarAndTheFullStep) {
    if (!pgs_lanes_available()) GTEST_SKIP() << "this CPU has no AVX";
    for (bool anisotropic : {false, true}) {
        Case scalar = random_case(403, anisotropic, 23 + unsigned(anisotropic));
        fill_block_metric(scalar);
        AssembledBatch& B = scalar.batch;
        for (std::size_t i = 0; i < B.size(); ++i) {
            B.mu[i] = 0.0;
            B.gamma[i] = Vec3(B.gamma[i][0], 0.0, 0.0);
        }
        Case full = scalar;  // the full block's step, μ = 0
        B.normal_only = true;
        Case lanes = scalar, lanes8 = scalar;
        int moved = 0;
        for (int sweep = 0; sweep < 4; ++sweep) {
            const double tol2 = 1e-6;
            const std::vector<Vec3> before = scalar.batch.gamma;
            const double e1 = bgs_range_scalar(scalar.batch, scalar.bodies, 1, 203, 1.0, tol2, FrictionLaw::CCP);
            const double e2 = bgs_range_scalar(scalar.batch, scalar.bodies, 203, 403, 1.0, tol2, FrictionLaw::CCP);
            const double f1 = bgs_range_lanes(lanes.batch, lanes.bodies, 1, 203, 1.0, tol2, FrictionLaw::CCP);
            const double f2 = bgs_range_lanes(lanes.batch, lanes.bodies, 203, 403, 1.0, tol2, FrictionLaw::CCP);
            EXPECT_EQ(0, std::memcmp(&e1, &f1, sizeof e1));
            EXPECT_EQ(0, std::memcmp(&e2, &f2, sizeof e2));
            expect_same_bits(scalar, lanes);
            if (lanes8_available()) {
                const double h1 = bgs_range_lanes(lanes8.batch, lanes8.bodies, 1, 203, 1.0, tol2, FrictionLaw::CCP, 8);
                const double h2 = bgs_range_lanes(lanes8.batch, lanes8.bodies, 203, 403, 1.0, tol2, FrictionLaw::CCP, 8);
                EXPECT_EQ(0, std::memcmp(&e1, &h1, sizeof e1));
                EXPECT_EQ(0, std::memcmp(&e2, &h2, sizeof e2));
                expect_same_bits(scalar, lanes8);
            }
            bgs_range_scalar(full.batch, full.bodies, 1, 403, 1.0, tol2, FrictionLaw::CCP);
            for (std::size_t i = 1; i < 403; ++i) {
                moved += scalar.batch.gamma[i] != before[i];
                const Vec3& g = scalar.batch.gamma[i];
                EXPECT_EQ(g[1], 0.0);
                EXPECT_EQ(g[2], 0.0);
                EXPECT_GE(g[0], 0.0);
                EXPECT_NEAR(g[0], full.batch.gamma[i][0], 1e-12 * (1.0 + std::abs(g[0]))) << i;
                EXPECT_NEAR(full.batch.gamma[i][1], 0.0, 1e-15) << i;
            }
            for (std::size_t k = 0; k < scalar.bodies.size(); ++k)
                EXPECT_LT((scalar.bodies.body[k].v - full.bodies.body[k].v).norm(), 1e-11) << k;
        }
        EXPECT_GT(moved, 300);  // the sweeps did something to compare
    }
}

// The impulses' scatter onto the bodies' sums (the warm start's and the rebuild's, below
// 200,000 bodies): four and eight lanes give the scalar add's bits, on ranges starting off a
// multiple of eight, with walls and with anisotropic bodies (their groups fall back), and
// with the tangent stored or derived.
TEST(PgsKernels, ScatterLanesMatchScalarBitForBit) {
    if (!pgs_lanes_available()) GTEST_SKIP() << "this CPU has no AVX";
    for (bool anisotropic : {false, true}) {
        for (bool stored_tangent : {true, false}) {
            Case scalar = random_case(403, anisotropic, 31 + unsigned(anisotropic));
            if (!stored_tangent) scalar.batch.tangent.clear();
            const std::vector<Vec3> gamma = scalar.batch.gamma;
            Case lanes = scalar, lanes8 = scalar;
            for (int pass = 0; pass < 2; ++pass) {
                scatter_impulses_range(scalar.batch, gamma, scalar.bodies, 1, 203, true, 0);
                scatter_impulses_range(scalar.batch, gamma, scalar.bodies, 203, 403, true, 0);
                scatter_impulses_range(lanes.batch, gamma, lanes.bodies, 1, 203, true, 4);
                scatter_impulses_range(lanes.batch, gamma, lanes.bodies, 203, 403, true, 4);
                expect_same_bits(scalar, lanes);
                if (lanes8_available()) {
                    scatter_impulses_range(lanes8.batch, gamma, lanes8.bodies, 1, 203, true, 8);
                    scatter_impulses_range(lanes8.batch, gamma, lanes8.bodies, 203, 403, true, 8);
                    expect_same_bits(scalar, lanes8);
                }
            }
            // and the sums are the impulses': body 2i+1 (B of contact i, when it has one)
            // gained 2 A_i γ_i over the two passes
            Case fresh = random_case(403, anisotropic, 31 + unsigned(anisotropic));
            for (std::size_t i = 1; i < 403; ++i) {
                if (fresh.batch.b[i] == kNoBody) continue;
                const std::size_t b = std::size_t(fresh.batch.b[i]);
                const Vec3 p = contact_frame(scalar.batch, i).to_world(gamma[i]);  // (its tangent)
                EXPECT_LT((scalar.bodies.body[b].v - fresh.bodies.body[b].v - 2.0 * p).norm(), 1e-12) << i;
            }
        }
    }
}

// assemble() does not store the first tangent u: the readers compute first_tangent(n), the
// first vector of orthonormal_basis (Duff et al. 2017), scalar in contact_frame, in four
// lanes in load_group and in eight in load_group8. All must give the bits of u stored: for normals of every octant,
// on the poles (n_z = ±1, ±0) and near the pole where the basis divides by 1 + |n_z| small
// terms; and the sweeps, scalar and lanes, PGS and bgs, must not tell stored from derived.
TEST(PgsKernels, TangentFromTheNormalIsTheStoredTangentBitForBit) {
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    std::vector<Vec3> normals = {Vec3(0, 0, 1), Vec3(0, 0, -1), Vec3(1, 0, 0), Vec3(0, -1, 0),
                                 Vec3(1, 0, -0.0), Vec3(0, 1, 0.0), Vec3(1e-9, 0, -1).normalized()};
    for (int k = 0; k < 2000; ++k) normals.push_back(Vec3(U(rng), U(rng), U(rng)).normalized());
    for (const Vec3& n : normals) {
        Vec3 u, w;
        orthonormal_basis(n, u, w);
        const Vec3 f = first_tangent(n);
        EXPECT_EQ(0, std::memcmp(f.data(), u.data(), sizeof(Vec3))) << n.transpose();
        EXPECT_NEAR(f.dot(n), 0.0, 1e-15);
        EXPECT_NEAR(f.norm(), 1.0, 1e-15);
    }
    for (bool bgs : {false, true}) {
        Case stored = random_case(403, true, 31);
        AssembledBatch& B = stored.batch;
        for (std::size_t i = 0; i < B.size(); ++i) B.tangent[i] = first_tangent(B.normal[i]);
        B.eta.assign(B.size(), 0.0);
        for (std::size_t i = 0; i < B.size(); ++i) B.eta[i] = 3.0 / delassus_block(B, stored.bodies, i).trace();
        if (bgs) {
            for (std::size_t i = 0; i < B.size(); ++i) {
                const BlockMetric m = block_metric(delassus_block(B, stored.bodies, i));
                B.eta_n.push_back(m.n);
                B.eta_t.push_back(m.t);
            }
        }
        Case derived = stored;
        derived.batch.tangent.clear();
        Case derived_lanes = derived, stored_lanes = stored, derived_lanes8 = derived, stored_lanes8 = stored;
        for (int sweep = 0; sweep < 3; ++sweep) {
            auto run = [&](Case& c, bool lanes) {
                if (bgs)
                    return lanes ? bgs_range_lanes(c.batch, c.bodies, 1, 403, 1.0, 1e-6)
                                 : bgs_range_scalar(c.batch, c.bodies, 1, 403, 1.0, 1e-6);
                return lanes ? pgs_range_lanes(c.batch, c.bodies, 1, 403, 1.0, 1e-6)
                             : pgs_range_scalar(c.batch, c.bodies, 1, 403, 1.0, 1e-6);
            };
            const double e0 = run(stored, false), e1 = run(derived, false);
            EXPECT_EQ(0, std::memcmp(&e0, &e1, sizeof e0));
            expect_same_bits(stored, derived);
            if (!pgs_lanes_available()) continue;
            const double e2 = run(stored_lanes, true), e3 = run(derived_lanes, true);
            EXPECT_EQ(0, std::memcmp(&e2, &e3, sizeof e2));
            expect_same_bits(stored_lanes, derived_lanes);
            expect_same_bits(stored, derived_lanes);
            if (!lanes8_available()) continue;
            auto run8 = [&](Case& c) {
                return bgs ? bgs_range_lanes(c.batch, c.bodies, 1, 403, 1.0, 1e-6, FrictionLaw::CCP, 8)
                           : pgs_range_lanes(c.batch, c.bodies, 1, 403, 1.0, 1e-6, 8);
            };
            const double e4 = run8(stored_lanes8), e5 = run8(derived_lanes8);
            EXPECT_EQ(0, std::memcmp(&e4, &e5, sizeof e4));
            EXPECT_EQ(0, std::memcmp(&e0, &e4, sizeof e0));
            expect_same_bits(stored_lanes8, derived_lanes8);
            expect_same_bits(stored, derived_lanes8);
        }
    }
}

TEST(PgsKernels, PjPassesLanesMatchScalarBitForBit) {
    if (!pgs_lanes_available()) GTEST_SKIP() << "this CPU has no AVX";
    for (bool anisotropic : {false, true}) {
        Case scalar = random_case(403, anisotropic, 11 + unsigned(anisotropic));
        Case lanes = scalar, lanes8 = scalar;
        const bool eight = lanes8_available();
        std::vector<double> step(403);
        for (std::size_t i = 0; i < 403; ++i) step[i] = 0.5 * scalar.batch.eta[i] / double(1 + i % 3);
        std::vector<Vec3> next_s(403, Vec3::Zero()), next_l(403, Vec3::Zero()), next_8(403, Vec3::Zero());
        for (int it = 0; it < 4; ++it) {
            for (auto [lo, hi] : {std::pair<std::size_t, std::size_t>{1, 203}, {203, 403}}) {
                const double rs = pj_contacts_range(scalar.batch, scalar.bodies, step.data(),
                                                    next_s.data(), lo, hi, false);
                const double rl = pj_contacts_range_lanes(lanes.batch, lanes.bodies, step.data(),
                                                          next_l.data(), lo, hi);
                EXPECT_EQ(0, std::memcmp(&rs, &rl, sizeof rs));
                EXPECT_GT(rs, 0.0);
                if (!eight) continue;
                const double r8 = pj_contacts_range_lanes(lanes8.batch, lanes8.bodies, step.data(),
                                                          next_8.data(), lo, hi, 8);
                EXPECT_EQ(0, std::memcmp(&rs, &r8, sizeof rs));
            }
            EXPECT_EQ(0, std::memcmp(next_s.data(), next_l.data(), 403 * sizeof(Vec3)));
            if (eight) { EXPECT_EQ(0, std::memcmp(next_s.data(), next_8.data(), 403 * sizeof(Vec3))); }
            for (auto [lo, hi] : {std::pair<std::size_t, std::size_t>{1, 203}, {203, 403}}) {
                pj_apply_range(scalar.batch, next_s.data(), scalar.bodies, lo, hi, false);
                pj_apply_range_lanes(lanes.batch, next_l.data(), lanes.bodies, lo, hi);
                if (eight) pj_apply_range_lanes(lanes8.batch, next_8.data(), lanes8.bodies, lo, hi, 8);
            }
            expect_same_bits(scalar, lanes);
            if (eight) expect_same_bits(scalar, lanes8);
        }
    }
}

// The residual pass (solvers/solver.cpp, ccp_residual): the largest §6 term over a range,
// read only, on a range whose contacts share bodies (the residual runs over every colour at
// once): lanes and scalar the same bits, and both the brute-force maximum of the term.
TEST(PgsKernels, ResidualLanesMatchScalarBitForBit) {
    for (bool anisotropic : {false, true}) {
        Case c = random_case(403, anisotropic, 21 + unsigned(anisotropic));
        for (std::size_t i = 0; i < 403; i += 5) c.batch.b[i] = c.batch.b[(i * 7 + 2) % 403];  // shared bodies
        for (auto [lo, hi] : {std::pair<std::size_t, std::size_t>{1, 203}, {203, 403}, {0, 403}, {7, 7}}) {
            double brute = 0.0;
            for (std::size_t i = lo; i < hi; ++i) {
                const Vec3 d = contact_velocity(c.batch, c.bodies, i);
                const Vec3& g = c.batch.gamma[i];
                const Vec3 diff = g - project_friction_cone(g - c.batch.eta[i] * d, c.batch.mu[i]);
                brute = std::max(brute, diff.norm() / c.batch.eta[i]);
            }
            const double rs = residual_range(c.batch, c.bodies, lo, hi, false);
            EXPECT_NEAR(rs, brute, 1e-15 * brute) << lo << " " << hi;
            if (hi > lo) { EXPECT_GT(rs, 0.0); }
            else EXPECT_EQ(rs, 0.0);
            if (!pgs_lanes_available()) continue;
            const double rl = residual_range_lanes(c.batch, c.bodies, lo, hi);
            EXPECT_EQ(0, std::memcmp(&rs, &rl, sizeof rs)) << lo << " " << hi;
            const double rd = residual_range(c.batch, c.bodies, lo, hi, true);  // the dispatch's
            EXPECT_EQ(0, std::memcmp(&rs, &rd, sizeof rs)) << lo << " " << hi;
            if (!lanes8_available()) continue;
            const double r8 = residual_range_lanes(c.batch, c.bodies, lo, hi, FrictionLaw::CCP, 8);
            EXPECT_EQ(0, std::memcmp(&rs, &r8, sizeof rs)) << lo << " " << hi;
        }
    }
}

TEST(PgsKernels, DispatchMatchesScalarOnIndependentRange) {
    Case scalar = random_case(64, false, 3);
    Case chosen = scalar;
    pgs_range_scalar(scalar.batch, scalar.bodies, 0, 64, 1.0, 0.0);
    pgs_range(chosen.batch, chosen.bodies, 0, 64, 1.0, 0.0, true);
    expect_same_bits(scalar, chosen);
}

}  // namespace
}  // namespace talus
