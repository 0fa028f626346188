// A closed box of settling spheres: from one step to the next the total energy (kinetic +
// potential) may grow by no more than what the penetration correction and the solver's
// inexactness inject, Σ γ_n max(0, −b) + |γᵀd|, plus 1e-12 of the energy (round-off).
#include <gtest/gtest.h>

#include <cmath>

#include "solvers/contact_ops.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

TEST(EnergyBox, SettlingSpheresGainNoMoreThanCorrectionAndSolverError) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-5, 100);
    const uint32_t m = add_material(w, 2500.0, 0.4);
    add_box(w, Vec3(0, 0, 0), Vec3(0.1, 0.1, 0.3), m);
    fill_lattice(w, Vec3(0, 0, 0), Vec3(0.1, 0.1, 0.2), 0.008, m);
    ASSERT_GT(w.bodies.size(), 150u);

    double e_prev = w.kinetic_energy() + w.potential_energy();
    double max_contacts = 0;
    for (int k = 0; k < 400; ++k) {
        ASSERT_TRUE(w.step().ok);
        const AssembledBatch& c = w.batch();
        const SolverBodies sb(w.bodies);
        double allowance = 0.0;
        for (std::size_t i = 0; i < c.size(); ++i) {
            const Vec3 d = contact_velocity(c, sb, i);
            allowance += c.gamma[i][0] * std::max(0.0, -c.stab[i]);
            allowance += std::abs(c.gamma[i].dot(d));
        }
        const double e = w.kinetic_energy() + w.potential_energy();
        EXPECT_LE(e - e_prev, allowance + 1e-12 * std::abs(e)) << "step " << k + 1;
        e_prev = e;
        max_contacts = std::max<double>(max_contacts, double(c.size()));
    }
    EXPECT_GT(max_contacts, double(w.bodies.size())) << "the spheres should form a packed bed";
}

}  // namespace
}  // namespace talus
