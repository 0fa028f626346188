// Why: the scene file is the user's whole description of a run (docs/design.md §10), so a typo
// must never turn into a silently different simulation. The reader therefore works in
// passes over the parsed TOML document, each collecting every problem it can find:
//   1. syntax (toml++ reports the line),
//   2. --set overrides, applied to the document before anything is checked,
//   3. unknown keys, against the schema (io/scene/schema.cpp), with the nearest valid key suggested,
//   4. types, required keys and value ranges, section by section,
//   5. geometry: generate the grains, then look for overlaps between bodies and with walls.
// A later pass runs only when the earlier ones found nothing, so one mistake does not
// cascade into pages of follow-on messages. Locations come from toml++'s source regions;
// nodes placed by an override are located by the override text instead of a line.
//
// The passes live here; the tables' readers in the files beside (io/scene/readers.hpp), the
// reader's toolkit and the key schema in io/scene/reader.hpp and schema.cpp.
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "core/kinematic.hpp"
#include "io/scene/readers.hpp"
#include "io/checkpoint.hpp"
#include "io/trajectory_info.hpp"

namespace talus {

using namespace scene_read;

namespace {

/// How deep [start] may chain checkpoints: a checkpoint's scene is parsed again to read it,
/// and its own [start] may name another checkpoint (or, by mistake, the one being read).
constexpr int kMaxStartDepth = 8;
thread_local int start_depth = 0;

/// For each of an earlier run's material names, this scene's material of that name, or −1.
std::vector<int64_t> materials_by_name(const std::vector<std::string>& names, const MaterialTable& table) {
    std::vector<int64_t> out(names.size(), -1);
    for (std::size_t k = 0; k < names.size(); ++k)
        for (std::size_t m = 0; m < table.materials.size(); ++m)
            if (table.materials[m].name == names[k]) out[k] = int64_t(m);
    return out;
}

/// [start] from a trajectory: the bodies of one frame, in its row order with its ids, at
/// t = 0; materials matched by name.
void start_from_trajectory(Reader& r, const Ctx& c, const std::filesystem::path& path,
                           int64_t frame, World& world) {
    FrameBodies b;
    try {
        b = read_frame_bodies(path, frame);
    } catch (const FrameOutOfRange& e) {
        r.problem_at(c, "frame", e.what());
        return;
    } catch (const std::exception& e) {
        r.problem_at(c, "from", e.what());
        return;
    }
    const std::vector<int64_t> material = materials_by_name(b.material_names, world.materials);
    uint64_t next_id = 0;
    for (std::size_t i = 0; i < b.id.size(); ++i) {
        if (b.shape[i] != uint8_t(Shape::Sphere)) {
            r.problem_at(c, "from",
                         fmt::format("'{}' frame {}: body {} is a {}; a start from a trajectory "
                                     "restores spheres only (the file keeps no other shape's size): "
                                     "start from the run's checkpoint instead",
                                     path.string(), b.frame, b.id[i],
                                     b.shape[i] < 4 ? std::string(name_of(Shape(b.shape[i]))) : "body of unknown shape"));
            return;
        }
        const uint32_t mk = b.material[i];
        if (mk >= material.size() || material[mk] < 0) {
            r.problem_at(c, "from",
                         fmt::format("'{}' frame {}: body {} is of material '{}', which this scene "
                                     "does not define (add a [[material]] of that name)",
                                     path.string(), b.frame, b.id[i],
                                     mk < b.material_names.size() ? b.material_names[mk] : std::to_string(mk)));
            return;
        }
        const uint32_t m = uint32_t(material[mk]);
        world.bodies.add_sphere(b.id[i], b.position[i], b.radius[i], world.materials.materials[m].density, m,
                                b.velocity[i], b.angular_velocity[i], b.orientation[i]);
        next_id = std::max(next_id, b.id[i] + 1);
    }
    world.next_id = next_id;
}

/// The warm-start entries of a checkpoint that this scene can use: those between two bodies,
/// and those with walls only when the scene's walls are the checkpoint's in number and type
/// (a wall is keyed by its index; a removed gate would shift the others).
WarmStartCache carried_warm_start(const WarmStartCache& from, const std::vector<Wall>& from_walls,
                                  const std::vector<Wall>& walls) {
    bool same_walls = from_walls.size() == walls.size();
    for (std::size_t k = 0; same_walls && k < walls.size(); ++k)
        same_walls = from_walls[k].type == walls[k].type;
    const auto keep = [&](const auto& e) { return same_walls || !(e.key_a & kWallKeyBit); };
    std::vector<WarmStartCache::Entry> entries;
    for (const auto& e : from.entries())
        if (keep(e)) entries.push_back(e);
    std::vector<WarmStartCache::TorqueEntry> torques;
    for (const auto& e : from.torque_entries())
        if (keep(e)) torques.push_back(e);
    WarmStartCache out;
    out.restore(std::move(entries), std::move(torques), from.lipschitz());
    return out;
}

/// [start] from a checkpoint: every body of the saved state with its shape (clumps with
/// their templates), kinematic mark and stable id, at t = 0, and the warm start; materials
/// matched by name, masses following this scene's densities.
void start_from_checkpoint(Reader& r, const Ctx& c, const std::filesystem::path& path, World& world) {
    if (r.find(c, "frame")) {
        r.problem_at(c, "frame", fmt::format("'{}' is a checkpoint, which holds one state; frame "
                                             "chooses among a trajectory's frames", path.string()));
        return;
    }
    if (start_depth >= kMaxStartDepth) {
        r.problem_at(c, "from", fmt::format("'{}': checkpoints start from checkpoints more than {} "
                                            "deep (does a run start from its own checkpoint?)",
                                            path.string(), kMaxStartDepth));
        return;
    }
    std::optional<Resumed> saved;
    try {
        // one level deeper while the checkpoint's own scene is read, on every way out
        struct Deeper {
            Deeper() { ++start_depth; }
            ~Deeper() { --start_depth; }
        } deeper;
        saved.emplace(read_checkpoint(path));
    } catch (const std::exception& e) {
        r.problem_at(c, "from", fmt::format("'{}': {}", path.string(), e.what()));
        return;
    }
    const World& from = saved->scene.world;
    const BodyStore& b = from.bodies;
    std::vector<std::string> names;
    for (const Material& m : from.materials.materials) names.push_back(m.name);
    const std::vector<int64_t> material = materials_by_name(names, world.materials);
    for (std::size_t i = 0; i < b.size(); ++i) {
        const uint32_t mk = b.material[i];
        if (mk >= material.size() || material[mk] < 0) {
            r.problem_at(c, "from",
                         fmt::format("'{}' (t = {} s): body {} is of material '{}', which this "
                                     "scene does not define (add a [[material]] of that name)",
                                     path.string(), from.time, b.id[i],
                                     mk < material.size() ? from.materials.materials[mk].name : std::to_string(mk)));
            return;
        }
        if (b.kinematic(i) && b.motions[std::size_t(b.motion[i])].motion.moving()) {
            // its motion's clock would restart at t = 0 and move it back to where it began
            r.problem_at(c, "from",
                         fmt::format("'{}' (t = {} s): body {} follows a prescribed motion, whose "
                                     "clock a start at t = 0 would set back; continue that run "
                                     "with --resume instead", path.string(), from.time, b.id[i]));
            return;
        }
    }
    for (std::size_t i = 0; i < b.size(); ++i) {
        const std::size_t k = world.bodies.size();
        world.bodies.append_from(b, i);  // fixed grains stay fixed; a clump takes its template
        const uint32_t m = uint32_t(material[b.material[i]]);
        world.bodies.material[k] = m;
        // the mass follows this scene's density (a body's mass is its density times its shape's)
        const double was = from.materials.materials[b.material[i]].density;
        const double now = world.materials.materials[m].density;
        if (was != now && !world.bodies.kinematic(k)) {
            world.bodies.inv_mass[k] *= was / now;
            world.bodies.inv_inertia[k] *= was / now;
        }
    }
    world.next_id = from.next_id;
    World::CarriedState carried = world.carried_state();
    carried.warm = carried_warm_start(from.carried_state().warm, from.walls, world.walls);
    world.restore_carried_state(std::move(carried));
}

/// [start]: the bodies of an earlier run (a frame of its trajectory, or its checkpoint),
/// into `world`, and the file into `start_from`. False (and nothing added) without the table.
bool start_from(Reader& r, const Ctx& top, const std::filesystem::path& scene_file,
                const std::vector<BodyEntry>& entries, World& world,
                std::filesystem::path& start_from) {
    const auto c = r.table(top, "start", Need::Optional);
    if (!c) return false;
    const auto from = r.string(*c, "from", Need::Required);
    const int64_t frame = r.integer(*c, "frame", Need::Optional).value_or(-1);
    if (!from) return true;
    if (!entries.empty()) {
        r.problem(entries.front().place, entries.front().path,
                  "a scene with [start] takes its bodies from the run it starts from; add more "
                  "with an [[emitter]], or start from a run that has them");
        return true;
    }
    std::filesystem::path path(*from);
    if (path.is_relative()) path = (scene_file.parent_path() / path).lexically_normal();
    start_from = path;
    if (checkpoint_status(path))
        start_from_checkpoint(r, *c, path, world);
    else
        start_from_trajectory(r, *c, path, frame, world);
    return true;
}

}  // namespace

Scene parse_scene(std::string_view text, const std::filesystem::path& name,
                  const std::vector<std::string>& overrides, const SceneLimits& limits) {
    Reader r(name.string(), limits.max_bodies);
    r.progress = limits.progress;
    toml::table root;
    try {
        root = toml::parse(text, std::string_view(r.file()));
    } catch (const toml::parse_error& e) {
        throw SceneError(fmt::format("{}:{}: syntax error: {}", r.file(), e.source().begin.line,
                                     e.description()));
    }

    for (const std::string& o : overrides) apply_override(root, o, r);
    r.throw_if_any();  // a broken override makes any further message misleading

    const Ctx top{&root, "", r.line_place(1), &kRootKeys};
    r.check_keys(top, kRootKeys);

    Scene scene;
    scene.file = name;
    scene.text = std::string(text);
    scene.overrides = overrides;
    World& world = scene.world;
    world.simulation = read_simulation(r, top);
    world.simulation.periodic = read_periodic(r, top);
    world.solver = read_solver(r, top);
    scene.output = read_output(r, top, name);
    world.materials = read_materials(r, top, world.solver);
    read_friction_pairs(r, top, world.materials, world.solver);
    std::vector<Place> wall_places;
    world.walls = read_walls(r, top, world.materials, name, wall_places);
    scene.stages = read_stages(r, top, world.walls);
    if (r.ok()) check_step(r, top, world.simulation, scene.stages, scene.output);

    // [[particles]] and [[body]] are separate arrays in the document; merge them back into
    // file order by the line of each entry's header, which fixes the ids.
    std::vector<BodyEntry> entries;
    for (const Ctx& c : r.entries(top, "particles"))
        if (auto e = read_particles(r, c, world.materials, world.simulation.periodic.any()))
            entries.push_back(std::move(*e));
    for (const Ctx& c : r.entries(top, "body"))
        if (auto e = read_body(r, c, world.materials, world.simulation.periodic.any()))
            entries.push_back(std::move(*e));
    std::stable_sort(entries.begin(), entries.end(), [](const BodyEntry& a, const BodyEntry& b) {
        return a.place.line < b.place.line;
    });
    r.throw_if_any();

    {
        // before generating them: a scene beyond the machine is refused in a moment, not
        // after minutes of filling and an out-of-memory crash
        double total = 0.0;
        const BodyEntry* largest = nullptr;
        for (const BodyEntry& e : entries) {
            total += entry_bodies(e);
            if (!largest || entry_bodies(e) > entry_bodies(*largest)) largest = &e;
        }
        if (largest)
            check_memory(r, limits.memory_bytes, total, world.solver.type, largest->place, largest->path,
                         entries.size() > 1 ? "the scene's entries generate" : "this entry generates");
        r.throw_if_any();
    }
    const bool started = start_from(r, top, name, entries, world, scene.start_from);
    r.throw_if_any();
    if (!started) {
        place_bodies(r, entries, world);
        r.throw_if_any();
        // kinematic bodies at their pose at t = 0 (a sine with a phase starts displaced)
        place_kinematic(world.bodies, 0.0, 0.0, world.simulation.dt, false);
        check_overlaps(r, entries, world, wall_places);
    }
    if (world.bodies.size() == 0 && !r.find(top, "emitter"))
        r.problem(top.place, "body",
                  "the scene has no bodies (add a [[particles]], [[body]] or [[emitter]] entry)");
    r.throw_if_any();
    read_joints(r, top, world);
    read_emitters(r, top, world);
    read_outlets(r, top, world);
    r.throw_if_any();
    default_envelope(r, top, world);
    default_max_dt(r, top, world);
    check_periodic(r, top, world);  // needs the envelope
    r.throw_if_any();
    if (!world.emitters.empty()) {
        // what the emitters can add over the whole run (mass rates: in grains of the
        // largest radius, the fewest)
        double run_end = 0.0;
        for (const Stage& st : scene.stages) run_end += st.duration;
        double added = 0.0;
        for (const Emitter& e : world.emitters) {
            const double span = std::max(0.0, std::min(e.stop, run_end) - e.start);
            const double rm = e.size.max;
            const double grain = world.materials.materials[e.material].density * 4.0 / 3.0 *
                                 3.14159265358979323846 * rm * rm * rm;
            added += std::floor(e.rate * span / (e.per_mass ? grain : 1.0));
        }
        const auto emitters = r.entries(top, "emitter");
        check_memory(r, limits.memory_bytes, double(world.bodies.size()) + added, world.solver.type,
                     emitters.front().place, emitters.front().path,
                     "with what its emitters add, the run reaches");
        r.throw_if_any();
    }
    check_resistance_lengths(r, top, world);
    // emitted bodies continue the ids 0 … n−1 (after a start: after the largest id)
    if (!started) world.next_id = world.bodies.size();
    scene.warnings = r.take_warnings();
    return scene;
}

double available_memory_bytes() {
    double limit = 0.0;
    const auto take = [&](double v) {
        if (v > 0.0 && (limit == 0.0 || v < limit)) limit = v;
    };
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) take(double(pages) * double(page));
    // cgroup v2: the group's limit, "max" when there is none
    if (std::ifstream in("/sys/fs/cgroup/memory.max"); in) {
        std::string v;
        if (in >> v && v != "max") take(std::strtod(v.c_str(), nullptr));
    }
    rlimit as{};
    if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) take(double(as.rlim_cur));
    return limit;
}

Scene load_scene(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                 const SceneLimits& limits) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw SceneError(fmt::format("{}: cannot open the scene file", file.string()));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw SceneError(fmt::format("{}: cannot read the scene file", file.string()));
    return parse_scene(text.str(), file, overrides, limits);
}

}  // namespace talus
