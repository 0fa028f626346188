// Anitescu, Miller & Hart's ellipse (seed 002 §4): an elliptic body with axes 8 and 4,
// dropped with its centre at height 8 and angular velocity 3 onto a table, μ = 0.3,
// h = 0.05. Their Figure 2: without stabilisation (γ = 0) the constraint infeasibility
// I(q) = max penetration (their eq. 3.15, no joints here) grows steadily; with γ = 0.2
// and γ = 1 it stays bounded and drops exponentially after each event, faster for larger
// γ. Talus's γ is the stabilisation γ_s (docs/design.md §4); the recovery-speed cap is lifted so
// that γ alone sets the correction. The 2-D ellipse is an ellipsoid with semi-axes
// (4, 2, 2) spinning about its y axis (the motion stays in the x–z plane). Run with the
// LCP stepper (the paper's kind of formulation) and with PGS on the CCP. Writes
// <build>/validation/anitescu_ellipse.csv for tools/validation/plot_anitescu_ellipse.py
// (docs/validation/anitescu-ellipse.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

#include "io/scene.hpp"
#include "tests/support/paper_scenes.hpp"

namespace talus {
namespace {

const std::string kEllipseScene = std::string(R"(
[simulation]
dt = 0.05
duration = 10
[solver]
max_iterations = 1000
tolerance = 1e-8
recovery_speed = 1000
)") + testing::kAnitescuEllipseBodies;

struct Series {
    std::vector<double> t, infeasibility, x, z, angle;
};

/// Penetration of the ellipsoid into the plane z = 0: the lowest point of the surface is
/// ‖A Rᵀ e_z‖ below the centre (A = diag of the semi-axes) [m].
double penetration(const World& w) {
    const Mat3 R = w.bodies.orientation[0].toRotationMatrix();
    const Vec3 axes(4.0, 2.0, 2.0);
    const double depth = axes.cwiseProduct(R.row(2).transpose()).norm();
    return std::max(0.0, depth - w.bodies.position[0].z());
}

Series run_ellipse(SolverType type, double gamma) {
    Scene s = parse_scene(kEllipseScene, "mem/ellipse.toml");
    World& w = s.world;
    w.solver.type = type;
    w.solver.friction = FrictionLaw::CCP;  // seed 002's model (the scenes' default is Coulomb)
    w.solver.stabilization = gamma;
    w.solver.split_push_out = false;  // seed 002's velocity-level term is what is measured
    Series out;
    const int steps = int(std::lround(w.simulation.duration / w.simulation.dt));
    for (int k = 0; k <= steps; ++k) {
        if (k > 0) {
            const double before = penetration(w);
            const StepStatus st = w.step();
            EXPECT_TRUE(st.ok) << st.message;
            if (!st.ok) break;
            // The diagnostics' contact infeasibility is the same measure, taken by the narrow
            // phase at the start of the step.
            EXPECT_NEAR(w.diagnostics().contact_infeasibility, before, 1e-9) << "step " << k;
        }
        const Vec3 axis = w.bodies.orientation[0] * Vec3::UnitX();
        out.t.push_back(w.time);
        out.infeasibility.push_back(penetration(w));
        out.x.push_back(w.bodies.position[0].x());
        out.z.push_back(w.bodies.position[0].z());
        out.angle.push_back(std::atan2(axis.z(), axis.x()));
    }
    return out;
}

double max_of(const std::vector<double>& v, std::size_t lo, std::size_t hi) {
    return *std::max_element(v.begin() + std::ptrdiff_t(lo), v.begin() + std::ptrdiff_t(hi));
}

TEST(AnitescuEllipse, InfeasibilityGrowsWithoutStabilisationAndStaysBoundedWithIt) {
    const std::filesystem::path dir = std::filesystem::path(TALUS_BINARY_DIR) / "validation";
    std::filesystem::create_directories(dir);
    std::ofstream csv(dir / "anitescu_ellipse.csv");
    csv << "solver,gamma,t,infeasibility,x,z,angle\n";
    for (SolverType type : {SolverType::Lemke, SolverType::PGS}) {
        struct Stats {
            double first, last, early, mean, decay;
        };
        Stats st[3];
        const double gammas[3] = {0.0, 0.2, 1.0};
        for (int g = 0; g < 3; ++g) {
            const Series r = run_ellipse(type, gammas[g]);
            for (std::size_t k = 0; k < r.t.size(); ++k)
                csv << solver_name(type) << ',' << gammas[g] << ',' << r.t[k] << ','
                    << r.infeasibility[k] << ',' << r.x[k] << ',' << r.z[k] << ',' << r.angle[k] << '\n';
            const std::vector<double>& I = r.infeasibility;
            const std::size_t n = I.size();
            // Per-step decay while the infeasibility falls from a noticeable level.
            std::vector<double> ratios;
            for (std::size_t k = 0; k + 1 < n; ++k)
                if (I[k] > 1e-3 && I[k + 1] < I[k]) ratios.push_back(I[k + 1] / I[k]);
            std::sort(ratios.begin(), ratios.end());
            st[g] = {max_of(I, 0, n / 3), max_of(I, 2 * n / 3, n), max_of(I, 0, 2 * n / 3),
                     std::accumulate(I.begin(), I.end(), 0.0) / double(n),
                     ratios.empty() ? -1.0 : ratios[ratios.size() / 2]};
            std::printf("[ ellipse  ] %-5s γ = %.1f: max I first third %.4f, last third %.4f; "
                        "mean %.4f; median decay per step %.3f; final %.4f\n",
                        solver_name(type), gammas[g], st[g].first, st[g].last, st[g].mean,
                        st[g].decay, I.back());
        }
        // γ = 0: grows steadily, to far above the stabilised runs.
        EXPECT_GT(st[0].last, 1.8 * st[0].first) << solver_name(type);
        EXPECT_GT(st[0].last, 5.0 * st[1].last) << solver_name(type);
        // γ = 0.2 and 1: bounded, no growth over the run.
        for (int g = 1; g < 3; ++g) EXPECT_LE(st[g].last, st[g].early) << solver_name(type);
        // After an event the infeasibility drops geometrically, about (1 − γ) per step.
        EXPECT_GT(st[1].decay, 0.75) << solver_name(type);
        EXPECT_LT(st[1].decay, 0.9) << solver_name(type);
        // Larger γ stabilises faster: far less infeasibility on average.
        EXPECT_LT(st[2].mean, 0.5 * st[1].mean) << solver_name(type);
    }
}

}  // namespace
}  // namespace talus
