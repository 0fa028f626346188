// [[material]] and [[friction_pair]]: densities, friction, restitution and rolling
// resistance, checked against what the solver supports.
#include "io/scene/readers.hpp"

#include "core/solver_table.hpp"

namespace talus::scene_read {

/// Rolling and spinning resistance need a solver with the torque block (solvers/rolling.hpp;
/// core/solver_table.hpp).
static bool solver_has_rolling(const SolverSettings& s) { return supports_rolling(s.type, s.friction); }
std::string rolling_solvers() {
    return solvers_where([](const SolverCapabilities& k) { return k.rolling; });
}

/// `rolling_friction` or `spinning_friction` of `c` (≥ 0, [m]); a positive value with a
/// solver that lacks the torque block is an error on that key.
static std::optional<double> read_resistance(Reader& r, const Ctx& c, std::string_view key,
                                      const SolverSettings& solver) {
    auto v = r.number(c, key, Need::Optional);
    if (v && *v > 0.0 && !solver_has_rolling(solver))
        r.problem_at(c, key,
                     solver.friction == FrictionLaw::Coulomb
                         ? fmt::format("friction = \"coulomb\" takes rolling or spinning resistance only "
                                       "with the \"bgs\" solver (or use friction = \"ccp\" with {})",
                                       rolling_solvers())
                         : fmt::format("the \"{}\" solver does not support rolling or spinning "
                                       "resistance (use {})",
                                       solver_name(solver.type), rolling_solvers()));
    return v;
}

MaterialTable read_materials(Reader& r, const Ctx& root, const SolverSettings& solver) {
    MaterialTable table;
    std::vector<uint32_t> line_of;  // per material, for duplicate messages
    for (const Ctx& c : r.entries(root, "material")) {
        const auto name = r.string(c, "name", Need::Required);
        Material m;
        if (auto v = r.number(c, "density", Need::Optional)) {
            m.density = *v;
            // Grains run from cork (~100 kg/m³) to tungsten carbide (~16,000); beyond these
            // bounds a value is most likely in g/cm³ (2.5) or g/L.
            if (*v < 100.0 || *v > 25000.0)
                r.warning_at(c, "density",
                             fmt::format("{:g} kg/m³ is outside the range of solid grains "
                                         "(100 to 25,000 kg/m³): is it in kg/m³ (glass is 2500)?",
                                         *v));
        }
        if (auto v = r.number(c, "friction", Need::Optional))
            m.friction = *v;
        if (auto v = r.number(c, "restitution", Need::Optional))
            m.restitution = *v;
        if (auto v = read_resistance(r, c, "rolling_friction", solver)) m.rolling_friction = *v;
        if (auto v = read_resistance(r, c, "spinning_friction", solver)) m.spinning_friction = *v;
        if (!name) continue;
        if (name->empty()) {
            r.problem_at(c, "name", "must not be empty");
        } else if (const int prev = table.find(*name); prev >= 0) {
            r.problem_at(c, "name",
                         fmt::format("material '{}' is already defined (line {})", *name,
                                     line_of[std::size_t(prev)]));
        } else {
            m.name = *name;
            table.add(std::move(m));
            line_of.push_back(r.at(c, "name").line);
        }
    }
    return table;
}

/// The material named by key `k` of `c`, reporting an unknown name with a suggestion.
std::optional<uint32_t> material_ref(Reader& r, const Ctx& c, std::string_view k,
                                     const MaterialTable& materials, const toml::node* n,
                                     std::string_view element) {
    std::optional<std::string> name;
    if (n) {
        if (auto s = n->as_string())
            name = s->get();
        else
            r.problem_at(c, k,
                         fmt::format("{}expected a material name, got {}", element, type_name(*n)));
    } else {
        name = r.string(c, k, Need::Required);
    }
    if (!name) return std::nullopt;
    const int m = materials.find(*name);
    if (m >= 0) return uint32_t(m);
    std::vector<std::string_view> names;
    for (const Material& mat : materials.materials) names.push_back(mat.name);
    r.problem_at(c, k,
                 fmt::format("{}unknown material '{}'{}", element, *name,
                             names.empty() ? std::string(" (no [[material]] is defined)")
                                           : suggest(*name, names, "defined")));
    return std::nullopt;
}

void read_friction_pairs(Reader& r, const Ctx& root, MaterialTable& materials, const SolverSettings& solver) {
    std::vector<std::pair<uint32_t, uint32_t>> seen;
    for (const Ctx& c : r.entries(root, "friction_pair")) {
        const auto mu = r.number(c, "friction", Need::Required);
        const auto e = r.number(c, "restitution", Need::Optional);
        const auto mu_r = read_resistance(r, c, "rolling_friction", solver);
        const auto mu_s = read_resistance(r, c, "spinning_friction", solver);
        const toml::node* n = r.present(c, "materials", Need::Required);
        if (!n) continue;
        const toml::array* a = n->as_array();
        if (!a || a->size() != 2) {
            r.problem_at(c, "materials", "expected an array of two material names");
            continue;
        }
        const auto m0 = material_ref(r, c, "materials", materials, a->get(0), "element 0: ");
        const auto m1 = material_ref(r, c, "materials", materials, a->get(1), "element 1: ");
        if (!m0 || !m1 || !mu) continue;
        const std::pair<uint32_t, uint32_t> key{std::min(*m0, *m1), std::max(*m0, *m1)};
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
            r.problem_at(c, "materials", "this pair is already given");
            continue;
        }
        seen.push_back(key);
        materials.set_pair_friction(*m0, *m1, *mu);
        if (e) materials.set_pair_restitution(*m0, *m1, *e);
        if (mu_r) materials.set_pair_rolling(*m0, *m1, *mu_r);
        if (mu_s) materials.set_pair_spinning(*m0, *m1, *mu_s);
    }
}

/// One resistance key's warning, if its length exceeds the radius r of the thinnest grain it
/// acts on.
static void warn_resistance_length(Reader& r, const Ctx& c, std::string_view key, double r_min,
                                   std::string_view grains) {
    const auto v = r.number(c, key, Need::Optional);
    if (!v || !(*v > r_min) || !std::isfinite(r_min)) return;
    r.warning_at(c, key,
                 fmt::format("{:g} m is {:.3g} times the radius of the thinnest {} ({:g} m), a lever "
                             "longer than the grain: it is a length in metres (the torque per unit "
                             "normal force), not a dimensionless coefficient; a dimensionless η "
                             "(LIGGGHTS's coefficientRollingFriction) is η × r, here {:g} m for η = {:g}",
                             *v, *v / r_min, grains, r_min, *v * r_min, *v));
}

void check_resistance_lengths(Reader& r, const Ctx& root, const World& world) {
    const MaterialTable& materials = world.materials;
    if (!materials.any_rolling()) return;  // (no pass over the bodies for the usual scene)
    const std::size_t nm = materials.materials.size();
    // the thinnest grain of each material: the bodies at t = 0 and what the emitters add
    std::vector<double> thinnest(nm, std::numeric_limits<double>::infinity());
    const BodyStore& bodies = world.bodies;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        const uint32_t m = bodies.material[i];
        if (m < nm) thinnest[m] = std::min(thinnest[m], bodies.thickness_radius(i));
    }
    for (const Emitter& e : world.emitters)
        if (e.material < nm) thinnest[e.material] = std::min(thinnest[e.material], e.size.min);

    for (const Ctx& c : r.entries(root, "material")) {
        const auto name = r.string(c, "name", Need::Optional);
        const int m = name ? materials.find(*name) : -1;
        if (m < 0) continue;
        const std::string grains = fmt::format("grain of material '{}'", *name);
        warn_resistance_length(r, c, "rolling_friction", thinnest[std::size_t(m)], grains);
        warn_resistance_length(r, c, "spinning_friction", thinnest[std::size_t(m)], grains);
    }
    // (read_friction_pairs has checked the pairs: the scene got here without a problem)
    for (const Ctx& c : r.entries(root, "friction_pair")) {
        const toml::array* a = r.find(c, "materials")->as_array();
        const auto m0 = material_ref(r, c, "materials", materials, a->get(0));
        const auto m1 = material_ref(r, c, "materials", materials, a->get(1));
        if (!m0 || !m1) continue;
        // a pair acts on the grains of both (a material only a wall has: on the other's)
        const double r_min = std::min(thinnest[*m0], thinnest[*m1]);
        const std::string grains = fmt::format("grain of the pair '{}'–'{}'", materials.materials[*m0].name,
                                               materials.materials[*m1].name);
        warn_resistance_length(r, c, "rolling_friction", r_min, grains);
        warn_resistance_length(r, c, "spinning_friction", r_min, grains);
    }
}

}  // namespace talus::scene_read
