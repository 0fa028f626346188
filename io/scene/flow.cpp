// [[emitter]] and [[outlet]] entries: where grains enter and leave the run.
#include "io/scene/readers.hpp"

namespace talus::scene_read {

/// [[emitter]] entries: sources of spheres (engine/flow/flow.hpp).
void read_emitters(Reader& r, const Ctx& root, World& world) {
    for (const Ctx& c : r.entries(root, "emitter")) {
        Emitter e;
        bool ok = true;
        if (r.find(c, "motion")) {
            r.problem_at(c, "motion",
                         "emitted bodies are dynamic: a prescribed motion is for a single "
                         "[[body]] (or a [[wall]])");
            ok = false;
        }
        const toml::node* radius = r.present(c, "radius", Need::Required);
        if (radius && radius->is_table()) {
            if (auto d = read_size(r, c, "radius")) {
                e.size = *d;
                if (d->max > 1.0) warn_large_radius(r, c, d->max);
            } else {
                ok = false;
            }
        } else if (radius) {
            if (auto v = r.number(c, "radius", Need::Required)) {
                e.size = SizeDistribution::fixed(*v);
                if (*v > 1.0) warn_large_radius(r, c, *v);
            }
            else
                ok = false;
        } else {
            ok = false;
        }
        if (auto m = material_ref(r, c, "material", world.materials)) e.material = *m;
        else ok = false;
        const bool has_rate = r.find(c, "rate") != nullptr;
        const bool has_mass_rate = r.find(c, "mass_rate") != nullptr;
        if (has_rate == has_mass_rate) {
            r.problem(c.place, c.path,
                      has_rate ? "give either 'rate' (bodies/s) or 'mass_rate' (kg/s), not both"
                               : "missing the rate: give 'rate' (bodies/s) or 'mass_rate' (kg/s)");
            ok = false;
        } else {
            const char* key = has_rate ? "rate" : "mass_rate";
            if (auto v = r.number(c, key, Need::Required)) {
                e.rate = *v;
                e.per_mass = has_mass_rate;
            } else {
                ok = false;
            }
        }
        const auto lo = r.vec3(c, "min", Need::Required);
        const auto hi = r.vec3(c, "max", Need::Required);
        if (lo && hi) {
            e.min = *lo;
            e.max = *hi;
            if (!(e.min.array() <= e.max.array()).all()) {
                r.problem_at(c, "max", "must not be below min on any axis");
                ok = false;
            }
        } else {
            ok = false;
        }
        if (auto v = r.vec3(c, "velocity", Need::Optional)) e.velocity = *v;
        else ok = ok && !r.find(c, "velocity");
        if (auto v = r.number(c, "start", Need::Optional))
            e.start = *v;
        else
            ok = ok && !r.find(c, "start");
        if (auto v = r.number(c, "stop", Need::Optional)) {
            if (*v > e.start) {
                e.stop = *v;
            } else {
                r.problem_at(c, "stop", fmt::format("must be > start = {} (got {})", e.start, *v));
                ok = false;
            }
        } else {
            ok = ok && !r.find(c, "stop");
        }
        if (auto s = r.integer(c, "seed", Need::Required)) e.seed = uint64_t(*s);
        else ok = false;
        if (ok) world.emitters.push_back(std::move(e));
    }
}

/// [[outlet]] entries: sinks that remove bodies (engine/flow/flow.hpp).
void read_outlets(Reader& r, const Ctx& root, World& world) {
    for (const Ctx& c : r.entries(root, "outlet")) {
        const auto type = r.string(c, "type", Need::Required);
        if (!type) continue;
        Outlet o;
        bool ok = true;
        const auto unused = [&](std::string_view k) {
            if (!r.find(c, k)) return;
            r.problem_at(c, k, fmt::format("not used by a {} outlet", *type));
            ok = false;
        };
        const std::optional<OutletType> kind = value_of<OutletType>(*type);
        if (kind == OutletType::Box) {
            o.type = OutletType::Box;
            unused("point");
            unused("normal");
            const auto lo = r.vec3(c, "min", Need::Required);
            const auto hi = r.vec3(c, "max", Need::Required);
            if (lo && hi) {
                o.min = *lo;
                o.max = *hi;
                if (!(o.min.array() <= o.max.array()).all()) {
                    r.problem_at(c, "max", "must not be below min on any axis");
                    ok = false;
                }
            } else {
                ok = false;
            }
        } else if (kind == OutletType::HalfSpace) {
            o.type = OutletType::HalfSpace;
            unused("min");
            unused("max");
            const auto p = r.vec3(c, "point", Need::Required);
            const auto n = r.vec3(c, "normal", Need::Required);
            if (p && n) {
                o.point = *p;
                if (n->norm() > 0.0) {
                    o.normal = n->normalized();
                } else {
                    r.problem_at(c, "normal", "must not be zero");
                    ok = false;
                }
            } else {
                ok = false;
            }
        } else {
            r.problem_at(c, "type", fmt::format("unknown outlet type '{}'{}", *type,
                                                suggest(*type, names_of<OutletType>(), "known")));
            continue;
        }
        if (ok) world.outlets.push_back(o);
    }
}

}  // namespace talus::scene_read
