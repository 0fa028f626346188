// A step does not depend on where the bodies sit in memory (docs/design.md §8): the same scene stepped with its bodies shuffled into another
// dense order reaches the same state, bit for bit, body by stable id. This is what a run over
// MPI ranks relies on (docs/mpi.md): a rank holds its bodies in its own order, and only
// orders defined by stable ids and contact keys (never by dense indices) may decide a sum.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <random>
#include <string>

#include "engine/world/world.hpp"
#include "solvers/colouring.hpp"
#include "io/scene.hpp"
#include "tests/support/instrumented.hpp"

namespace talus {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }
bool same_bits(const Vec3& a, const Vec3& b) { return std::memcmp(a.data(), b.data(), sizeof(double) * 3) == 0; }
bool same_bits(const Quat& a, const Quat& b) {
    return same_bits(a.w(), b.w()) && same_bits(a.vec(), b.vec());
}

void shuffle_bodies(World& w, std::mt19937_64& rng) {
    std::vector<uint32_t> order(w.bodies.size());
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), rng);
    w.bodies.permute(order);
}

/// The first difference between the two worlds' states, body by stable id ("" if none).
std::string first_difference(const World& a, const World& b) {
    if (a.bodies.size() != b.bodies.size())
        return "body counts " + std::to_string(a.bodies.size()) + " and " + std::to_string(b.bodies.size());
    if (!same_bits(a.time, b.time)) return "times differ";
    std::map<uint64_t, std::size_t> at;
    for (std::size_t i = 0; i < b.bodies.size(); ++i) at[b.bodies.id[i]] = i;
    for (std::size_t i = 0; i < a.bodies.size(); ++i) {
        const auto it = at.find(a.bodies.id[i]);
        if (it == at.end()) return "body " + std::to_string(a.bodies.id[i]) + " missing";
        const std::size_t j = it->second;
        const std::string body = "body " + std::to_string(a.bodies.id[i]) + ": ";
        if (!same_bits(a.bodies.position[i], b.bodies.position[j])) return body + "position";
        if (!same_bits(a.bodies.orientation[i], b.bodies.orientation[j])) return body + "orientation";
        if (!same_bits(a.bodies.velocity[i], b.bodies.velocity[j])) return body + "velocity";
        if (!same_bits(a.bodies.angular_velocity[i], b.bodies.angular_velocity[j])) return body + "angular velocity";
    }
    const StepDiagnostics& da = a.diagnostics();
    const StepDiagnostics& db = b.diagnostics();
    if (da.contacts != db.contacts) return "contact counts";
    if (da.iterations != db.iterations) return "iterations";
    if (!same_bits(da.residual, db.residual)) return "residuals";
    if (!same_bits(da.kinetic_energy, db.kinetic_energy)) return "kinetic energies";
    return "";
}

/// Steps the scene `steps` times, and a copy whose bodies are shuffled before the first step
/// and again every `every` steps; the two must agree after every step.
void expect_order_independent(const std::string& scene_file, int steps, int every,
                              std::optional<SolverType> solver = std::nullopt) {
    Scene scene = load_scene(TALUS_SOURCE_DIR "/tests/scenes/" + scene_file);
    World& a = scene.world;
    if (solver) a.solver.type = *solver;
    World b = a;
    std::mt19937_64 rng(11);
    std::size_t most = 0, reordered = 0;
    for (int s = 0; s < steps; ++s) {
        if (s % every == 0) shuffle_bodies(b, rng);
        const std::string what = scene_file + (solver ? std::string(" with ") + solver_name(*solver) : "");
        ASSERT_TRUE(a.step().ok) << what << " step " << s;
        ASSERT_TRUE(b.step().ok) << what << " step " << s;
        ASSERT_EQ(first_difference(a, b), "") << what << " after step " << s + 1;
        most = std::max<std::size_t>(most, a.diagnostics().contacts);
        // the two solved the same contacts held in different orders
        const ContactList& ca = a.contacts();
        const ContactList& cb = b.contacts();
        if (ca.key_a != cb.key_a || ca.key_b != cb.key_b || ca.feature != cb.feature) ++reordered;
    }
    // not vacuous: contacts, held in different orders
    EXPECT_GT(most, 0u) << scene_file << ": no contact";
    EXPECT_GT(reordered, 0u) << scene_file << ": the contacts were solved in the same order";
}

// The default solver, on scenes that between them hold every kind of body and wall: an
// emitter and an outlet, a kinematic clump, clumps, capsules and ellipsoids, periodic
// boundaries, a hopper, a turning drum, a mesh trough (80–400 steps, across renumberings).
TEST(OrderIndependence, ShuffledBodiesStepToTheSameBits) {
    for (const char* scene : {"resume.toml", "periodic_chute.toml", "hopper.toml"})
        expect_order_independent(scene, 80, 7);
    expect_order_independent("shapes.toml", 200, 7);
    expect_order_independent("clumps.toml", 400, 13);
    expect_order_independent("drum.toml", 300, 13);
    expect_order_independent("mesh_trough.toml", 400, 13);
}

// Every iterative solver of the cone complementarity problem on the pour with an emitter
// and an outlet.
TEST(OrderIndependence, EverySolverStepsShuffledBodiesToTheSameBits) {
    for (SolverType t : {SolverType::PGS, SolverType::PJ, SolverType::APGD, SolverType::BGS,
                         SolverType::MaxDiss})
        expect_order_independent("resume.toml", 120, 7, t);
}

// The candidate pairs kept from an earlier search (collision/kept_pairs.hpp) are the broad
// phase's pairs in another order: a scene stepped with them and without (World::keep_pairs)
// agrees bit for bit after every step. Where grains settle (clumps, a small box, capsules and
// ellipsoids) the kept pairs served at least a quarter of the steps; with an emitter and an
// outlet (the bodies change) and in a hopper's flow they serve few, and must still agree.
TEST(OrderIndependence, KeptPairsStepToTheSameBitsAsTheBroadPhaseEveryStep) {
    struct Case {
        const char* scene;
        int steps;
        bool settles;
    };
    for (const Case& c : {Case{"clumps.toml", 400, true}, Case{"small_box.toml", 300, true},
                          Case{"shapes.toml", 300, true}, Case{"resume.toml", 200, false},
                          Case{"hopper.toml", 150, false}}) {
        Scene scene = load_scene(TALUS_SOURCE_DIR "/tests/scenes/" + std::string(c.scene));
        World& a = scene.world;
        World b = a;
        b.keep_pairs = false;
        int kept = 0;
        for (int s = 0; s < c.steps; ++s) {
            ASSERT_TRUE(a.step().ok) << c.scene << " step " << s;
            ASSERT_TRUE(b.step().ok) << c.scene << " step " << s;
            ASSERT_EQ(first_difference(a, b), "") << c.scene << " after step " << s + 1;
            ASSERT_FALSE(b.diagnostics().kept_pairs);
            kept += a.diagnostics().kept_pairs;
        }
        if (c.settles) { EXPECT_GT(kept, c.steps / 4) << c.scene << ": the kept pairs served " << kept << " steps"; }
    }
}

// Contacts [lo, hi) of c, as a list of their own.
ContactList slice(const ContactList& c, std::size_t lo, std::size_t hi) {
    ContactList from = c, out;
    from.for_each_array([&](auto& src, auto& dst) {
        if (src.size() == c.size()) dst.assign(src.begin() + std::ptrdiff_t(lo), src.begin() + std::ptrdiff_t(hi));
    }, out);
    return out;
}

// The colours a run's step uses are those of Jones and Plassmann's rounds (what ranks will
// compute together): over the solve's contacts, then, for each take-back round that appended
// the pairs it took back (engine/world/speculative.cpp), over that round's pairs alone in
// colours after them. So the colour ranges split into at most 1 + resolves consecutive
// segments, each coloured exactly as jones_plassmann colours its contacts alone (a step
// without a resolve: the whole list). On the pour of 3,000 grains with the defaults, every
// 100 steps; under a sanitizer the first 800 steps (1,200 contacts by then; the whole 1,500
// took 72 s there).
TEST(OrderIndependence, TheStepsColoursAreJonesPlassmanns) {
    Scene scene = load_scene(TALUS_SOURCE_DIR "/tests/scenes/mpi_pour.toml");
    World& w = scene.world;
    std::size_t most_rounds = 0, most_contacts = 0, colours = 0, appended = 0;
    const int steps = testing::kInstrumented ? 800 : 1500;
    for (int s = 1; s <= steps; ++s) {
        ASSERT_TRUE(w.step().ok);
        if (s % 100 != 0) continue;
        const ContactList& c = w.contacts();
        const std::size_t ranges = c.colour_start.empty() ? 0 : c.colour_start.size() - 1;
        // the longest run of ranges from `first` that is one segment, largest first
        std::size_t first = 0, segments = 0, rounds = 0;
        while (first < ranges) {
            std::size_t last = ranges;
            for (; last > first; --last) {
                const ContactList part = slice(c, c.colour_start[first], c.colour_start[last]);
                const JonesPlassmann jp = jones_plassmann(w.bodies.size(), part);
                bool same = true;
                for (std::size_t r = first; r < last && same; ++r)
                    for (uint32_t k = c.colour_start[r]; k < c.colour_start[r + 1] && same; ++k) {
                        const bool overflow = c.overflow_colour && r + 1 == ranges;
                        same = jp.colour[k - c.colour_start[first]] ==
                               (overflow ? kOverflowColour : uint32_t(r - first));
                    }
                if (same) {
                    if (first == 0) rounds = jp.rounds;
                    break;
                }
            }
            ASSERT_GT(last, first) << "step " << s << ": colour " << first
                                   << " starts no run of Jones and Plassmann's colours";
            first = last;
            ++segments;
        }
        ASSERT_LE(segments, 1 + w.diagnostics().resolves) << "step " << s;
        appended += segments > 1 ? 1 : 0;
        if (c.size() > most_contacts) {
            most_contacts = c.size();
            most_rounds = rounds;
            colours = ranges;
        }
    }
    EXPECT_GT(most_contacts, 1000u);
    std::printf("[ jones-plassmann ] %zu contacts: %zu colours in %zu rounds; %zu of the steps checked "
                "with taken-back pairs in colours of their own\n", most_contacts, colours, most_rounds, appended);
}

}  // namespace
}  // namespace talus
