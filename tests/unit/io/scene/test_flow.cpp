// Scene keys and output of particle sources and sinks: polydisperse [[particles]] fills
// (random by count or by volume fraction, lattice), [[emitter]] and [[outlet]] entries, and
// the /flow datasets of the trajectory, read back with the HDF5 C API and compared with the
// tallies the run kept in memory.
#include <gtest/gtest.h>
#include <fmt/format.h>
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "engine/flow/particle_fill.hpp"
#include "io/trajectory_info.hpp"
#include "io/scene.hpp"
#include "io/trajectory_writer.hpp"

namespace talus {
namespace {

namespace fs = std::filesystem;
constexpr double kPi = 3.14159265358979323846;

std::string error_of(const std::string& text) {
    try {
        parse_scene(text, "mem/flow.toml");
    } catch (const SceneError& e) {
        return e.what();
    }
    return "";
}

const std::string kMaterial = R"(
[[material]]
name = "glass"
density = 2500
friction = 0.5
)";

double deepest_pair_overlap(const BodyStore& b) {
    double worst = -1.0;
    for (std::size_t i = 0; i < b.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            worst = std::max(worst, b.radius[i] + b.radius[j] - (b.position[i] - b.position[j]).norm());
    return worst;
}

TEST(FlowScene, VolumeFractionFillReachesTheFractionWithoutOverlaps) {
    const Scene s = parse_scene(kMaterial + R"(
[[particles]]
shape = "sphere"
radius = { distribution = "uniform", min = 0.004, max = 0.006 }
material = "glass"
random = { min = [0, 0, 0], max = [0.1, 0.1, 0.1], volume_fraction = 0.25, seed = 3 }
)", "mem/fill.toml");
    const BodyStore& b = s.world.bodies;
    double volume = 0, v_last = 0;
    std::set<double> radii;
    for (std::size_t i = 0; i < b.size(); ++i) {
        v_last = 4.0 / 3.0 * kPi * std::pow(b.radius[i], 3);
        volume += v_last;
        radii.insert(b.radius[i]);
        EXPECT_GE(b.radius[i], 0.004);
        EXPECT_LE(b.radius[i], 0.006);
        EXPECT_TRUE((b.position[i].array() >= 0.0).all() && (b.position[i].array() <= 0.1).all());
    }
    const double region = std::pow(0.1 + 2 * 0.006, 3);  // the box of centres widened by r_max
    const double target = 0.25 * region;
    std::printf("[ flow ] volume-fraction fill: %zu spheres, fraction %.6f (target 0.25, last "
                "sphere %.6f)\n", b.size(), volume / region, v_last / region);
    EXPECT_GE(volume, target);
    EXPECT_LT(volume - target, v_last);  // stops with the sphere that reaches the target
    EXPECT_GT(radii.size(), b.size() / 2);  // polydisperse indeed
    EXPECT_LE(deepest_pair_overlap(b), 0.0);
}

TEST(FlowScene, MonodisperseFillIsUnchangedByTheSizeMachinery) {
    // radius = r and radius = { discrete, values = [r] } give the very same centres.
    const std::string fill = R"(
material = "glass"
random = { min = [0, 0, 0], max = [0.1, 0.1, 0.1], count = 200, seed = 42 }
)";
    const Scene a = parse_scene(kMaterial + "[[particles]]\nshape = \"sphere\"\nradius = 0.005" + fill, "a.toml");
    const Scene b = parse_scene(
        kMaterial + "[[particles]]\nshape = \"sphere\"\nradius = { distribution = \"discrete\", values = [0.005] }" + fill,
        "b.toml");
    EXPECT_EQ(a.world.bodies.position, b.world.bodies.position);
    EXPECT_EQ(a.world.bodies.radius, b.world.bodies.radius);
}

TEST(FlowScene, PolydisperseLatticeSpacesByTheLargestRadius) {
    const std::string head = kMaterial + R"(
[[particles]]
shape = "sphere"
radius = { distribution = "normal", mean = 0.004, std = 0.001, min = 0.002, max = 0.006 }
material = "glass"
)";
    const std::string too_dense =
        head + "lattice = { min = [0, 0, 0], max = [0.1, 0.1, 0.1], spacing = 0.0119 }\n";
    EXPECT_NE(error_of(too_dense).find("less than the sphere diameter 0.012"), std::string::npos)
        << error_of(too_dense);
    const Scene s = parse_scene(head + "lattice = { min = [0, 0, 0], max = [0.1, 0.1, 0.1], spacing = 0.012, seed = 5 }\n",
                                "lat.toml");
    const BodyStore& b = s.world.bodies;
    ASSERT_EQ(b.size(), 9u * 9u * 9u);
    double mean = 0;
    for (double r : b.radius) {
        mean += r;
        EXPECT_GE(r, 0.002);
        EXPECT_LE(r, 0.006);
    }
    mean /= double(b.size());
    // symmetric truncation at ±2σ: the mean stays 4 mm; σ_mean ≈ 0.88 mm / √729 = 0.033 mm
    EXPECT_NEAR(mean, 0.004, 4.5 * 0.88e-3 / std::sqrt(729.0));
    EXPECT_LE(deepest_pair_overlap(b), 0.0);
}

TEST(FlowScene, EmitterAndOutletKeysAreRead) {
    const Scene s = parse_scene(kMaterial + R"(
[[emitter]]
radius = { distribution = "lognormal", mean = 0.004, sigma = 0.2, min = 0.002, max = 0.008 }
material = "glass"
mass_rate = 0.5
min = [0, 0, 1]
max = [0.1, 0.1, 1.1]
velocity = [0, 0, -2]
start = 0.1
stop = 2.0
seed = 8

[[outlet]]
type = "plane"
point = [0, 0, -1]
normal = [0, 0, 2]

[[outlet]]
type = "box"
min = [1, 1, 1]
max = [2, 2, 2]
)", "mem/emit.toml");
    ASSERT_EQ(s.world.emitters.size(), 1u);
    const Emitter& e = s.world.emitters[0];
    EXPECT_TRUE(e.per_mass);
    EXPECT_EQ(e.rate, 0.5);
    EXPECT_EQ(e.size.kind, SizeKind::LogNormal);
    EXPECT_NEAR(e.size.mu, std::log(0.004) - 0.5 * 0.2 * 0.2, 1e-15);  // mean = e^(μ + σ²/2)
    EXPECT_EQ(e.velocity, Vec3(0, 0, -2));
    EXPECT_EQ(e.start, 0.1);
    EXPECT_EQ(e.stop, 2.0);
    EXPECT_EQ(e.seed, 8u);
    ASSERT_EQ(s.world.outlets.size(), 2u);
    EXPECT_EQ(s.world.outlets[0].type, OutletType::HalfSpace);
    EXPECT_EQ(s.world.outlets[0].normal, Vec3(0, 0, 1));
    EXPECT_TRUE(s.world.outlets[0].contains(Vec3(5, 5, -1.01)));
    EXPECT_FALSE(s.world.outlets[0].contains(Vec3(5, 5, -0.99)));
    EXPECT_EQ(s.world.outlets[1].type, OutletType::Box);
}

TEST(FlowScene, BadKeysAreNamed) {
    const std::string emitter = kMaterial + R"(
[[emitter]]
material = "glass"
min = [0, 0, 0]
max = [1, 1, 1]
seed = 1
)";
    EXPECT_NE(error_of(emitter + "radius = 0.01\nrate = -5\n").find("emitter.0.rate: must be > 0 (got -5)"),
              std::string::npos);
    EXPECT_NE(error_of(emitter + "radius = 0.01\nrate = 5\nmass_rate = 1\n").find("not both"),
              std::string::npos);
    EXPECT_NE(error_of(emitter + "radius = { distribution = \"uniform\", min = 0.02, max = 0.01 }\nrate = 5\n")
                  .find("emitter.0.radius.max: must be ≥ min = 0.02 (got 0.01)"),
              std::string::npos);
    EXPECT_NE(error_of(emitter + "radius = { distribution = \"discrete\", values = [0.01, 0.02], weights = [1, 0] }\nrate = 5\n")
                  .find("emitter.0.radius.weights: element 1: must be > 0 (got 0)"),
              std::string::npos);
    EXPECT_NE(error_of(emitter + "radius = { distribution = \"normal\", mean = 0.01, std = 0.001, min = 0.1, max = 0.2 }\nrate = 5\n")
                  .find("holds only a fraction"),
              std::string::npos);
    EXPECT_NE(error_of(emitter + "radius = { distribution = \"gauss\", min = 0.1, max = 0.2 }\nrate = 5\n")
                  .find("unknown distribution 'gauss'"),
              std::string::npos);
    EXPECT_NE(error_of(emitter + "radius = 0.01\nrate = 5\nstart = 1\nstop = 1\n").find("must be > start"),
              std::string::npos);
    EXPECT_NE(error_of(kMaterial + "[[emitter]]\nradius = 0.01\nmaterial = \"glass\"\nrate = 1\nmin = [0,0,0]\nmax = [1,1,1]\nseed = 1\n"
                                   "[[outlet]]\ntype = \"plane\"\npoint = [0,0,0]\nnormal = [0,0,0]\n")
                  .find("outlet.0.normal: must not be zero"),
              std::string::npos);
    EXPECT_NE(error_of(kMaterial + "[[particles]]\nshape = \"sphere\"\nradius = 0.005\nmaterial = \"glass\"\n"
                                   "random = { min = [0,0,0], max = [0.03,0.03,0.03], volume_fraction = 0.8, seed = 1 }\n")
                  .find("reached only a volume fraction"),
              std::string::npos);
}

// ---- /flow in the trajectory ------------------------------------------------------------

std::vector<uint64_t> read_u64(hid_t file, const char* name, std::vector<hsize_t>* dims = nullptr) {
    const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    EXPECT_GE(ds, 0) << name;
    const hid_t sp = H5Dget_space(ds);
    hsize_t d[2] = {0, 1};
    const int rank = H5Sget_simple_extent_dims(sp, d, nullptr);
    std::vector<uint64_t> out(d[0] * (rank == 2 ? d[1] : 1));
    if (!out.empty()) H5Dread(ds, H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
    if (dims) dims->assign(d, d + rank);
    H5Sclose(sp);
    H5Dclose(ds);
    return out;
}

std::vector<double> read_f64(hid_t file, const char* name) {
    const hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
    const hid_t sp = H5Dget_space(ds);
    hsize_t d[2] = {0, 1};
    const int rank = H5Sget_simple_extent_dims(sp, d, nullptr);
    std::vector<double> out(d[0] * (rank == 2 ? d[1] : 1));
    if (!out.empty()) H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
    H5Sclose(sp);
    H5Dclose(ds);
    return out;
}

TEST(FlowOutput, FileCountsAgreeWithMemoryAndIdsAreNeverReused) {
    // Rain from an emitter into a plane outlet, a frame every 50 steps, as `talus run` does.
    Scene s = parse_scene(kMaterial + R"(
[simulation]
dt = 1e-3
duration = 0.6
[solver]
tolerance = 1e-6
max_iterations = 50
[[emitter]]
radius = { distribution = "discrete", values = [0.004, 0.006], weights = [3, 1] }
material = "glass"
rate = 200
min = [0, 0, 0.9]
max = [0.2, 0.2, 1.0]
velocity = [0, 0, -1]
seed = 21
[[outlet]]
type = "plane"
point = [0, 0, 0]
normal = [0, 0, 1]
)", "mem/rain.toml");
    World& w = s.world;
    const fs::path dir = fs::path(TALUS_BINARY_DIR) / "test-output" / "io" / "flow";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const fs::path file = dir / "rain.h5";
    RunMetadata meta;
    meta.scene_text = s.text;
    meta.emitters = 1;
    meta.outlets = 1;
    std::vector<FlowTally> mem_emitted, mem_removed;  // totals at each frame
    {
        TrajectoryWriter writer(file, meta, w.materials, true);
        const auto frame = [&] {
            mem_emitted.push_back(w.emitters[0].emitted);
            mem_removed.push_back(w.outlets[0].removed);
            writer.write_frame(w.bodies, w.time, w.step_count, {w.emitters[0].emitted},
                               {w.outlets[0].removed});
        };
        frame();
        for (int k = 1; k <= 600; ++k) {
            ASSERT_TRUE(w.step().ok);
            if (k % 50 == 0) frame();
        }
        writer.close();
    }
    EXPECT_EQ(w.emitters[0].emitted.count, 120u);  // ⌊200 × 0.6⌋
    EXPECT_GT(w.outlets[0].removed.count, 40u);

    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    std::vector<hsize_t> dims;
    const auto removed = read_u64(f, "/flow/removed_count", &dims);
    ASSERT_EQ(dims, (std::vector<hsize_t>{13, 1}));
    const auto removed_total = read_u64(f, "/flow/removed_total_count");
    const auto emitted = read_u64(f, "/flow/emitted_count");
    const auto emitted_total = read_u64(f, "/flow/emitted_total_count");
    const auto removed_mass = read_f64(f, "/flow/removed_mass");
    const auto emitted_mass_total = read_f64(f, "/flow/emitted_total_mass");
    const auto ids = read_u64(f, "/bodies/id");
    const auto first_row = read_u64(f, "/frames/first_row");
    const auto row_count = read_u64(f, "/frames/row_count");
    H5Fclose(f);
    for (std::size_t k = 0; k < 13; ++k) {
        EXPECT_EQ(removed_total[k], mem_removed[k].count) << k;
        EXPECT_EQ(emitted_total[k], mem_emitted[k].count) << k;
        EXPECT_EQ(emitted_mass_total[k], mem_emitted[k].mass) << k;
        const uint64_t prev_r = k ? mem_removed[k - 1].count : 0, prev_e = k ? mem_emitted[k - 1].count : 0;
        EXPECT_EQ(removed[k], mem_removed[k].count - prev_r) << k;
        EXPECT_EQ(emitted[k], mem_emitted[k].count - prev_e) << k;
        EXPECT_NEAR(removed_mass[k], mem_removed[k].mass - (k ? mem_removed[k - 1].mass : 0.0), 1e-15);
        // bodies in the frame = emitted so far − removed so far
        EXPECT_EQ(row_count[k], mem_emitted[k].count - mem_removed[k].count) << k;
    }
    // Ids over the whole file: each id appears in one unbroken run of frames (never comes
    // back once gone), distinct within a frame, and the ids seen are 0 … emitted − 1.
    std::set<uint64_t> seen, gone;
    std::set<uint64_t> previous;
    for (std::size_t k = 0; k < 13; ++k) {
        std::set<uint64_t> now(ids.begin() + std::ptrdiff_t(first_row[k]),
                               ids.begin() + std::ptrdiff_t(first_row[k] + row_count[k]));
        EXPECT_EQ(now.size(), row_count[k]) << "duplicate id in frame " << k;
        for (uint64_t id : previous)
            if (!now.count(id)) gone.insert(id);
        for (uint64_t id : now) EXPECT_FALSE(gone.count(id)) << "id " << id << " reused";
        seen.insert(now.begin(), now.end());
        previous = now;
    }
    EXPECT_EQ(*seen.rbegin(), w.emitters[0].emitted.count - 1);
    EXPECT_EQ(w.next_id, w.emitters[0].emitted.count);
    // `talus info` reports the totals of the last frame
    const std::string info = describe_trajectory(file);
    EXPECT_NE(info.find(fmt::format("emitted:    120 bodies, {:.6g} kg by the last frame (1 emitter)",
                                    w.emitters[0].emitted.mass)),
              std::string::npos)
        << info;
    EXPECT_NE(info.find(fmt::format("removed:    {} bodies", w.outlets[0].removed.count)),
              std::string::npos)
        << info;
}

}  // namespace
}  // namespace talus
