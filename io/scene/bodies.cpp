// [[particles]] and [[body]]: shapes, size distributions, clumps, and the fills that
// generate the grains (lattice, random).
#include "io/scene/readers.hpp"

#include <random>

#include "engine/flow/particle_fill.hpp"
#include "io/text_format.hpp"

namespace talus::scene_read {

/// A radius distribution table (key `k` of `c`): { distribution = "uniform" | "normal" |
/// "lognormal" | "discrete", … } (README, "Radius distributions").
std::optional<SizeDistribution> read_size(Reader& r, const Ctx& parent, std::string_view k) {
    const auto c = r.table(parent, k, Need::Required);
    if (!c) return std::nullopt;
    const auto kind = r.string(*c, "distribution", Need::Required);
    if (!kind) return std::nullopt;
    const std::optional<SizeKind> law = value_of<SizeKind>(*kind);
    if (!law) {
        r.problem_at(*c, "distribution", fmt::format("unknown distribution '{}'{}", *kind,
                                                     suggest(*kind, names_of<SizeKind>(), "known")));
        return std::nullopt;
    }
    bool ok = true;
    const auto unused = [&](std::initializer_list<std::string_view> keys) {
        for (std::string_view key : keys)
            if (r.find(*c, key)) {
                r.problem_at(*c, key, fmt::format("not used by a {} distribution", *kind));
                ok = false;
            }
    };
    const auto need_positive = [&](std::string_view key) {
        auto v = r.number(*c, key, Need::Required);
        if (!v) ok = false;
        return v.value_or(0.0);
    };
    if (*law == SizeKind::Discrete) {
        unused({"min", "max", "mean", "std", "median", "sigma"});
        const auto numbers = [&](std::string_view key, Need need) {
            std::vector<double> out;
            const toml::node* n = r.present(*c, key, need);
            if (!n) return out;
            const toml::array* a = n->as_array();
            if (!a || a->empty()) {
                r.problem_at(*c, key, fmt::format("expected a non-empty array of numbers, got {}",
                                                  a ? "an empty array" : type_name(*n)));
                ok = false;
                return out;
            }
            for (std::size_t i = 0; i < a->size(); ++i) {
                auto x = r.to_number((*a)[i], *c, key, fmt::format("element {}: ", i));
                if (!x) {
                    ok = false;
                    return out;
                }
                if (!(*x > 0.0)) {
                    r.problem_at(*c, key, fmt::format("element {}: must be > 0 (got {})", i, *x));
                    ok = false;
                    return out;
                }
                out.push_back(*x);
            }
            return out;
        };
        const std::vector<double> values = numbers("values", Need::Required);
        std::vector<double> weights = numbers("weights", Need::Optional);
        if (!ok || values.empty()) return std::nullopt;
        if (weights.empty()) weights.assign(values.size(), 1.0);
        if (weights.size() != values.size()) {
            r.problem_at(*c, "weights", fmt::format("has {} elements but values has {}",
                                                    weights.size(), values.size()));
            return std::nullopt;
        }
        return SizeDistribution::discrete(values, weights);
    }
    unused({"values", "weights"});
    const double lo = need_positive("min");
    const double hi = need_positive("max");
    if (ok && lo > hi) {
        r.problem_at(*c, "max", fmt::format("must be ≥ min = {} (got {})", lo, hi));
        ok = false;
    }
    SizeDistribution d;
    if (*law == SizeKind::Uniform) {
        unused({"mean", "std", "median", "sigma"});
        d = SizeDistribution::uniform(lo, hi);
    } else if (*law == SizeKind::Normal) {
        unused({"median", "sigma"});
        const double mean = need_positive("mean");
        const double sd = need_positive("std");
        d = SizeDistribution::normal(mean, sd, lo, hi);
    } else {  // lognormal: the median e^μ, or the mean e^(μ + σ²/2), and σ of ln r
        unused({"std"});
        const double sigma = need_positive("sigma");
        const bool has_median = r.find(*c, "median") != nullptr;
        const bool has_mean = r.find(*c, "mean") != nullptr;
        if (has_median == has_mean) {
            r.problem(c->place, c->path,
                      "a lognormal distribution takes either 'median' or 'mean' (of r, in m), "
                      "not both and not neither");
            return std::nullopt;
        }
        const double centre = need_positive(has_median ? "median" : "mean");
        if (!ok) return std::nullopt;
        const double mu = has_median ? std::log(centre) : std::log(centre) - 0.5 * sigma * sigma;
        d = SizeDistribution::lognormal(mu, sigma, lo, hi);
    }
    if (!ok) return std::nullopt;
    // Truncation by rejection costs 1/p draws per radius: refuse windows that hold almost
    // nothing of the law (a typo in min/max or in the mean's unit).
    if (const double p = d.window_probability(); !(p >= 1e-3)) {
        r.problem(c->place, c->path,
                  fmt::format("[min, max] = [{}, {}] holds only a fraction {:.3g} of the {} law "
                              "(at least 0.001 needed)", lo, hi, p, *kind));
        return std::nullopt;
    }
    return d;
}

/// `spheres = [[x, y, z, r], …]` of a clump: body-frame centres [m] and radii [m] > 0,
/// 1 … kMaxClumpSpheres of them. Computes the template (mass properties of the union).
static bool read_clump_spheres(Reader& r, const Ctx& c, BodyEntry& e) {
    const toml::node* n = r.present(c, "spheres", Need::Required);
    if (!n) return false;
    const toml::array* a = n->as_array();
    if (!a) {
        r.problem_at(c, "spheres", fmt::format("expected an array of [x, y, z, r], got {}", type_name(*n)));
        return false;
    }
    if (a->empty() || a->size() > kMaxClumpSpheres) {
        r.problem_at(c, "spheres",
                     fmt::format("a clump needs 1 to {} spheres (got {})", kMaxClumpSpheres, a->size()));
        return false;
    }
    std::vector<Vec3> centres;
    std::vector<double> radii;
    for (std::size_t k = 0; k < a->size(); ++k) {
        const toml::array* s = (*a)[k].as_array();
        if (!s || s->size() != 4) {
            r.problem_at(c, "spheres",
                         s ? fmt::format("sphere {}: expected [x, y, z, r], got {} elements", k, s->size())
                           : fmt::format("sphere {}: expected [x, y, z, r], got {}", k, type_name((*a)[k])));
            return false;
        }
        double v[4];
        for (std::size_t i = 0; i < 4; ++i) {
            auto x = r.to_number((*s)[i], c, "spheres", fmt::format("sphere {} element {}: ", k, i));
            if (!x) return false;
            v[i] = *x;
        }
        if (!(v[3] > 0.0)) {
            r.problem_at(c, "spheres", fmt::format("sphere {}: radius must be > 0 (got {})", k, v[3]));
            return false;
        }
        // a grain kilometres wide is a typo, and r⁵ (its inertia) overflows beyond 10⁶¹ m
        if (std::max({std::abs(v[0]), std::abs(v[1]), std::abs(v[2]), v[3]}) > 1e3) {
            r.problem_at(c, "spheres", fmt::format("sphere {}: [{:g}, {:g}, {:g}, {:g}] reaches beyond 1 km "
                                                   "from the clump's origin", k, v[0], v[1], v[2], v[3]));
            return false;
        }
        centres.emplace_back(v[0], v[1], v[2]);
        radii.push_back(v[3]);
    }
    // One rigid grain: its spheres within 1000 × the largest radius of each other. Beyond
    // that it is a mistake, a stray coordinate (fuzzing found a clump 10⁷¹ m across; its
    // mass integration, before separate groups were integrated apart, ran for hours).
    const double r_max = *std::max_element(radii.begin(), radii.end());
    for (std::size_t k = 1; k < centres.size(); ++k) {
        const double d = (centres[k] - centres[0]).norm();
        if (!(d <= 1000.0 * r_max)) {
            r.problem_at(c, "spheres",
                         fmt::format("sphere {} is {:g} m from sphere 0, more than 1000 × the largest "
                                     "radius ({:g} m): not one grain", k, d, r_max));
            return false;
        }
    }
    e.clump = ClumpTable{};
    try {
        e.clump.add(centres, radii);
    } catch (const std::invalid_argument& err) {
        r.problem_at(c, "spheres", fmt::format("mass properties cannot be computed: {}", err.what()));
        return false;
    }
    e.radius = e.clump.bounding[0];
    return true;
}

/// A grain radius above 1 m is legal but most likely millimetres written as metres.
void warn_large_radius(Reader& r, const Ctx& c, double radius) {
    r.warning_at(c, "radius",
                 fmt::format("{:g} m is a grain {:g} m across: radii are in metres (5 mm is "
                             "0.005)", radius, 2.0 * radius));
}

/// The fields [[particles]] and [[body]] share; false if any is missing or wrong.
/// `single`: a [[body]] entry; a fill places bounding spheres (a random fill turns each
/// clump, capsule or ellipsoid at random).
static bool read_common(Reader& r, const Ctx& c, const MaterialTable& materials, BodyEntry& e,
                 bool single) {
    bool ok = true;
    if (auto shape = r.string(c, "shape", Need::Required)) {
        if (const std::optional<Shape> named = value_of<Shape>(*shape)) {
            e.shape = *named;
        } else {
            r.problem_at(c, "shape",
                         fmt::format("unknown shape '{}'{}", *shape, suggest(*shape, names_of<Shape>(), "known")));
            return false;
        }
    } else {
        return false;
    }
    const auto unused = [&](std::string_view k, std::string_view hint) {
        if (!r.find(c, k)) return;
        r.problem_at(c, k, fmt::format("not used by a {}{}", name_of(e.shape), hint));
        ok = false;
    };
    switch (e.shape) {
        case Shape::Sphere:
            unused("length", "");
            unused("semi_axes", "");
            unused("spheres", "");
            break;
        case Shape::Clump:
            unused("radius", " (give spheres = [[x, y, z, r], …])");
            unused("length", "");
            unused("semi_axes", "");
            if (!read_clump_spheres(r, c, e)) ok = false;
            break;
        case Shape::Capsule:
            unused("semi_axes", "");
            unused("spheres", "");
            if (auto v = r.number(c, "length", Need::Required))
                e.half_length = 0.5 * *v;
            else
                ok = false;
            break;
        case Shape::Ellipsoid:
            unused("radius", " (give semi_axes)");
            unused("length", "");
            unused("spheres", "");
            if (auto v = r.vec3(c, "semi_axes", Need::Required)) {
                if ((v->array() > 0.0).all()) {
                    e.semi_axes = *v;
                    e.radius = v->maxCoeff();  // the bounding radius a fill spaces
                } else {
                    r.problem_at(c, "semi_axes", "every semi-axis must be > 0");
                    ok = false;
                }
            } else {
                ok = false;
            }
            break;
    }
    const toml::node* radius_node = r.find(c, "radius");
    if (e.shape == Shape::Clump || e.shape == Shape::Ellipsoid) {
        // no `radius` (reported above): the spheres or the semi-axes give the bounding radius
    } else if (!single && e.shape == Shape::Capsule && radius_node && radius_node->is_table()) {
        r.problem_at(c, "radius", "a fill of capsules takes one radius, not a distribution");
        ok = false;
    } else if (!single && radius_node && radius_node->is_table()) {
        if ((e.size = read_size(r, c, "radius")))
            e.radius = e.size->max;  // spacing and reach checks use the largest radius
        else
            ok = false;
    } else if (e.shape == Shape::Sphere || e.shape == Shape::Capsule) {
        if (auto v = r.number(c, "radius", Need::Required))
            e.radius = *v;
        else
            ok = false;
    }
    if (ok && !single && e.shape == Shape::Capsule) {  // the fill spaces bounding spheres
        e.capsule_radius = e.radius;
        e.radius += e.half_length;
    }
    if (ok && e.shape != Shape::Clump && e.radius > 1.0)
        warn_large_radius(r, c, e.radius);
    if (auto m = material_ref(r, c, "material", materials))
        e.material = *m;
    else
        ok = false;
    if (auto v = r.vec3(c, "velocity", Need::Optional))
        e.velocity = *v;
    else
        ok = ok && !r.find(c, "velocity");
    return ok;
}

std::optional<BodyEntry> read_particles(Reader& r, const Ctx& c, const MaterialTable& materials,
                                        bool periodic) {
    BodyEntry e;
    e.path = c.path;
    e.place = c.place;
    bool ok = read_common(r, c, materials, e, false);
    if (r.find(c, "motion")) {
        r.problem_at(c, "motion",
                     "a prescribed motion is for a single [[body]] (or a [[wall]]), not for "
                     "[[particles]] fills: give the moving body as a [[body]] entry");
        ok = false;
    }
    // `fixed`: grains held where the fill puts them (a rough floor of glued grains): each a
    // kinematic body at rest, infinite mass, like a [[body]] with a motion that never moves.
    if (auto f = r.boolean(c, "fixed", Need::Optional))
        e.fixed = *f;
    else
        ok = ok && !r.find(c, "fixed");
    if (e.fixed && r.find(c, "velocity")) {
        r.problem_at(c, "velocity", "not used by fixed grains: they do not move");
        ok = false;
    }
    if (e.fixed && periodic) {
        r.problem_at(c, "fixed",
                     "fixed grains (kinematic bodies) are not supported with [periodic] "
                     "boundaries");
        ok = false;
    }
    const bool has_lattice = r.find(c, "lattice") != nullptr;
    const bool has_random = r.find(c, "random") != nullptr;
    if (has_lattice == has_random) {
        r.problem(c.place, c.path,
                  has_lattice ? "give either 'lattice' or 'random', not both"
                              : "missing the fill: give 'lattice = { min, max, spacing }' or "
                                "'random = { min, max, count, seed }'");
        return std::nullopt;
    }
    const auto f = r.table(c, has_lattice ? "lattice" : "random", Need::Required);
    if (!f) return std::nullopt;
    e.fill_place = f->place;
    const auto lo = r.vec3(*f, "min", Need::Required);
    const auto hi = r.vec3(*f, "max", Need::Required);
    if (lo && hi) {
        e.min = *lo;
        e.max = *hi;
        if (!(e.min.array() <= e.max.array()).all()) {
            r.problem_at(*f, "max", "must not be below min on any axis");
            ok = false;
        }
    } else {
        ok = false;
    }
    if (has_lattice) {
        e.fill = BodyEntry::Fill::Lattice;
        const toml::node* s = r.present(*f, "spacing", Need::Required);
        if (!s) return std::nullopt;
        if (s->is_array()) {
            if (auto v = r.vec3(*f, "spacing", Need::Required))
                e.spacing = *v;
            else
                return std::nullopt;
        } else if (auto v = r.to_number(*s, *f, "spacing")) {
            e.spacing = Vec3::Constant(*v);
        } else {
            return std::nullopt;
        }
        if (auto seed = r.integer(*f, "seed", Need::Optional))
            e.seed = uint64_t(*seed);
        else if (r.find(*f, "seed"))
            return std::nullopt;
        if (!(e.spacing.array() > 0.0).all()) {
            r.problem_at(*f, "spacing", "must be > 0");
            return std::nullopt;
        }
        if (!ok) return std::nullopt;
        const auto n = lattice_extent(e.min, e.max, e.spacing);
        const double total = double(n[0]) * double(n[1]) * double(n[2]);
        if (total > r.max_bodies) {
            r.problem_at(*f, "spacing",
                         fmt::format("the lattice would hold {:.3g} bodies (limit {:g})", total,
                                     r.max_bodies));
            return std::nullopt;
        }
        for (int a = 0; a < 3; ++a)
            if (n[a] > 1 && e.spacing[a] < 2.0 * e.radius * (1.0 - kOverlapTolerance)) {
                r.problem_at(*f, "spacing",
                             fmt::format("{:g} is less than the {} diameter {:g}: neighbours "
                                         "would overlap",
                                         e.spacing[a],
                                         e.shape == Shape::Clump       ? "clump's bounding"
                                         : e.shape == Shape::Ellipsoid ? "ellipsoid's bounding"
                                         : e.shape == Shape::Capsule   ? "capsule's bounding"
                                                                       : "sphere",
                                         2.0 * e.radius));
                return std::nullopt;
            }
    } else {
        e.fill = BodyEntry::Fill::Random;
        const bool has_count = r.find(*f, "count") != nullptr;
        const bool has_fraction = r.find(*f, "volume_fraction") != nullptr;
        if (has_count == has_fraction) {
            r.problem(f->place, f->path,
                      has_count ? "give either 'count' or 'volume_fraction', not both"
                                : "missing the amount: give 'count' (spheres) or "
                                  "'volume_fraction' (solid fraction of the box min..max widened by "
                                  "the largest radius)");
            return std::nullopt;
        }
        if (has_fraction && e.shape != Shape::Sphere) {
            // the fill measures its solid fraction with sphere volumes of each body's radius,
            // which for a clump, a capsule or an ellipsoid is the bounding radius, not its own
            // volume
            r.problem_at(*f, "volume_fraction",
                         fmt::format("{} fills take 'count', not 'volume_fraction' (the fill measures "
                                     "sphere volumes)", name_of(e.shape)));
            return std::nullopt;
        }
        const auto seed = r.integer(*f, "seed", Need::Required);
        if (has_count) {
            const auto count = r.integer(*f, "count", Need::Required, 1, int64_t(r.max_bodies));
            if (!count) return std::nullopt;
            e.count = std::size_t(*count);
            // Spheres whose volume exceeds what the box could hold at random close packing
            // can never be placed: say so now, not after hours of attempts. The room is the
            // box of centres widened by the largest radius, where every sphere lies whole.
            const double r_min = e.size ? e.size->min : e.radius;
            const double r_pad = e.size ? e.size->max : e.radius;
            const double kRandomClosePacking = 0.64;
            const double pi = 3.14159265358979323846;
            const double room = ((e.max - e.min).array() + 2.0 * r_pad).prod();
            const double one = 4.0 / 3.0 * pi * r_min * r_min * r_min;
            if (ok && r_min > 0.0 && double(e.count) * one > kRandomClosePacking * room) {
                const double fit = std::floor(kRandomClosePacking * room / one);
                r.problem_at(*f, "count",
                             fmt::format("{} spheres of diameter {:g} m cannot fit: the box "
                                         "min..max, widened by a radius, holds {:.3g} m³, room "
                                         "for about {} of them even at random close packing "
                                         "(0.64), and a random fill stops near 0.38{}",
                                         group_digits(e.count), 2.0 * r_min, room,
                                         fit < 1.8e19 ? group_digits(uint64_t(fit)) : fmt::format("{:.3g}", fit),
                                         r_min > 0.1 ? " (radii are in metres: 5 mm is 0.005)"
                                                     : ": lower count or enlarge min/max"));
                return std::nullopt;
            }
        } else {
            const auto phi = r.number(*f, "volume_fraction", Need::Required);
            if (!phi) return std::nullopt;
            e.volume_fraction = *phi;
            const double r_min = e.size ? e.size->min : e.radius;
            const double r_max = e.size ? e.size->max : e.radius;
            const double estimate = *phi * fill_region_volume(e.min, e.max, r_max) /
                                    (4.0 / 3.0 * 3.14159265358979323846 * r_min * r_min * r_min);
            if (ok && estimate > r.max_bodies) {
                r.problem_at(*f, "volume_fraction",
                             fmt::format("the fill could need {:.3g} bodies (limit {:g})", estimate,
                                         r.max_bodies));
                return std::nullopt;
            }
        }
        if (!seed) return std::nullopt;
        e.seed = uint64_t(*seed);
    }
    if (!ok) return std::nullopt;
    return e;
}

std::optional<BodyEntry> read_body(Reader& r, const Ctx& c, const MaterialTable& materials,
                                   bool periodic) {
    BodyEntry e;
    e.path = c.path;
    e.place = c.place;
    e.fill_place = c.place;
    bool ok = read_common(r, c, materials, e, true);
    // `motion`: a kinematic body (core/kinematic.hpp), infinite mass, moved as given.
    if (auto m = r.table(c, "motion", Need::Optional)) {
        if (auto motion = read_motion(r, *m))
            e.motion = *motion;
        else
            ok = false;
        if (periodic) {
            r.problem_at(c, "motion",
                         "kinematic bodies (with a prescribed motion) are not supported with "
                         "[periodic] boundaries");
            ok = false;
        }
        for (std::string_view k : {"velocity", "angular_velocity", "mass", "inertia"})
            if (r.find(c, k)) {
                r.problem_at(c, k,
                             fmt::format("not used by a body with a motion (its {} follows from "
                                         "the motion{})", k,
                                         k == "mass" || k == "inertia" ? " and is infinite" : ""));
                ok = false;
            }
    } else {
        ok = ok && !r.find(c, "motion");
    }
    if (auto v = r.vec3(c, "position", Need::Required))
        e.position = *v;
    else
        ok = false;
    if (auto q = r.quaternion(c, "orientation", Need::Optional))
        e.orientation = *q;
    else
        ok = ok && !r.find(c, "orientation");
    // The file gives ω in the world frame; bodies store ω̄ = Rᵀ ω (body frame).
    if (auto v = r.vec3(c, "angular_velocity", Need::Optional))
        e.angular_velocity = e.orientation.conjugate() * *v;
    else
        ok = ok && !r.find(c, "angular_velocity");
    if (auto v = r.number(c, "mass", Need::Optional))
        e.mass = *v;
    else
        ok = ok && !r.find(c, "mass");
    if (auto j = r.vec3(c, "inertia", Need::Optional)) {
        // Principal moments of a real body: positive, and each at most the sum of the others
        // (J_x = ∫(y² + z²) dm ≤ J_y + J_z = ∫(2x² + y² + z²) dm, and so on).
        const bool positive = (j->array() > 0.0).all();
        const double slack = 1e-12 * j->sum();
        const bool triangle = (*j)[0] <= (*j)[1] + (*j)[2] + slack &&
                              (*j)[1] <= (*j)[0] + (*j)[2] + slack &&
                              (*j)[2] <= (*j)[0] + (*j)[1] + slack;
        if (!positive) {
            r.problem_at(c, "inertia", "every principal moment must be > 0");
            ok = false;
        } else if (!triangle) {
            r.problem_at(c, "inertia",
                         fmt::format("[{}, {}, {}] is not the inertia of a body: each principal "
                                     "moment must be ≤ the sum of the other two",
                                     (*j)[0], (*j)[1], (*j)[2]));
            ok = false;
        } else {
            e.inertia = *j;
        }
    } else {
        ok = ok && !r.find(c, "inertia");
    }
    if (!ok) return std::nullopt;
    return e;
}

/// Generates every entry's bodies in order, ids 0, 1, 2, …
void place_bodies(Reader& r, std::vector<BodyEntry>& entries, World& world) {
    BodyStore& bodies = world.bodies;
    std::vector<Vec3> centres;
    std::vector<double> radii;
    for (BodyEntry& e : entries) {
        e.first_id = bodies.size();
        const double density = world.materials.materials[e.material].density;
        centres.clear();
        radii.clear();
        switch (e.fill) {
            case BodyEntry::Fill::Single: centres.push_back(e.position); break;
            case BodyEntry::Fill::Lattice: {
                lattice_points(e.min, e.max, e.spacing, centres);
                // Radii in lattice order from the lattice's own seed (spacing was checked
                // against the largest radius, so no two neighbours can overlap).
                std::mt19937_64 size_rng(e.seed ^ kRadiusStream);
                const SizeDistribution law = e.size ? *e.size : SizeDistribution::fixed(e.radius);
                if (double(bodies.size() + centres.size()) <= r.max_bodies)
                    for (std::size_t k = 0; k < centres.size(); ++k) radii.push_back(law.sample(size_rng));
                break;
            }
            case BodyEntry::Fill::Random: {
                RandomFillSpec spec{e.min, e.max, e.radius, e.count, e.seed, {}, 0.0, {}};
                if (e.size) spec.size = *e.size;
                spec.volume_fraction = e.volume_fraction;
                spec.periodic = world.simulation.periodic;
                if (r.progress)
                    spec.progress = [&](std::size_t placed, uint64_t attempts) {
                        r.progress(fmt::format(
                            "{} ({}): {}{} placed, {} tried", e.path, e.fill_place.where,
                            group_digits(placed),
                            e.volume_fraction > 0.0 ? std::string()
                                                    : fmt::format(" of {}", group_digits(e.count)),
                            group_digits(attempts)));
                    };
                const RandomFillResult res = random_fill_sized(spec, bodies.position, bodies.radius,
                                                               world.walls, centres, &radii);
                const char* const full =
                    res.saturated ? ", when the box was full (no room left for another sphere)" : "";
                if (!res.complete && e.volume_fraction > 0.0)
                    r.problem(e.fill_place, e.path + ".random",
                              fmt::format("reached only a volume fraction of {:.4g} of {} ({} "
                                          "spheres) in {} attempts{}; enlarge min/max or lower "
                                          "volume_fraction (a random fill saturates near 0.38 in "
                                          "a large box; for a denser bed, let a loose fill settle "
                                          "in a first [[stage]]: docs/scenes.md)",
                                          res.volume / fill_region_volume(e.min, e.max, spec.radii().max),
                                          e.volume_fraction,
                                          res.placed, res.attempts, full));
                else if (res.placed == 0)
                    r.problem(e.fill_place, e.path + ".random",
                              fmt::format("not one sphere of diameter {:g} m fits in the box "
                                          "min..max ({:.3g} × {:.3g} × {:.3g} m) clear of the "
                                          "walls and of the bodies placed before{}",
                                          2.0 * spec.radii().min, e.max.x() - e.min.x(),
                                          e.max.y() - e.min.y(), e.max.z() - e.min.z(),
                                          spec.radii().min > 0.1 ? " (radii are in metres: 5 mm is 0.005)"
                                                                 : ": enlarge min/max or move it"));
                else if (!res.complete)
                    r.problem(e.fill_place, e.path + ".random",
                              fmt::format("placed only {} of {} {} in {} attempts{}; enlarge "
                                          "min/max or lower count",
                                          res.placed, e.count,
                                          e.shape == Shape::Sphere ? "spheres"
                                                                   : fmt::format("{}s (bounding spheres apart)", name_of(e.shape)),
                                          res.attempts, full));
                break;
            }
        }
        if (double(bodies.size() + centres.size()) > r.max_bodies) {
            r.problem(e.place, e.path,
                      fmt::format("the scene would exceed {:g} bodies", r.max_bodies));
            return;
        }
        uint32_t tmpl = 0;
        if (e.shape == Shape::Clump) tmpl = bodies.clumps.append(e.clump, 0);
        if (e.fill != BodyEntry::Fill::Single && e.shape != Shape::Sphere) {
            // Clump centres of mass (capsule and ellipsoid centres) at the fill's points.
            // Lattice: the spheres' frame (the body axes) keeps the world axes; random: a uniform
            // random rotation per body, from its own stream seeded by the fill's seed
            // (Shoemake's method from raw mt19937_64 bits).
            std::mt19937_64 rng(e.seed ^ 0x9e3779b97f4a7c15ULL);
            for (const Vec3& x : centres) {
                Quat q_user = Quat::Identity();
                if (e.fill == BodyEntry::Fill::Random) {
                    const double pi = 3.14159265358979323846;
                    const double u1 = bits_to_unit(rng()), u2 = bits_to_unit(rng()),
                                 u3 = bits_to_unit(rng());
                    const double a = std::sqrt(1.0 - u1), b = std::sqrt(u1);
                    q_user = Quat(a * std::sin(2 * pi * u2), a * std::cos(2 * pi * u2),
                                  b * std::sin(2 * pi * u3), b * std::cos(2 * pi * u3));
                    q_user.normalize();
                }
                const std::size_t i =
                    e.shape == Shape::Ellipsoid
                        ? bodies.add_ellipsoid(bodies.size(), x, e.semi_axes, density, e.material, e.velocity,
                                               Vec3::Zero(), q_user)
                    : e.shape == Shape::Capsule
                        ? bodies.add_capsule(bodies.size(), x, e.capsule_radius, e.half_length, density, e.material,
                                             e.velocity, Vec3::Zero(), q_user)
                        : bodies.add_clump(bodies.size(), x, tmpl, density, e.material, e.velocity, Vec3::Zero(),
                                           q_user * bodies.clumps.principal[tmpl]);
                if (e.fixed) bodies.set_motion(i, WallMotion{});
            }
            continue;
        }
        if (e.fill != BodyEntry::Fill::Single) {
            for (std::size_t k = 0; k < centres.size(); ++k) {
                const std::size_t i = bodies.add_sphere(bodies.size(), centres[k], radii[k], density,
                                                        e.material, e.velocity, e.angular_velocity);
                if (e.fixed) bodies.set_motion(i, WallMotion{});
            }
            continue;
        }
        std::size_t i = 0;
        switch (e.shape) {
            case Shape::Sphere:
                i = bodies.add_sphere(bodies.size(), e.position, e.radius, density, e.material,
                                      e.velocity, e.angular_velocity, e.orientation);
                break;
            case Shape::Capsule:
                i = bodies.add_capsule(bodies.size(), e.position, e.radius, e.half_length, density,
                                       e.material, e.velocity, e.angular_velocity, e.orientation);
                break;
            case Shape::Ellipsoid:
                i = bodies.add_ellipsoid(bodies.size(), e.position, e.semi_axes, density,
                                         e.material, e.velocity, e.angular_velocity, e.orientation);
                break;
            case Shape::Clump: {
                // `position` and `orientation` place the frame the spheres were written in;
                // the body's frame is the principal frame about the centre of mass.
                const Quat& p = bodies.clumps.principal[tmpl];
                i = bodies.add_clump(bodies.size(),
                                     e.position + e.orientation * bodies.clumps.user_centre[tmpl],
                                     tmpl, density, e.material, e.velocity,
                                     p.conjugate() * e.angular_velocity, e.orientation * p);
                break;
            }
        }
        // Overrides: a mass alone scales the inertia with it (the same uniform body, another
        // density); an inertia alone keeps the mass from the density.
        if (e.mass || e.inertia) {
            const double m0 = bodies.mass(i);
            const Vec3 j0 = bodies.inv_inertia[i].cwiseInverse();
            const double m = e.mass ? *e.mass : m0;
            bodies.set_mass_properties(i, m, e.inertia ? *e.inertia : Vec3(j0 * (m / m0)));
        }
        if (e.motion) bodies.set_motion(i, *e.motion);
    }
}

}  // namespace talus::scene_read
