// Checks of the generated scene before it runs: the memory it needs, and overlaps at
// t = 0 between bodies and with walls.
#include "io/scene/readers.hpp"

#include "engine/flow/particle_fill.hpp"
#include "engine/flow/start_overlaps.hpp"
#include "io/text_format.hpp"

namespace talus::scene_read {

/// A count held in a double, digits grouped ("1,000,000"; "1.2e+25" beyond 64 bits).
static std::string count_text(double n) {
    return n >= 0.0 && n < 1.8e19 ? group_digits(uint64_t(n)) : fmt::format("{:.3g}", n);
}

/// Bodies an entry will generate (a volume-fraction fill: at least, with the largest radius).
double entry_bodies(const BodyEntry& e) {
    switch (e.fill) {
        case BodyEntry::Fill::Single: return 1.0;
        case BodyEntry::Fill::Lattice: {
            const auto n = lattice_extent(e.min, e.max, e.spacing);
            return double(n[0]) * double(n[1]) * double(n[2]);
        }
        case BodyEntry::Fill::Random:
            if (e.volume_fraction > 0.0) {
                const double r = e.size ? e.size->max : e.radius;
                return std::floor(e.volume_fraction * fill_region_volume(e.min, e.max, r) /
                                  (4.0 / 3.0 * 3.14159265358979323846 * r * r * r));
            }
            return double(e.count);
    }
    return 0.0;
}

/// Refuses a scene whose `bodies` cannot fit in `limit` bytes even at the least estimate;
/// the problem is located at `place`/`key`. The message gives the typical resident peak too
/// (run_memory in io/scene.hpp).
void check_memory(Reader& r, double limit, double bodies, SolverType solver, const Place& place,
                  std::string_view key, std::string_view what) {
    if (!(limit > 0.0)) return;
    const MemoryEstimate m = run_memory(bodies, solver);
    if (m.least <= limit) return;
    r.problem(place, key,
              fmt::format("{} {} bodies, which need at least {:.3g} GB of address space at the "
                          "run's peak (resident typically {:.3g} GB, with three contacts per "
                          "body), more than the {:.3g} GB this process may use: fewer or larger "
                          "grains, or a machine with more memory (docs/memory.md)",
                          what, count_text(bodies), m.least / 1e9, m.typical / 1e9,
                          limit / 1e9));
}

/// Overlaps at t = 0 between bodies and with walls (engine/flow/start_overlaps.hpp),
/// reported at the later body's entry; the first kMaxListedOverlaps are listed.
void check_overlaps(Reader& r, const std::vector<BodyEntry>& entries, const World& world,
                    const std::vector<Place>& wall_places) {
    const BodyStore& bodies = world.bodies;
    const auto entry_of = [&](std::size_t id) -> const BodyEntry& {
        auto it =
            std::upper_bound(entries.begin(), entries.end(), id,
                             [](std::size_t v, const BodyEntry& e) { return v < e.first_id; });
        return *(it - 1);
    };
    const auto wall_name = [&](std::size_t w) {
        const std::string_view kind = name_of(world.walls[w].type);
        return wall_places[w].line > 0
                   ? fmt::format("{} wall.{} (line {})", kind, w, wall_places[w].line)
                   : fmt::format("{} wall.{}", kind, w);
    };
    std::size_t listed = 0, unlisted = 0;
    const BodyEntry* last_entry = nullptr;
    // one problem at `body`'s entry, or only counted past the listing limit
    const auto report = [&](std::size_t body, auto&& text) {
        if (listed == kMaxListedOverlaps) {
            ++unlisted;
            return;
        }
        const BodyEntry& e = entry_of(body);
        r.problem(e.place, e.path, text());
        last_entry = &e;
        ++listed;
    };
    const StartOverlaps found = find_start_overlaps(bodies, world.walls, kOverlapTolerance, world.simulation.periodic);

    for (const BodyOverlap& o : found.bodies)
        report(o.b, [&] {
            const BodyEntry& ea = entry_of(o.a);
            std::string text = fmt::format("bodies {} and {} overlap by {:.3g} m{}", o.a, o.b, o.depth,
                                           o.shift.isZero(0.0) ? "" : " through a periodic face");
            if (&ea != &entry_of(o.b))
                text += ea.place.line > 0
                            ? fmt::format(" (body {} is from {}, line {})", o.a, ea.path, ea.place.line)
                            : fmt::format(" (body {} is from {})", o.a, ea.path);
            return text;
        });
    static constexpr const char* kFaceName[6] = {"-x", "+x", "-y", "+y", "-z", "+z"};
    for (const FaceOverlap& f : found.faces)
        report(f.overlap.body, [&] {
            const WallOverlap& o = f.overlap;
            if (world.walls[o.wall].type == WallType::Plane)
                return f.centre_out ? fmt::format("the centre of body {} is behind {}", o.body,
                                                  wall_name(o.wall))
                                    : fmt::format("body {} overlaps {} by {:.3g} m", o.body,
                                                  wall_name(o.wall), o.depth);
            return f.centre_out ? fmt::format("the centre of body {} is outside {}", o.body,
                                              wall_name(o.wall))
                                : fmt::format("body {} crosses the {} face of {} by {:.3g} m", o.body,
                                              kFaceName[o.face], wall_name(o.wall), o.depth);
        });
    // mesh contacts are for spheres, clumps and capsules only
    for (const MeshOverlap& m : found.meshes)
        report(m.body, [&] {
            const Shape shape = bodies.shape[m.body];
            return shape != Shape::Ellipsoid
                       ? fmt::format("body {} overlaps {} (triangle {}) by {:.3g} m", m.body,
                                     wall_name(m.wall), m.triangle, m.radius - m.distance)
                       : fmt::format("body {} is within its bounding radius of {} (triangle "
                                     "{}): mesh walls collide with spheres, clumps and capsules only",
                                     m.body, wall_name(m.wall), m.triangle);
        });
    // cone and orifice contacts are for spheres, each sphere of a clump (the deepest is
    // reported) and capsules; cylinders collide with every shape
    for (const CylinderOverlap& c : found.cylinders)
        report(c.body, [&] {
            const Shape shape = bodies.shape[c.body];
            const bool round = shape == Shape::Sphere || shape == Shape::Clump;
            if (shape == Shape::Ellipsoid && world.walls[c.wall].type != WallType::Cylinder)
                return fmt::format("body {} is within its bounding radius of {}: {} walls "
                                   "collide with spheres, clumps and capsules only", c.body, wall_name(c.wall),
                                   name_of(world.walls[c.wall].type));
            if (round && c.distance < 0.0)
                return fmt::format("the centre of {} {} is {} {}",
                                   shape == Shape::Clump ? "a sphere of body" : "body", c.body,
                                   world.walls[c.wall].inside ? "outside" : "inside", wall_name(c.wall));
            return fmt::format("body {} overlaps {} by {:.3g} m", c.body, wall_name(c.wall),
                               c.radius - c.distance);
        });
    if (unlisted > 0)
        r.problem(last_entry->place, last_entry->path,
                  fmt::format("and {} more overlap problems not listed", unlisted));
}

}  // namespace talus::scene_read
