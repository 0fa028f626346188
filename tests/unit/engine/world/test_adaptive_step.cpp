// The adaptive step (World::choose_step, docs/design.md §4 "The adaptive step"): the step
// a scene without `dt` takes. Its choice against the closed form, its landing on the
// times it is given, a drop and a falling column with nothing but the defaults.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "io/scene.hpp"
#include "tests/support/world_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

// ‖g‖ h² = p* = 1 % of r at rest, ‖v‖ h + ‖g‖ h² = r for the fastest body (the positive
// root), then the bounds [min_dt, max_dt]; s h = c r for bodies in contact (none here).
TEST(AdaptiveStep, ChoiceIsTheDisplacementBound) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    w.simulation.adaptive = true;
    EXPECT_EQ(w.simulation.max_dt, 1e-3);  // the default cap, which these grains would pass
    w.simulation.max_dt = 0.1;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    const double r = 2e-3, c = w.simulation.step_fraction;
    add_sphere(w, Vec3(0, 0, 1), r, m);
    add_sphere(w, Vec3(0, 0, 2), 2 * r, m, Vec3(3.0, 4.0, 0.0));  // 5 m/s, larger
    const auto bound = [&](double v, double g) {
        const double d = World::kFreeFlight * r;
        return (-v + std::sqrt(v * v + 4 * g * d)) / (2 * g);
    };
    // the fastest body and the smallest radius, whichever bodies they are
    EXPECT_NEAR(w.choose_step(World::kNoTimeLimit).h, bound(5.0, 9.81), 1e-15);
    const double rest = std::sqrt(World::kPenetrationTarget * r / 9.81);
    EXPECT_LT(w.choose_step(World::kNoTimeLimit).h, rest);
    w.bodies.velocity[1] = Vec3::Zero();  // at rest: gravity alone, h = √(p* / g)
    EXPECT_NEAR(w.choose_step(World::kNoTimeLimit).h, rest, 1e-15);
    w.simulation.gravity = Vec3::Zero();  // nothing moves: the longest step
    EXPECT_EQ(w.choose_step(World::kNoTimeLimit).h, w.simulation.max_dt);
    w.simulation.max_dt = 1e-3;
    EXPECT_EQ(w.choose_step(World::kNoTimeLimit).h, 1e-3);
    w.simulation.max_dt = 0.1;
    w.bodies.velocity[0] = Vec3(1e8, 0, 0);  // absurdly fast: the shortest
    EXPECT_EQ(w.choose_step(World::kNoTimeLimit).h, w.simulation.min_dt);
    // a static body's radius does not count (a wall-like fixed sphere)
    w.bodies.velocity[0] = Vec3::Zero();
    w.simulation.gravity = Vec3(0, 0, -9.81);
    add_sphere(w, Vec3(0, 0, 3), 1e-5, m);
    w.bodies.inv_mass.back() = 0.0;
    EXPECT_NEAR(w.choose_step(World::kNoTimeLimit).h, rest, 1e-15);
    (void)c;
}

// Two grains sliding across each other in contact: their speed across the normal, not
// their common speed, bounds the step by the contact rule s h ≤ c r. A larger upper grain
// (radius rb) turns about its contact less for the same slide (the gap errs by
// Δx²/(2 (r + rb))), so its speed counts as s √(2 r / (r + rb)): the step is longer.
TEST(AdaptiveStep, ContactSlipBoundsTheStep) {
    const double r = 2e-3;
    for (const double rb : {r, 3 * r}) {
        World w = make_world(1e-3, Vec3::Zero(), 1e-10, 200);
        w.simulation.adaptive = true;
        w.simulation.max_dt = 0.1;  // not the bound under test
        const uint32_t m = add_material(w, 2500.0, 0.0);  // frictionless: they keep sliding
        // in zero gravity, B slides at 0.5 m/s over A, pressing it (−0.01 m/s) onto a floor
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        add_sphere(w, Vec3(0, 0, r), r, m);
        add_sphere(w, Vec3(0, 0, 2 * r + rb), rb, m, Vec3(0.5, 0, -0.01));
        ASSERT_TRUE(w.step().ok);
        std::size_t pair = w.batch().size();
        for (std::size_t i = 0; i < w.batch().size(); ++i)
            if (w.batch().a[i] >= 0 && w.batch().b[i] >= 0) pair = i;
        ASSERT_LT(pair, w.batch().size()) << "A and B touch";
        ASSERT_GT(w.batch().gamma[pair][0], 0.0) << "and the contact carries a load";
        const Vec3 dv = w.bodies.velocity[std::size_t(w.batch().b[pair])] -
                        w.bodies.velocity[std::size_t(w.batch().a[pair])];
        const Vec3& n = w.batch().normal[pair];
        const double slip = (dv - n * n.dot(dv)).norm();
        EXPECT_GT(slip, 0.2);
        const double c = w.simulation.step_fraction, weight = std::sqrt(2 * r / (r + rb));
        EXPECT_NEAR(w.choose_step(World::kNoTimeLimit).h, c * r / (slip * weight), 1e-12) << "rb = " << rb;
        if (rb > r) { EXPECT_GT(w.choose_step(World::kNoTimeLimit).h, 1.4 * c * r / slip); }
    }
    const double slip = 0.5;
    // the same two grains moving together at that speed, not in contact: the free rule,
    // a radius per step
    World apart = make_world(1e-3, Vec3::Zero(), 1e-10, 200);
    apart.simulation.adaptive = true;
    apart.simulation.max_dt = 0.1;
    add_sphere(apart, Vec3(0, 0, 0), r, add_material(apart, 2500.0, 0.0), Vec3(slip, 0, 0));
    EXPECT_NEAR(apart.choose_step(World::kNoTimeLimit).h, r / slip, 1e-12);
}

// A spinning non-sphere: its contacts' points (a capsule's end centres, a clump's sphere
// centres) leave their tangent line by ½ a h² in a step, a = ‖ω‖ ‖ω × p‖, and the step
// holds that to kTurnDrift of the penetration target: h = √(2 kTurnDrift p* / a). A
// capsule spinning about its own axis turns no such point (a = 0): only the free-flight
// bound, ‖ω‖ × its bounding radius being its surface's speed. A sphere spinning as fast
// takes the step it took before.
TEST(AdaptiveStep, SpinningNonSphereBoundsTheStepByItsTurn) {
    const double r = 1e-3, half = 2e-3, omega = 300.0;
    World w = make_world(1e-3, Vec3::Zero());
    w.simulation.adaptive = true;
    w.simulation.max_dt = 0.1;
    const uint32_t mat = add_material(w, 2500.0, 0.5);
    w.bodies.add_capsule(0, Vec3::Zero(), r, half, 2500.0, mat, Vec3::Zero(), Vec3(0, omega, 0));
    const double p_star = World::kPenetrationTarget * r;
    const double a = omega * omega * half;  // the end centres', ω ⊥ the axis
    EXPECT_NEAR(w.bodies.centripetal_acceleration(0), a, 1e-9 * a);
    const double turn = std::sqrt(2.0 * World::kTurnDrift * p_star / a);
    const double free_flight = World::kFreeFlight * r / (omega * (half + r));
    ASSERT_LT(turn, free_flight);
    EXPECT_NEAR(w.choose_step(World::kNoTimeLimit).h, turn, 1e-15);
    // about its own axis (body x): its end centres stay put
    w.bodies.angular_velocity[0] = Vec3(omega, 0, 0);
    EXPECT_EQ(w.bodies.centripetal_acceleration(0), 0.0);
    EXPECT_NEAR(w.choose_step(World::kNoTimeLimit).h, free_flight, 1e-15);
    // at 45° between the two: a = ‖ω‖ ‖ω × p‖ = ω² sin 45° half
    w.bodies.angular_velocity[0] = omega * Vec3(1, 1, 0).normalized();
    EXPECT_NEAR(w.bodies.centripetal_acceleration(0), a * std::sqrt(0.5), 1e-9 * a);
    // a sphere of the capsule's thickness, spinning as fast: its points do not turn
    World s = make_world(1e-3, Vec3::Zero());
    s.simulation.adaptive = true;
    s.simulation.max_dt = 0.1;
    const uint32_t m = add_material(s, 2500.0, 0.5);
    add_sphere(s, Vec3::Zero(), r, m);
    s.bodies.angular_velocity[0] = Vec3(0, omega, 0);
    EXPECT_EQ(s.bodies.centripetal_acceleration(0), 0.0);
    EXPECT_EQ(s.choose_step(World::kNoTimeLimit).h, s.simulation.max_dt);
}

// Penetration control: above the target and growing, the last step times √(p*/p) (at
// least half of it, and at least 1/16 of the motion bound); above it but falling, the last
// step held; below a quarter of it, the motion bound alone.
TEST(AdaptiveStep, PenetrationAboveTheTargetShortensTheStep) {
    const double r = 2e-3;
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    w.simulation.adaptive = true;
    add_sphere(w, Vec3(0, 0, 1), r, add_material(w, 2500.0, 0.5));
    const double motion = w.choose_step(World::kNoTimeLimit).h;  // at rest: max_dt here
    const double target = World::kPenetrationTarget * r;
    const auto with = [&](double chosen, double p, double before) {
        World::CarriedState s = w.carried_state();
        s.control.chosen = chosen;
        s.control.penetration = p;
        s.control.previous_penetration = before;
        w.restore_carried_state(s);
        return w.choose_step(World::kNoTimeLimit).h;
    };
    const double last = 0.5 * motion;
    EXPECT_NEAR(with(last, 1.21 * target, target), last / 1.1, 1e-15);  // growing: cut
    EXPECT_EQ(with(last, 100 * target, target), last * 0.5);             // at most halved
    EXPECT_EQ(with(motion / 20, 100 * target, target), motion / 16);     // floor
    EXPECT_EQ(with(last, 2 * target, 3 * target), last);                 // falling: held
    EXPECT_NEAR(with(last, 0.5 * target, 0.0), last * std::sqrt(2.0), 1e-15);  // regrows
    EXPECT_EQ(with(last, 0.2 * target, 0.0), motion);                    // free
    EXPECT_EQ(with(0.0, 100 * target, 0.0), motion);                     // no step yet
}

// A step that would pass `until` ends on it exactly; near it, the rest is cut into equal
// steps instead of leaving a sliver.
TEST(AdaptiveStep, StepsLandOnTheTimeTheyAreGiven) {
    World w = make_world(1e-3, Vec3(0, 0, -9.81));
    w.simulation.adaptive = true;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_sphere(w, Vec3(0, 0, 1), 2e-3, m);
    const double h = w.choose_step(World::kNoTimeLimit).h;  // about 4.5 ms
    World::StepChoice c = w.choose_step(0.7 * h);
    EXPECT_EQ(c.h, 0.7 * h);
    EXPECT_EQ(c.t1, 0.7 * h);
    c = w.choose_step(2.5 * h);  // three equal steps, not two and a half
    EXPECT_NEAR(c.h, 2.5 * h / 3.0, 1e-18);
    EXPECT_EQ(w.choose_step(100 * h).h, h);
    // stepping to a frame time lands on it bit for bit
    const double frame = 0.01;
    while (w.time < frame) ASSERT_TRUE(w.step(frame).ok);
    EXPECT_EQ(w.time, frame);
    EXPECT_EQ(w.diagnostics().time, frame);
    EXPECT_GT(w.diagnostics().dt, 0.0);
}

/// A scene holding only physics: no dt, no [solver] table.
Scene physics_only(const std::string& bodies) {
    return parse_scene(R"(
[simulation]
duration = 1.0

[[material]]
name = "steel"
density = 7800.0
friction = 0.5

[[wall]]
type = "plane"
material = "steel"
point = [0, 0, 0]
normal = [0, 0, 1]
)" + bodies,
                       "mem/drop.toml", {});
}

// A sphere dropped from 1 m onto a plane with the defaults: it lands at 4.4 m/s without
// sinking more than 1 % of its radius, and comes to rest.
TEST(AdaptiveStep, SphereDroppedFromOneMetreLandsAndRests) {
    const double r = 0.01;
    Scene s = physics_only(R"(
[[body]]
shape = "sphere"
radius = 0.01
material = "steel"
position = [0, 0, 1.0]
)");
    World& w = s.world;
    ASSERT_TRUE(w.simulation.adaptive) << "a scene without dt steps adaptively";
    double deepest = 0.0, fastest_landing = 0.0, h_min = 1.0, h_max = 0.0;
    while (w.time < 1.0) {
        const double v_before = -w.bodies.velocity[0].z();
        ASSERT_TRUE(w.step().ok) << "t = " << w.time;
        deepest = std::max(deepest, r - w.bodies.position[0].z());
        deepest = std::max(deepest, w.diagnostics().contact_infeasibility);
        if (w.bodies.position[0].z() < r + 1e-3) fastest_landing = std::max(fastest_landing, v_before);
        h_min = std::min(h_min, w.diagnostics().dt);
        h_max = std::max(h_max, w.diagnostics().dt);
    }
    EXPECT_GT(fastest_landing, 4.0) << "it fell the whole metre";
    EXPECT_LE(deepest, 0.01 * r);
    EXPECT_LT(w.bodies.velocity[0].norm(), 1e-4) << "at rest on the plane";
    EXPECT_NEAR(w.bodies.position[0].z(), r, 0.01 * r);
    // at most a radius per step at the landing speed; at rest the rest bound or max_dt
    EXPECT_LE(h_min, r / fastest_landing);
    EXPECT_NEAR(h_max, std::min(w.simulation.max_dt, std::sqrt(World::kPenetrationTarget * r / 9.81)),
                1e-12);
}

// A 3 × 3 column of grains of radius r, 10 high, starting 5 mm above the floor and thrown
// down at `speed`; returns a time by which it has hit the floor and rebounded.
double add_falling_column(World& w, double r, uint32_t m, double speed) {
    for (int k = 0; k < 10; ++k)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                add_sphere(w, Vec3(2.2 * r * i, 2.2 * r * j, 5e-3 + r + 2.2 * r * k), r, m, Vec3(0, 0, -speed));
    return 3.0 * (5e-3 + 22 * r) / speed;
}

// A column of grains thrown at the floor at any speed up to max_speed: the step follows
// the speed, so the margins never span more than a fraction of a grain and the run never
// stops with "too many candidate pairs" (exit 3); no grain passes through the floor.
TEST(AdaptiveStep, FallingColumnHitsTheFloorAtAnySpeed) {
    const double r = 1e-3;
    for (double speed : {1.0, 30.0, 300.0, 450.0, 600.0, 900.0}) {
        World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-4, 100);
        w.simulation.adaptive = true;
        ASSERT_LT(speed, w.simulation.max_speed);
        const uint32_t m = add_material(w, 2500.0, 0.5);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        const double until = add_falling_column(w, r, m, speed);
        while (w.time < until) {
            const StepStatus st = w.step();
            ASSERT_TRUE(st.ok) << speed << " m/s, t = " << w.time << ": " << st.message;
        }
        double lowest = 1.0;
        for (std::size_t i = 0; i < w.bodies.size(); ++i)
            lowest = std::min(lowest, w.bodies.position[i].z());
        EXPECT_GT(lowest, 0.5 * r) << speed << " m/s: a grain went through the floor";
        EXPECT_LT(w.bodies.velocity[0].z(), 0.5 * speed) << speed << " m/s: the floor stopped it";
    }
}

// `run(lean_bodies, retaken)` once keeping every buffer and once lean: some step must be
// taken again, as often in both, and both must end with the same bits.
template <class Run>
void expect_retaken_alike_lean(Run&& run, const char* why) {
    int kept_retaken = 0, lean_retaken = 0;
    const std::vector<double> kept = run(std::size_t(-1), kept_retaken), lean = run(0, lean_retaken);
    EXPECT_GT(kept_retaken, 0) << why;
    EXPECT_EQ(lean_retaken, kept_retaken);
    ASSERT_EQ(kept.size(), lean.size());
    EXPECT_EQ(std::memcmp(kept.data(), lean.data(), kept.size() * sizeof(double)), 0);
}

// A step taken again shorter because its solve would leave overlaps deepening past the
// retake limit gives the same bits in a large run, which has given back the step before's
// warm start by then, as in a small one.
TEST(AdaptiveStep, StepsTakenAgainGiveTheSameBitsLean) {
    auto run = [](std::size_t lean_bodies, int& retaken) {
        const double r = 1e-3, speed = 900.0;
        World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-4, 100);
        w.simulation.adaptive = true;
        w.lean_bodies = lean_bodies;
        const uint32_t m = add_material(w, 2500.0, 0.5);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), m);
        const double until = add_falling_column(w, r, m, speed);
        retaken = 0;
        while (w.time < until) {
            EXPECT_TRUE(w.step().ok);
            retaken += int(w.diagnostics().retakes);
        }
        return state_vector(w);
    };
    expect_retaken_alike_lean(run, "the landing should take some step again");
}

// A shaken box under columns of beads (peak acceleration 3 g, so the bed takes off and
// lands every cycle), with only its physics. A landing strikes 16-grain columns at up to
// 0.2 m/s; a solve stopped at its cap leaves them closing at a share of that, which one
// step of 1 ms turns into overlaps of 1.8 % of d. A step whose solve would carry an overlap
// past 1.5 p* is taken again shorter (World::kRetakeDepth): no overlap passes 1 % of d.
TEST(AdaptiveStep, ShakenColumnsStayWithinOnePercentOfTheDiameter) {
    std::string walls;
    const char* sides[][2] = {{"[0, 0, 0]", "[0, 0, 1]"},       {"[0, 0, 0]", "[1, 0, 0]"},
                              {"[0.0192, 0, 0]", "[-1, 0, 0]"}, {"[0, 0, 0]", "[0, 1, 0]"},
                              {"[0, 0.0192, 0]", "[0, -1, 0]"}};
    for (const auto& side : sides)
        walls += std::string("[[wall]]\ntype = \"plane\"\nmaterial = \"glass\"\npoint = ") + side[0] +
                 "\nnormal = " + side[1] +
                 "\nmotion = { type = \"sine\", direction = [0, 0, 1], amplitude = 0.0012, frequency = 25.0 }\n";
    Scene s = parse_scene(R"(
[simulation]
duration = 0.25
gravity = [0, 0, -9.81]

[[material]]
name = "glass"
density = 2500.0
friction = 0.5
restitution = 0.5

[[particles]]
shape = "sphere"
material = "glass"
radius = 0.0015
lattice = { min = [0.0016, 0.0016, 0.0016], max = [0.0176, 0.0176, 0.05], spacing = 0.0032 }
)" + walls,
                          "mem/shaken.toml", {});
    World& w = s.world;
    ASSERT_TRUE(w.simulation.adaptive);
    ASSERT_EQ(w.bodies.size(), 6u * 6u * 16u);
    double deepest = 0.0;
    int unconverged = 0, retaken = 0;
    while (w.time < 0.25) {
        const StepStatus st = w.step(0.25);
        ASSERT_TRUE(st.ok) << "t = " << w.time << ": " << st.message;
        deepest = std::max(deepest, w.diagnostics().contact_infeasibility);
        unconverged += w.diagnostics().converged ? 0 : 1;
        retaken += int(w.diagnostics().retakes);
    }
    EXPECT_GT(unconverged, 10) << "the landings should stop solves at their cap";
    EXPECT_GT(retaken, 0) << "some landing should be taken again, shorter";
    EXPECT_LE(deepest, 0.01 * 0.003) << "1 % of the diameter";
}

// A bed of 1 and 5 mm grains poured with only its physics (benchmarks/polydisperse_1to5.toml):
// its solves need hundreds of sweeps and stop at the cap. At the end of step 47 a small grain
// on the floor, shot along it at 0.45 m/s, closed 355 µm on a neighbour whose pair had been
// set aside 257 µm away: the take-back left it aside because it closed slower than the
// capped solve's residual (0.17 m/s), and the retake asked only the solve's own contacts,
// so the pair overlapped by 97.5 µm (4.9 % of the small diameter). The retake now asks the
// pairs left aside too (World::aside_deepens): within 1 % of d over the first 60 steps.
// The capped solves need `cluster_sweeps = false`: by default this bed's masses are graded
// (125x), so its solves run the cluster sweeps and mostly converge; within 1 % of d as well.
TEST(AdaptiveStep, PairsLeftAsideByACappedSolveAreTakenAgainShorter) {
    for (const bool defaults : {false, true}) {
        SCOPED_TRACE(defaults ? "the defaults" : "cluster_sweeps = false");
        Scene scene = load_scene(TALUS_SOURCE_DIR "/benchmarks/polydisperse_1to5.toml");
        World& w = scene.world;
        ASSERT_TRUE(w.simulation.adaptive);
        ASSERT_FALSE(w.solver.cluster_sweeps.has_value());
        if (!defaults) w.solver.cluster_sweeps = false;
        double deepest = 0.0;
        int unconverged = 0;
        for (int k = 0; k < 60; ++k) {
            const double frame = 0.05 * (std::floor(w.time / 0.05 + 1e-9) + 1.0);  // steps land on frames, as a run's
            const StepStatus st = w.step(frame);
            ASSERT_TRUE(st.ok) << "step " << k + 1 << ": " << st.message;
            deepest = std::max(deepest, w.diagnostics().contact_infeasibility);
            unconverged += w.diagnostics().converged ? 0 : 1;
        }
        if (!defaults) { EXPECT_GT(unconverged, 5) << "the bed's solves should stop at their cap"; }
        EXPECT_LE(deepest, 0.01 * 0.002) << "1 % of the small diameter";
    }
}

// The adaptive step's keys: with a fixed dt they are errors naming the key; min_dt above
// max_dt is one too.
TEST(AdaptiveStep, SceneKeysAreChecked) {
    static const std::string kBody =
        "\n[[material]]\nname = \"m\"\ndensity = 1000.0\nfriction = 0.5\n"
        "[[body]]\nshape = \"sphere\"\nradius = 0.01\nmaterial = \"m\"\nposition = [0, 0, 0]\n";
    const auto error_of = [](const std::string& simulation) -> std::string {
        try {
            parse_scene("[simulation]\n" + simulation +
                            kBody,
                        "mem/keys.toml", {});
        } catch (const SceneError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(error_of("max_dt = 0.002\nmin_dt = 1e-6\nstep_fraction = 0.2"), "");
    const std::string fixed = error_of("dt = 1e-3\nmax_dt = 0.002");
    EXPECT_NE(fixed.find("mem/keys.toml"), std::string::npos) << fixed;
    EXPECT_NE(fixed.find("simulation.max_dt"), std::string::npos) << fixed;
    EXPECT_NE(fixed.find("fixed step"), std::string::npos) << fixed;
    const std::string order = error_of("max_dt = 1e-3\nmin_dt = 1e-2");
    EXPECT_NE(order.find("longer than max_dt"), std::string::npos) << order;
    EXPECT_NE(error_of("step_fraction = 1.5").find("in (0, 1]"), std::string::npos);
    Scene s = parse_scene("[simulation]\nmax_dt = 0.002\n" + kBody, "mem/ok.toml", {});
    EXPECT_TRUE(s.world.simulation.adaptive);
    EXPECT_EQ(s.world.simulation.max_dt, 0.002);
    EXPECT_FALSE(parse_scene("[simulation]\ndt = 0.002\n" + kBody, "mem/ok.toml", {}).world.simulation.adaptive);
}

// A step taken again shorter because its solve stopped short and left bodies beyond
// max_speed gives the same bits in a large run as in a small one: both take the shorter step
// cold (a large run has given back the step before's warm start by then). Beads a thousand
// times denser thrown at 500 m/s onto beads resting on the floor, with the solve capped at 5
// sweeps: the light beads, squeezed, leave a capped solve faster than max_speed (600 m/s).
// Before the fix the small run retook its steps warm: 94 retakes against the large run's 67,
// and other bits.
TEST(AdaptiveStep, StepsTakenAgainForSpeedGiveTheSameBitsLean) {
    auto run = [](std::size_t lean_bodies, int& retaken) {
        const double r = 1e-3, speed = 500.0;
        World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-4, 5);
        w.simulation.adaptive = true;
        w.simulation.max_speed = 600.0;
        w.lean_bodies = lean_bodies;
        const uint32_t light = add_material(w, 2500.0, 0.5);
        const uint32_t heavy = add_material(w, 2.5e6, 0.5);
        add_plane(w, Vec3::Zero(), Vec3::UnitZ(), light);
        for (int i = 0; i < 3; ++i) {
            add_sphere(w, Vec3(3 * r * i, 0, r), r, light, Vec3::Zero());
            add_sphere(w, Vec3(3 * r * i, 0, 3 * r + 2e-3), r, heavy, Vec3(0, 0, -speed));
        }
        retaken = 0;
        while (w.time < 1e-4) {
            const StepStatus st = w.step();
            EXPECT_TRUE(st.ok) << st.message;
            if (!st.ok) break;
            retaken += int(w.diagnostics().retakes);
        }
        return state_vector(w);
    };
    expect_retaken_alike_lean(run, "the impacts should take some step again");
}

}  // namespace
}  // namespace talus
