// Checks of the generated scene before it runs: the memory it needs, and overlaps at
// t = 0 between bodies and with walls.
#include "io/scene/readers.hpp"

#include "collision/mesh.hpp"
#include "collision/narrow_phase.hpp"
#include "io/particle_fill.hpp"
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
                return std::floor(e.volume_fraction * (e.max - e.min).prod() /
                                  (4.0 / 3.0 * 3.14159265358979323846 * r * r * r));
            }
            return double(e.count);
    }
    return 0.0;
}

/// Refuses a scene whose `bodies` cannot fit in `limit` bytes even at the least estimate;
/// the problem is located at `place`/`key`.
void check_memory(Reader& r, double limit, double bodies, const Place& place, std::string_view key,
                  std::string_view what) {
    if (!(limit > 0.0)) return;
    const MemoryEstimate m = run_memory(bodies);
    if (m.least <= limit) return;
    r.problem(place, key,
              fmt::format("{} {} bodies, which need at least {:.3g} GB at the run's peak "
                          "(typically {:.3g} GB: 340 bytes per body and 520 per contact, one to "
                          "three contacts per body), more than the {:.3g} GB this process may "
                          "use: fewer or larger grains, or a machine with more memory "
                          "(docs/memory.md)",
                          what, count_text(bodies), m.least / 1e9, m.typical / 1e9,
                          limit / 1e9));
}

/// Overlaps at t = 0 between bodies and with walls, reported at the later body's entry.
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
        const WallType type = world.walls[w].type;
        const char* kind = type == WallType::Plane ? "plane"
                           : type == WallType::Box ? "box"
                           : type == WallType::Cylinder ? "cylinder"
                                                        : "mesh";
        return wall_places[w].line > 0
                   ? fmt::format("{} wall.{} (line {})", kind, w, wall_places[w].line)
                   : fmt::format("{} wall.{}", kind, w);
    };
    std::size_t listed = 0, unlisted = 0;
    const BodyEntry* last_entry = nullptr;

    // Bounding spheres first; a pair with a capsule or an ellipsoid is then measured exactly.
    std::vector<BodyOverlap> body_overlaps;
    std::vector<BodyOverlap> unsupported;  // bounding spheres overlap, no contact routine
    for (BodyOverlap o : find_body_overlaps(bodies.position, bodies.radius, kOverlapTolerance)) {
        if (bodies.kinematic(o.a) && bodies.kinematic(o.b)) continue;  // they never touch
        if (bodies.shape[o.a] != Shape::Sphere || bodies.shape[o.b] != Shape::Sphere) {
            std::vector<ShapeContact> c;
            const int n = collide_pair(bodies, o.a, o.b, std::numeric_limits<double>::infinity(), c);
            if (n < 0) {  // no contact routine (ellipsoid pairs are rejected earlier)
                unsupported.push_back(o);
                continue;
            }
            double gap = std::numeric_limits<double>::infinity();
            for (int k = 0; k < n; ++k) gap = std::min(gap, c[k].gap);
            o.depth = -gap;
            if (o.depth <= kOverlapTolerance * std::max(bodies.radius[o.a], bodies.radius[o.b]))
                continue;
        }
        body_overlaps.push_back(o);
    }
    for (const BodyOverlap& o : unsupported) {
        if (listed == kMaxListedOverlaps) {
            ++unlisted;
            continue;
        }
        const BodyEntry& eb = entry_of(o.b);
        r.problem(eb.place, eb.path,
                  fmt::format("bodies {} and {} start within each other's bounding radius, and "
                              "{}–{} contact is not implemented: keep them apart",
                              o.a, o.b, shape_name(bodies.shape[o.a]), shape_name(bodies.shape[o.b])));
        last_entry = &eb;
        ++listed;
    }
    for (const BodyOverlap& o : body_overlaps) {
        if (listed == kMaxListedOverlaps) {
            ++unlisted;
            continue;
        }
        const BodyEntry& eb = entry_of(o.b);
        const BodyEntry& ea = entry_of(o.a);
        std::string text = fmt::format("bodies {} and {} overlap by {:.3g} m", o.a, o.b, o.depth);
        if (&ea != &eb)
            text += ea.place.line > 0
                        ? fmt::format(" (body {} is from {}, line {})", o.a, ea.path, ea.place.line)
                        : fmt::format(" (body {} is from {})", o.a, ea.path);
        r.problem(eb.place, eb.path, text);
        last_entry = &eb;
        ++listed;
    }
    static constexpr const char* kFaceName[6] = {"-x", "+x", "-y", "+y", "-z", "+z"};
    // Bounding spheres first; a capsule or an ellipsoid is then measured exactly.
    std::vector<WallOverlap> wall_overlaps;
    std::array<WallFace, 6> faces;
    for (WallOverlap o :
         find_wall_overlaps(bodies.position, bodies.radius, world.walls, kOverlapTolerance)) {
        if (bodies.kinematic(o.body)) continue;  // kinematic bodies pass through walls
        if (bodies.shape[o.body] != Shape::Sphere) {
            const int nf = wall_faces(world.walls[o.wall], 0.0, faces);
            o.face = -1;
            o.depth = kOverlapTolerance * bodies.radius[o.body];
            for (int f = 0; f < nf; ++f) {
                std::vector<ShapeContact> c;
                const int n = collide_face(bodies, o.body, faces[std::size_t(f)], uint32_t(f),
                                           std::numeric_limits<double>::infinity(), c);
                for (int k = 0; k < n; ++k)
                    if (-c[k].gap > o.depth) {
                        o.depth = -c[k].gap;
                        o.face = f;
                    }
            }
            if (o.face < 0) continue;
        }
        wall_overlaps.push_back(o);
    }
    for (const WallOverlap& o : wall_overlaps) {
        if (listed == kMaxListedOverlaps) {
            ++unlisted;
            continue;
        }
        const BodyEntry& e = entry_of(o.body);
        const Wall& w = world.walls[o.wall];
        wall_faces(w, 0.0, faces);
        const WallFace& face = faces[std::size_t(o.face)];
        const bool centre_out = face.normal.dot(bodies.position[o.body] - face.point) < 0.0;
        std::string text;
        if (w.type == WallType::Plane)
            text = centre_out ? fmt::format("the centre of body {} is behind {}", o.body,
                                            wall_name(o.wall))
                              : fmt::format("body {} overlaps {} by {:.3g} m", o.body,
                                            wall_name(o.wall), o.depth);
        else
            text = centre_out ? fmt::format("the centre of body {} is outside {}", o.body,
                                            wall_name(o.wall))
                              : fmt::format("body {} crosses the {} face of {} by {:.3g} m", o.body,
                                            kFaceName[o.face], wall_name(o.wall), o.depth);
        r.problem(e.place, e.path, text);
        last_entry = &e;
        ++listed;
    }
    // Mesh walls: the nearest triangle within the radius; mesh contacts are for spheres only.
    std::vector<uint32_t> near;
    for (std::size_t w = 0; w < world.walls.size(); ++w) {
        const Wall& wall = world.walls[w];
        if (wall.type != WallType::Mesh || !wall.mesh) continue;
        const WallState at_start = wall_state(wall.motion, 0.0, 0.0, 1.0);
        for (std::size_t i = 0; i < bodies.size(); ++i) {
            if (bodies.kinematic(i)) continue;
            // a moving mesh is placed by its motion at t = 0: query in its reference frame
            double r_i = bodies.radius[i];
            Vec3 x_i = at_start.to_reference(bodies.position[i]);
            if (bodies.shape[i] == Shape::Clump) {
                // each sphere of the clump; report the first that reaches the mesh
                const ClumpTable& t = bodies.clumps;
                const uint32_t id = bodies.clump_of(i);
                near.clear();
                for (uint32_t k = t.begin(id); k < t.end(id) && near.empty(); ++k) {
                    x_i = at_start.to_reference(bodies.position[i] + bodies.orientation[i] * t.centre[k]);
                    r_i = t.radius[k];
                    wall.mesh->query(x_i, r_i * (1.0 - kOverlapTolerance), near);
                }
            } else {
                wall.mesh->query(x_i, r_i * (1.0 - kOverlapTolerance), near);
            }
            if (near.empty()) continue;
            if (listed == kMaxListedOverlaps) {
                ++unlisted;
                continue;
            }
            uint32_t nearest = near[0];
            double best = wall.mesh->distance(nearest, x_i);
            for (uint32_t t : near)
                if (const double d = wall.mesh->distance(t, x_i); d < best) {
                    best = d;
                    nearest = t;
                }
            const BodyEntry& e = entry_of(i);
            r.problem(e.place, e.path,
                      bodies.shape[i] == Shape::Sphere || bodies.shape[i] == Shape::Clump
                          ? fmt::format("body {} overlaps {} (triangle {}) by {:.3g} m", i,
                                        wall_name(w), nearest, r_i - best)
                          : fmt::format("body {} is within its bounding radius of {} (triangle "
                                        "{}): mesh walls collide with spheres and clumps only",
                                        i, wall_name(w), nearest));
            last_entry = &e;
            ++listed;
        }
    }
    // Cylinder walls: the radial distance at t = 0; cylinder contacts are for spheres and
    // for each sphere of a clump (the deepest one is reported).
    for (std::size_t w = 0; w < world.walls.size(); ++w) {
        const Wall& wall = world.walls[w];
        if (wall.type != WallType::Cylinder) continue;
        const CylinderAt cyl(wall, wall_state(wall.motion, 0.0, 0.0, 1.0));
        for (std::size_t i = 0; i < bodies.size(); ++i) {
            if (bodies.kinematic(i)) continue;
            double r_i = bodies.radius[i];
            double dist = 0.0;
            Vec3 n;
            if (bodies.shape[i] == Shape::Clump) {
                const ClumpTable& t = bodies.clumps;
                const uint32_t id = bodies.clump_of(i);
                bool found = false;
                for (uint32_t k = t.begin(id); k < t.end(id); ++k) {
                    double d;
                    const Vec3 c = bodies.position[i] + bodies.orientation[i] * t.centre[k];
                    if (!cyl.distance(c, d, n)) continue;
                    if (!found || t.radius[k] - d > r_i - dist) {
                        r_i = t.radius[k];
                        dist = d;
                        found = true;
                    }
                }
                if (!found) continue;
            } else if (!cyl.distance(bodies.position[i], dist, n)) {
                continue;
            }
            if (r_i - dist <= kOverlapTolerance * r_i) continue;
            if (listed == kMaxListedOverlaps) {
                ++unlisted;
                continue;
            }
            const BodyEntry& e = entry_of(i);
            std::string text;
            if (bodies.shape[i] != Shape::Sphere && bodies.shape[i] != Shape::Clump)
                text = fmt::format("body {} is within its bounding radius of {}: cylinder walls "
                                   "collide with spheres and clumps only", i, wall_name(w));
            else if (dist < 0.0)
                text = fmt::format("the centre of {} {} is {} {}",
                                   bodies.shape[i] == Shape::Clump ? "a sphere of body" : "body", i,
                                   wall.inside ? "outside" : "inside", wall_name(w));
            else
                text = fmt::format("body {} overlaps {} by {:.3g} m", i, wall_name(w), r_i - dist);
            r.problem(e.place, e.path, text);
            last_entry = &e;
            ++listed;
        }
    }
    if (unlisted > 0)
        r.problem(last_entry->place, last_entry->path,
                  fmt::format("and {} more overlap problems not listed", unlisted));
}

}  // namespace talus::scene_read
