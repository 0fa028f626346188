// Checkpoints (io/checkpoint.hpp). Layout of the file:
//   /state         attributes: format, format_version, talus_version, time, step_count,
//                  next_id, bodies, stage, monitor_end_step, monitor_below_since,
//                  monitor_end_time; the text
//                  trajectory (the file the run appends its frames to; may be empty);
//                  finished_time, finished_step once the run has ended (mark_checkpoint_finished)
//   /scene         text, path, override.K (bytes)
//   /bodies/NAME   every per-body array (bytes; attribute element_size)
//   /walls         active, motion_start
//   /emitters/K    emitted_count, emitted_mass, seeded, next_radius, rng, size_rng
//   /outlets       removed_count, removed_mass
//   /carried       warm_entries, warm_torques, joint_lambda, wall_impulse,
//                  wall_angular_impulse; attributes lipschitz, wall_time, and the
//                  adaptive step's slip_speed, chosen_dt, penetration, previous_penetration
// Arrays are 1-D uint8 datasets holding the elements' bytes, with their element size as an
// attribute checked on reading; texts are byte datasets too (no attribute size limit).
#include "io/checkpoint.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <system_error>
#include <type_traits>
#include <vector>

#include "engine/world/world.hpp"
#include "io/hdf5_handles.hpp"
#include "io/trajectory_writer.hpp"

namespace talus {
namespace {

using hdf5::Hid;

constexpr const char* kFormat = "talus-checkpoint";
constexpr uint64_t kFormatVersion = 1;

/// One checkpoint file being written or read; every failure names its path.
class File {
public:
    explicit File(std::filesystem::path path) : path_(std::move(path)) {}

    [[noreturn]] void fail(const std::string& what) const {
        throw IoError(fmt::format("checkpoint '{}': {}", path_.string(), what));
    }
    hid_t id(hid_t h, const std::string& what) const {
        if (h < 0) fail(what);
        return h;
    }
    void ok(herr_t e, const std::string& what) const {
        if (e < 0) fail(what);
    }
    const std::filesystem::path& path() const { return path_; }

    // ---- writing -------------------------------------------------------------------------

    Hid group(hid_t loc, const char* name) const {
        return Hid(id(H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                      fmt::format("cannot create group '{}'", name)),
                   H5Gclose);
    }

    void attribute(hid_t loc, const char* name, hid_t type, const void* value) const {
        Hid space(id(H5Screate(H5S_SCALAR), "dataspace"), H5Sclose);
        Hid attr(id(H5Acreate2(loc, name, type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                    fmt::format("cannot create attribute '{}'", name)),
                 H5Aclose);
        ok(H5Awrite(attr.get(), type, value), fmt::format("cannot write attribute '{}'", name));
    }
    void put(hid_t loc, const char* name, uint64_t v) const { attribute(loc, name, H5T_NATIVE_UINT64, &v); }
    void put(hid_t loc, const char* name, double v) const { attribute(loc, name, H5T_NATIVE_DOUBLE, &v); }

    void bytes(hid_t loc, const std::string& name, const void* data, std::size_t count,
               std::size_t element_size) const {
        const hsize_t n = count * element_size;
        Hid space(id(H5Screate_simple(1, &n, nullptr), "dataspace"), H5Sclose);
        Hid set(id(H5Dcreate2(loc, name.c_str(), H5T_NATIVE_UINT8, space.get(), H5P_DEFAULT,
                              H5P_DEFAULT, H5P_DEFAULT),
                   fmt::format("cannot create '{}'", name)),
                H5Dclose);
        if (n > 0)
            ok(H5Dwrite(set.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
               fmt::format("cannot write '{}'", name));
        put(set.get(), "element_size", uint64_t(element_size));
    }
    /// T: plain data (numbers, enums, Eigen's fixed-size vectors and structs of them).
    template <class T>
    void array(hid_t loc, const std::string& name, const std::vector<T>& v) const {
        bytes(loc, name, v.data(), v.size(), sizeof(T));
    }
    void text(hid_t loc, const std::string& name, const std::string& s) const {
        bytes(loc, name, s.data(), s.size(), 1);
    }

    // ---- reading -------------------------------------------------------------------------

    Hid open_group(hid_t loc, const char* name) const {
        return Hid(id(H5Gopen2(loc, name, H5P_DEFAULT), fmt::format("no group '{}'", name)),
                   H5Gclose);
    }

    void read_attribute(hid_t loc, const char* name, hid_t type, void* value) const {
        Hid attr(id(H5Aopen(loc, name, H5P_DEFAULT), fmt::format("no attribute '{}'", name)),
                 H5Aclose);
        ok(H5Aread(attr.get(), type, value), fmt::format("cannot read attribute '{}'", name));
    }
    uint64_t get_u64(hid_t loc, const char* name) const {
        uint64_t v = 0;
        read_attribute(loc, name, H5T_NATIVE_UINT64, &v);
        return v;
    }
    double get_f64(hid_t loc, const char* name) const {
        double v = 0.0;
        read_attribute(loc, name, H5T_NATIVE_DOUBLE, &v);
        return v;
    }

    std::vector<unsigned char> get_bytes(hid_t loc, const std::string& name,
                                         std::size_t element_size) const {
        Hid set(id(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), fmt::format("no dataset '{}'", name)),
                H5Dclose);
        if (get_u64(set.get(), "element_size") != element_size)
            fail(fmt::format("'{}' has elements of another size than this build's ({} bytes): "
                             "written by another build", name, element_size));
        Hid space(id(H5Dget_space(set.get()), "dataspace"), H5Sclose);
        hsize_t n = 0;
        if (H5Sget_simple_extent_ndims(space.get()) != 1 ||
            H5Sget_simple_extent_dims(space.get(), &n, nullptr) < 0 || n % element_size != 0)
            fail(fmt::format("'{}' is not a whole number of elements", name));
        std::vector<unsigned char> out(n);
        if (n > 0)
            ok(H5Dread(set.get(), H5T_NATIVE_UINT8, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()),
               fmt::format("cannot read '{}'", name));
        return out;
    }
    template <class T>
    std::vector<T> get_array(hid_t loc, const std::string& name) const {
        const std::vector<unsigned char> raw = get_bytes(loc, name, sizeof(T));
        std::vector<T> v(raw.size() / sizeof(T));
        if (!raw.empty()) std::memcpy(static_cast<void*>(v.data()), raw.data(), raw.size());
        return v;
    }
    std::string get_text(hid_t loc, const std::string& name) const {
        const std::vector<unsigned char> raw = get_bytes(loc, name, 1);
        return std::string(raw.begin(), raw.end());
    }

private:
    std::filesystem::path path_;
};

template <class Rng>
std::string rng_state(const Rng& r) {
    std::ostringstream s;
    s << r;
    return s.str();
}

/// Flushes a closed file's data to the disk (so that the rename cannot outlive it).
void sync_path(const std::filesystem::path& p) {
    const int fd = ::open(p.c_str(), O_RDONLY);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

void write_contents(const File& f, hid_t file, const Scene& scene, const RunPosition& run,
                    const std::filesystem::path& trajectory) {
    const World& w = scene.world;
    {
        Hid g = f.group(file, "state");
        const std::string version = TALUS_VERSION;
        f.text(g.get(), "format", kFormat);
        f.text(g.get(), "talus_version", version);
        f.put(g.get(), "format_version", kFormatVersion);
        f.put(g.get(), "time", w.time);
        f.put(g.get(), "step_count", w.step_count);
        f.put(g.get(), "next_id", w.next_id);
        f.put(g.get(), "bodies", uint64_t(w.bodies.size()));
        f.put(g.get(), "stage", uint64_t(run.stage));
        f.put(g.get(), "monitor_end_step", run.monitor.end_step);
        f.put(g.get(), "monitor_below_since", run.monitor.below_since);
        f.put(g.get(), "monitor_end_time", run.monitor.end_time);
        f.text(g.get(), "trajectory", trajectory.string());
    }
    {
        Hid g = f.group(file, "scene");
        f.text(g.get(), "text", scene.text);
        f.text(g.get(), "path", scene.file.string());
        f.put(g.get(), "overrides", uint64_t(scene.overrides.size()));
        for (std::size_t k = 0; k < scene.overrides.size(); ++k)
            f.text(g.get(), fmt::format("override.{}", k), scene.overrides[k]);
    }
    {
        Hid g = f.group(file, "bodies");
        w.bodies.for_each_array([&](const char* name, const auto& v) { f.array(g.get(), name, v); });
    }
    {
        Hid g = f.group(file, "walls");
        std::vector<uint8_t> active;
        std::vector<double> start;
        for (const Wall& wall : w.walls) {
            active.push_back(wall.active ? 1 : 0);
            start.push_back(wall.motion.start);
        }
        f.array(g.get(), "active", active);
        f.array(g.get(), "motion_start", start);
    }
    {
        Hid g = f.group(file, "emitters");
        for (std::size_t k = 0; k < w.emitters.size(); ++k) {
            const Emitter& e = w.emitters[k];
            Hid h = f.group(g.get(), std::to_string(k).c_str());
            f.put(h.get(), "emitted_count", e.emitted.count);
            f.put(h.get(), "emitted_mass", e.emitted.mass);
            f.put(h.get(), "seeded", uint64_t(e.seeded ? 1 : 0));
            f.put(h.get(), "next_radius", e.next_radius);
            f.text(h.get(), "rng", rng_state(e.rng));
            f.text(h.get(), "size_rng", rng_state(e.size_rng));
        }
    }
    {
        Hid g = f.group(file, "outlets");
        std::vector<uint64_t> count;
        std::vector<double> mass;
        for (const Outlet& o : w.outlets) {
            count.push_back(o.removed.count);
            mass.push_back(o.removed.mass);
        }
        f.array(g.get(), "removed_count", count);
        f.array(g.get(), "removed_mass", mass);
    }
    {
        const World::CarriedState c = w.carried_state();
        Hid g = f.group(file, "carried");
        f.array(g.get(), "warm_entries", c.warm.entries());
        f.array(g.get(), "warm_torques", c.warm.torque_entries());
        f.put(g.get(), "lipschitz", c.warm.lipschitz());
        f.array(g.get(), "joint_lambda", c.joint_lambda);
        f.array(g.get(), "wall_impulse", c.wall_loads.impulse);
        f.array(g.get(), "wall_angular_impulse", c.wall_loads.angular_impulse);
        f.put(g.get(), "wall_time", c.wall_loads.time);
        f.put(g.get(), "slip_speed", c.control.slip_speed);
        f.put(g.get(), "chosen_dt", c.control.chosen);
        f.put(g.get(), "penetration", c.control.penetration);
        f.put(g.get(), "previous_penetration", c.control.previous_penetration);
    }
}

}  // namespace

void write_checkpoint(const std::filesystem::path& path, const Scene& scene,
                      const RunPosition& run, const std::filesystem::path& trajectory) {
    const hdf5::QuietHdf5 quiet;
    const File f(path);
    std::filesystem::path tmp = path;
    tmp += ".tmp";
    try {
        {
            Hid file(f.id(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                          fmt::format("cannot create '{}'", tmp.string())),
                     H5Fclose);
            write_contents(f, file.get(), scene, run, trajectory);
            if (!file.reset()) f.fail(fmt::format("cannot close '{}' (disk full?)", tmp.string()));
        }
        sync_path(tmp);
        std::error_code ec;
        std::filesystem::rename(tmp, path, ec);
        if (ec) f.fail(fmt::format("cannot rename '{}' over it: {}", tmp.string(), ec.message()));
        const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : ".";
        sync_path(dir);
    } catch (...) {
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        throw;
    }
}

std::optional<CheckpointStatus> checkpoint_status(const std::filesystem::path& path) {
    const hdf5::QuietHdf5 quiet;
    const File f(path);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec) || H5Fis_hdf5(path.c_str()) <= 0)
        return std::nullopt;
    try {
        Hid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
        if (!file.valid()) return std::nullopt;
        Hid state(H5Gopen2(file.get(), "state", H5P_DEFAULT), H5Gclose);
        if (!state.valid() || H5Lexists(state.get(), "format", H5P_DEFAULT) <= 0 ||
            f.get_text(state.get(), "format") != kFormat)
            return std::nullopt;
        CheckpointStatus st;
        st.time = f.get_f64(state.get(), "time");
        st.step = f.get_u64(state.get(), "step_count");
        st.trajectory = f.get_text(state.get(), "trajectory");
        Hid scene_group(H5Gopen2(file.get(), "scene", H5P_DEFAULT), H5Gclose);
        if (scene_group.valid()) st.scene = f.get_text(scene_group.get(), "path");
        if (H5Aexists(state.get(), "finished_step") > 0) {
            st.finished = true;
            st.finished_step = f.get_u64(state.get(), "finished_step");
            st.finished_time = f.get_f64(state.get(), "finished_time");
        }
        return st;
    } catch (const IoError&) {
        return std::nullopt;
    }
}

void mark_checkpoint_finished(const std::filesystem::path& path, double time, uint64_t step) {
    const hdf5::QuietHdf5 quiet;
    const File f(path);
    Hid file(f.id(H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), "cannot open it for writing"),
             H5Fclose);
    Hid state(f.id(H5Gopen2(file.get(), "state", H5P_DEFAULT), "no group 'state'"), H5Gclose);
    for (const char* name : {"finished_step", "finished_time"})
        if (H5Aexists(state.get(), name) > 0) f.ok(H5Adelete(state.get(), name), "cannot update it");
    f.put(state.get(), "finished_time", time);
    f.put(state.get(), "finished_step", step);
    if (!file.reset()) f.fail("cannot close it (disk full?)");
}

Resumed read_checkpoint(const std::filesystem::path& path) {
    const hdf5::QuietHdf5 quiet;
    const File f(path);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) f.fail("no such file");
    Hid file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (!file.valid()) f.fail("not an HDF5 file");
    Hid state(H5Gopen2(file.get(), "state", H5P_DEFAULT), H5Gclose);
    if (!state.valid() || H5Lexists(state.get(), "format", H5P_DEFAULT) <= 0 ||
        f.get_text(state.get(), "format") != kFormat)
        f.fail("not a Talus checkpoint");
    const std::string version = f.get_text(state.get(), "talus_version");
    if (version != TALUS_VERSION || f.get_u64(state.get(), "format_version") != kFormatVersion)
        f.fail(fmt::format("written by Talus {}; this is Talus {}, which cannot continue it",
                           version, TALUS_VERSION));

    Hid scene_group = f.open_group(file.get(), "scene");
    const std::string text = f.get_text(scene_group.get(), "text");
    const std::string scene_path = f.get_text(scene_group.get(), "path");
    std::vector<std::string> overrides;
    const uint64_t n_overrides = f.get_u64(scene_group.get(), "overrides");
    for (uint64_t k = 0; k < n_overrides; ++k)
        overrides.push_back(f.get_text(scene_group.get(), fmt::format("override.{}", k)));

    Resumed r{parse_scene(text, scene_path, overrides), {}, f.get_text(state.get(), "trajectory")};
    r.scene.file = scene_path;
    World& w = r.scene.world;
    w.time = f.get_f64(state.get(), "time");
    w.step_count = f.get_u64(state.get(), "step_count");
    w.next_id = f.get_u64(state.get(), "next_id");
    r.run.stage = f.get_u64(state.get(), "stage");
    r.run.monitor.end_step = f.get_u64(state.get(), "monitor_end_step");
    r.run.monitor.below_since = f.get_f64(state.get(), "monitor_below_since");
    if (H5Aexists(state.get(), "monitor_end_time") > 0)
        r.run.monitor.end_time = f.get_f64(state.get(), "monitor_end_time");
    // (stage = the number of stages: the state at the run's end, with nothing left to run)
    if (r.run.stage > r.scene.stages.size())
        f.fail(fmt::format("stage {} of a scene with {} stages", r.run.stage, r.scene.stages.size()));

    const uint64_t n = f.get_u64(state.get(), "bodies");
    {
        Hid g = f.open_group(file.get(), "bodies");
        w.bodies.for_each_array([&](const char* name, auto& v) {
            using T = typename std::decay_t<decltype(v)>::value_type;
            v = f.get_array<T>(g.get(), name);
            if (v.size() != n)
                f.fail(fmt::format("/bodies/{} has {} entries for {} bodies", name, v.size(), n));
        });
        // the shared tables come from the scene: every body must still find its entry
        for (std::size_t i = 0; i < n; ++i) {
            const int32_t m = w.bodies.motion[i];
            if (m != kDynamic && (m < 0 || std::size_t(m) >= w.bodies.motions.size()))
                f.fail(fmt::format("body {} follows motion {}, which the scene does not have",
                                   w.bodies.id[i], m));
        }
    }
    {
        Hid g = f.open_group(file.get(), "walls");
        const auto active = f.get_array<uint8_t>(g.get(), "active");
        const auto start = f.get_array<double>(g.get(), "motion_start");
        if (active.size() != w.walls.size() || start.size() != w.walls.size())
            f.fail(fmt::format("{} walls, but its scene has {}", active.size(), w.walls.size()));
        for (std::size_t k = 0; k < w.walls.size(); ++k) {
            w.walls[k].active = active[k] != 0;
            w.walls[k].motion.start = start[k];
        }
    }
    {
        Hid g = f.open_group(file.get(), "emitters");
        H5G_info_t info;
        f.ok(H5Gget_info(g.get(), &info), "cannot list /emitters");
        const hsize_t stored = info.nlinks;
        if (stored != w.emitters.size())
            f.fail(fmt::format("{} emitters, but its scene has {}", stored, w.emitters.size()));
        for (std::size_t k = 0; k < w.emitters.size(); ++k) {
            Emitter& e = w.emitters[k];
            Hid h = f.open_group(g.get(), std::to_string(k).c_str());
            e.emitted.count = f.get_u64(h.get(), "emitted_count");
            e.emitted.mass = f.get_f64(h.get(), "emitted_mass");
            e.seeded = f.get_u64(h.get(), "seeded") != 0;
            e.next_radius = f.get_f64(h.get(), "next_radius");
            std::istringstream rng(f.get_text(h.get(), "rng")), size_rng(f.get_text(h.get(), "size_rng"));
            rng >> e.rng;
            size_rng >> e.size_rng;
            if (!rng || !size_rng) f.fail(fmt::format("emitter {}: unreadable generator state", k));
        }
    }
    {
        Hid g = f.open_group(file.get(), "outlets");
        const auto count = f.get_array<uint64_t>(g.get(), "removed_count");
        const auto mass = f.get_array<double>(g.get(), "removed_mass");
        if (count.size() != w.outlets.size() || mass.size() != w.outlets.size())
            f.fail(fmt::format("{} outlets, but its scene has {}", count.size(), w.outlets.size()));
        for (std::size_t k = 0; k < w.outlets.size(); ++k) w.outlets[k].removed = {count[k], mass[k]};
    }
    {
        Hid g = f.open_group(file.get(), "carried");
        World::CarriedState c;
        c.warm.restore(f.get_array<WarmStartCache::Entry>(g.get(), "warm_entries"),
                       f.get_array<WarmStartCache::TorqueEntry>(g.get(), "warm_torques"),
                       f.get_f64(g.get(), "lipschitz"));
        c.joint_lambda = f.get_array<double>(g.get(), "joint_lambda");
        c.wall_loads.impulse = f.get_array<Vec3>(g.get(), "wall_impulse");
        c.wall_loads.angular_impulse = f.get_array<Vec3>(g.get(), "wall_angular_impulse");
        c.wall_loads.time = f.get_f64(g.get(), "wall_time");
        if (H5Aexists(g.get(), "slip_speed") > 0) {  // since the adaptive step
            c.control.slip_speed = f.get_f64(g.get(), "slip_speed");
            c.control.chosen = f.get_f64(g.get(), "chosen_dt");
            c.control.penetration = f.get_f64(g.get(), "penetration");
            c.control.previous_penetration = f.get_f64(g.get(), "previous_penetration");
        }
        w.restore_carried_state(std::move(c));
    }
    return r;
}

std::filesystem::path default_checkpoint_path(const std::filesystem::path& trajectory) {
    std::filesystem::path p = trajectory;
    if (p.extension() == ".h5") p.replace_extension();
    p += ".checkpoint.h5";
    return p;
}

}  // namespace talus
