// Emitters and outlets (engine/flow/flow.hpp), alone and inside World::step: the emitted
// amount follows rate × time to within one body (or one body's mass), a blocked emitter
// catches up once there is room, new bodies never overlap anything at birth, an outlet
// removes exactly the bodies in its region and keeps the others in order, and stable ids
// are never reused.
#include <gtest/gtest.h>
#include <oneapi/tbb/global_control.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "engine/flow/flow.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

/// Every pair of spheres and every sphere against the plane walls, brute force: the
/// deepest overlap [m] (≤ 0: none).
double deepest_overlap(const BodyStore& b, const std::vector<Wall>& walls) {
    double worst = -1.0;
    for (std::size_t i = 0; i < b.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j)
            worst = std::max(worst, b.radius[i] + b.radius[j] - (b.position[i] - b.position[j]).norm());
        for (const Wall& w : walls)
            if (w.type == WallType::Plane)
                worst = std::max(worst, b.radius[i] - w.normal.dot(b.position[i] - w.point));
    }
    return worst;
}

TEST(Emitter, CountRateGivesRateTimesTimeWithinOneBody) {
    MaterialTable mats;
    mats.add(Material{"glass", 2500.0, 0.5});
    Emitter e;
    e.min = Vec3(0, 0, 0);
    e.max = Vec3(1, 1, 1);
    e.rate = 333.0;  // 1/rate is not a multiple of h: the target is fractional most steps
    e.size = SizeDistribution::uniform(0.004, 0.006);
    e.start = 0.05;
    e.stop = 0.55;
    e.seed = 3;
    BodyStore bodies;
    uint64_t next_id = 0;
    const double h = 1e-3;
    for (int k = 1; k <= 700; ++k) {
        const double t = k * h;
        emit(e, bodies, {}, mats, t, next_id);
        const double expected = e.rate * (std::min(t, e.stop) - std::min(t, e.start));
        ASSERT_LE(double(e.emitted.count), expected + 1e-9) << "t = " << t;
        ASSERT_GT(double(e.emitted.count), expected - 1.0) << "t = " << t;
    }
    EXPECT_EQ(e.emitted.count, 166u);  // ⌊333 × 0.5⌋ over [start, stop)
    EXPECT_EQ(bodies.size(), 166u);
    EXPECT_EQ(next_id, 166u);
    EXPECT_LE(deepest_overlap(bodies, {}), 0.0);
}

// With periodic axes an emitter whose box spans the period keeps its bodies apart through
// the faces as well (minimum image, brute force); without them it would not (checked).
TEST(Emitter, PeriodicAxesKeepNewBodiesApartThroughTheFaces) {
    MaterialTable mats;
    mats.add(Material{"glass", 2500.0, 0.5});
    PeriodicBox periodic;
    periodic.on = {true, true, false};
    periodic.lo = Vec3(0, 0, 0);
    periodic.hi = Vec3(0.04, 0.04, 0);
    const auto deepest_through_faces = [&](const BodyStore& b) {
        double worst = -1.0;
        for (std::size_t i = 0; i < b.size(); ++i)
            for (std::size_t j = 0; j < i; ++j) {
                const Vec3 s = periodic.image_shift(b.position[j], b.position[i]);
                worst = std::max(worst, b.radius[i] + b.radius[j] - (b.position[i] + s - b.position[j]).norm());
            }
        return worst;
    };
    const auto run = [&](const PeriodicBox& p) {
        Emitter e;
        e.min = Vec3(0, 0, 0.1);
        e.max = Vec3(0.04, 0.04, 0.104);  // a thin layer over the whole period
        e.rate = 20000.0;
        e.size = SizeDistribution::uniform(0.001, 0.002);
        e.seed = 7;
        BodyStore bodies;
        uint64_t next_id = 0;
        emit(e, bodies, {}, mats, 0.01, next_id, p);
        return bodies;
    };
    const BodyStore open = run(PeriodicBox{});
    ASSERT_GT(open.size(), 50u);
    EXPECT_GT(deepest_through_faces(open), 0.0);  // the faces unseen: overlaps through them
    const BodyStore b = run(periodic);
    ASSERT_GT(b.size(), 50u);
    EXPECT_LE(deepest_through_faces(b), 0.0);
}

TEST(Emitter, MassRateMatchesWithinOneBodysMass) {
    MaterialTable mats;
    mats.add(Material{"sand", 2650.0, 0.5});
    Emitter e;
    e.min = Vec3(0, 0, 0);
    e.max = Vec3(0.5, 0.5, 0.5);
    e.rate = 0.8;  // kg/s
    e.per_mass = true;
    e.size = SizeDistribution::lognormal(std::log(0.004), 0.3, 0.002, 0.008);
    e.seed = 9;
    const double m_max = 2650.0 * 4.0 / 3.0 * kPi * std::pow(0.008, 3);
    BodyStore bodies;
    uint64_t next_id = 0;
    double total = 0;
    for (int k = 1; k <= 500; ++k) {
        const double t = k * 2e-3;
        total += emit(e, bodies, {}, mats, t, next_id).mass;
        ASSERT_LE(e.emitted.mass, e.rate * t * (1 + 1e-12));
        ASSERT_GT(e.emitted.mass, e.rate * t - m_max);
    }
    EXPECT_NEAR(total, e.emitted.mass, 1e-12);
    double sum = 0;
    for (std::size_t i = 0; i < bodies.size(); ++i) sum += bodies.mass(i);
    EXPECT_NEAR(sum, e.emitted.mass, 1e-12);
    EXPECT_GT(bodies.size(), 500u);  // 0.8 kg over grains of ~1 g: hundreds
    std::printf("[ flow ] mass rate 0.8 kg/s for 1 s: %zu bodies, %.6f kg (largest body %.6f kg)\n",
                bodies.size(), e.emitted.mass, m_max);
    EXPECT_LE(deepest_overlap(bodies, {}), 0.0);
}

TEST(Emitter, BlockedEmitterDefersAndCatchesUp) {
    MaterialTable mats;
    mats.add(Material{"glass", 2500.0, 0.5});
    Emitter e;
    e.min = Vec3(0, 0, 0);
    e.max = Vec3(0.2, 0.2, 0.2);
    e.rate = 100.0;
    e.size = SizeDistribution::fixed(0.005);
    e.seed = 1;
    BodyStore bodies;
    bodies.add_sphere(1000, Vec3(0.1, 0.1, 0.1), 0.5, 2500.0, 0);  // covers the whole box
    uint64_t next_id = 1001;
    for (int k = 1; k <= 100; ++k) emit(e, bodies, {}, mats, k * 1e-3, next_id);
    EXPECT_EQ(e.emitted.count, 0u);
    bodies.erase_marked({1});
    emit(e, bodies, {}, mats, 0.2, next_id);
    EXPECT_EQ(e.emitted.count, 20u);  // the whole deficit of ⌊100 × 0.2⌋
    EXPECT_EQ(bodies.id.front(), 1001u);
    EXPECT_EQ(bodies.id.back(), 1020u);
    EXPECT_LE(deepest_overlap(bodies, {}), 0.0);
}

TEST(Emitter, NewBodiesOverlapNeitherBedNorWalls) {
    // A dense bed already in the box and a plane cutting through it: 300 bodies owed at
    // once, each placed clear of the bed, of each other and of the wall.
    World w = make_world(1e-3, Vec3::Zero());
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_plane(w, Vec3(0, 0, 0.02), Vec3(0, 0, 1), m);
    fill_lattice(w, Vec3(0, 0, 0.025), Vec3(0.1, 0.1, 0.1), 0.004, m, 0.3);
    const std::size_t bed = w.bodies.size();
    ASSERT_GT(bed, 300u);
    Emitter e;
    e.min = Vec3(0, 0, 0);
    e.max = Vec3(0.1, 0.1, 0.1);
    e.rate = 300.0;
    e.size = SizeDistribution::uniform(0.002, 0.004);
    e.seed = 4;
    uint64_t next_id = bed;
    emit(e, w.bodies, w.walls, w.materials, 1.0, next_id);
    EXPECT_GT(e.emitted.count, 100u);
    std::printf("[ flow ] into a bed of %zu: %llu of 300 owed bodies placed, deepest overlap %.3g m\n",
                bed, (unsigned long long)e.emitted.count, deepest_overlap(w.bodies, w.walls));
    EXPECT_LE(deepest_overlap(w.bodies, w.walls), 0.0);
    for (std::size_t i = bed; i < w.bodies.size(); ++i) EXPECT_GE(w.bodies.id[i], bed);
}

TEST(Outlet, RemovesExactlyTheBodiesInsideAndKeepsOrder) {
    BodyStore b;
    for (int i = 0; i < 10; ++i) b.add_sphere(100 + i, Vec3(0.1 * i, 0, 0), 0.01, 1000.0, 0);
    std::vector<Outlet> outlets(2);
    outlets[0].type = OutletType::Box;
    outlets[0].min = Vec3(0.15, -1, -1);
    outlets[0].max = Vec3(0.35, 1, 1);  // bodies 2 and 3
    outlets[1].type = OutletType::HalfSpace;
    outlets[1].point = Vec3(0.75, 0, 0);
    outlets[1].normal = Vec3(-1, 0, 0);  // behind: x > 0.75, bodies 8 and 9
    EXPECT_EQ(drain(outlets, b), 4u);
    EXPECT_EQ(b.id, (std::vector<uint64_t>{100, 101, 104, 105, 106, 107}));
    EXPECT_EQ(outlets[0].removed.count, 2u);
    EXPECT_EQ(outlets[1].removed.count, 2u);
    const double m = 1000.0 * 4.0 / 3.0 * kPi * 1e-6;
    EXPECT_NEAR(outlets[0].removed.mass, 2 * m, 1e-15);
    for (std::size_t i = 0; i < b.size(); ++i)
        EXPECT_EQ(b.position[i].x(), 0.1 * double(b.id[i] - 100));
}

TEST(Flow, RemovingAJointedBodyStopsTheRunNamingTheJoint) {
    // A pendulum bob hangs from the world inside an outlet: the outlet takes it after the
    // first step, and the next step must fail naming the joint instead of running on with
    // a joint whose body is gone.
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_sphere(w, Vec3(0, 0, 1), 0.01, m);
    add_sphere(w, Vec3(1, 0, 1), 0.01, m);
    w.joints.push_back(make_joint(JointType::Spherical, w.bodies, 0, -1, Vec3(0, 0, 1.1)));
    Outlet o;
    o.min = Vec3(-0.1, -0.1, 0.9);
    o.max = Vec3(0.1, 0.1, 1.05);
    w.outlets.push_back(o);
    ASSERT_TRUE(w.step().ok);
    EXPECT_EQ(w.bodies.id, (std::vector<uint64_t>{1}));
    const StepStatus s = w.step();
    EXPECT_FALSE(s.ok);
    EXPECT_NE(s.message.find("joint 0 (spherical) refers to body 0, which does not exist"),
              std::string::npos)
        << s.message;
}

/// Spheres rain from an emitter through free fall into a box outlet.
struct RainRun {
    std::vector<uint64_t> removed_per_step;
    uint64_t emitted = 0, removed = 0, distinct_ids = 0, initial = 0;
    bool ids_reused = false;
    std::vector<double> final_state;
};

World rain_world() {
    World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-6, 50);
    const uint32_t m = add_material(w, 2500.0, 0.3);
    // A few resting bodies on a floor far from the stream, with ids 0..3.
    add_plane(w, Vec3(0, 0, -0.5), Vec3(0, 0, 1), m);
    for (int i = 0; i < 4; ++i) add_sphere(w, Vec3(1.0 + 0.05 * i, 0, -0.49), 0.01, m);
    Emitter e;
    e.min = Vec3(0, 0, 0.9);
    e.max = Vec3(0.2, 0.2, 1.0);
    e.rate = 200.0;
    e.size = SizeDistribution::uniform(0.004, 0.006);
    e.velocity = Vec3(0, 0, -1.0);
    e.material = m;
    e.seed = 21;
    w.emitters.push_back(e);
    Outlet o;
    o.type = OutletType::Box;
    o.min = Vec3(-0.1, -0.1, -0.2);
    o.max = Vec3(0.3, 0.3, 0.0);
    w.outlets.push_back(o);
    return w;
}

RainRun run_rain(int threads, int steps) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, std::size_t(threads));
    World w = rain_world();
    RainRun run;
    run.initial = w.bodies.size();
    std::map<uint64_t, int> state;  // id → 1 present, 2 gone
    for (uint64_t id : w.bodies.id) state[id] = 1;
    uint64_t last_removed = 0;
    for (int k = 0; k < steps; ++k) {
        if (!w.step().ok) throw std::runtime_error("step failed");
        std::set<uint64_t> now(w.bodies.id.begin(), w.bodies.id.end());
        if (now.size() != w.bodies.size()) run.ids_reused = true;  // duplicate ids
        for (auto& [id, s] : state)
            if (s == 1 && !now.count(id)) s = 2;
        for (uint64_t id : now) {
            auto [it, fresh] = state.emplace(id, 1);
            if (!fresh && it->second == 2) run.ids_reused = true;  // came back
        }
        run.removed_per_step.push_back(w.outlets[0].removed.count - last_removed);
        last_removed = w.outlets[0].removed.count;
    }
    run.emitted = w.emitters[0].emitted.count;
    run.removed = w.outlets[0].removed.count;
    run.distinct_ids = state.size();
    for (std::size_t i = 0; i < w.bodies.size(); ++i) {
        run.final_state.push_back(double(w.bodies.id[i]));
        for (int a = 0; a < 3; ++a) {
            run.final_state.push_back(w.bodies.position[i][a]);
            run.final_state.push_back(w.bodies.velocity[i][a]);
        }
    }
    return run;
}

TEST(Flow, OutletRemovesAtTheEmittersRateInSteadyState) {
    // Fall from z ∈ [0.9, 1] at 1 m/s down to z = 0 takes 0.33–0.37 s; from t = 0.5 s on,
    // bodies leave as fast as they come. Over [0.5, 1.0] s the outlet must remove
    // 200/s × 0.5 s = 100 bodies; tolerance ±5 (5 %): the spread of fall times (0.04 s,
    // 8 bodies' spacing) lets a few bodies cross either end of the window early or late.
    const RainRun run = run_rain(1, 1000);
    uint64_t window = 0;
    for (int k = 500; k < 1000; ++k) window += run.removed_per_step[std::size_t(k)];
    std::printf("[ flow ] removed over [0.5, 1.0] s: %llu bodies = %.1f /s (emitter 200 /s); "
                "emitted %llu, removed %llu in all\n",
                (unsigned long long)window, double(window) / 0.5, (unsigned long long)run.emitted,
                (unsigned long long)run.removed);
    EXPECT_NEAR(double(window) / 0.5, 200.0, 10.0);
    EXPECT_EQ(run.emitted, 200u);  // ⌊200 × 1.0⌋
    EXPECT_GT(run.removed, 120u);
    // No id reused: each id seen is distinct, none came back after leaving, and the ids
    // seen are exactly the initial bodies plus every emitted one.
    EXPECT_FALSE(run.ids_reused);
    EXPECT_EQ(run.distinct_ids, run.initial + run.emitted);
}

TEST(Flow, EmittersAndOutletsAreDeterministicAcrossThreadCounts) {
    const RainRun one = run_rain(1, 400);
    const RainRun two = run_rain(2, 400);
    ASSERT_EQ(one.final_state.size(), two.final_state.size());
    EXPECT_EQ(std::memcmp(one.final_state.data(), two.final_state.data(),
                          one.final_state.size() * sizeof(double)),
              0);
    EXPECT_EQ(one.removed_per_step, two.removed_per_step);
}

}  // namespace
}  // namespace talus
