// [[wall]] entries (planes, boxes, cylinders, meshes, cones, orifice plates) and the motion tables of walls and
// kinematic bodies.
#include "io/scene/readers.hpp"

#include "collision/mesh.hpp"
#include "io/stl.hpp"

namespace talus::scene_read {

/// A unit direction from key `k` (normalised; zero is an error).
static std::optional<Vec3> unit_vec3(Reader& r, const Ctx& c, std::string_view k, Need need) {
    auto v = r.vec3(c, k, need);
    if (!v) return std::nullopt;
    const double len = v->norm();
    if (!(len > 0.0)) {
        r.problem_at(c, k, "must not be zero");
        return std::nullopt;
    }
    return Vec3(*v / len);
}

/// The `motion = { type = …, … }` table of a wall or a [[body]] (core/wall_motion.hpp);
/// nullopt after a problem was reported.
std::optional<WallMotion> read_motion(Reader& r, const Ctx& c) {
    WallMotion m;
    const auto type = r.string(c, "type", Need::Required);
    bool ok = true;
    if (auto v = r.number(c, "start", Need::Optional))
        m.start = *v;
    else
        ok = ok && !r.find(c, "start");
    if (!type) return std::nullopt;
    std::vector<std::string_view> used{"type", "start"};
    const std::optional<MotionKind> kind = value_of<MotionKind>(*type);
    if (kind == MotionKind::Translation) {
        m.kind = MotionKind::Translation;
        used.insert(used.end(), {"velocity"});
        const auto v = r.vec3(c, "velocity", Need::Required);
        if (v) m.velocity = *v;
        ok = ok && v;
    } else if (kind == MotionKind::Rotation) {
        m.kind = MotionKind::Rotation;
        used.insert(used.end(), {"centre", "axis", "omega"});
        const auto centre = r.vec3(c, "centre", Need::Required);
        const auto axis = unit_vec3(r, c, "axis", Need::Required);
        const auto omega = r.number(c, "omega", Need::Required);
        if (centre) m.centre = *centre;
        if (axis) m.axis = *axis;
        if (omega) m.omega = *omega;
        ok = ok && centre && axis && omega;
    } else if (kind == MotionKind::Table) {
        m.kind = MotionKind::Table;
        used.insert(used.end(), {"times", "displacements"});
        const toml::node* tn = r.present(c, "times", Need::Required);
        const toml::node* dn = r.present(c, "displacements", Need::Required);
        const toml::array* ta = tn ? tn->as_array() : nullptr;
        const toml::array* da = dn ? dn->as_array() : nullptr;
        if (tn && (!ta || ta->empty())) {
            r.problem_at(c, "times", fmt::format("expected a non-empty array of times [s], got {}",
                                                 ta ? "an empty array" : type_name(*tn)));
            ta = nullptr;
        }
        if (dn && (!da || da->empty())) {
            r.problem_at(c, "displacements",
                         fmt::format("expected a non-empty array of [x, y, z] displacements [m], got {}",
                                     da ? "an empty array" : type_name(*dn)));
            da = nullptr;
        }
        ok = ok && ta && da;
        if (ta) {
            for (std::size_t k = 0; k < ta->size() && ok; ++k) {
                const auto t = r.to_number((*ta)[k], c, "times", fmt::format("element {}: ", k));
                if (!t) {
                    ok = false;
                } else if (k == 0 && *t < 0.0) {
                    r.problem_at(c, "times", fmt::format("element 0: must be ≥ 0 (got {})", *t));
                    ok = false;
                } else if (k > 0 && !(*t > m.times.back())) {
                    r.problem_at(c, "times",
                                 fmt::format("element {}: must exceed the one before ({} ≤ {}): "
                                             "times increase strictly",
                                             k, *t, m.times.back()));
                    ok = false;
                }
                if (ok) m.times.push_back(*t);
            }
        }
        if (da && ok) {
            if (da->size() != ta->size()) {
                r.problem_at(c, "displacements",
                             fmt::format("has {} entries but times has {}", da->size(), ta->size()));
                ok = false;
            }
            for (std::size_t k = 0; k < da->size() && ok; ++k) {
                const toml::array* e = (*da)[k].as_array();
                if (!e || e->size() != 3) {
                    r.problem_at(c, "displacements",
                                 fmt::format("element {}: expected an array of 3 numbers", k));
                    ok = false;
                    break;
                }
                Vec3 d;
                for (std::size_t j = 0; j < 3 && ok; ++j) {
                    const auto x = r.to_number((*e)[j], c, "displacements",
                                               fmt::format("element {}.{}: ", k, j));
                    if (x) d[Eigen::Index(j)] = *x; else ok = false;
                }
                if (ok) m.displacements.push_back(d);
            }
            if (ok && m.times[0] == 0.0 && m.displacements[0].squaredNorm() > 0.0) {
                r.problem_at(c, "displacements",
                             "element 0: must be [0, 0, 0] when times starts at 0 (the wall "
                             "would jump at the start; the table begins at zero displacement)");
                ok = false;
            }
        }
    } else if (kind == MotionKind::Sine) {
        m.kind = MotionKind::Sine;
        used.insert(used.end(), {"direction", "amplitude", "frequency", "phase"});
        const auto dir = unit_vec3(r, c, "direction", Need::Required);
        const auto amp = r.number(c, "amplitude", Need::Required);
        const auto freq = r.number(c, "frequency", Need::Required);
        const auto phase = r.number(c, "phase", Need::Optional);
        if (dir) m.direction = *dir;
        if (amp) m.amplitude = *amp;
        if (freq) m.frequency = *freq;
        if (phase) m.phase = *phase;
        ok = ok && dir && amp && freq && (phase || !r.find(c, "phase"));
    } else {
        r.problem_at(c, "type",
                     fmt::format("unknown motion type '{}'{}", *type,
                                 suggest(*type, names_of<MotionKind>(), "known")));
        return std::nullopt;
    }
    for (const Field& f : kMotionKeys)
        if (std::find(used.begin(), used.end(), f.name) == used.end() && r.find(c, f.name)) {
            r.problem_at(c, f.name, fmt::format("not used by a {} motion", *type));
            ok = false;
        }
    if (!ok) return std::nullopt;
    return m;
}

/// Walls and the place of each (for overlap messages).
std::vector<Wall> read_walls(Reader& r, const Ctx& root, const MaterialTable& materials,
                             const std::filesystem::path& scene_file, std::vector<Place>& places) {
    std::vector<Wall> walls;
    for (const Ctx& c : r.entries(root, "wall")) {
        Wall w;
        bool ok = true;
        const auto type = r.string(c, "type", Need::Required);
        if (auto m = material_ref(r, c, "material", materials))
            w.material = *m;
        else
            ok = false;
        if (auto name = r.string(c, "name", Need::Optional)) {
            for (std::size_t k = 0; k < walls.size(); ++k)
                if (walls[k].name == *name) {
                    r.problem_at(c, "name", fmt::format("wall name '{}' is already used by wall.{}", *name, k));
                    ok = false;
                }
            w.name = *name;
        }
        // `velocity` is the short form of motion = { type = "translation", velocity = … }.
        if (auto v = r.vec3(c, "velocity", Need::Optional); v && v->squaredNorm() > 0.0) {
            w.motion.kind = MotionKind::Translation;
            w.motion.velocity = *v;
        } else {
            ok = ok && (v || !r.find(c, "velocity"));
        }
        if (auto m = r.table(c, "motion", Need::Optional)) {
            if (r.find(c, "velocity")) {
                r.problem_at(c, "velocity",
                             "give either velocity or motion, not both (velocity = V is short "
                             "for motion = { type = \"translation\", velocity = V })");
                ok = false;
            }
            if (auto motion = read_motion(r, *m))
                w.motion = *motion;
            else
                ok = false;
        } else {
            ok = ok && !r.find(c, "motion");
        }
        if (!type) continue;
        static constexpr std::string_view kGeometry[] = {
            "point", "normal",     "min",        "max",          "file",        "scale",
            "translate", "axis",   "radius",     "inside",       "length",      "start",
            "end",   "start_radius", "end_radius", "hole_radius", "hole_size", "hole_direction"};
        const auto unused = [&](std::initializer_list<std::string_view> used) {
            for (std::string_view k : kGeometry)
                if (std::find(used.begin(), used.end(), k) == used.end() && r.find(c, k)) {
                    r.problem_at(c, k, fmt::format("not used by a {} wall", *type));
                    ok = false;
                }
        };
        const std::optional<WallType> kind = value_of<WallType>(*type);
        if (kind == WallType::Plane) {
            w.type = WallType::Plane;
            unused({"point", "normal"});
            const auto point = r.vec3(c, "point", Need::Required);
            const auto normal = r.vec3(c, "normal", Need::Required);
            if (point) w.point = *point;
            if (normal) {
                const double len = normal->norm();
                if (len > 0.0)
                    w.normal = *normal / len;
                else
                    r.problem_at(c, "normal", "must not be zero");
                ok = ok && len > 0.0;
            }
            ok = ok && point && normal;
        } else if (kind == WallType::Box) {
            w.type = WallType::Box;
            unused({"min", "max"});
            const auto lo = r.vec3(c, "min", Need::Required);
            const auto hi = r.vec3(c, "max", Need::Required);
            if (lo && hi) {
                w.min = *lo;
                w.max = *hi;
                if (!(w.min.array() < w.max.array()).all()) {
                    r.problem_at(c, "max", "must exceed min on every axis");
                    ok = false;
                }
            }
            ok = ok && lo && hi;
        } else if (kind == WallType::Mesh) {
            w.type = WallType::Mesh;
            unused({"file", "scale", "translate"});
            const auto file = r.string(c, "file", Need::Required);
            const auto scale = r.number(c, "scale", Need::Optional);
            const auto shift = r.vec3(c, "translate", Need::Optional);
            if (r.find(c, "scale") && !scale) ok = false;
            if (r.find(c, "translate") && !shift) ok = false;
            if (file && ok) {
                std::filesystem::path path(*file);
                if (path.is_relative()) path = (scene_file.parent_path() / path).lexically_normal();
                try {
                    StlMesh stl = read_stl(path);
                    const double sc = scale.value_or(1.0);
                    const Vec3 tr = shift.value_or(Vec3::Zero());
                    for (Vec3& v : stl.vertices) v = sc * v + tr;
                    auto mesh = std::make_shared<TriangleMesh>(std::move(stl.vertices), stl.triangles);
                    if (mesh->size() == 0) {
                        r.problem_at(c, "file", fmt::format("{} holds no triangles of non-zero area",
                                                            path.string()));
                        ok = false;
                    }
                    w.mesh = std::move(mesh);
                } catch (const std::exception& e) {
                    r.problem_at(c, "file", e.what());
                    ok = false;
                }
            }
            ok = ok && file.has_value();
        } else if (kind == WallType::Cylinder) {
            w.type = WallType::Cylinder;
            unused({"point", "axis", "radius", "inside", "length"});
            const auto point = r.vec3(c, "point", Need::Required);
            const auto axis = unit_vec3(r, c, "axis", Need::Required);
            const auto radius = r.number(c, "radius", Need::Required);
            const auto inside = r.boolean(c, "inside", Need::Required);
            const auto length = r.number(c, "length", Need::Optional);
            if (point) w.point = *point;
            if (axis) w.axis = *axis;
            if (radius) w.radius = *radius;
            if (inside) w.inside = *inside;
            if (length) w.length = *length;
            ok = ok && point && axis && radius && inside && (length || !r.find(c, "length"));
        } else if (kind == WallType::Cone) {
            w.type = WallType::Cone;
            unused({"start", "end", "start_radius", "end_radius"});
            const auto start = r.vec3(c, "start", Need::Required);
            const auto end = r.vec3(c, "end", Need::Required);
            const auto r0 = r.number(c, "start_radius", Need::Required);
            const auto r1 = r.number(c, "end_radius", Need::Required);
            if (start && end) {
                const Vec3 span = *end - *start;
                if (span.norm() > 0.0) {
                    w.point = *start;
                    w.length = span.norm();
                    w.axis = span / w.length;
                } else {
                    r.problem_at(c, "end", "must differ from start (the cone's axis runs from start to end)");
                    ok = false;
                }
            }
            if (r0 && r1 && *r0 == 0.0 && *r1 == 0.0) {
                r.problem_at(c, "end_radius", "start_radius and end_radius are both 0: one must be > 0");
                ok = false;
            }
            if (r0) w.radius = *r0;
            if (r1) w.end_radius = *r1;
            ok = ok && start && end && r0 && r1;
        } else if (kind == WallType::Orifice) {
            w.type = WallType::Orifice;
            unused({"point", "normal", "hole_radius", "hole_size", "hole_direction"});
            const auto point = r.vec3(c, "point", Need::Required);
            const auto normal = unit_vec3(r, c, "normal", Need::Required);
            if (point) w.point = *point;
            if (normal) w.normal = *normal;
            ok = ok && point && normal;
            const bool round = r.find(c, "hole_radius") != nullptr, rect = r.find(c, "hole_size") != nullptr;
            if (round == rect) {
                r.problem_at(c, round ? "hole_size" : "hole_radius",
                             round ? "give either hole_radius (a round hole) or hole_size (a rectangle), not both"
                                   : "missing: an orifice needs hole_radius (a round hole) or hole_size "
                                     "(a rectangle, with hole_direction)");
                ok = false;
            } else if (round) {
                if (r.find(c, "hole_direction")) {
                    r.problem_at(c, "hole_direction", "used only with hole_size (a rectangular hole)");
                    ok = false;
                }
                const auto radius = r.number(c, "hole_radius", Need::Required);
                if (radius) w.hole_radius = *radius;
                ok = ok && radius;
            } else {
                const toml::node* n = r.present(c, "hole_size", Need::Required);
                const toml::array* a = n ? n->as_array() : nullptr;
                bool sized = a && a->size() == 2;
                if (n && !sized)
                    r.problem_at(c, "hole_size", "expected [width, length] [m]: two numbers > 0");
                for (std::size_t k = 0; sized && k < 2; ++k) {
                    const auto v = r.to_number((*a)[k], c, "hole_size", fmt::format("element {}: ", k));
                    if (v && *v > 0.0)
                        w.hole_size[k] = *v;
                    else if (v)
                        r.problem_at(c, "hole_size", fmt::format("element {}: must be > 0 [m] (got {})", k, *v));
                    sized = sized && v && *v > 0.0;
                }
                ok = ok && sized;
                const auto dir = unit_vec3(r, c, "hole_direction", Need::Required);
                if (dir && normal) {
                    const Vec3 in_plane = *dir - dir->dot(*normal) * *normal;
                    if (in_plane.norm() > 1e-6) {
                        w.hole_direction = in_plane.normalized();
                    } else {
                        r.problem_at(c, "hole_direction", "must not be parallel to normal (it lies in the plate)");
                        ok = false;
                    }
                }
                ok = ok && dir;
            }
        } else {
            r.problem_at(c, "type",
                         fmt::format("unknown wall type '{}'{}", *type,
                                     suggest(*type, names_of<WallType>(), "known")));
            continue;
        }
        if (ok) {
            walls.push_back(w);
            places.push_back(c.place);
        }
    }
    return walls;
}

}  // namespace talus::scene_read
