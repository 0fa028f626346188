// The per-body sums of contact impulses a solve starts and ends with (solvers/body_contacts.hpp):
// the scatter colour by colour must give the gather's sums to the bit, since the solves
// choose between them by size alone.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <cstring>
#include <random>

#include "solvers/body_contacts.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

// A bed of grains (r = 3 mm) dropped from a jittered lattice into a box, 0.16 s after the
// drop: grains on grains and on the walls, with its next step's coloured problem.
const World::Problem& bed_problem() {
    static const World::Problem problem = [] {
        World w = dropped_bed(Vec3(0.05, 0.05, 0.3), Vec3(0.05, 0.05, 0.06), 0.003, 80);
        return w.next_problem();
    }();
    return problem;
}

// Impulses of every sign and size on every contact, so that no sum is trivially exact.
std::vector<Vec3> random_impulses(std::size_t n) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1e-3, 1e-3);
    std::vector<Vec3> g(n);
    for (Vec3& x : g) x = Vec3(u(rng), u(rng), u(rng));
    return g;
}

struct Sums {
    std::vector<Vec3> f, t;
};

Sums gathered(const AssembledBatch& c, const BodyContacts& bc, const std::vector<Vec3>& gamma) {
    Sums s{std::vector<Vec3>(bc.body_count()), std::vector<Vec3>(bc.body_count())};
    for_each_body_impulse(c, bc, gamma, [&](std::size_t b, const Vec3& f, const Vec3& t) {
        s.f[b] = f;
        s.t[b] = t;
    });
    return s;
}

void expect_same_bits(const Sums& want, const SolverBodies& sb) {
    ASSERT_EQ(want.f.size(), sb.body.size());
    std::size_t differ = 0;
    for (std::size_t b = 0; b < sb.body.size(); ++b)
        differ += std::memcmp(want.f[b].data(), sb.body[b].v.data(), sizeof(Vec3)) != 0 ||
                  std::memcmp(want.t[b].data(), sb.body[b].w.data(), sizeof(Vec3)) != 0;
    EXPECT_EQ(differ, 0u) << "of " << sb.body.size() << " bodies";
}

TEST(BodyContacts, ScatterSumsAsTheGather) {
    const World::Problem& p = bed_problem();
    const AssembledBatch& c = p.batch;
    ASSERT_GT(c.size(), 1000u);
    ASSERT_GE(c.colour_start.size(), 4u);  // several colours, some of them parallel
    BodyContacts bc;
    bc.build(c, p.bodies.size());
    const std::vector<Vec3> gamma = random_impulses(c.size());
    const Sums want = gathered(c, bc, gamma);
    for (int threads : {1, 2, 3}) {
        SCOPED_TRACE(threads);
        tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
        SolverBodies sb(p.bodies);
        ASSERT_TRUE(scatters(c, bc, sb));
        scatter_body_impulses(c, gamma, sb);
        expect_same_bits(want, sb);
        SolverBodies chosen(p.bodies);  // what a solve runs at this size: the scatter
        sum_body_impulses(c, bc, gamma, chosen);
        expect_same_bits(want, chosen);
    }
}

// The overflow colour, whose contacts may share bodies, is summed serially in contact order.
TEST(BodyContacts, OverflowColourSumsAsTheGather) {
    const World::Problem& p = bed_problem();
    AssembledBatch c = p.batch;
    c.colour_start = {0, uint32_t(c.size())};
    c.overflow_colour = true;
    BodyContacts bc;
    bc.build(c, p.bodies.size());
    const std::vector<Vec3> gamma = random_impulses(c.size());
    SolverBodies sb(p.bodies);
    scatter_body_impulses(c, gamma, sb);
    expect_same_bits(gathered(c, bc, gamma), sb);
}

// Velocities from the sums: ν* + M⁻¹ D γ for every body (a spot check against the gather's
// callback form, which finish_solve and the warm start used before).
TEST(BodyContacts, SolverVelocitiesAreFreePlusImpulse) {
    const World::Problem& p = bed_problem();
    const AssembledBatch& c = p.batch;
    BodyContacts bc;
    bc.build(c, p.bodies.size());
    const std::vector<Vec3> gamma = random_impulses(c.size());
    SolverBodies sb(p.bodies), ref(p.bodies);
    solver_velocities(c, bc, gamma, sb);
    for_each_body_impulse(c, bc, gamma, [&](std::size_t b, const Vec3& f, const Vec3& t) {
        ref.body[b].v = ref.v_free[b] + ref.body[b].inv_mass * f;
        ref.body[b].w = ref.w_free[b] + ref.inv_inertia_times(b, t);
    });
    std::size_t differ = 0;
    for (std::size_t b = 0; b < sb.body.size(); ++b)
        differ += std::memcmp(&sb.body[b], &ref.body[b], sizeof(SolverBody)) != 0;
    EXPECT_EQ(differ, 0u);
}

}  // namespace
}  // namespace talus
