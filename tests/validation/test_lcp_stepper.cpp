// The Stewart–Trinkle polyhedral-cone LCP time-stepper solved by Lemke ([solver] type =
// "lemke", solvers/lcp_stepper.cpp), against closed forms and seed 000 §4:
//  - a resting sphere gets exactly m g h per step and stays at rest;
//  - a sphere sliding along a friction direction decelerates at μ g, one sliding between
//    two directions at the polygon's rate, with no lift-off (normal velocity 0);
//  - at the rebuilt ν⁺ of a pile every contact satisfies the LCP (checks the coupling
//    blocks W_ij: ν⁺ is rebuilt from γ independently of the LCP matrix);
//  - with many directions it agrees with PGS (CCP) on a loaded pile;
//  - Stewart–Trinkle's four balls converge at first order in h (their Table I);
//  - bit-identical on 1 and 2 threads; refuses a too-large problem with a message; scene keys.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "io/scene.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/solver.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

World lemke_world(double h, int k, double mu, double r, const Vec3& x, const Vec3& v) {
    World w = make_world(h, Vec3(0, 0, -9.81));
    w.solver.type = SolverType::Lemke;
    w.solver.friction_directions = k;
    const uint32_t m = add_material(w, 2500.0, mu);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, x, r, m, v);
    return w;
}

// At rest on a plane: the LCP gives c_n = m g h exactly (W_nn = 1/m, ν*_n = −g h, b = 0),
// to 1e-9 relative, and the sphere stays where it is (|v| ≤ 1e-12 m/s, z = r to 1e-12 m).
TEST(LcpStepper, RestingSphereCarriesMghPerStepAtRest) {
    const double r = 0.05, h = 1e-3, g = 9.81;
    World w = lemke_world(h, 8, 0.5, r, Vec3(0, 0, r), Vec3::Zero());
    const double mgh = w.bodies.mass(0) * g * h;
    for (int k = 0; k < 50; ++k) {
        ASSERT_TRUE(w.step().ok);
        ASSERT_TRUE(w.diagnostics().converged);
        ASSERT_EQ(w.batch().size(), 1u);
        EXPECT_NEAR(w.batch().gamma[0][0], mgh, 1e-9 * mgh) << "step " << k;
        EXPECT_LE(w.batch().gamma[0].tail<2>().norm(), 1e-12 * mgh);
        EXPECT_LE(w.bodies.velocity[0].norm(), 1e-12);
        EXPECT_NEAR(w.bodies.position[0].z(), r, 1e-12);
        EXPECT_LE(w.diagnostics().residual, 1e-12);
    }
}

// Friction of the polyhedral cone (seed 000 eq. 12): P = μ c_n conv{d_l}, d_l at θ_l = 2πl/k.
// By the complementarity (seed 000 eq. 16) the friction maximises the dissipation −F·v̂ over
// P: its value is P's support function, μ c_n max_l cos∠(d_l, −v̂) = μ c_n cos α', with α'
// ∈ [0, π/k] the angle between −v̂ and the nearest d_l. So the speed along v̂ falls at
//     a(α') = μ g cos α'.
// At α' = 0 F is the vertex μ c_n d_l (exactly opposite v̂); at α' = π/k (v̂ on a bisector)
// the whole edge is optimal and the implicit step picks its midpoint (a tilt would turn ν⁺
// toward the other vertex, contradicting eq. 16), so F is opposite v̂ with magnitude
// μ c_n cos(π/k), the polygon's radial extent cos(π/k)/cos(π/k − α') at α' = π/k. In
// between, F stays on the nearest vertex (not opposite v̂) and v(t) = v0 + μ g t d_l.
// A sphere's slip velocity v + ω × r changes along F too (rate (1/m + r²/J) F), so it keeps
// the same regime while it slides.
void check_sliding(int k, double alpha, double t_end, bool bisector) {
    const double r = 0.05, h = 1e-3, g = 9.81, mu = 0.3, v0 = 2.0;
    const Vec3 vhat(std::cos(alpha), std::sin(alpha), 0.0);
    World w = lemke_world(h, k, mu, r, Vec3(0, 0, r), v0 * vhat);
    // nearest friction direction opposite the slip, d_l = −(cos θ_l, sin θ_l, 0)
    const double step = 2.0 * kPi / k;
    const double theta = std::round(alpha / step) * step;  // the d_l nearest to +v̂ is −F
    const Vec3 d_near(-std::cos(theta), -std::sin(theta), 0.0);
    const double alpha_p = std::abs(alpha - theta);
    const double rate = mu * g * std::cos(bisector ? kPi / k : alpha_p);
    for (int s = 1; s * h <= t_end; ++s) {
        ASSERT_TRUE(w.step().ok);
        ASSERT_TRUE(w.diagnostics().converged);
        ASSERT_EQ(contact_frame(w.batch(), 0).u, Vec3::UnitX());  // d_0 = u = +x for n = +z
        const double t = s * h;
        const Vec3& v = w.bodies.velocity[0];
        EXPECT_NEAR(v.dot(vhat), v0 - rate * t, 1e-9) << "step " << s;
        if (bisector) {
            EXPECT_LE(std::abs(v.dot(Vec3(-vhat.y(), vhat.x(), 0.0))), 1e-9) << "step " << s;
        } else {
            EXPECT_LE((v - (v0 * vhat + mu * g * t * d_near)).norm(), 1e-9) << "step " << s;
        }
        EXPECT_LE(std::abs(v.z()), 1e-12) << "no lift-off, step " << s;
        EXPECT_NEAR(w.bodies.position[0].z(), r, 1e-12);
    }
}

TEST(LcpStepper, SlidingAlongAFrictionDirectionDeceleratesAtMuG) {
    // along d_0 and along d_3 of k = 8 (slips reach 0 at 2 v0 / (7 μ g) ≈ 0.136 s)
    check_sliding(8, 0.0, 0.12, false);
    check_sliding(8, 3.0 * 2.0 * kPi / 8.0, 0.12, false);
    // then it rolls at 5/7 v0 (angular momentum about the contact point is conserved)
    const double r = 0.05, v0 = 2.0;
    World w = lemke_world(1e-3, 8, 0.3, r, Vec3(0, 0, r), Vec3(v0, 0, 0));
    run_steps(w, 300);
    EXPECT_NEAR(w.bodies.velocity[0].x(), 5.0 / 7.0 * v0, 1e-9);
    EXPECT_NEAR(w.bodies.angular_velocity[0].y() * r, 5.0 / 7.0 * v0, 1e-9);
    EXPECT_LE(std::abs(w.bodies.velocity[0].z()), 1e-12);
}

TEST(LcpStepper, SlidingBetweenTwoDirectionsDeceleratesAtThePolygonRate) {
    for (int k : {4, 8}) {
        SCOPED_TRACE(k);
        check_sliding(k, kPi / k, 0.12, true);  // bisector of d_0, d_1: μ g cos(π/k)
        // a quarter of the way from d_0 to d_1: F at the vertex, rate μ g cos(π/(2k)) along v̂,
        // while the slip stays within π/k of −d (about 0.1 s for k = 8; 0.05 s checked)
        check_sliding(k, 0.5 * kPi / k, 0.05, false);
    }
}

/// A box of 8 spheres (2 × 2 × 2, r = 5 mm) settled for 0.3 s with PGS.
World small_pile(const Vec3& gravity = Vec3(0, 0, -9.81), int steps = 150) {
    World w = make_world(2e-3, gravity, 1e-7, 5000);
    const double mu = 0.5;
    const uint32_t m = add_material(w, 2500.0, mu);
    add_box(w, Vec3(0, 0, 0), Vec3(0.025, 0.025, 0.2), m);
    fill_lattice(w, Vec3(0, 0, 0), Vec3(0.025, 0.025, 0.03), 0.005, m);
    run_steps(w, steps);
    return w;
}

// At ν⁺ rebuilt from γ (SolveScope::finish, independent of the LCP matrix), every contact of
// a pile being shaken satisfies the LCP: d_n ≥ −ε, γ_n ≥ 0, γ_n d_n ≈ 0, ‖γ_t‖ ≤ μ γ_n, and a
// sliding contact's friction reaches the polygon's support function μ γ_n max_l(−d_l·t̂)
// (ε = 1e-9 m/s, impulses relative 1e-9): the coupling blocks W_ij are right.
TEST(LcpStepper, ComplementarityHoldsAtTheRebuiltVelocities) {
    World w = small_pile();
    w.solver.type = SolverType::Lemke;
    const int k = 8;
    w.solver.friction_directions = k;
    // shake: every grain gets a different horizontal and vertical kick
    for (std::size_t i = 0; i < w.bodies.size(); ++i)
        w.bodies.velocity[i] += Vec3(0.3 * std::sin(1.7 * i), 0.3 * std::cos(2.3 * i), -0.1);
    std::size_t sliding = 0, contacts = 0;
    for (int s = 0; s < 10; ++s) {
        ASSERT_TRUE(w.step().ok);
        ASSERT_TRUE(w.diagnostics().converged) << "step " << s;
        const AssembledBatch& c = w.batch();
        // ν⁺ as stored (integration moved positions, not velocities; the levers are the step's)
        const SolverBodies sb(w.bodies);
        double gmax = 0.0;
        for (std::size_t i = 0; i < c.size(); ++i) gmax = std::max(gmax, c.gamma[i][0]);
        for (std::size_t i = 0; i < c.size(); ++i) {
            const Vec3 d = contact_velocity(c, sb, i);
            const Vec3& g = c.gamma[i];
            const double eps = 1e-9, geps = 1e-9 * gmax;
            EXPECT_GE(d[0], -eps);
            EXPECT_GE(g[0], -geps);
            EXPECT_LE(std::min(g[0] / c.eta[i], d[0]), eps);
            const double gt = g.tail<2>().norm();
            EXPECT_LE(gt, c.mu[i] * g[0] + geps);
            const double vt = d.tail<2>().norm();
            ++contacts;
            if (vt > 1e-6 && g[0] > 1e-6 * gmax) {
                ++sliding;
                const double tx = d[1] / vt, ty = d[2] / vt;
                double support = 0.0;
                for (int l = 0; l < k; ++l) {
                    const double th = 2.0 * kPi * l / k;
                    support = std::max(support, -(std::cos(th) * tx + std::sin(th) * ty));
                }
                EXPECT_NEAR(-(g[1] * tx + g[2] * ty), c.mu[i] * g[0] * support, geps)
                    << "contact " << i << " step " << s;
            }
        }
    }
    EXPECT_GT(sliding, 5u) << "of " << contacts;  // the test must see sliding contacts
}

/// The batch restricted to touching contacts (Φ/h ≤ 1e-6 m/s), as one colour swept serially.
AssembledBatch touching_only(const AssembledBatch& c) {
    AssembledBatch o;
    for (std::size_t i = 0; i < c.size(); ++i) {
        if (c.stab[i] > 1e-6) continue;  // Φ/h > 1 µm/s: open
        o.a.push_back(c.a[i]);
        o.b.push_back(c.b[i]);
        o.normal.push_back(c.normal[i]);
        o.tangent.push_back(contact_frame(c, i).u);
        o.lever_a.push_back(c.lever_a[i]);
        o.lever_b.push_back(c.lever_b[i]);
        o.rhs.push_back(c.rhs[i]);
        o.stab.push_back(c.stab[i]);
        o.mu.push_back(c.mu[i]);
        o.eta.push_back(c.eta[i]);
        o.gamma.push_back(c.gamma[i]);
    }
    o.colour_start = {0u, uint32_t(o.size())};
    o.overflow_colour = true;
    return o;
}

// With k directions the polygon is inscribed in the circle: friction bounds differ by a
// factor in [cos(π/k), 1], i.e. by at most (1 − cos(π/k)) μ γ_n per contact (0.5 % at k = 32).
// On a loaded pile at rest (gravity tilted by 0.3 g, within μ = 0.5 so nothing has to slide)
// both the CCP and the LCP stick everywhere unless a contact's demand falls in that gap, and
// a contact moved by it changes velocities by at most (1 − cos(π/k)) μ γ_n W. With W ≤ 3.5/m
// (sphere) the bound is 3.5 (1 − cos(π/k)) μ max γ_n / m_min; PGS is converged to 1e-6 m/s
// (× 10, as in the solver suite). Measured: 3.5e-6 m/s at k = 16 and 32 (PGS's tolerance:
// no contact of this pile needs friction within the gap).
TEST(LcpStepper, AgreesWithPgsOnALoadedPileForManyDirections) {
    World w = small_pile(Vec3(0.3 * 9.81, 0.0, -9.81), 500);
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {  // from rest
        w.bodies.velocity[i].setZero();
        w.bodies.angular_velocity[i].setZero();
    }
    for (int k : {16, 32}) {
        World::Problem base = w.next_problem();
        // Touching contacts only (Φ/h ≤ 1e-6 m/s): an open one within the envelope is active in the
        // CCP as soon as Φ/h < μ‖v_t‖ (its relaxation), not in the LCP. On this pile a sphere
        // rolling in the groove of two sticking contacts (a motion those contacts cannot
        // stop) is braked by a wall 2.5e-8 m away in the CCP and not in the LCP.
        base.batch = touching_only(base.batch);
        ASSERT_GT(base.batch.size(), 15u);
        SolverSettings pgs;
        pgs.type = SolverType::PGS;
        pgs.tolerance = 1e-6;  // tighter stalls: a grain in a corner has no unique γ
        pgs.max_iterations = 50000;
        pgs.warm_start = false;
        SolverSettings lcp;
        lcp.type = SolverType::Lemke;
        lcp.friction_directions = k;
        World::Problem a = base, b = base;
        for (auto& g : a.batch.gamma) g.setZero();
        SolverWorkspace wa, wb;
        const SolverResult ra = solve_ccp(a.batch, a.bodies, pgs, wa);
        const SolverResult rb = solve_ccp(b.batch, b.bodies, lcp, wb);
        ASSERT_TRUE(ra.converged) << ra.residual;
        ASSERT_TRUE(rb.converged) << rb.residual;
        double gmax = 0.0, m_min = 1e300, dv = 0.0;
        for (std::size_t i = 0; i < b.batch.size(); ++i) gmax = std::max(gmax, b.batch.gamma[i][0]);
        for (std::size_t i = 0; i < a.bodies.size(); ++i) {
            m_min = std::min(m_min, a.bodies.mass(i));
            dv = std::max(dv, (a.bodies.velocity[i] - b.bodies.velocity[i]).norm());
            dv = std::max(dv, 0.005 * (a.bodies.angular_velocity[i] - b.bodies.angular_velocity[i]).norm());
        }
        const double bound = 3.5 * (1.0 - std::cos(kPi / k)) * 0.5 * gmax / m_min + 10.0 * pgs.tolerance;
        double vmax = 0.0;
        for (std::size_t i = 0; i < a.bodies.size(); ++i) vmax = std::max(vmax, a.bodies.velocity[i].norm());
        std::printf("[ lemke k=%d ] %zu contacts, %d pivots; max |v_lcp - v_pgs| = %.3g m/s "
                    "(bound %.3g m/s), max |v_pgs| %.3g m/s\n",
                    k, b.batch.size(), rb.iterations, dv, bound, vmax);
        EXPECT_LE(dv, bound) << "k = " << k;
    }
}

// --- Stewart & Trinkle 1996 (seed 000) §4, the four balls --------------------------------
// Data as read from the seed (its extraction garbles the exponents; reconstructed):
// four balls of m = 1 kg, r = 0.1 m, J = 2/5 m r², μ = 0.4 for every contact, a table z = 0;
// initial positions [0, 0, 1], [1, 0, 0.1], [1.2 + 1e-5, 0, 0.1], [1.4 + 2e-5, 0, 0.1]
// ("1.2 10-5" and "1.4+2x 10-5" read as gaps of 1e-5 m between the resting balls, which the
// text calls "a small gap of about [1e-5] m"), initial velocity [1.5, 0.1, 0] for the
// first ball, zero for the others; g = 9.81 m/s² (not stated). The paper gives no end time:
// we use T = 1 s, which covers the landing (t ≈ 0.43) and the collision (t ≈ 0.59 in the
// paper; ≈ 0.57 here) and the separation after it. k = 8 directions, as in the paper.
// Errors against the h = 0.00125 run, as in Table I: velocity error ∫‖v_h − v‖∞ dt over the
// 24 velocity components (linear and world angular), v_h piecewise constant over its steps;
// position error max over the coarse steps of ‖x_h − x‖∞ over the 12 centre coordinates.
struct Trajectory {
    double h;
    std::vector<std::vector<double>> x, v;  // per step (after it): 12 and 24 components
};

Trajectory four_balls(double h, double t_end) {
    World w = make_world(h, Vec3(0, 0, -9.81));
    w.solver.type = SolverType::Lemke;
    w.solver.friction_directions = 8;
    const double r = 0.1;
    const uint32_t m = add_material(w, density_for_mass(1.0, r), 0.4);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    add_sphere(w, Vec3(0, 0, 1), r, m, Vec3(1.5, 0.1, 0));
    add_sphere(w, Vec3(1, 0, 0.1), r, m);
    add_sphere(w, Vec3(1.2 + 1e-5, 0, 0.1), r, m);
    add_sphere(w, Vec3(1.4 + 2e-5, 0, 0.1), r, m);
    w.simulation.renumber_interval = 0;  // keep body order = ball order
    Trajectory tr{h, {}, {}};
    const int steps = int(std::lround(t_end / h));
    for (int s = 0; s < steps; ++s) {
        const StepStatus st = w.step();
        EXPECT_TRUE(st.ok) << st.message;
        EXPECT_TRUE(w.diagnostics().converged) << "h " << h << " step " << s;
        std::vector<double> x, v;
        for (std::size_t b = 0; b < 4; ++b) {
            const Vec3 om = w.bodies.orientation[b] * w.bodies.angular_velocity[b];
            for (int c = 0; c < 3; ++c) {
                x.push_back(w.bodies.position[b][c]);
                v.push_back(w.bodies.velocity[b][c]);
            }
            for (int c = 0; c < 3; ++c) v.push_back(om[c]);
        }
        tr.x.push_back(x);
        tr.v.push_back(v);
    }
    return tr;
}

double inf_diff(const std::vector<double>& a, const std::vector<double>& b) {
    double d = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::abs(a[i] - b[i]));
    return d;
}

TEST(LcpStepper, StewartTrinkleFourBallsConvergeAtFirstOrder) {
    const double t_end = 1.0, h_ref = 0.00125;
    const Trajectory ref = four_balls(h_ref, t_end);
    const std::vector<double> hs = {0.02, 0.01, 0.005, 0.0025};
    std::vector<double> ev, ex;
    const std::filesystem::path dir = std::filesystem::path(TALUS_BINARY_DIR) / "validation";
    std::filesystem::create_directories(dir);
    std::ofstream traj(dir / "stewart_trinkle_four_balls_trajectories.csv");
    traj << "h,t,ball,x,y,z,vx,vy,vz\n";
    auto dump = [&](const Trajectory& tr) {
        const int every = int(std::lround(0.01 / tr.h));
        for (std::size_t s = every - 1; s < tr.x.size(); s += every)
            for (int b = 0; b < 4; ++b)
                traj << tr.h << ',' << (s + 1) * tr.h << ',' << b + 1 << ',' << tr.x[s][3 * b] << ','
                     << tr.x[s][3 * b + 1] << ',' << tr.x[s][3 * b + 2] << ',' << tr.v[s][6 * b]
                     << ',' << tr.v[s][6 * b + 1] << ',' << tr.v[s][6 * b + 2] << '\n';
    };
    std::vector<double> variation;
    auto total_variation = [](const Trajectory& tr) {
        double tv = 0.0;
        for (std::size_t s = 1; s < tr.v.size(); ++s) tv += inf_diff(tr.v[s], tr.v[s - 1]);
        return tv;
    };
    for (double h : hs) {
        const Trajectory tr = four_balls(h, t_end);
        const std::size_t R = std::size_t(std::lround(h / h_ref));
        double e_v = 0.0, e_x = 0.0;
        for (std::size_t j = 0; j < ref.v.size(); ++j) e_v += h_ref * inf_diff(tr.v[j / R], ref.v[j]);
        for (std::size_t s = 0; s < tr.x.size(); ++s)
            e_x = std::max(e_x, inf_diff(tr.x[s], ref.x[(s + 1) * R - 1]));
        ev.push_back(e_v);
        ex.push_back(e_x);
        variation.push_back(total_variation(tr));
        dump(tr);
    }
    dump(ref);
    variation.push_back(total_variation(ref));
    std::ofstream table(dir / "stewart_trinkle_four_balls_table.csv");
    table << "h,velocity_error,position_error,velocity_variation\n";
    std::printf("[ four balls ] h        velocity error  ratio   position error  ratio   variation\n");
    for (std::size_t i = 0; i < hs.size(); ++i) {
        const double rv = i ? ev[i - 1] / ev[i] : 0.0, rx = i ? ex[i - 1] / ex[i] : 0.0;
        std::printf("[ four balls ] %-8g %-15.4g %-7.3g %-15.4g %-7.3g %.4f\n", hs[i], ev[i], rv,
                    ex[i], rx, variation[i]);
        table << hs[i] << ',' << ev[i] << ',' << ex[i] << ',' << variation[i] << '\n';
    }
    std::printf("[ four balls ] %-8g (reference)%50.4f\n", h_ref, variation.back());
    table << h_ref << ",,," << variation.back() << '\n';
    // first order: halving h (0.01 → 0.005 → 0.0025) divides the errors by 1.4–2.8
    for (std::size_t i = 2; i < hs.size(); ++i) {
        EXPECT_GT(ev[i - 1] / ev[i], 1.4) << "h " << hs[i];
        EXPECT_LT(ev[i - 1] / ev[i], 2.8) << "h " << hs[i];
        EXPECT_GT(ex[i - 1] / ex[i], 1.4) << "h " << hs[i];
        EXPECT_LT(ex[i - 1] / ex[i], 2.8) << "h " << hs[i];
    }
}

// --- determinism, size limit, scene ------------------------------------------------------

std::vector<double> state_after(int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    World w = make_world(2e-3, Vec3(0, 0, -9.81));
    w.solver.type = SolverType::Lemke;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(0, 0, 0), Vec3(0.02, 0.02, 0.2), m);
    fill_lattice(w, Vec3(0, 0, 0), Vec3(0.02, 0.02, 0.03), 0.004, m);
    run_steps(w, 40);
    return state_vector(w);
}

TEST(LcpStepper, BitIdenticalOnOneAndTwoThreads) {
    const auto one = state_after(1), two = state_after(2);
    ASSERT_EQ(one.size(), two.size());
    EXPECT_GT(one.back(), 10.0) << "contacts in the last step";
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(double)), 0);
}

// 400 spheres on a floor: 400 contacts × 10 unknowns > kLcpMaxUnknowns. The step fails with
// a message naming the limit and the remedy, and leaves the state as it was.
TEST(LcpStepper, RefusesAProblemAboveTheSizeLimit) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    w.solver.type = SolverType::Lemke;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
    const double r = 0.005;
    for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 20; ++j) add_sphere(w, Vec3(3 * r * i, 3 * r * j, r), r, m);
    const StepStatus s = w.step();
    ASSERT_FALSE(s.ok);
    EXPECT_NE(s.message.find("at most 3000 LCP unknowns"), std::string::npos) << s.message;
    EXPECT_NE(s.message.find("400 contacts"), std::string::npos) << s.message;
    EXPECT_EQ(w.step_count, 0u);
    EXPECT_EQ(w.bodies.velocity[0], Vec3::Zero());
    EXPECT_EQ(w.bodies.position[0], Vec3(0, 0, r));
}

TEST(LcpStepper, SceneSelectsLemkeAndItsDirections) {
    const std::string text = R"(
[solver]
type = "lemke"
friction_directions = 16

[[material]]
name = "glass"
density = 2500
friction = 0.5

[[body]]
shape = "sphere"
radius = 0.1
material = "glass"
position = [0, 0, 1]
)";
    const Scene s = parse_scene(text, "mem/scene.toml", {});
    EXPECT_EQ(s.world.solver.type, SolverType::Lemke);
    EXPECT_EQ(s.world.solver.friction_directions, 16);
    EXPECT_STREQ(solver_name(s.world.solver.type), "lemke");
    const Scene d = parse_scene("[solver]\ntype = \"lemke\"\n" + text.substr(text.find("[[material")),
                                "mem/scene.toml", {});
    EXPECT_EQ(d.world.solver.friction_directions, 8);  // default
    for (const char* bad : {"3", "5", "66", "0"}) {
        const std::string t = "[solver]\nfriction_directions = " + std::string(bad) + "\n" +
                              text.substr(text.find("[[material"));
        EXPECT_THROW(parse_scene(t, "mem/scene.toml", {}), SceneError) << bad;
    }
}

}  // namespace
}  // namespace talus
