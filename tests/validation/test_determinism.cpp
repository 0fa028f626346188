// The same scene on 1, 2 and 3 threads: positions, orientations, velocities and every
// diagnostic except wall time bit-identical (DESIGN §8).
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <cstring>

#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

struct Snapshot {
    std::vector<double> state, diagnostics;
};

Snapshot run_with_threads(int threads) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    World w = make_world(2e-3, Vec3(0, 0, -9.81), 1e-5, 30);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(-0.05, -0.05, 0), Vec3(0.05, 0.05, 0.4), m);
    fill_lattice(w, Vec3(-0.05, -0.05, 0), Vec3(0.05, 0.05, 0.35), 0.004, m);
    Snapshot s;
    for (int k = 0; k < 50; ++k) {
        if (!w.step().ok) throw std::runtime_error("step failed");
        const StepDiagnostics& d = w.diagnostics();
        s.diagnostics.insert(s.diagnostics.end(),
                             {double(d.step), d.time, double(d.contacts), double(d.iterations),
                              d.residual, d.kinetic_energy, d.potential_energy, d.envelope});
    }
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        const auto& q = w.bodies.orientation[i];
        for (double v : {w.bodies.position[i].x(), w.bodies.position[i].y(), w.bodies.position[i].z(),
                         q.w(), q.x(), q.y(), q.z(), w.bodies.velocity[i].x(),
                         w.bodies.velocity[i].y(), w.bodies.velocity[i].z(),
                         w.bodies.angular_velocity[i].x(), w.bodies.angular_velocity[i].y(),
                         w.bodies.angular_velocity[i].z()})
            s.state.push_back(v);
    }
    return s;
}

bool bit_identical(const std::vector<double>& a, const std::vector<double>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

TEST(Determinism, BitIdenticalOnOneTwoAndThreeThreads) {
    const Snapshot one = run_with_threads(1);
    ASSERT_GT(one.state.size(), 13u * 3000u) << "need enough bodies for several parallel chunks";
    for (int t : {2, 3}) {
        const Snapshot other = run_with_threads(t);
        EXPECT_TRUE(bit_identical(one.state, other.state)) << t << " threads: state differs";
        EXPECT_TRUE(bit_identical(one.diagnostics, other.diagnostics))
            << t << " threads: diagnostics differ";
    }
}

}  // namespace
}  // namespace talus
