// Trajectory output: what the writer puts in the file is what a reader gets back, bit for
// bit; the file refuses to be overwritten by accident; a killed run leaves a readable file;
// `talus info` counts what is there. The readback is done by tools/talus_h5.py (the loader
// the measurement scripts use), driven through tests/python/check_readback.py, so the
// C++ writer and the Python reader are tested against each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <hdf5.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "core/body_store.hpp"
#include "core/materials.hpp"
#include "engine/world/world.hpp"
#include "io/checkpoint.hpp"
#include "io/scene.hpp"
#include "io/trajectory_info.hpp"
#include "io/trajectory_writer.hpp"
#include "io/xdmf.hpp"

namespace talus {
namespace {

namespace fs = std::filesystem;

/// A fresh, empty directory for one test under the build tree.
fs::path test_dir(const std::string& name) {
    const fs::path dir = fs::path(TALUS_BINARY_DIR) / "test-output" / "io" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::string read_text(const fs::path& p) {
    std::ifstream is(p, std::ios::binary);
    std::stringstream ss;
    ss << is.rdbuf();
    return ss.str();
}

std::string hex(const std::string& s) {
    std::string out = "x";
    char buf[3];
    for (unsigned char c : s) {
        std::snprintf(buf, sizeof buf, "%02x", c);
        out += buf;
    }
    return out;
}

MaterialTable test_materials() {
    MaterialTable m;
    m.add(Material{"glass", 2500.0, 0.3});
    m.add(Material{"steel", 7850.0, 0.45});
    return m;
}

RunMetadata test_metadata() {
    RunMetadata meta;
    meta.scene_text = "# Fließtest \"hopper\" <&>\n[simulation]\ndt = 1e-3\n\n[output]\npath = \"out.h5\"\n";
    meta.scene_path = "scenes/hopper.toml";
    meta.overrides = {"solver.max_iterations=50", "simulation.dt=5e-4"};
    meta.talus_version = "0.1.0-test";
    return meta;
}

/// Frame k's bodies: deterministic pseudo-random state, `n` bodies, with a few awkward
/// doubles (negative zero, a subnormal, a huge value) in frame 0 and an id above 2^63.
BodyStore make_bodies(int k, std::size_t n) {
    std::mt19937_64 rng(1234u + static_cast<unsigned>(k));
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    BodyStore b;
    for (std::size_t i = 0; i < n; ++i) {
        const Vec3 x(10.0 * u(rng), 10.0 * u(rng), 10.0 * u(rng));
        const Vec3 v(u(rng), u(rng), u(rng));
        const Vec3 w(50.0 * u(rng), 50.0 * u(rng), 50.0 * u(rng));
        const Quat q = Quat(u(rng), u(rng), u(rng), u(rng)).normalized();
        const double r = 0.001 + 0.01 * (0.5 + 0.5 * u(rng));
        const uint64_t id = (i == 1) ? (uint64_t{1} << 63) + 12345u : 1000u * (k + 1) + i;
        b.add_sphere(id, x, r, 2500.0, static_cast<uint32_t>(rng() % 2), v, w, q);
    }
    if (k == 0 && n > 0) b.position[0] = Vec3(-0.0, 5e-324, 1e300);
    return b;
}

StepDiagnostics make_diagnostics(uint64_t step) {
    std::mt19937_64 rng(99u + step);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    StepDiagnostics d;
    d.step = step;
    d.time = 1e-3 * static_cast<double>(step);
    d.contacts = static_cast<uint32_t>(rng() % 1000);
    d.iterations = static_cast<uint32_t>(1 + rng() % 100);
    d.residual = 1e-4 * u(rng);
    d.kinetic_energy = u(rng);
    d.potential_energy = -u(rng);
    d.solver_wall_time = 1e-3 * u(rng);
    d.envelope = 1e-3 * (1.0 + u(rng));
    d.converged = (step % 2) == 0;
    return d;
}

/// What the files should hold, in the line format check_readback.py reads.
class Expected {
public:
    explicit Expected(const RunMetadata& meta, const MaterialTable& mats) {
        out_ << "attr talus_version " << hex(meta.talus_version) << "\n";
        out_ << "attr scene " << hex(meta.scene_text) << "\n";
        out_ << "attr scene_path " << hex(meta.scene_path) << "\n";
        for (const std::string& o : meta.overrides) out_ << "override " << hex(o) << "\n";
        for (const Material& m : mats.materials)
            out_ << "material " << hex(m.name) << " " << g(m.density) << " " << g(m.friction) << "\n";
    }
    void frame(const BodyStore& b, double time, uint64_t step) {
        out_ << "frame " << g(time) << " " << step << " " << b.size() << "\n";
        // a frame's rows are its bodies by ascending stable id, whatever the store's order
        std::vector<std::size_t> order(b.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return b.id[x] < b.id[y]; });
        for (const std::size_t i : order) {
            const Vec3 &x = b.position[i], &v = b.velocity[i], &w = b.angular_velocity[i];
            const Quat& q = b.orientation[i];
            out_ << "body " << b.id[i];
            for (double c : {x.x(), x.y(), x.z(), q.w(), q.x(), q.y(), q.z(), v.x(), v.y(), v.z(),
                             w.x(), w.y(), w.z(), b.radius[i]})
                out_ << " " << g(c);
            out_ << " " << b.material[i] << "\n";
        }
    }
    void diagnostics(const StepDiagnostics& d) {
        out_ << "diag " << d.step << " " << g(d.time) << " " << d.contacts << " " << d.iterations;
        for (double c : {d.residual, d.kinetic_energy, d.potential_energy, d.solver_wall_time, d.envelope})
            out_ << " " << g(c);
        out_ << " " << (d.converged ? 1 : 0) << "\n";
    }
    void save(const fs::path& p) const { std::ofstream(p) << out_.str(); }

private:
    static std::string g(double x) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", x);
        return buf;
    }
    std::ostringstream out_;
};

/// Runs tests/python/check_readback.py on (h5, expected); returns its exit status.
int python_readback(const fs::path& h5, const fs::path& expected) {
    const std::string cmd = std::string("/usr/bin/python3 '") + TALUS_SOURCE_DIR +
                            "/tests/python/check_readback.py' '" + h5.string() + "' '" +
                            expected.string() + "'";
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/// The value after "key:" on its line of a describe_trajectory() summary.
std::string summary_value(const std::string& summary, const std::string& key) {
    std::istringstream is(summary);
    std::string line;
    while (std::getline(is, line)) {
        const auto at = line.find(key + ":");
        if (at == std::string::npos) continue;
        std::string v = line.substr(at + key.size() + 1);
        v.erase(0, v.find_first_not_of(' '));
        return v;
    }
    return "<no " + key + " line>";
}

/// The standard three-frame run: body counts 5, 9, 3; diagnostics for steps 1..7, of which
/// step 7 comes after the last frame and reaches the file only through close().
void write_standard_run(const fs::path& h5, Expected* expected,
                        const RunMetadata& meta = test_metadata()) {
    const MaterialTable mats = test_materials();
    TrajectoryWriter w(h5, meta, mats, false);
    const std::size_t counts[] = {5, 9, 3};
    const uint64_t frame_steps[] = {2, 5, 6};
    uint64_t step = 1;
    for (int k = 0; k < 3; ++k) {
        for (; step <= frame_steps[k]; ++step) {
            w.write_diagnostics(make_diagnostics(step));
            if (expected) expected->diagnostics(make_diagnostics(step));
        }
        const BodyStore b = make_bodies(k, counts[k]);
        const double t = 1e-3 * static_cast<double>(frame_steps[k]);
        w.write_frame(b, t, frame_steps[k]);
        if (expected) expected->frame(b, t, frame_steps[k]);
    }
    w.write_diagnostics(make_diagnostics(7));
    if (expected) expected->diagnostics(make_diagnostics(7));
    EXPECT_EQ(w.frames_written(), 3u);
    EXPECT_EQ(w.rows_written(), 17u);
    w.close();
}

TEST(TrajectoryWriter, ReadbackThroughPythonIsBitwiseExact) {
    const fs::path dir = test_dir("readback");
    const fs::path h5 = dir / "run.h5";
    Expected expected(test_metadata(), test_materials());
    write_standard_run(h5, &expected);
    expected.save(dir / "expected.txt");
    EXPECT_EQ(python_readback(h5, dir / "expected.txt"), 0)
        << "tests/python/check_readback.py found a difference (its output is above)";
}

TEST(TrajectoryWriter, SidecarSelectsEachFramesRows) {
    const fs::path dir = test_dir("sidecar");
    const fs::path h5 = dir / "run.h5";
    write_standard_run(h5, nullptr);
    const std::string xmf = read_text(dir / "run.xmf");
    EXPECT_FALSE(fs::exists(dir / "run.xmf.tmp"));
    std::size_t grids = 0;
    for (std::size_t at = xmf.find("<Time Value="); at != std::string::npos;
         at = xmf.find("<Time Value=", at + 1))
        ++grids;
    EXPECT_EQ(grids, 3u);
    // Frame 1 holds rows [5, 14) of 17; positions are N×3, radii 1-D.
    EXPECT_NE(xmf.find("<Time Value=\"0.005\"/>"), std::string::npos);
    EXPECT_NE(xmf.find("NumberOfElements=\"9\""), std::string::npos);
    EXPECT_NE(xmf.find(">5 0 1 1 9 3</DataItem>"), std::string::npos);
    EXPECT_NE(xmf.find(">5 1 9</DataItem>"), std::string::npos);
    EXPECT_NE(xmf.find("Dimensions=\"17 3\""), std::string::npos);
    EXPECT_NE(xmf.find(">run.h5:/bodies/position</DataItem>"), std::string::npos);
    EXPECT_EQ(xmf.find(dir.string()), std::string::npos) << "the sidecar must name the .h5 relatively";
}

TEST(Xdmf, DocumentEscapesTheFileNameAndPrintsTimesExactly) {
    const std::string doc = xdmf_document("a&b.h5", {{0.1 + 0.2, 0, 2}}, 2);
    EXPECT_NE(doc.find(">a&amp;b.h5:/bodies/radius<"), std::string::npos);
    EXPECT_NE(doc.find("<Time Value=\"0.30000000000000004\"/>"), std::string::npos);
    EXPECT_EQ(xdmf_sidecar_path("dir/run.h5"), fs::path("dir/run.xmf"));
}

TEST(Xdmf, DocumentDeclaresThePrecisionOfTheReals) {
    const auto count = [](const std::string& doc, const std::string& what) {
        std::size_t n = 0;
        for (auto at = doc.find(what); at != std::string::npos; at = doc.find(what, at + 1)) ++n;
        return n;
    };
    // position, radius, velocity: Float; ids Int 8 and materials UInt 4 whatever the reals
    const std::string f32 = xdmf_document("r.h5", {{0.0, 0, 2}}, 2, 4);
    EXPECT_EQ(count(f32, "NumberType=\"Float\" Precision=\"4\""), 3u) << f32;
    EXPECT_EQ(count(f32, "NumberType=\"Float\" Precision=\"8\""), 0u) << f32;
    EXPECT_EQ(count(f32, "NumberType=\"Int\" Precision=\"8\""), 1u) << f32;
    const std::string f64 = xdmf_document("r.h5", {{0.0, 0, 2}}, 2);
    EXPECT_EQ(count(f64, "NumberType=\"Float\" Precision=\"8\""), 3u) << f64;
    EXPECT_EQ(count(f64, "NumberType=\"Float\" Precision=\"4\""), 0u) << f64;
}

TEST(TrajectoryInfo, NamesPrecisionAndCompression) {
    const fs::path dir = test_dir("info_storage");
    RunMetadata meta = test_metadata();
    meta.precision = OutputPrecision::Float32;
    meta.compression = 1;
    write_standard_run(dir / "f32.h5", nullptr, meta);
    const std::string s32 = describe_trajectory(dir / "f32.h5");
    EXPECT_EQ(summary_value(s32, "storage"), "float32 body rows, gzip level 1 with shuffle") << s32;
    EXPECT_EQ(summary_value(s32, "frames"), "3") << s32;
    EXPECT_EQ(summary_value(s32, "time"), "0.002 s to 0.006 s (steps 2 to 6)") << s32;
    meta.precision = OutputPrecision::Float64;
    meta.compression = 0;
    write_standard_run(dir / "f64.h5", nullptr, meta);
    EXPECT_EQ(summary_value(describe_trajectory(dir / "f64.h5"), "storage"),
              "float64 body rows, uncompressed");
    // the sidecar of the float32 file reads its reals as 4-byte floats
    const std::string xmf = read_text(dir / "f32.xmf");
    EXPECT_NE(xmf.find("NumberType=\"Float\" Precision=\"4\""), std::string::npos);
    EXPECT_EQ(xmf.find("NumberType=\"Float\" Precision=\"8\""), std::string::npos);
}

TEST(TrajectoryWriter, RefusesToOverwriteWithoutForce) {
    const fs::path dir = test_dir("no_force");
    const fs::path h5 = dir / "run.h5";
    std::ofstream(h5) << "precious results";
    try {
        TrajectoryWriter w(h5, test_metadata(), test_materials(), false);
        FAIL() << "expected IoError";
    } catch (const IoError& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(h5.string()), std::string::npos) << msg;
        EXPECT_NE(msg.find("--force"), std::string::npos) << msg;
    }
    EXPECT_EQ(read_text(h5), "precious results");

    // With force the old file is replaced by an (empty) trajectory.
    {
        TrajectoryWriter w(h5, test_metadata(), test_materials(), true);
    }
    EXPECT_EQ(summary_value(describe_trajectory(h5), "frames"), "0");
}

TEST(TrajectoryWriter, UncreatableFileNamesThePath) {
    for (const fs::path& p : {fs::path("/nonexistent-talus-dir/sub/run.h5"), fs::path("/proc/talus-run.h5")}) {
        try {
            TrajectoryWriter w(p, test_metadata(), test_materials(), false);
            FAIL() << "expected IoError for " << p;
        } catch (const IoError& e) {
            EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
        }
    }
}

TEST(TrajectoryInfo, CountsFramesBodiesAndSteps) {
    const fs::path dir = test_dir("info");
    const fs::path h5 = dir / "run.h5";
    write_standard_run(h5, nullptr);
    const std::string s = describe_trajectory(h5);
    EXPECT_EQ(summary_value(s, "format"), "talus-trajectory, version 1") << s;
    EXPECT_EQ(summary_value(s, "written by"), "talus 0.1.0-test") << s;
    EXPECT_EQ(summary_value(s, "state"), "closed") << s;
    EXPECT_EQ(summary_value(s, "frames"), "3") << s;
    EXPECT_EQ(summary_value(s, "time"), "0.002 s to 0.006 s (steps 2 to 6)") << s;
    EXPECT_EQ(summary_value(s, "bodies"), "3 in the last frame") << s;
    EXPECT_EQ(summary_value(s, "steps"), "7 in the diagnostics") << s;
    const StepDiagnostics last = make_diagnostics(7);
    EXPECT_NE(summary_value(s, "last step").find(std::to_string(last.iterations) + " iterations"),
              std::string::npos)
        << s;
}

TEST(TrajectoryInfo, RejectsFilesThatAreNotTrajectories) {
    const fs::path dir = test_dir("info_reject");
    EXPECT_THROW(describe_trajectory(dir / "missing.h5"), IoError);
    std::ofstream(dir / "text.h5") << "not hdf5";
    EXPECT_THROW(describe_trajectory(dir / "text.h5"), IoError);
    const hid_t f = H5Fcreate((dir / "other.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    H5Fclose(f);
    try {
        describe_trajectory(dir / "other.h5");
        FAIL() << "expected IoError";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("not a Talus trajectory"), std::string::npos) << e.what();
    }
}

/// A run of `steps` steps, `converged` of them converged, with the given penetrations (one
/// per step), bodies of radius 0.005 m and one of `smallest_radius`, and a final kinetic
/// energy of `kinetic` J; two frames.
void write_solver_run(const fs::path& h5, uint64_t steps, uint64_t converged,
                      const std::vector<double>& penetration, double smallest_radius, double kinetic) {
    TrajectoryWriter w(h5, test_metadata(), test_materials(), false);
    BodyStore b;
    for (int i = 0; i < 4; ++i)
        b.add_sphere(uint64_t(i), Vec3(0.02 * i, 0, 0), i == 2 ? smallest_radius : 0.005, 2500.0, 0,
                     Vec3::Zero(), Vec3::Zero(), Quat::Identity());
    w.write_frame(b, 0.0, 0);
    for (uint64_t k = 1; k <= steps; ++k) {
        StepDiagnostics d = make_diagnostics(k);
        d.converged = k <= converged;
        d.contact_infeasibility = penetration[k - 1];
        d.kinetic_energy = k == steps ? kinetic : 1.0;
        w.write_diagnostics(d);
    }
    w.write_frame(b, 1e-3 * double(steps), steps);
    w.close();
}

TEST(TrajectoryInfo, SaysHowManyStepsConvergedTheDeepestPenetrationAndTheFinalEnergy) {
    const fs::path dir = test_dir("info_solver");
    const fs::path h5 = dir / "run.h5";
    // 912 of 1,000 steps converged; the deepest penetration 2.1e-5 m against a smallest
    // diameter of 2 x 0.005 m: 0.21 %
    std::vector<double> depth(1000, 1e-6);
    depth[500] = 2.1e-5;
    write_solver_run(h5, 1000, 912, depth, 0.005, 3.2e-4);
    const TrajectorySummary sum = summarize_trajectory(h5);
    EXPECT_EQ(sum.steps, 1000u);
    EXPECT_EQ(sum.converged_steps, 912u);
    EXPECT_DOUBLE_EQ(*sum.converged_share(), 0.912);
    EXPECT_EQ(*sum.max_penetration, 2.1e-5);
    EXPECT_EQ(*sum.smallest_diameter, 0.01);
    EXPECT_DOUBLE_EQ(*sum.max_penetration_share_of_smallest_diameter(), 2.1e-3);
    EXPECT_EQ(*sum.final_kinetic_energy, 3.2e-4);
    const std::string s = describe_trajectory(sum);
    EXPECT_EQ(summary_value(s, "converged"), "912 of 1,000 steps (91 %)") << s;
    EXPECT_EQ(summary_value(s, "penetration"),
              "largest 2.1e-05 m (0.21 % of the smallest diameter, 1.0e-02 m)")
        << s;
    EXPECT_EQ(summary_value(s, "kinetic"), "3.2e-04 J at the last step") << s;
    EXPECT_EQ(summary_value(s, "materials"),
              "glass (2500 kg/m³, friction 0.3), steel (7850 kg/m³, friction 0.45)")
        << s;
    const std::string json = trajectory_json(sum);
    for (const char* want : {"\"steps\": 1000,", "\"converged_steps\": 912,", "\"converged_share\": 0.912,",
                             "\"max_penetration\": 2.1e-05,", "\"smallest_diameter\": 0.01,",
                             "\"final_kinetic_energy\": 0.00032,", "\"frames\": 2,", "\"bodies\": 4,",
                             "\"precision\": \"float64\",", "{\"name\": \"glass\", \"density\": 2500, \"friction\": 0.3}"})
        EXPECT_NE(json.find(want), std::string::npos) << want << " not in " << json;
    EXPECT_EQ(json.front(), '{');
    EXPECT_EQ(json.substr(json.size() - 2), "}\n");
}

// A capsule's /bodies/radius encloses it (r + half length); its thickness is what its
// overlaps are measured against, as the run's own report does (BodyStore::thickness_radius):
// 2 x 1 mm here, not 2 x 3 mm, read from the first frame's /shapes glyphs.
TEST(TrajectoryInfo, MeasuresCapsulesByTheirThickness) {
    const fs::path h5 = test_dir("info_capsule") / "run.h5";
    {
        RunMetadata meta = test_metadata();
        meta.shapes = true;  // as a run whose first bodies include a capsule
        TrajectoryWriter w(h5, meta, test_materials(), false);
        BodyStore b;
        b.add_sphere(0, Vec3(0, 0, 0), 0.005, 2500.0, 0);
        b.add_capsule(1, Vec3(0.02, 0, 0), 0.001, 0.002, 2500.0, 0, Vec3::Zero(), Vec3::Zero(),
                      Quat(Eigen::AngleAxisd(0.3, Vec3::UnitY())));
        w.write_frame(b, 0.0, 0);
        StepDiagnostics d = make_diagnostics(1);
        d.contact_infeasibility = 4e-5;
        w.write_diagnostics(d);
        w.write_frame(b, 1e-3, 1);
        w.close();
    }
    const TrajectorySummary sum = summarize_trajectory(h5);
    ASSERT_TRUE(sum.smallest_diameter);
    EXPECT_NEAR(*sum.smallest_diameter, 0.002, 1e-15);
    EXPECT_NEAR(*sum.max_penetration_share_of_smallest_diameter(), 0.02, 1e-12);
}

TEST(TrajectoryInfo, CountsInTheRightNumberAndRoundsShares) {
    const fs::path dir = test_dir("info_plurals");
    // one step, converged; the smallest body (r = 0.001 m) sets the diameter
    write_solver_run(dir / "one.h5", 1, 1, {5e-5}, 0.001, 0.0);
    const std::string one = describe_trajectory(dir / "one.h5");
    EXPECT_EQ(summary_value(one, "converged"), "1 of 1 step (100 %)") << one;
    EXPECT_EQ(summary_value(one, "penetration"), "largest 5.0e-05 m (2.5 % of the smallest diameter, 2.0e-03 m)")
        << one;
    EXPECT_EQ(summary_value(one, "kinetic"), "0 J at the last step") << one;
    // 1,999 of 2,000 is not "100 %", 1 of 2,000 not "0 %"; no penetration at all
    write_solver_run(dir / "most.h5", 2000, 1999, std::vector<double>(2000, 0.0), 0.005, 1.0);
    const std::string most = describe_trajectory(dir / "most.h5");
    EXPECT_EQ(summary_value(most, "converged"), "1,999 of 2,000 steps (>99 %)") << most;
    EXPECT_EQ(summary_value(most, "penetration"), "largest 0 m (0 % of the smallest diameter, 1.0e-02 m)") << most;
    write_solver_run(dir / "few.h5", 2000, 1, std::vector<double>(2000, 0.0), 0.005, 1.0);
    EXPECT_EQ(summary_value(describe_trajectory(dir / "few.h5"), "converged"), "1 of 2,000 steps (<1 %)");
    write_solver_run(dir / "none.h5", 2, 0, {0.0, 0.0}, 0.005, 1.0);
    EXPECT_EQ(summary_value(describe_trajectory(dir / "none.h5"), "converged"), "0 of 2 steps (0 %)");
}

TEST(TrajectoryInfo, NamesACheckpointAndTheCommandThatContinuesIt) {
    const fs::path dir = test_dir("info_checkpoint");
    Scene scene = parse_scene("[simulation]\ndt = 1e-3\nduration = 0.01\n[output]\npath = \"out.h5\"\n"
                              "[[material]]\nname = \"glass\"\ndensity = 2500\nfriction = 0.5\n"
                              "[[body]]\nshape = \"sphere\"\nradius = 0.01\nmaterial = \"glass\"\n"
                              "position = [0, 0, 0]\n",
                              dir / "scene.toml");
    const fs::path ck = dir / "out.checkpoint.h5";
    write_checkpoint(ck, scene, {}, dir / "out.h5");
    try {
        summarize_trajectory(ck);
        FAIL() << "expected CheckpointNotTrajectory";
    } catch (const CheckpointNotTrajectory& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("is a checkpoint of run " + (dir / "out.h5").string()), std::string::npos) << msg;
        EXPECT_NE(msg.find("continue it with tools/run --resume " + ck.string()), std::string::npos) << msg;
        EXPECT_EQ(e.trajectory(), dir / "out.h5");
    }
}

TEST(TrajectoryInfo, SaysAFileIsNotHdf5AndNamesIt) {
    const fs::path dir = test_dir("info_not_hdf5");
    std::ofstream(dir / "notes.h5") << "some notes, not HDF5\n";
    try {
        summarize_trajectory(dir / "notes.h5");
        FAIL() << "expected IoError";
    } catch (const CheckpointNotTrajectory& e) {
        FAIL() << e.what();
    } catch (const IoError& e) {
        EXPECT_EQ(std::string(e.what()), "'" + (dir / "notes.h5").string() +
                                             "' is not an HDF5 file (talus info reads Talus trajectories, "
                                             "the .h5 files that talus run writes)");
    }
}

// A run killed by SIGKILL (no destructor, no close) must leave a file that readers open, up
// to its last complete frame, with the diagnostics appended by that frame.
TEST(TrajectoryWriter, KilledRunLeavesReadableFile) {
    const fs::path dir = test_dir("killed");
    const fs::path h5 = dir / "run.h5";
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        try {
            TrajectoryWriter w(h5, test_metadata(), test_materials(), false);
            for (uint64_t s = 1; s <= 3; ++s) w.write_diagnostics(make_diagnostics(s));
            w.write_frame(make_bodies(0, 6), 0.003, 3);
            w.write_diagnostics(make_diagnostics(4));
            w.write_frame(make_bodies(1, 4), 0.004, 4);
            w.write_diagnostics(make_diagnostics(5));  // buffered only: lost with the process
            w.flush();  // both frames are in the file (the writer thread is done with them)
            std::raise(SIGKILL);
        } catch (...) {
        }
        std::_Exit(3);  // reached only if writing failed: the parent reports the status
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;

    const std::string s = describe_trajectory(h5);
    EXPECT_EQ(summary_value(s, "frames"), "2") << s;
    EXPECT_EQ(summary_value(s, "steps"), "4 in the diagnostics") << s;
    EXPECT_NE(summary_value(s, "state").find("h5clear -s"), std::string::npos) << s;

    Expected expected(test_metadata(), test_materials());
    for (uint64_t st = 1; st <= 3; ++st) expected.diagnostics(make_diagnostics(st));
    expected.frame(make_bodies(0, 6), 0.003, 3);
    expected.diagnostics(make_diagnostics(4));
    expected.frame(make_bodies(1, 4), 0.004, 4);
    expected.save(dir / "expected.txt");
    EXPECT_EQ(python_readback(h5, dir / "expected.txt"), 0);
}

// While the run goes on, another process reads every frame written so far (SWMR read).
TEST(TrajectoryWriter, ReadableWhileBeingWritten) {
    const fs::path dir = test_dir("live");
    const fs::path h5 = dir / "run.h5";
    TrajectoryWriter w(h5, test_metadata(), test_materials(), false);
    Expected expected(test_metadata(), test_materials());
    for (int k = 0; k < 2; ++k) {
        const uint64_t step = 10 * (k + 1);
        w.write_diagnostics(make_diagnostics(step));
        expected.diagnostics(make_diagnostics(step));
        const BodyStore b = make_bodies(k + 20, 3 + 4 * k);
        w.write_frame(b, 1e-3 * static_cast<double>(step), step);
        expected.frame(b, 1e-3 * static_cast<double>(step), step);
    }
    w.flush();  // the frames handed to the background writer are in the file
    expected.save(dir / "expected.txt");
    EXPECT_EQ(python_readback(h5, dir / "expected.txt"), 0);
    w.write_diagnostics(make_diagnostics(21));
    w.close();
    EXPECT_THROW(w.write_frame(make_bodies(0, 1), 1.0, 30), IoError);
    EXPECT_THROW(w.write_diagnostics(make_diagnostics(22)), IoError);
}

/// Runs tests/python/check_same_trajectory.py on two files (`extra`: e.g. "--frames").
int python_same(const fs::path& a, const fs::path& b, const std::string& extra = "") {
    const std::string cmd = std::string("/usr/bin/python3 '") + TALUS_SOURCE_DIR +
                            "/tests/python/check_same_trajectory.py' '" + a.string() + "' '" +
                            b.string() + "' " + extra;
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/// The metadata of the busy run (below): 2 walls with contacts, an emitter and an outlet.
RunMetadata busy_metadata(bool background, OutputPrecision precision, int level) {
    RunMetadata meta = test_metadata();
    meta.background_writer = background;
    meta.precision = precision;
    meta.compression = level;
    meta.emitters = 1;
    meta.outlets = 1;
    meta.wall_names = {"floor", "lid"};
    meta.wall_reference_points = {Vec3(0, 0, 0), Vec3(0, 0, 1)};
    meta.wall_contacts = true;
    meta.dt = 1e-3;
    return meta;
}

/// Frame k of the busy run, at step 2k + 2, after the diagnostics of its two steps (those
/// from step `diagnostics_from` on).
void write_busy_frame(TrajectoryWriter& w, int k, uint64_t diagnostics_from = 0) {
    for (uint64_t step = uint64_t(2 * k + 1); step <= uint64_t(2 * k + 2); ++step)
        if (step >= diagnostics_from) w.write_diagnostics(make_diagnostics(step));
    const uint64_t step = uint64_t(2 * k + 2);
    const BodyStore b = make_bodies(k, 500 + std::size_t(k * 97) % 2500);
    WallLoads loads;
    loads.impulse = {Vec3(k, 1, 2), Vec3(0, 0, -k)};
    loads.angular_impulse = {Vec3(0, 1e-3 * k, 0), Vec3(0, 0, 0)};
    loads.time = 2e-3;
    WallContactList contacts;
    for (std::size_t c = 0; c < std::size_t(k % 7); ++c) {
        contacts.wall.push_back(uint32_t(c % 2));
        contacts.body.push_back(b.id[c]);
        contacts.point.push_back(b.position[c]);
        contacts.impulse.push_back(Vec3(0, 0, 1e-4 * double(c + 1)));
        contacts.angular_impulse.push_back(Vec3::Zero());
    }
    const std::vector<FlowTally> emitted{{uint64_t(10 * k), 0.5 * k}};
    const std::vector<FlowTally> removed{{uint64_t(k), 0.05 * k}};
    w.write_frame(b, 1e-3 * double(step), step, emitted, removed, &loads, &contacts);
}

/// A run with every kind of row: 2 walls with contacts, an emitter and an outlet, 40 frames
/// of a changing population (up to 3000 bodies), a frame every other step. Written with the
/// given storage, on the background writer or not.
void write_busy_run(const fs::path& h5, bool background, OutputPrecision precision, int level) {
    TrajectoryWriter w(h5, busy_metadata(background, precision, level), test_materials(), true);
    for (int k = 0; k < 40; ++k) write_busy_frame(w, k);
    w.write_diagnostics(make_diagnostics(81));
    w.close();
}

/// The sidecar of `h5` with the file name it references replaced by `as`'s.
std::string sidecar_as(const fs::path& h5, const fs::path& as) {
    std::string x = read_text(xdmf_sidecar_path(h5));
    const std::string from = h5.filename().string(), to = as.filename().string();
    for (auto at = x.find(from); at != std::string::npos; at = x.find(from, at + to.size()))
        x.replace(at, from.size(), to);
    return x;
}

// The background writer writes the file the synchronous writer writes: every dataset,
// attribute and filter, bit for bit (diagnostics included), for both precisions.
TEST(TrajectoryWriter, BackgroundWriterFileIsBitIdenticalToSynchronous) {
    const fs::path dir = test_dir("background_same");
    for (const auto& [precision, level] : {std::pair{OutputPrecision::Float64, 0},
                                           std::pair{OutputPrecision::Float32, 1}}) {
        const std::string tag = precision == OutputPrecision::Float32 ? "f32" : "f64";
        write_busy_run(dir / (tag + "_sync.h5"), false, precision, level);
        write_busy_run(dir / (tag + "_background.h5"), true, precision, level);
        EXPECT_EQ(python_same(dir / (tag + "_sync.h5"), dir / (tag + "_background.h5")), 0) << tag;
        EXPECT_EQ(read_text(dir / (tag + "_sync.xmf")),
                  [&] {  // the sidecars differ only by the file name they reference
                      std::string x = read_text(dir / (tag + "_background.xmf"));
                      for (auto at = x.find(tag + "_background.h5"); at != std::string::npos;
                           at = x.find(tag + "_background.h5"))
                          x.replace(at, tag.size() + 14, tag + "_sync.h5");
                      return x;
                  }());
    }
}

// The body rows' chunks are sized to the frame (RunMetadata::rows_per_frame), so a chunk is
// compressed and stored once, not again at every frame while it fills: 200 bodies × 31
// frames took 4.1 MB where h5repack made 0.49 MB of it with 8,192-row chunks (issue 24,
// part 4.1). The file may hold its datasets' storage plus the metadata (attributes, the
// scene text, chunk indexes), not space left by chunks stored again.
TEST(TrajectoryWriter, FileHoldsLittleMoreThanItsData) {
    const fs::path dir = test_dir("file_size");
    const fs::path path = dir / "small.h5";
    RunMetadata meta = test_metadata();
    meta.rows_per_frame = 200;
    {
        TrajectoryWriter w(path, meta, test_materials(), true);
        for (int k = 0; k < 31; ++k) {
            for (uint64_t s = 0; s < 20; ++s) w.write_diagnostics(make_diagnostics(20u * uint64_t(k) + s));
            w.write_frame(make_bodies(k, 200), 0.02 * k, 20u * uint64_t(k));
        }
        w.close();
    }
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    hsize_t storage = 0;
    H5Lvisit(file, H5_INDEX_NAME, H5_ITER_NATIVE,
             [](hid_t group, const char* name, const H5L_info_t*, void* data) -> herr_t {
                 const hid_t o = H5Oopen(group, name, H5P_DEFAULT);
                 if (o >= 0 && H5Iget_type(o) == H5I_DATASET) *static_cast<hsize_t*>(data) += H5Dget_storage_size(o);
                 if (o >= 0) H5Oclose(o);
                 return 0;
             },
             &storage);
    const hid_t position = H5Dopen2(file, "/bodies/position", H5P_DEFAULT);
    const hid_t dcpl = H5Dget_create_plist(position);
    hsize_t chunk[2] = {0, 0};
    ASSERT_EQ(H5Pget_chunk(dcpl, 2, chunk), 2);
    EXPECT_EQ(chunk[0], 200u) << "a chunk per frame";
    H5Pclose(dcpl);
    H5Dclose(position);
    H5Fclose(file);
    const auto size = fs::file_size(path);
    std::printf("[ file size ] %ju bytes for %ju bytes of dataset storage\n", std::uintmax_t(size),
                std::uintmax_t(storage));
    EXPECT_LE(double(size), 1.1 * double(storage) + 100e3) << "space lost to chunks stored again";
}

// A run continued from a checkpoint appends to its own trajectory. The interrupted run
// here went on after its checkpoint (step 41, between frames 19 and 20) to frame 29 before
// it stopped: the continuing writer drops frames 20-29 and the diagnostics after step 41,
// and the file it then completes is the uninterrupted run's, bit for bit (every dataset and
// attribute; the diagnostics are synthetic, so even their wall times agree), sidecar too.
// Both ways: a cleanly closed file is cut in place; a file left by SIGKILL (its "being
// written" mark set) is rebuilt by copying.
TEST(TrajectoryWriter, ContinuedFileIsTheUninterruptedFile) {
    const fs::path dir = test_dir("continued");
    const MaterialTable mats = test_materials();
    for (const auto& [precision, level] : {std::pair{OutputPrecision::Float64, 0},
                                           std::pair{OutputPrecision::Float32, 1}}) {
        const std::string tag = precision == OutputPrecision::Float32 ? "f32" : "f64";
        const RunMetadata meta = busy_metadata(true, precision, level);
        const fs::path whole = dir / (tag + "_whole.h5");
        write_busy_run(whole, true, precision, level);
        for (const bool killed : {false, true}) {
            SCOPED_TRACE(tag + (killed ? ", killed" : ", closed"));
            const fs::path h5 = dir / (tag + (killed ? "_killed.h5" : "_closed.h5"));
            const pid_t child = fork();
            ASSERT_GE(child, 0);
            if (child == 0) {
                try {
                    TrajectoryWriter w(h5, meta, mats, true);
                    for (int k = 0; k < 30; ++k) write_busy_frame(w, k);
                    if (killed) {
                        w.flush();
                        std::raise(SIGKILL);
                    }
                    w.close();
                    std::_Exit(0);
                } catch (...) {
                }
                std::_Exit(3);
            }
            int status = 0;
            ASSERT_EQ(waitpid(child, &status, 0), child);
            if (killed) {
                ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
                EXPECT_NE(summary_value(describe_trajectory(h5), "state").find("h5clear"),
                          std::string::npos);
            } else {
                ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
            }
            {
                TrajectoryWriter w(h5, meta, mats, nullptr, AppendAfterStep{41});
                EXPECT_EQ(w.last_frame_step(), 40u);
                // the sidecar lists the frames kept from the start
                EXPECT_EQ(read_text(xdmf_sidecar_path(h5)).find("<Time Value=\"0.042\"/>"),
                          std::string::npos);
                for (int k = 20; k < 40; ++k) write_busy_frame(w, k, 42);
                w.write_diagnostics(make_diagnostics(81));
                EXPECT_EQ(w.frames_written(), 20u);
                w.close();
            }
            EXPECT_EQ(python_same(whole, h5), 0);
            EXPECT_EQ(sidecar_as(h5, whole), read_text(xdmf_sidecar_path(whole)));
            EXPECT_FALSE(fs::exists(h5.string() + ".resume.tmp"));
        }
    }
}

// A file that is not the checkpointed run's is refused, named, and left as it was.
TEST(TrajectoryWriter, ContinuingRefusesAnotherRunsFile) {
    const fs::path dir = test_dir("continue_refused");
    const fs::path h5 = dir / "run.h5";
    write_standard_run(h5, nullptr);
    const std::string before = read_text(h5);
    RunMetadata other = test_metadata();
    other.scene_text += "# another scene\n";
    for (const RunMetadata& meta : {other, busy_metadata(true, OutputPrecision::Float64, 1)}) {
        try {
            TrajectoryWriter w(h5, meta, test_materials(), nullptr, AppendAfterStep{5});
            ADD_FAILURE() << "another run's file was continued";
        } catch (const IoError& e) {
            EXPECT_NE(std::string(e.what()).find(h5.string()), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(read_text(h5), before);
    // nor a missing file, nor a checkpoint before the first frame (step 2)
    try {
        TrajectoryWriter w(dir / "missing.h5", test_metadata(), test_materials(), nullptr,
                           AppendAfterStep{5});
        ADD_FAILURE() << "a missing file was continued";
    } catch (const IoError& e) {
        EXPECT_NE(std::string(e.what()).find("missing.h5"), std::string::npos) << e.what();
    }
    EXPECT_THROW(TrajectoryWriter(h5, test_metadata(), test_materials(), nullptr, AppendAfterStep{1}),
                 IoError);
    EXPECT_EQ(read_text(h5), before);
}

/// In a child process limited to `max_bytes` per file (RLIMIT_FSIZE, so the disk "fills
/// up"): writes 5000-body frames to `h5` until an IoError, then closes. Returns "where:
/// message" of the first IoError ("none" if there was none) read back through a pipe.
std::string write_until_disk_full(const fs::path& h5, bool background, rlim_t max_bytes) {
    int fds[2];
    if (pipe(fds) != 0) return "pipe failed";
    const pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        std::signal(SIGXFSZ, SIG_IGN);  // a write beyond the limit fails with EFBIG instead
        const rlimit limit{max_bytes, max_bytes};
        setrlimit(RLIMIT_FSIZE, &limit);
        std::string report = "none";
        try {
            RunMetadata meta = test_metadata();
            meta.background_writer = background;
            meta.compression = 0;
            TrajectoryWriter w(h5, meta, test_materials(), true);
            try {
                for (int k = 0; k < 200; ++k) {
                    w.write_diagnostics(make_diagnostics(uint64_t(k + 1)));
                    w.write_frame(make_bodies(k, 5000), 1e-3 * k, uint64_t(k + 1));
                }
                w.close();
            } catch (const IoError& e) {
                report = std::string("write: ") + e.what();
                try {
                    w.close();
                } catch (const IoError&) {
                }
            }
        } catch (const IoError& e) {
            report = std::string("create: ") + e.what();
        }
        const ssize_t ignored = write(fds[1], report.data(), report.size());
        (void)ignored;
        std::_Exit(0);
    }
    close(fds[1]);
    std::string report;
    char buf[512];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, std::size_t(n));
    close(fds[0]);
    int status = 0;
    waitpid(child, &status, 0);
    return report;
}

// An I/O failure on the writer thread (here: the file may not grow past 4 MB) reaches the
// main thread as the IoError the synchronous writer throws, word for word; the file keeps
// every frame completed before it, exactly as the synchronous writer leaves it.
TEST(TrajectoryWriter, WriterThreadFailureIsRaisedOnTheMainThread) {
    const fs::path dir = test_dir("background_failure");
    const fs::path h5 = dir / "run.h5";
    const rlim_t limit = 4'000'000;  // ~6 frames of 5000 float64 bodies (~650 kB each)
    const std::string sync_report = write_until_disk_full(h5, false, limit);
    fs::rename(h5, dir / "sync.h5");
    const std::string background_report = write_until_disk_full(h5, true, limit);
    ASSERT_EQ(sync_report.rfind("write: ", 0), 0u) << sync_report;
    EXPECT_NE(sync_report.find(h5.string()), std::string::npos) << sync_report;
    EXPECT_NE(sync_report.find("File too large"), std::string::npos) << sync_report;
    // HDF5's description of a failed write names the clock time and a buffer address.
    const auto stable = [](const std::string& m) {
        return std::regex_replace(std::regex_replace(m, std::regex("time = [^\n]*\n"), ""),
                                  std::regex("buf = 0x[0-9a-f]+"), "");
    };
    EXPECT_EQ(stable(background_report), stable(sync_report));
    // Both files open, with the same complete frames, at least one.
    const std::string s = describe_trajectory(h5);
    const int frames = std::stoi(summary_value(s, "frames"));
    EXPECT_GE(frames, 1) << s;
    EXPECT_LT(frames, 7) << s;
    EXPECT_EQ(summary_value(describe_trajectory(dir / "sync.h5"), "frames"), std::to_string(frames));
    EXPECT_EQ(python_same(dir / "sync.h5", h5, "--frames"), 0);
}

// The file the ParaView test (tests/io.cmake: io.xdmf_paraview) opens. Body counts 4, 7, 0, 5:
// the population grows, vanishes and comes back. ctest runs this with TALUS_XDMF_FIXTURE set;
// run alone it writes into its own directory, so parallel runs never share the file.
TEST(TrajectoryXdmf, WritesParaViewFixture) {
    const char* fixed = std::getenv("TALUS_XDMF_FIXTURE");
    const fs::path h5 = fixed != nullptr ? fs::path(fixed) : test_dir("xdmf_fixture") / "xdmf_fixture.h5";
    fs::create_directories(h5.parent_path());
    TrajectoryWriter w(h5, test_metadata(), test_materials(), true);
    const std::size_t counts[] = {4, 7, 0, 5};
    for (int k = 0; k < 4; ++k) {
        w.write_diagnostics(make_diagnostics(k + 1));
        w.write_frame(make_bodies(k + 10, counts[k]), 0.25 * k, k + 1);
    }
    w.close();
    EXPECT_EQ(summary_value(describe_trajectory(h5), "frames"), "4");
    EXPECT_TRUE(fs::exists(xdmf_sidecar_path(h5)));
}

}  // namespace
}  // namespace talus
