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
#include "io/trajectory_info.hpp"

namespace talus {

using namespace scene_read;

namespace {

/// [start]: the bodies of a frame of an earlier run, in its row order with its ids, at
/// t = 0; materials matched by name. False (and nothing added) without the table.
bool start_from_frame(Reader& r, const Ctx& top, const std::filesystem::path& scene_file,
                      const std::vector<BodyEntry>& entries, World& world) {
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
    FrameBodies b;
    try {
        b = read_frame_bodies(path, frame);
    } catch (const FrameOutOfRange& e) {
        r.problem_at(*c, "frame", e.what());
        return true;
    } catch (const std::exception& e) {
        r.problem_at(*c, "from", e.what());
        return true;
    }
    // the file's materials by name in this scene
    std::vector<int64_t> material(b.material_names.size(), -1);
    for (std::size_t k = 0; k < b.material_names.size(); ++k)
        for (std::size_t m = 0; m < world.materials.materials.size(); ++m)
            if (world.materials.materials[m].name == b.material_names[k]) material[k] = int64_t(m);
    uint64_t next_id = 0;
    for (std::size_t i = 0; i < b.id.size(); ++i) {
        if (b.shape[i] != uint8_t(Shape::Sphere)) {
            r.problem_at(*c, "from",
                         fmt::format("'{}' frame {}: body {} is a {}; a start from a trajectory "
                                     "restores spheres only (the file keeps no other shape's size)",
                                     path.string(), b.frame, b.id[i],
                                     b.shape[i] < 4 ? std::string(name_of(Shape(b.shape[i]))) : "body of unknown shape"));
            return true;
        }
        const uint32_t mk = b.material[i];
        if (mk >= material.size() || material[mk] < 0) {
            r.problem_at(*c, "from",
                         fmt::format("'{}' frame {}: body {} is of material '{}', which this scene "
                                     "does not define (add a [[material]] of that name)",
                                     path.string(), b.frame, b.id[i],
                                     mk < b.material_names.size() ? b.material_names[mk] : std::to_string(mk)));
            return true;
        }
        const uint32_t m = uint32_t(material[mk]);
        world.bodies.add_sphere(b.id[i], b.position[i], b.radius[i], world.materials.materials[m].density, m,
                                b.velocity[i], b.angular_velocity[i], b.orientation[i]);
        next_id = std::max(next_id, b.id[i] + 1);
    }
    world.next_id = next_id;
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

    // Ellipsoid–ellipsoid contact is not implemented (collision/narrow_phase.hpp): refuse a
    // scene that could need it rather than stopping mid-run.
    const BodyEntry* first_ellipsoid = nullptr;
    for (const BodyEntry& e : entries) {
        if (e.shape != Shape::Ellipsoid) continue;
        if (!first_ellipsoid) {
            first_ellipsoid = &e;
            continue;
        }
        r.problem(e.place, e.path + ".shape",
                  fmt::format("a scene may hold one ellipsoid for now (ellipsoid–ellipsoid "
                              "contact is not implemented); the first is {}", first_ellipsoid->path));
    }
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
            check_memory(r, limits.memory_bytes, total, largest->place, largest->path,
                         entries.size() > 1 ? "the scene's entries generate" : "this entry generates");
        r.throw_if_any();
    }
    const bool started = start_from_frame(r, top, name, entries, world);
    r.throw_if_any();
    if (!started) {
        place_bodies(r, entries, world);
        r.throw_if_any();
        // kinematic bodies at their pose at t = 0 (a sine with a phase starts displaced)
        place_kinematic(world.bodies, 0.0, 0.0, world.simulation.dt, false);
        check_overlaps(r, entries, world, wall_places);
    }
    check_periodic(r, top, world);
    if (world.bodies.size() == 0 && !r.find(top, "emitter"))
        r.problem(top.place, "body",
                  "the scene has no bodies (add a [[particles]], [[body]] or [[emitter]] entry)");
    r.throw_if_any();
    read_joints(r, top, world);
    read_emitters(r, top, world);
    read_outlets(r, top, world);
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
        check_memory(r, limits.memory_bytes, double(world.bodies.size()) + added,
                     emitters.front().place, emitters.front().path,
                     "with what its emitters add, the run reaches");
        r.throw_if_any();
    }
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
