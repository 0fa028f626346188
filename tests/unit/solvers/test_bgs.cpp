// Block Gauss–Seidel ("bgs", solvers/bgs.cpp): each contact's step in the metric of a
// diagonal majorant P ⪰ W_ii, the projection onto the friction cone in P's norm. The shared
// suite (test_solvers.cpp: tolerance, agreement, threads, warm start, m g h) runs it too;
// here what is its own: the metric, the exact normal solve, and the CCP of FCLIB problems.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <Eigen/Eigenvalues>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>

#include "io/fclib.hpp"
#include "io/scene.hpp"
#include "solvers/contact_operator.hpp"
#include "solvers/delassus.hpp"
#include "solvers/solver.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

// P = diag(p_n, p_t, p_t) majorises W (P − W positive semi-definite) for any symmetric
// positive definite 3×3 block, and is W itself for a sphere's diagonal block.
TEST(Bgs, MetricMajorisesTheBlockAndIsASpheresOwn) {
    const BlockMetric sphere = block_metric(Vec3(2.0, 7.0, 7.0).asDiagonal());
    EXPECT_DOUBLE_EQ(sphere.n, 0.5);
    EXPECT_DOUBLE_EQ(sphere.t, 1.0 / 7.0);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int k = 0; k < 1000; ++k) {
        Mat3 J;
        for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) J(r, c) = u(rng);
        const Mat3 W = J * J.transpose() + 1e-3 * Mat3::Identity();
        const BlockMetric m = block_metric(W);
        const Mat3 P = Vec3(1.0 / m.n, 1.0 / m.t, 1.0 / m.t).asDiagonal();
        const Eigen::SelfAdjointEigenSolver<Mat3> eig(P - W);
        EXPECT_GE(eig.eigenvalues().minCoeff(), -1e-12 * W.norm()) << W;
    }
}

// A sphere resting on a plane: one sweep of bgs gives the normal impulse m g h exactly (its
// block is diagonal and the step is its exact solve), where one PGS sweep gives 3/8 of it
// (η = 3/trace(W) = 3 m/8 against 1/W_nn = m).
TEST(Bgs, OneSweepSolvesARestingSpheresNormalExactly) {
    for (SolverType t : {SolverType::BGS, SolverType::PGS}) {
        const double r = 0.01, g = 9.81, h = 1e-3;
        World w = make_world(h, Vec3(0, 0, -g), 1e-12, 1);
        w.solver.type = t;
        w.solver.warm_start = false;
        const uint32_t m = add_material(w, 2500.0, 0.5);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0, 0, r), r, m);
        ASSERT_TRUE(w.step().ok);
        ASSERT_EQ(w.batch().size(), 1u);
        const double mgh = w.bodies.mass(0) * g * h;
        const double expected = t == SolverType::BGS ? mgh : 0.375 * mgh;
        EXPECT_NEAR(w.batch().gamma[0][0], expected, 1e-12 * mgh) << solver_name(t);
    }
}

// On every FCLIB problem of the suite, under the CCP, bgs reaches a relative accuracy of
// 1e-6 (FCLIB's natural map, the law's own measure) from r = 0, as PGS does.
TEST(Bgs, SolvesTheCcpOfEveryFclibProblem) {
    const std::filesystem::path dir = std::filesystem::path(TALUS_SOURCE_DIR) / "tests" / "data" / "fclib";
    for (const char* file : {"Box_Stacks-i0122-82-5.hdf5", "Capsules-i125-1213.hdf5", "CubeH8.hdf5",
                             "LMGC_100_PR_PerioBox-i00361-60-03000.hdf5",
                             "LMGC_GlobalFrictionContactProblem00046.hdf5",
                             "Spheres-i099-356-679.hdf5", "spheres-in-a-box-98-i10000-256-10.hdf5"}) {
        SCOPED_TRACE(file);
        const FclibProblem fp = read_fclib(dir / file);
        SolverSettings s;
        s.type = SolverType::BGS;
        s.friction = FrictionLaw::CCP;
        s.tolerance = 1e-6;
        s.max_iterations = 200000;
        Eigen::VectorXd r;
        const SolverResult res = solve_delassus(fp.problem, s, r);
        ASSERT_TRUE(res.refused.empty()) << res.refused;
        EXPECT_TRUE(res.converged) << res.iterations << " iterations, " << res.residual;
        EXPECT_LE(delassus_accuracy(fp.problem, r, FrictionLaw::CCP).relative_error, 1e-6);
    }
}

// Cluster sweeps ([solver] cluster_sweeps, solvers/cluster_sweeps.cpp): a bed of 896 grains
// (r = 3 mm) dropped from a jittered lattice into a box, 0.3 s after the drop (bgs); its next
// step's problem, warm (2,566 contacts), solved to a tolerance.
struct SettledBed {
    World world;
    World::Problem problem;
};

const SettledBed& settled_bed() {
    static const SettledBed bed = [] {
        World w = dropped_bed(Vec3(0.06, 0.06, 0.3), Vec3(0.06, 0.06, 0.1), 0.003, 150);
        World::Problem p = w.next_problem();
        return SettledBed{std::move(w), std::move(p)};
    }();
    return bed;
}

struct ClusterSolve {
    SolverResult result;
    std::vector<Vec3> gamma;
};

ClusterSolve solve_bed(std::optional<bool> clusters, double tol, int threads = 0, double heavier = 1.0) {
    std::unique_ptr<tbb::global_control> limit;
    if (threads > 0)
        limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                      std::size_t(threads));
    const World::Problem& p = settled_bed().problem;
    AssembledBatch batch = p.batch;
    BodyStore bodies = p.bodies;
    // `heavier`: every tenth grain that many times heavier (mass and inertia), the others as built
    if (heavier != 1.0)
        for (std::size_t i = 0; i < bodies.size(); i += 10)
            if (bodies.inv_mass[i] > 0.0)
                bodies.set_mass_properties(i, heavier * bodies.mass(i), heavier * bodies.inv_inertia[i].cwiseInverse());
    SolverWorkspace work;
    SolverSettings s = settled_bed().world.solver;
    s.type = SolverType::BGS;
    s.cluster_sweeps = clusters;
    s.tolerance = tol;
    s.relaxed_tolerance = 0.0;
    s.max_iterations = 20000;
    ClusterSolve out{solve_ccp(batch, bodies, s, work), batch.gamma};
    return out;
}

// On that bed, whose slow mode is the whole bed's (thousands of sweeps to 1e-4 m/s),
// the cluster sweeps settle the last few contacts above 1e-3 m/s in less than half the work
// of the whole sweeps alone (their contact steps counted as sweeps' worth), and at 1e-4 m/s,
// where what is left is not local, they cost at most 5 % more: the scan waits after a miss,
// and a cluster sweep costs at most one whole sweep.
TEST(Bgs, ClusterSweepsSettleTheLastFewContactsAndCostLittleOtherwise) {
    const double n = double(settled_bed().problem.batch.size());
    for (double tol : {1e-3, 1e-4}) {
        SCOPED_TRACE(tol);
        const ClusterSolve plain = solve_bed(false, tol), clusters = solve_bed(true, tol);
        ASSERT_TRUE(plain.result.converged) << plain.result.iterations;
        ASSERT_TRUE(clusters.result.converged) << clusters.result.iterations;
        EXPECT_LE(clusters.result.residual, tol);
        EXPECT_GT(clusters.result.clusters, 0);
        EXPECT_EQ(plain.result.clusters, 0);
        const double work = clusters.result.iterations + double(clusters.result.cluster_updates) / n;
        EXPECT_LT(work, (tol == 1e-3 ? 0.5 : 1.05) * plain.result.iterations)
            << clusters.result.iterations << " sweeps and " << clusters.result.clusters << " cluster sweeps ("
            << clusters.result.cluster_updates << " contact steps) against " << plain.result.iterations
            << " sweeps";
    }
}

// Where masses are graded, the bed the cluster sweeps run on by default (every tenth grain 27
// times heavier: three times the diameter at one density), the heavy grains' slow mode makes
// the whole sweeps take 1,942 to reach 1e-3 m/s; with the cluster sweeps (their local sweeps
// accelerated as NNCG) the solve takes less than half that work (measured: 855 sweeps and
// the contact steps of 21 more).
TEST(Bgs, ClusterSweepsHalveTheWorkWhereMassesAreGraded) {
    const double n = double(settled_bed().problem.batch.size());
    const ClusterSolve plain = solve_bed(false, 1e-3, 0, 27.0), clusters = solve_bed(true, 1e-3, 0, 27.0);
    ASSERT_TRUE(plain.result.converged) << plain.result.iterations;
    ASSERT_TRUE(clusters.result.converged) << clusters.result.iterations;
    EXPECT_LE(clusters.result.residual, 1e-3);
    EXPECT_GT(clusters.result.clusters, 0);
    const double work = clusters.result.iterations + double(clusters.result.cluster_updates) / n;
    EXPECT_LT(work, 0.5 * plain.result.iterations)
        << clusters.result.iterations << " sweeps and " << clusters.result.cluster_updates
        << " contact steps against " << plain.result.iterations << " sweeps";
}

// Unset (the default), the cluster sweeps run where masses are graded: some grains more
// than SolverSettings::kClusterMassRatio heavier than grains they touch. The equal bed, and one whose
// grains differ by a little less, solve to the same bits as with them off; one whose grains
// differ by a little more, to the same bits as with them on, and they run there.
TEST(Bgs, ClusterSweepsByDefaultOnlyWhereMassesAreGraded) {
    auto same = [](const ClusterSolve& x, const ClusterSolve& y) {
        return x.result.iterations == y.result.iterations && x.gamma.size() == y.gamma.size() &&
               std::memcmp(x.gamma.data(), y.gamma.data(), x.gamma.size() * sizeof(Vec3)) == 0;
    };
    for (double heavier : {1.0, 0.95 * SolverSettings::kClusterMassRatio, 1.05 * SolverSettings::kClusterMassRatio}) {
        SCOPED_TRACE(heavier);
        const ClusterSolve unset = solve_bed(std::nullopt, 1e-4, 0, heavier);
        const ClusterSolve off = solve_bed(false, 1e-4, 0, heavier), on = solve_bed(true, 1e-4, 0, heavier);
        ASSERT_TRUE(unset.result.converged) << unset.result.iterations;
        ASSERT_GT(on.result.clusters, 0);  // (so that "same as on" is not "same as off")
        if (heavier < SolverSettings::kClusterMassRatio) {
            EXPECT_TRUE(same(unset, off));
            EXPECT_EQ(unset.result.clusters, 0);
        } else {
            EXPECT_TRUE(same(unset, on));
            EXPECT_GT(unset.result.clusters, 0);
        }
    }
}

// The scan's decision and the cluster do not depend on the threads: the same bits on 1, 2
// and 3 threads.
TEST(Bgs, ClusterSweepsAreBitIdenticalOnOneTwoAndThreeThreads) {
    const ClusterSolve one = solve_bed(true, 1e-4, 1);
    ASSERT_GT(one.result.clusters, 0);
    for (int threads : {2, 3}) {
        const ClusterSolve other = solve_bed(true, 1e-4, threads);
        EXPECT_EQ(other.result.iterations, one.result.iterations) << threads << " threads";
        EXPECT_EQ(other.result.cluster_updates, one.result.cluster_updates) << threads << " threads";
        ASSERT_EQ(other.gamma.size(), one.gamma.size());
        EXPECT_EQ(std::memcmp(other.gamma.data(), one.gamma.data(), one.gamma.size() * sizeof(Vec3)), 0)
            << threads << " threads";
    }
}

// Graded grains at μ = 1 poured into a narrow box (600 grains of 1 and 2 mm, so the cluster
// sweeps run by default): a grain wedged in a corner by the floor and a wall can hold any
// self-stress on the rims of its two cones, and Gauss–Seidel walks along it. The local
// sweeps of such a cluster, 500 a call, grew its impulses until the over-constrained check
// stopped the run (fills 2, 3 and 6 of 1–6, at t = 0.05–0.07 s); a cluster whose impulses
// grow while its excess does not fall is now taken back, and every fill pours, with no
// overlap past 1 % of the small diameter.
TEST(Bgs, ClusterSweepsTakeBackAClusterThatStalls) {
    for (int seed : {2, 3, 6}) {
        SCOPED_TRACE(seed);
        Scene s = parse_scene(R"(
[simulation]
duration = 0.1
gravity = [0.0, 0.0, -9.81]

[[material]]
name = "glass"
density = 2500.0
friction = 1.0
restitution = 0.3

[[wall]]
type = "box"
min = [0.0, 0.0, 0.0]
max = [0.02, 0.02, 0.1]
material = "glass"

[[particles]]
shape = "sphere"
material = "glass"
radius = { distribution = "discrete", values = [0.001, 0.002], weights = [8.0, 1.0] }
random = { min = [0.0021, 0.0021, 0.0021], max = [0.0179, 0.0179, 0.0979], count = 600, seed = )" +
                                  std::to_string(seed) + " }\n",
                              "mem/wedge.toml", {});
        World& w = s.world;
        ASSERT_FALSE(w.solver.cluster_sweeps.has_value());  // the default, on for these grains
        ASSERT_TRUE(w.bodies_graded());
        double deepest = 0.0;
        while (w.time < 0.1) {
            const StepStatus st = w.step(0.1);
            ASSERT_TRUE(st.ok) << "t = " << w.time << ": " << st.message;
            deepest = std::max(deepest, w.diagnostics().contact_infeasibility);
        }
        EXPECT_LE(deepest, 0.01 * 0.002) << "largest overlap against the small diameter";
    }
}

}  // namespace
}  // namespace talus
