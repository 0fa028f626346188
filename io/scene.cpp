// Why: the scene file is the user's whole description of a run (docs/design.md §10), so a typo
// must never turn into a silently different simulation. The reader therefore works in
// passes over the parsed TOML document, each collecting every problem it can find:
//   1. syntax (toml++ reports the line),
//   2. --set overrides, applied to the document before anything is checked,
//   3. unknown keys, against the schema below, with the nearest valid key suggested,
//   4. types, required keys and value ranges, section by section,
//   5. geometry: generate the grains, then look for overlaps between bodies and with walls.
// A later pass runs only when the earlier ones found nothing, so one mistake does not
// cascade into pages of follow-on messages. Locations come from toml++'s source regions;
// nodes placed by an override are located by the override text instead of a line.
#include "io/scene.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <unordered_map>

#include "collision/mesh.hpp"
#include "collision/narrow_phase.hpp"
#include "core/kinematic.hpp"
#include "io/particle_fill.hpp"
#include "io/text_format.hpp"
#include "io/stl.hpp"

namespace talus {
namespace {

/// More bodies than this in one scene is certainly a typo (≈ 16 GB of body state).
constexpr double kMaxBodies = kDefaultMaxBodies;
/// Overlaps allowed at t = 0, relative to the larger radius: round-off only.
constexpr double kOverlapTolerance = 1e-9;
/// Overlap problems listed before the rest are summarised.
constexpr std::size_t kMaxListedOverlaps = 20;

// ---------------------------------------------------------------------------------------
// Schema: which keys exist where. Types and ranges are checked by the readers further down.

enum class Kind { Value, Table, TableArray };

struct Field {
    std::string_view name;
    Kind kind = Kind::Value;
    const std::vector<Field>* sub = nullptr;
};
using Fields = std::vector<Field>;

const Fields kStopKeys{{"kinetic_energy_below"}, {"hold"}};
const Fields kSimulationKeys{{"dt"},        {"duration"},          {"gravity"},
                             {"max_speed"}, {"renumber_interval"}, {"stop", Kind::Table, &kStopKeys},
                             {"max_dt"},    {"min_dt"},            {"step_fraction"}};
const Fields kStageKeys{{"name"}, {"duration"}, {"stop", Kind::Table, &kStopKeys}, {"remove_walls"},
                       {"start_motion"}};
const Fields kSolverKeys{{"type"},     {"max_iterations"}, {"tolerance"},     {"relaxation"},
                         {"envelope"}, {"recovery_speed"}, {"stabilization"}, {"warm_start"},
                         {"friction_directions"}, {"position_iterations"}, {"bounce_speed"}, {"friction"},
                         {"relative_tolerance"}, {"push_out"}};
const Fields kOutputKeys{{"path"},        {"interval"},   {"wall_contacts"},      {"precision"},
                         {"compression"}, {"checkpoint"}, {"checkpoint_interval"}};
const Fields kMaterialKeys{{"name"},        {"density"},          {"friction"},
                           {"restitution"}, {"rolling_friction"}, {"spinning_friction"}};
const Fields kFrictionPairKeys{{"materials"},        {"friction"},         {"restitution"},
                               {"rolling_friction"}, {"spinning_friction"}};
const Fields kMotionKeys{{"type"},      {"start"},         {"velocity"},  {"centre"},
                         {"axis"},      {"omega"},         {"times"},     {"displacements"},
                         {"direction"}, {"amplitude"},     {"frequency"}, {"phase"}};
const Fields kWallKeys{{"type"},   {"name"},     {"material"}, {"velocity"}, {"point"},
                       {"normal"}, {"min"},      {"max"},      {"file"},
                       {"scale"},  {"translate"}, {"axis"},    {"radius"},
                       {"inside"}, {"length"},   {"motion", Kind::Table, &kMotionKeys}};
const Fields kLatticeKeys{{"min"}, {"max"}, {"spacing"}, {"seed"}};
const Fields kRandomKeys{{"min"}, {"max"}, {"count"}, {"volume_fraction"}, {"seed"}};
const Fields kRadiusKeys{{"distribution"}, {"min"},    {"max"},   {"mean"},   {"std"},
                         {"median"},       {"sigma"},  {"values"}, {"weights"}};
const Fields kParticlesKeys{{"shape"},
                            {"radius", Kind::Table, &kRadiusKeys},
                            {"spheres"},
                            {"material"},
                            {"velocity"},
                            {"lattice", Kind::Table, &kLatticeKeys},
                            {"random", Kind::Table, &kRandomKeys},
                            {"motion"}};  // refused with a reason by read_particles
const Fields kBodyKeys{{"shape"},       {"radius"},    {"length"},   {"semi_axes"},  {"spheres"},
                       {"material"},    {"position"},  {"velocity"}, {"angular_velocity"},
                       {"orientation"}, {"mass"},      {"inertia"},  {"motion", Kind::Table, &kMotionKeys}};
const Fields kJointKeys{{"type"},   {"body_a"}, {"body_b"},      {"anchor"},
                        {"anchor_a"}, {"axis"}, {"length"}, {"motor_speed"}};
const Fields kPeriodicKeys{{"x"}, {"y"}, {"z"}};
const Fields kEmitterKeys{{"radius", Kind::Table, &kRadiusKeys},
                          {"material"}, {"rate"}, {"mass_rate"}, {"min"}, {"max"},
                          {"velocity"}, {"start"}, {"stop"}, {"seed"},
                          {"motion"}};  // refused with a reason by read_emitters
const Fields kOutletKeys{{"type"}, {"min"}, {"max"}, {"point"}, {"normal"}};
const Fields kRootKeys{{"simulation", Kind::Table, &kSimulationKeys},
                       {"periodic", Kind::Table, &kPeriodicKeys},
                       {"solver", Kind::Table, &kSolverKeys},
                       {"output", Kind::Table, &kOutputKeys},
                       {"material", Kind::TableArray, &kMaterialKeys},
                       {"friction_pair", Kind::TableArray, &kFrictionPairKeys},
                       {"wall", Kind::TableArray, &kWallKeys},
                       {"particles", Kind::TableArray, &kParticlesKeys},
                       {"body", Kind::TableArray, &kBodyKeys},
                       {"joint", Kind::TableArray, &kJointKeys},
                       {"stage", Kind::TableArray, &kStageKeys},
                       {"emitter", Kind::TableArray, &kEmitterKeys},
                       {"outlet", Kind::TableArray, &kOutletKeys}};

const Field* find_field(const Fields& fields, std::string_view name) {
    for (const Field& f : fields)
        if (f.name == name) return &f;
    return nullptr;
}

// ---------------------------------------------------------------------------------------
// Suggestions

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// neighbouring characters each cost 1 ("tolerence" → "tolerance" is 1).
std::size_t edit_distance(std::string_view a, std::string_view b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::size_t> d((n + 1) * (m + 1));
    auto at = [&](std::size_t i, std::size_t j) -> std::size_t& { return d[i * (m + 1) + j]; };
    for (std::size_t i = 0; i <= n; ++i) at(i, 0) = i;
    for (std::size_t j = 0; j <= m; ++j) at(0, j) = j;
    for (std::size_t i = 1; i <= n; ++i)
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            std::size_t best =
                std::min({at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                best = std::min(best, at(i - 2, j - 2) + 1);
            at(i, j) = best;
        }
    return at(n, m);
}

/// " (did you mean 'x'?)" for the nearest candidate if it is close enough, otherwise
/// " (<what>: a, b, c)".
std::string suggest(std::string_view word, const std::vector<std::string_view>& candidates,
                    std::string_view what) {
    std::string_view best;
    std::size_t best_d = SIZE_MAX;
    for (std::string_view c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (d < best_d) best_d = d, best = c;
    }
    const std::size_t allowed = best.size() < 5 ? 1 : best.size() < 12 ? 2 : 3;
    if (best_d <= allowed && best_d < std::min(word.size(), best.size()))
        return fmt::format(" (did you mean '{}'?)", best);
    if (candidates.empty()) return fmt::format(" (no {})", what);
    return fmt::format(" ({}: {})", what, fmt::join(candidates, ", "));
}

std::vector<std::string_view> field_names(const Fields& fields) {
    std::vector<std::string_view> names;
    for (const Field& f : fields) names.push_back(f.name);
    return names;
}

std::string_view type_name(const toml::node& n) {
    switch (n.type()) {
        case toml::node_type::none: return "nothing";
        case toml::node_type::table: return "a table";
        case toml::node_type::array: return "an array";
        case toml::node_type::string: return "a string";
        case toml::node_type::integer: return "an integer";
        case toml::node_type::floating_point: return "a float";
        case toml::node_type::boolean: return "a boolean";
        case toml::node_type::date: return "a date";
        case toml::node_type::time: return "a time";
        case toml::node_type::date_time: return "a date-time";
    }
    return "an unknown value";
}

std::string trim(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    const auto e = s.find_last_not_of(" \t");
    return std::string(s.substr(b, e - b + 1));
}

// ---------------------------------------------------------------------------------------
// Reader: locating nodes and collecting problems

/// Where a problem is: "<file>:<line>" or "--set <override>". Line 0 sorts first.
struct Place {
    uint32_t line = 0;
    std::string where;
};

/// A table being read: the table (may be null when absent), its key path and its place.
struct Ctx {
    const toml::table* table = nullptr;
    std::string path;
    Place place;

    std::string key(std::string_view k) const {
        return path.empty() ? std::string(k) : path + "." + std::string(k);
    }
};

enum class Need { Optional, Required };

class Reader {
public:
    explicit Reader(std::string file, double max_bodies = kMaxBodies)
        : max_bodies(max_bodies), file_(std::move(file)) {}

    /// The most bodies a scene may generate (SceneLimits::max_bodies).
    double max_bodies;
    /// SceneLimits::progress.
    std::function<void(const std::string&)> progress;

    /// Nodes inserted by overrides (created tables, replaced values) → the override.
    std::unordered_map<const toml::node*, std::string> origin;

    const std::string& file() const { return file_; }
    bool ok() const { return problems_.empty(); }

    Place line_place(uint32_t line) const { return {line, fmt::format("{}:{}", file_, line)}; }

    Place place_of(const toml::source_region& src, const Place& fallback) const {
        if (src.begin.line == 0) return fallback;
        if (src.path && *src.path != file_) return {0, *src.path};  // parsed from an override
        return line_place(src.begin.line);
    }
    Place place_of(const toml::node* n, const Place& fallback) const {
        if (!n) return fallback;
        if (auto it = origin.find(n); it != origin.end()) return {0, it->second};
        return place_of(n->source(), fallback);
    }
    Place at(const Ctx& c, std::string_view k) const { return place_of(find(c, k), c.place); }

    void problem(const Place& p, std::string_view key, std::string_view text) {
        problems_.push_back({p.line, fmt::format("{}: {}: {}", p.where, key, text)});
    }
    void problem_at(const Ctx& c, std::string_view k, std::string_view text) {
        problem(at(c, k), c.key(k), text);
    }
    /// A legal value that is probably a mistake (a unit slip): reported, not refused.
    void warning(const Place& p, std::string_view key, std::string_view text) {
        warnings_.push_back(fmt::format("{}: {}: {}", p.where, key, text));
    }
    void warning_at(const Ctx& c, std::string_view k, std::string_view text) {
        warning(at(c, k), c.key(k), text);
    }
    std::vector<std::string> take_warnings() { return std::move(warnings_); }

    /// Throws the collected problems, sorted by line (override problems first).
    void throw_if_any() {
        if (problems_.empty()) return;
        std::stable_sort(problems_.begin(), problems_.end(),
                         [](const Entry& a, const Entry& b) { return a.line < b.line; });
        std::string msg;
        for (const Entry& e : problems_) {
            if (!msg.empty()) msg += '\n';
            msg += e.text;
        }
        throw SceneError(msg);
    }

    // --- typed access; each reports a wrong type or a missing required key itself ---

    const toml::node* find(const Ctx& c, std::string_view k) const {
        return c.table ? c.table->get(k) : nullptr;
    }

    const toml::node* present(const Ctx& c, std::string_view k, Need need) {
        const toml::node* n = find(c, k);
        if (!n && need == Need::Required) problem(c.place, c.key(k), "missing required key");
        return n;
    }

    std::optional<double> to_number(const toml::node& n, const Ctx& c, std::string_view k,
                                    std::string_view element = {}) {
        double v;
        if (auto f = n.as_floating_point())
            v = f->get();
        else if (auto i = n.as_integer())
            v = static_cast<double>(i->get());
        else {
            problem_at(c, k, fmt::format("{}expected a number, got {}", element, type_name(n)));
            return std::nullopt;
        }
        if (!std::isfinite(v)) {
            problem_at(c, k, fmt::format("{}must be finite (got {})", element, v));
            return std::nullopt;
        }
        return v;
    }

    std::optional<double> number(const Ctx& c, std::string_view k, Need need) {
        const toml::node* n = present(c, k, need);
        return n ? to_number(*n, c, k) : std::nullopt;
    }

    /// A number that must satisfy `ok` (described by `rule` in the message).
    template <class Pred>
    std::optional<double> number(const Ctx& c, std::string_view k, Need need, Pred ok,
                                 std::string_view rule) {
        auto v = number(c, k, need);
        if (v && !ok(*v)) {
            problem_at(c, k, fmt::format("must be {} (got {})", rule, *v));
            return std::nullopt;
        }
        return v;
    }

    std::optional<int64_t> integer(const Ctx& c, std::string_view k, Need need, int64_t lo,
                                   int64_t hi) {
        const toml::node* n = present(c, k, need);
        if (!n) return std::nullopt;
        auto i = n->as_integer();
        if (!i) {
            problem_at(c, k, fmt::format("expected an integer, got {}", type_name(*n)));
            return std::nullopt;
        }
        const int64_t v = i->get();
        if (v < lo || v > hi) {
            problem_at(c, k,
                       hi == INT64_MAX ? fmt::format("must be ≥ {} (got {})", lo, v)
                                       : fmt::format("must be in [{}, {}] (got {})", lo, hi, v));
            return std::nullopt;
        }
        return v;
    }

    std::optional<std::string> string(const Ctx& c, std::string_view k, Need need) {
        const toml::node* n = present(c, k, need);
        if (!n) return std::nullopt;
        if (auto s = n->as_string()) return s->get();
        problem_at(c, k, fmt::format("expected a string, got {}", type_name(*n)));
        return std::nullopt;
    }

    std::optional<bool> boolean(const Ctx& c, std::string_view k, Need need) {
        const toml::node* n = present(c, k, need);
        if (!n) return std::nullopt;
        if (auto b = n->as_boolean()) return b->get();
        problem_at(c, k, fmt::format("expected true or false, got {}", type_name(*n)));
        return std::nullopt;
    }

    std::optional<Vec3> vec3(const Ctx& c, std::string_view k, Need need) {
        const toml::node* n = present(c, k, need);
        if (!n) return std::nullopt;
        const toml::array* a = n->as_array();
        if (!a || a->size() != 3) {
            problem_at(c, k,
                       a ? fmt::format("expected an array of 3 numbers, got {} elements", a->size())
                         : fmt::format("expected an array of 3 numbers, got {}", type_name(*n)));
            return std::nullopt;
        }
        Vec3 v;
        for (std::size_t i = 0; i < 3; ++i) {
            auto x = to_number((*a)[i], c, k, fmt::format("element {}: ", i));
            if (!x) return std::nullopt;
            v[Eigen::Index(i)] = *x;
        }
        return v;
    }

    /// A unit quaternion [w, x, y, z]: 4 numbers of norm 1 within 1e-6, then normalised.
    std::optional<Quat> quaternion(const Ctx& c, std::string_view k, Need need) {
        const toml::node* n = present(c, k, need);
        if (!n) return std::nullopt;
        const toml::array* a = n->as_array();
        if (!a || a->size() != 4) {
            problem_at(c, k,
                       a ? fmt::format("expected a quaternion [w, x, y, z], got {} elements", a->size())
                         : fmt::format("expected a quaternion [w, x, y, z], got {}", type_name(*n)));
            return std::nullopt;
        }
        double q[4];
        for (std::size_t i = 0; i < 4; ++i) {
            auto x = to_number((*a)[i], c, k, fmt::format("element {}: ", i));
            if (!x) return std::nullopt;
            q[i] = *x;
        }
        const double norm = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
        if (std::abs(norm - 1.0) > 1e-6) {
            problem_at(c, k, fmt::format("must be a unit quaternion (norm {:.9g}, allowed 1 ± 1e-6)", norm));
            return std::nullopt;
        }
        return Quat(q[0] / norm, q[1] / norm, q[2] / norm, q[3] / norm);
    }

    std::optional<Ctx> table(const Ctx& c, std::string_view k, Need need) {
        const toml::node* n = present(c, k, need);
        if (!n) return std::nullopt;
        if (auto t = n->as_table()) return Ctx{t, c.key(k), place_of(t, c.place)};
        problem_at(c, k, fmt::format("expected a table, got {}", type_name(*n)));
        return std::nullopt;
    }

    /// Entries of an array of tables ([[k]]), with paths "k.0", "k.1", …
    std::vector<Ctx> entries(const Ctx& c, std::string_view k) {
        std::vector<Ctx> out;
        const toml::node* n = find(c, k);
        if (!n) return out;
        const toml::array* a = n->as_array();
        if (a)
            for (std::size_t i = 0; i < a->size(); ++i)
                if (auto t = (*a)[i].as_table())
                    out.push_back({t, fmt::format("{}.{}", c.key(k), i), place_of(t, c.place)});
        if (!a || out.size() != a->size()) {
            problem_at(
                c, k,
                fmt::format("expected an array of tables ([[{}]]), got {}", k, type_name(*n)));
            out.clear();
        }
        return out;
    }

    /// Unknown keys anywhere below `c`, against `fields`.
    void check_keys(const Ctx& c, const Fields& fields) {
        for (auto&& [k, v] : *c.table) {
            const Field* f = find_field(fields, k.str());
            if (!f) {
                const Place p = place_of(k.source(), place_of(&v, c.place));
                problem(p, c.key(k.str()),
                        "unknown key" + suggest(k.str(), field_names(fields), "valid keys here"));
                continue;
            }
            if (f->kind == Kind::Table) {
                if (auto t = v.as_table())
                    check_keys({t, c.key(k.str()), place_of(t, c.place)}, *f->sub);
            } else if (f->kind == Kind::TableArray) {
                if (auto a = v.as_array())
                    for (std::size_t i = 0; i < a->size(); ++i)
                        if (auto t = (*a)[i].as_table())
                            check_keys(
                                {t, fmt::format("{}.{}", c.key(k.str()), i), place_of(t, c.place)},
                                *f->sub);
            }
        }
    }

private:
    struct Entry {
        uint32_t line;
        std::string text;
    };
    std::string file_;
    std::vector<Entry> problems_;
    std::vector<std::string> warnings_;
};

// ---------------------------------------------------------------------------------------
// Overrides

/// Applies one "key=value" override to the document; problems name the override.
void apply_override(toml::table& root, const std::string& text, Reader& r) {
    const Place p{0, "--set " + text};
    const auto eq = text.find('=');
    if (eq == std::string::npos) {
        r.problem(p, trim(text), "expected key=value");
        return;
    }
    const std::string key = trim(std::string_view(text).substr(0, eq));
    const std::string value = trim(std::string_view(text).substr(eq + 1));

    std::vector<std::string> segs;
    for (std::size_t b = 0;;) {
        const auto e = key.find('.', b);
        segs.push_back(key.substr(b, e == std::string::npos ? std::string::npos : e - b));
        if (e == std::string::npos) break;
        b = e + 1;
    }
    if (std::any_of(segs.begin(), segs.end(), [](const std::string& s) { return s.empty(); })) {
        r.problem(p, key.empty() ? "(no key)" : key, "empty part in the key path");
        return;
    }

    // The value as TOML; text that is not a TOML value is taken as a bare string, so that
    // `--set output.path=run.h5` works after the shell has eaten the quotes.
    toml::table parsed;
    try {
        parsed = toml::parse("v = " + value, std::string_view(p.where));
    } catch (const toml::parse_error&) {
        parsed = toml::table{};
        parsed.insert("v", value);
    }
    toml::node* new_value = parsed.get("v");

    toml::table* cur = &root;
    const Fields* fields = &kRootKeys;
    std::string path;
    for (std::size_t i = 0; i < segs.size(); ++i) {
        const std::string& seg = segs[i];
        const std::string here = path.empty() ? seg : path + "." + seg;
        const Field* f = find_field(*fields, seg);
        if (!f) {
            r.problem(p, here,
                      "unknown key" + suggest(seg, field_names(*fields), "valid keys here"));
            return;
        }
        const bool last = i + 1 == segs.size();
        if (last && f->kind != Kind::TableArray) {
            if (const toml::node* old = cur->get(seg)) r.origin.erase(old);
            new_value->visit([&](auto&& n) { cur->insert_or_assign(seg, std::move(n)); });
            r.origin[cur->get(seg)] = p.where;
            return;
        }
        toml::node* node = cur->get(seg);
        switch (f->kind) {
            case Kind::Value: r.problem(p, here, "is a value, not a table"); return;
            case Kind::Table:
                if (!node) {
                    node = &cur->insert(seg, toml::table{}).first->second;
                    r.origin[node] = p.where;
                }
                if (!node->is_table()) {
                    r.problem(p, here,
                              fmt::format("is {} in the scene, not a table", type_name(*node)));
                    return;
                }
                cur = node->as_table();
                path = here;
                break;
            case Kind::TableArray: {
                toml::array* arr = node ? node->as_array() : nullptr;
                const std::string example = fmt::format("e.g. {}.0.{}", here, f->sub->front().name);
                if (!arr) {
                    r.problem(p, here, fmt::format("the scene has no [[{}]] entries", seg));
                    return;
                }
                if (i + 2 >= segs.size()) {
                    r.problem(p, here, "give an entry index and a key, " + example);
                    return;
                }
                const std::string& idx_text = segs[i + 1];
                std::size_t idx = 0;
                const auto [end, ec] =
                    std::from_chars(idx_text.data(), idx_text.data() + idx_text.size(), idx);
                if (ec != std::errc() || end != idx_text.data() + idx_text.size()) {
                    // not an index: the entry of that name (materials, walls and stages
                    // are named everywhere else in a scene)
                    std::vector<std::string_view> names;
                    idx = arr->size();
                    for (std::size_t k = 0; k < arr->size(); ++k)
                        if (const toml::table* t = (*arr)[k].as_table())
                            if (auto n = t->get_as<std::string>("name")) {
                                names.push_back(n->get());
                                if (n->get() == idx_text && idx == arr->size()) idx = k;
                            }
                    if (idx == arr->size()) {
                        r.problem(p, here,
                                  names.empty()
                                      ? fmt::format("'{}' is not an entry index, {}", idx_text, example)
                                      : fmt::format("no [[{}]] entry is named '{}'{}; or give an "
                                                    "index, {}",
                                                    seg, idx_text,
                                                    suggest(idx_text, names, "names"), example));
                        return;
                    }
                }
                if (idx >= arr->size() || !(*arr)[idx].is_table()) {
                    r.problem(p, here + "." + idx_text,
                              fmt::format("no such entry: the scene has {} [[{}]] entries",
                                          arr->size(), seg));
                    return;
                }
                cur = (*arr)[idx].as_table();
                path = here + "." + idx_text;
                ++i;  // the index segment is consumed
                break;
            }
        }
        fields = f->sub;
    }
}

// ---------------------------------------------------------------------------------------
// Sections

SimulationSettings read_simulation(Reader& r, const Ctx& root) {
    SimulationSettings s;
    // Without `dt` the step is adaptive (World::choose_step); with it, fixed.
    s.adaptive = true;
    const auto c = r.table(root, "simulation", Need::Optional);
    if (!c) return s;
    const auto positive = [](double v) { return v > 0.0; };
    if (auto v = r.number(*c, "dt", Need::Optional, positive, "> 0")) {
        s.dt = *v;
        s.adaptive = false;
        for (const char* key : {"max_dt", "min_dt", "step_fraction"})
            if (r.find(*c, key))
                r.problem_at(*c, key,
                             "applies to the adaptive step, and this scene sets a fixed step "
                             "`dt`: remove dt to step adaptively, or remove this key");
    }
    if (auto v = r.number(*c, "max_dt", Need::Optional, positive, "> 0")) s.max_dt = *v;
    if (auto v = r.number(*c, "min_dt", Need::Optional, positive, "> 0")) s.min_dt = *v;
    if (auto v = r.number(*c, "step_fraction", Need::Optional,
                          [](double x) { return x > 0.0 && x <= 1.0; }, "in (0, 1]"))
        s.step_fraction = *v;
    if (s.adaptive && s.min_dt > s.max_dt)
        r.problem_at(*c, r.find(*c, "min_dt") ? "min_dt" : "max_dt",
                     fmt::format("min_dt = {:g} s is longer than max_dt = {:g} s", s.min_dt,
                                 s.max_dt));
    if (auto v = r.number(*c, "duration", Need::Optional, positive, "> 0")) s.duration = *v;
    if (auto v = r.number(*c, "max_speed", Need::Optional, positive, "> 0")) s.max_speed = *v;
    if (auto v = r.integer(*c, "renumber_interval", Need::Optional, 0, INT_MAX))
        s.renumber_interval = int(*v);
    if (auto v = r.vec3(*c, "gravity", Need::Optional)) {
        s.gravity = *v;
        // Legal, but 981 (cm/s²) or 9810 (mm/s²) is a unit slip; the Moon (1.62) and Mars
        // (3.71) are not warned about, nor is zero gravity.
        const double g = v->norm();
        if (g > 0.0 && (g < 1.0 || g > 50.0))
            r.warning_at(*c, "gravity",
                         fmt::format("its magnitude {:.4g} m/s² is {:.3g} times Earth's 9.81 "
                                     "m/s²: is it in m/s²?", g, g / 9.81));
    }
    return s;
}

/// The step against the run's length and the frame cadence: a step longer than a stage
/// would run it for 0 steps (and overshoot), a frame interval shorter than the step cannot
/// be honoured.
void check_step(Reader& r, const Ctx& root, const SimulationSettings& sim,
                const std::vector<Stage>& stages, const OutputSettings& out) {
    if (sim.adaptive) return;  // adaptive steps land on frame and stage times exactly
    const auto sim_table = r.table(root, "simulation", Need::Optional);
    const Ctx sim_ctx = sim_table ? *sim_table : Ctx{nullptr, "simulation", root.place};
    for (const Stage& st : stages)
        if (sim.dt > st.duration) {
            r.problem_at(sim_ctx, "dt",
                         fmt::format("the step {:g} s is longer than {} ({:g} s), which would "
                                     "then run 0 steps: lower dt or lengthen the duration",
                                     sim.dt,
                                     stages.size() > 1 ? fmt::format("stage '{}'", st.name)
                                                       : std::string("the run's duration"),
                                     st.duration));
            break;
        }
    // (an interval left at its default with a longer step simply gives a frame every step)
    const auto out_table = r.table(root, "output", Need::Optional);
    if (out_table && r.find(*out_table, "interval") && out.interval < sim.dt * (1.0 - 1e-9)) {
        const Ctx& out_ctx = *out_table;
        r.problem_at(out_ctx, "interval",
                     fmt::format("{:g} s is shorter than the step dt = {:g} s: frames can come "
                                 "at most once a step (interval = dt writes every step)",
                                 out.interval, sim.dt));
    }
}

/// `stop = { kinetic_energy_below = E, hold = t }` of [simulation] or a [[stage]].
void read_stop(Reader& r, const Ctx& c, Stage& stage) {
    const auto t = r.table(c, "stop", Need::Optional);
    if (!t) return;
    if (auto e = r.number(*t, "kinetic_energy_below", Need::Required,
                          [](double x) { return x > 0.0; }, "> 0"))
        stage.kinetic_energy_below = *e;
    if (auto h = r.number(*t, "hold", Need::Optional, [](double x) { return x >= 0.0; }, "≥ 0"))
        stage.hold = *h;
}

/// An array of wall names under `key` (e.g. a stage's remove_walls) as indices into `walls`;
/// each unknown name is reported.
std::vector<uint32_t> read_wall_names(Reader& r, const Ctx& c, std::string_view key,
                                      const std::vector<Wall>& walls) {
    std::vector<uint32_t> found;
    const toml::node* n = r.find(c, key);
    if (!n) return found;
    const toml::array* a = n->as_array();
    if (!a) {
        r.problem_at(c, key, fmt::format("expected an array of wall names, got {}", type_name(*n)));
        return found;
    }
    std::vector<std::string_view> names;
    for (const Wall& w : walls)
        if (!w.name.empty()) names.push_back(w.name);
    for (std::size_t i = 0; i < a->size(); ++i) {
        const auto* name = (*a)[i].as_string();
        if (!name) {
            r.problem_at(c, key, fmt::format("element {}: expected a wall name, got {}", i,
                                             type_name((*a)[i])));
            continue;
        }
        std::size_t k = 0;
        while (k < walls.size() && walls[k].name != name->get()) ++k;
        if (k == walls.size()) {
            r.problem_at(c, key,
                         fmt::format("element {}: no wall is named '{}'{}", i, name->get(),
                                     names.empty() ? std::string(" (give walls a name = \"...\")")
                                                   : suggest(name->get(), names, "named walls")));
            continue;
        }
        found.push_back(uint32_t(k));
    }
    return found;
}

/// The run's stages: the [[stage]] entries, or one stage of [simulation] duration and stop.
std::vector<Stage> read_stages(Reader& r, const Ctx& root, std::vector<Wall>& walls) {
    std::vector<Stage> stages;
    std::vector<int> started_by(walls.size(), -1);  // stage index that starts each wall's motion
    const auto sim = r.table(root, "simulation", Need::Optional);
    const std::vector<Ctx> entries = r.entries(root, "stage");
    if (entries.empty()) {
        Stage s;
        s.name = "run";
        if (sim) {
            if (auto d = r.number(*sim, "duration", Need::Optional)) s.duration = *d;
            read_stop(r, *sim, s);
        }
        stages.push_back(std::move(s));
        return stages;
    }
    if (sim) {
        for (std::string_view k : {"duration", "stop"})
            if (r.find(*sim, k))
                r.problem_at(*sim, k,
                             fmt::format("not allowed with [[stage]]: each stage has its own {}", k));
    }
    for (const Ctx& c : entries) {
        Stage s;
        s.name = r.string(c, "name", Need::Optional).value_or(c.path);
        if (auto d = r.number(c, "duration", Need::Required, [](double x) { return x > 0.0; }, "> 0"))
            s.duration = *d;
        read_stop(r, c, s);
        s.remove_walls = read_wall_names(r, c, "remove_walls", walls);
        s.start_motion = read_wall_names(r, c, "start_motion", walls);
        for (uint32_t k : s.start_motion) {
            Wall& w = walls[k];
            if (!w.motion.moving())
                r.problem_at(c, "start_motion",
                             fmt::format("wall '{}' has no motion to start (give it motion = {{ type = ... }})",
                                         w.name));
            else if (started_by[k] >= 0)  // by an earlier stage, or twice in this one
                r.problem_at(c, "start_motion",
                             fmt::format("wall '{}' is already started by stage '{}'", w.name,
                                         std::size_t(started_by[k]) < stages.size()
                                             ? stages[std::size_t(started_by[k])].name
                                             : s.name));
            else if (w.motion.start != 0.0)
                r.problem_at(c, "start_motion",
                             fmt::format("wall '{}' gives motion.start = {} s; a wall started by a "
                                         "stage starts when the stage begins (drop its start)",
                                         w.name, w.motion.start));
            else {
                started_by[k] = int(stages.size());
                // held at its reference pose until the stage begins (begin_stage sets start)
                w.motion.start = std::numeric_limits<double>::infinity();
            }
        }
        stages.push_back(std::move(s));
    }
    return stages;
}

/// [periodic] x|y|z = [lo, hi]: the periodic range of each periodic axis [m].
PeriodicBox read_periodic(Reader& r, const Ctx& root) {
    PeriodicBox p;
    const auto c = r.table(root, "periodic", Need::Optional);
    if (!c) return p;
    for (int k = 0; k < 3; ++k) {
        const std::string_view key = std::string_view("xyz").substr(std::size_t(k), 1);
        const toml::node* n = r.find(*c, key);
        if (!n) continue;
        const toml::array* a = n->as_array();
        if (!a || a->size() != 2) {
            r.problem_at(*c, key, a ? fmt::format("expected [lo, hi], got {} elements", a->size())
                                    : fmt::format("expected [lo, hi], got {}", type_name(*n)));
            continue;
        }
        auto lo = r.to_number((*a)[0], *c, key, "element 0: ");
        auto hi = r.to_number((*a)[1], *c, key, "element 1: ");
        if (!lo || !hi) continue;
        if (!(*hi > *lo)) {
            r.problem_at(*c, key, fmt::format("must have lo < hi (got [{}, {}])", *lo, *hi));
            continue;
        }
        p.on[std::size_t(k)] = true;
        p.lo[k] = *lo;
        p.hi[k] = *hi;
    }
    return p;
}

/// Every body inside the periodic range, and each periodic length long enough for the
/// broad phase (3 × (largest diameter + envelope)).
void check_periodic(Reader& r, const Ctx& root, const World& world) {
    const PeriodicBox& p = world.simulation.periodic;
    if (!p.any()) return;
    const auto c = r.table(root, "periodic", Need::Optional);
    double rmax = 0.0;
    for (double rad : world.bodies.radius) rmax = std::max(rmax, rad);
    const double cell = 2.0 * rmax + world.solver.envelope;
    for (int k = 0; k < 3; ++k) {
        if (!p.on[std::size_t(k)]) continue;
        const std::string_view key = std::string_view("xyz").substr(std::size_t(k), 1);
        if (p.length(k) < 3.0 * cell) {
            r.problem_at(*c, key,
                         fmt::format("the period {} m must be at least 3 × (largest diameter + "
                                     "solver.envelope) = {} m",
                                     p.length(k), 3.0 * cell));
            continue;
        }
        for (std::size_t i = 0; i < world.bodies.size(); ++i) {
            const double x = world.bodies.position[i][k];
            if (x < p.lo[k] || x >= p.hi[k]) {
                r.problem_at(*c, key,
                             fmt::format("body {} has {} = {} m, outside the periodic range [{}, {}) "
                                         "(place bodies inside it)",
                                         world.bodies.id[i], key, x, p.lo[k], p.hi[k]));
                break;
            }
        }
    }
}

SolverSettings read_solver(Reader& r, const Ctx& root) {
    SolverSettings s;
    const auto c = r.table(root, "solver", Need::Optional);
    // A scene that says nothing of when to stop stops relative to its speeds as well, and
    // one that names no solver gets the scenes' default.
    s.relative_tolerance = kDefaultRelativeTolerance;
    s.type = kSceneDefaultSolver;
    s.split_push_out = kSceneSplitPushOut;
    if (!c) return s;
    if (auto t = r.string(*c, "type", Need::Optional)) {
        if (const std::optional<SolverType> type = solver_from_name(*t)) {
            s.type = *type;
        } else {
            std::vector<std::string_view> names;
            for (const SolverCapabilities& k : kSolverTable) names.push_back(k.name);
            r.problem_at(*c, "type", fmt::format("unknown solver type '{}'{}", *t, suggest(*t, names, "known")));
        }
    }
    bool friction_given = false;
    if (auto f = r.string(*c, "friction", Need::Optional)) {
        friction_given = true;
        if (*f == "ccp")
            s.friction = FrictionLaw::CCP;
        else if (*f == "coulomb")
            s.friction = FrictionLaw::Coulomb;
        else
            r.problem_at(*c, "friction", fmt::format("unknown friction law '{}'{}", *f,
                                                     suggest(*f, {"ccp", "coulomb"}, "known")));
    }
    // a solver of the exact law only (nsgs) implies it unless told otherwise
    if (!capabilities(s.type).ccp && !friction_given) s.friction = FrictionLaw::Coulomb;
    if (!supports_law(s.type, s.friction)) {
        const bool ccp = s.friction == FrictionLaw::CCP;
        const std::string others = solvers_where([&](const SolverCapabilities& k) { return ccp ? k.ccp && k.coulomb : k.coulomb; });
        r.problem_at(*c, "friction",
                     ccp ? fmt::format("the \"{}\" solver solves the exact Coulomb law only: set friction = "
                                       "\"coulomb\" or choose {}", solver_name(s.type), others)
                         : fmt::format("friction = \"coulomb\" works with the {} solvers, not \"{}\"{}",
                                       others, solver_name(s.type),
                                       capabilities(s.type).own_model ? " (it has its own friction model)" : ""));
    }
    if (auto v = r.integer(*c, "max_iterations", Need::Optional, 1, INT_MAX))
        s.max_iterations = int(*v);
    if (auto v = r.number(
            *c, "tolerance", Need::Optional, [](double x) { return x > 0.0; }, "> 0")) {
        s.tolerance = *v;
        s.relative_tolerance = 0.0;  // an explicit tolerance means what it says
    }
    if (auto v = r.number(
            *c, "relative_tolerance", Need::Optional, [](double x) { return x >= 0.0 && x < 1.0; },
            "in [0, 1)"))
        s.relative_tolerance = *v;
    if (auto v = r.number(
            *c, "relaxation", Need::Optional, [](double x) { return x > 0.0 && x < 2.0; },
            "in (0, 2)"))
        s.relaxation = *v;
    if (auto v = r.number(
            *c, "envelope", Need::Optional, [](double x) { return x >= 0.0; }, "≥ 0"))
        s.envelope = *v;
    if (auto v = r.number(
            *c, "recovery_speed", Need::Optional, [](double x) { return x >= 0.0; }, "≥ 0"))
        s.recovery_speed = *v;
    if (auto v = r.number(
            *c, "stabilization", Need::Optional, [](double x) { return x >= 0.0 && x <= 1.0; },
            "in [0, 1]"))
        s.stabilization = *v;
    if (auto v = r.boolean(*c, "warm_start", Need::Optional)) s.warm_start = *v;
    const auto push_out = r.string(*c, "push_out", Need::Optional);
    if (push_out) {
        if (*push_out == "velocity" || *push_out == "position")
            s.split_push_out = *push_out == "position";
        else
            r.problem_at(*c, "push_out", fmt::format("unknown push-out '{}'{}", *push_out,
                                                     suggest(*push_out, {"velocity", "position"}, "known")));
    }
    if (auto v = r.integer(*c, "friction_directions", Need::Optional, 4, 64)) {
        if (*v % 2 != 0)  // the cone must be balanced: −d_j is a direction too (seed 000, (13))
            r.problem_at(*c, "friction_directions", "must be even (balanced cone)");
        else
            s.friction_directions = int(*v);
    }
    if (auto v = r.integer(*c, "position_iterations", Need::Optional, 0, 50))
        s.position_iterations = int(*v);
    // The position-level variant removes overlaps by its own re-linearised solves with the
    // velocity-level term (engine/world/position_level.cpp): no separate push-out with it.
    if (s.position_iterations > 0) {
        if (push_out && s.split_push_out)
            r.problem_at(*c, "push_out", "push_out = \"position\" does not combine with position_iterations > 0 "
                                         "(the position-level variant corrects overlaps itself); use \"velocity\"");
        s.split_push_out = false;
    }
    if (auto v = r.number(
            *c, "bounce_speed", Need::Optional, [](double x) { return x >= 0.0; }, "≥ 0"))
        s.bounce_speed = *v;
    return s;
}

OutputSettings read_output(Reader& r, const Ctx& root, const std::filesystem::path& scene_file) {
    OutputSettings s;
    const auto c = r.table(root, "output", Need::Optional);
    if (c) {
        if (auto p = r.string(*c, "path", Need::Optional)) {
            if (p->empty())
                r.problem_at(*c, "path", "must not be empty");
            else
                s.path = *p;
        }
        if (auto v = r.number(
                *c, "interval", Need::Optional, [](double x) { return x > 0.0; }, "> 0"))
            s.interval = *v;
        if (auto b = r.boolean(*c, "wall_contacts", Need::Optional)) s.wall_contacts = *b;
        if (auto p = r.string(*c, "precision", Need::Optional)) {
            if (*p == "float64")
                s.precision = OutputPrecision::Float64;
            else if (*p == "float32")
                s.precision = OutputPrecision::Float32;
            else
                r.problem_at(*c, "precision",
                             fmt::format("unknown precision '{}'{}", *p,
                                         suggest(*p, {"float64", "float32"}, "known")));
        }
        if (auto v = r.integer(*c, "compression", Need::Optional, 0, 9)) s.compression = int(*v);
        if (auto v = r.number(
                *c, "checkpoint_interval", Need::Optional, [](double x) { return x >= 0.0; },
                "≥ 0 (0: no periodic checkpoints)"))
            s.checkpoint_interval = *v;
        if (auto p = r.string(*c, "checkpoint", Need::Optional)) {
            if (p->empty())
                r.problem_at(*c, "checkpoint", "must not be empty");
            else
                s.checkpoint = *p;
        }
    }
    const auto resolve = [&](std::string& p) {
        const std::filesystem::path rel(p);
        if (rel.is_relative()) p = (scene_file.parent_path() / rel).lexically_normal().string();
    };
    resolve(s.path);
    if (!s.checkpoint.empty()) {
        const std::string given = s.checkpoint;
        resolve(s.checkpoint);
        // writing one over the other would destroy the trajectory at the first checkpoint
        if (s.checkpoint == s.path)
            r.problem_at(*c, "checkpoint",
                         fmt::format("'{}' names the trajectory file (output.path): a "
                                     "checkpoint needs a file of its own", given));
    }
    return s;
}

/// Rolling and spinning resistance need a solver with the torque block (solvers/rolling.hpp;
/// core/solver_table.hpp).
bool solver_has_rolling(const SolverSettings& s) { return supports_rolling(s.type, s.friction); }
std::string rolling_solvers() {
    return solvers_where([](const SolverCapabilities& k) { return k.rolling; });
}

/// `rolling_friction` or `spinning_friction` of `c` (≥ 0, [m]); a positive value with a
/// solver that lacks the torque block is an error on that key.
std::optional<double> read_resistance(Reader& r, const Ctx& c, std::string_view key,
                                      const SolverSettings& solver) {
    auto v = r.number(c, key, Need::Optional, [](double x) { return x >= 0.0; }, "≥ 0");
    if (v && *v > 0.0 && !solver_has_rolling(solver))
        r.problem_at(c, key,
                     solver.friction == FrictionLaw::Coulomb
                         ? fmt::format("friction = \"coulomb\" does not support rolling or spinning "
                                       "resistance yet (use friction = \"ccp\" with {})", rolling_solvers())
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
        if (auto v = r.number(
                c, "density", Need::Optional, [](double x) { return x > 0.0; }, "> 0")) {
            m.density = *v;
            // Grains run from cork (~100 kg/m³) to tungsten carbide (~16,000); beyond these
            // bounds a value is most likely in g/cm³ (2.5) or g/L.
            if (*v < 100.0 || *v > 25000.0)
                r.warning_at(c, "density",
                             fmt::format("{:g} kg/m³ is outside the range of solid grains "
                                         "(100 to 25,000 kg/m³): is it in kg/m³ (glass is 2500)?",
                                         *v));
        }
        if (auto v = r.number(
                c, "friction", Need::Optional, [](double x) { return x >= 0.0; }, "≥ 0"))
            m.friction = *v;
        if (auto v = r.number(
                c, "restitution", Need::Optional, [](double x) { return x >= 0.0 && x <= 1.0; },
                "in [0, 1]"))
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
                                     const MaterialTable& materials, const toml::node* n = nullptr,
                                     std::string_view element = {}) {
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
        const auto mu = r.number(
            c, "friction", Need::Required, [](double x) { return x >= 0.0; }, "≥ 0");
        const auto e = r.number(
            c, "restitution", Need::Optional, [](double x) { return x >= 0.0 && x <= 1.0; },
            "in [0, 1]");
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

/// A unit direction from key `k` (normalised; zero is an error).
std::optional<Vec3> unit_vec3(Reader& r, const Ctx& c, std::string_view k, Need need) {
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
    if (auto v = r.number(
            c, "start", Need::Optional, [](double x) { return x >= 0.0; }, "≥ 0 [s]"))
        m.start = *v;
    else
        ok = ok && !r.find(c, "start");
    if (!type) return std::nullopt;
    std::vector<std::string_view> used{"type", "start"};
    if (*type == "translation") {
        m.kind = MotionKind::Translation;
        used.insert(used.end(), {"velocity"});
        const auto v = r.vec3(c, "velocity", Need::Required);
        if (v) m.velocity = *v;
        ok = ok && v;
    } else if (*type == "rotation") {
        m.kind = MotionKind::Rotation;
        used.insert(used.end(), {"centre", "axis", "omega"});
        const auto centre = r.vec3(c, "centre", Need::Required);
        const auto axis = unit_vec3(r, c, "axis", Need::Required);
        const auto omega = r.number(c, "omega", Need::Required);
        if (centre) m.centre = *centre;
        if (axis) m.axis = *axis;
        if (omega) m.omega = *omega;
        ok = ok && centre && axis && omega;
    } else if (*type == "table") {
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
    } else if (*type == "sine") {
        m.kind = MotionKind::Sine;
        used.insert(used.end(), {"direction", "amplitude", "frequency", "phase"});
        const auto dir = unit_vec3(r, c, "direction", Need::Required);
        const auto amp = r.number(
            c, "amplitude", Need::Required, [](double x) { return x >= 0.0; }, "≥ 0 [m]");
        const auto freq = r.number(
            c, "frequency", Need::Required, [](double x) { return x > 0.0; }, "> 0 [Hz]");
        const auto phase = r.number(c, "phase", Need::Optional);
        if (dir) m.direction = *dir;
        if (amp) m.amplitude = *amp;
        if (freq) m.frequency = *freq;
        if (phase) m.phase = *phase;
        ok = ok && dir && amp && freq && (phase || !r.find(c, "phase"));
    } else {
        r.problem_at(c, "type",
                     fmt::format("unknown motion type '{}'{}", *type,
                                 suggest(*type, {"translation", "rotation", "table", "sine"}, "known")));
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
        static constexpr std::string_view kGeometry[] = {"point", "normal", "min", "max", "file",
                                                         "scale", "translate", "axis", "radius",
                                                         "inside", "length"};
        const auto unused = [&](std::initializer_list<std::string_view> used) {
            for (std::string_view k : kGeometry)
                if (std::find(used.begin(), used.end(), k) == used.end() && r.find(c, k)) {
                    r.problem_at(c, k, fmt::format("not used by a {} wall", *type));
                    ok = false;
                }
        };
        if (*type == "plane") {
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
        } else if (*type == "box") {
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
        } else if (*type == "mesh") {
            w.type = WallType::Mesh;
            unused({"file", "scale", "translate"});
            const auto file = r.string(c, "file", Need::Required);
            const auto scale = r.number(
                c, "scale", Need::Optional, [](double x) { return x > 0.0; }, "> 0");
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
        } else if (*type == "cylinder") {
            w.type = WallType::Cylinder;
            unused({"point", "axis", "radius", "inside", "length"});
            const auto point = r.vec3(c, "point", Need::Required);
            const auto axis = unit_vec3(r, c, "axis", Need::Required);
            const auto radius = r.number(
                c, "radius", Need::Required, [](double x) { return x > 0.0; }, "> 0 [m]");
            const auto inside = r.boolean(c, "inside", Need::Required);
            const auto length = r.number(
                c, "length", Need::Optional, [](double x) { return x > 0.0; }, "> 0 [m]");
            if (point) w.point = *point;
            if (axis) w.axis = *axis;
            if (radius) w.radius = *radius;
            if (inside) w.inside = *inside;
            if (length) w.length = *length;
            ok = ok && point && axis && radius && inside && (length || !r.find(c, "length"));
        } else {
            r.problem_at(c, "type",
                         fmt::format("unknown wall type '{}'{}", *type,
                                     suggest(*type, {"plane", "box", "cylinder", "mesh"}, "known")));
            continue;
        }
        if (ok) {
            walls.push_back(w);
            places.push_back(c.place);
        }
    }
    return walls;
}

/// A radius distribution table (key `k` of `c`): { distribution = "uniform" | "normal" |
/// "lognormal" | "discrete", … } (README, "Radius distributions").
std::optional<SizeDistribution> read_size(Reader& r, const Ctx& parent, std::string_view k) {
    const auto c = r.table(parent, k, Need::Required);
    if (!c) return std::nullopt;
    const auto kind = r.string(*c, "distribution", Need::Required);
    if (!kind) return std::nullopt;
    const std::vector<std::string_view> kinds{"uniform", "normal", "lognormal", "discrete"};
    if (std::find(kinds.begin(), kinds.end(), *kind) == kinds.end()) {
        r.problem_at(*c, "distribution", fmt::format("unknown distribution '{}'{}", *kind,
                                                     suggest(*kind, kinds, "known")));
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
    const auto positive = [](double x) { return x > 0.0; };
    const auto need_positive = [&](std::string_view key) {
        auto v = r.number(*c, key, Need::Required, positive, "> 0");
        if (!v) ok = false;
        return v.value_or(0.0);
    };
    if (*kind == "discrete") {
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
    if (*kind == "uniform") {
        unused({"mean", "std", "median", "sigma"});
        d = SizeDistribution::uniform(lo, hi);
    } else if (*kind == "normal") {
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

/// One [[particles]] or [[body]] entry, read and checked but not yet placed.
struct BodyEntry {
    enum class Fill { Single, Lattice, Random };
    std::string path;  ///< "particles.1", "body.0"
    Place place;       ///< the entry's header
    Place fill_place;  ///< its lattice or random table
    Fill fill = Fill::Single;
    Shape shape = Shape::Sphere;
    double radius = 0.0;                                                  ///< sphere, capsule
    double half_length = 0.0;                                             ///< capsule
    Vec3 semi_axes = Vec3::Zero();                                        ///< ellipsoid
    ClumpTable clump;  ///< clump: its one template (spheres in the user's frame → principal)
    Quat orientation = Quat::Identity();                                  ///< single body
    std::optional<double> mass;                                           ///< override [kg]
    std::optional<Vec3> inertia;                                          ///< override [kg m²]
    std::optional<WallMotion> motion;  ///< single body: prescribed (kinematic) motion
    uint32_t material = 0;
    Vec3 velocity = Vec3::Zero();
    Vec3 angular_velocity = Vec3::Zero();
    Vec3 position = Vec3::Zero();                                         // single body
    Vec3 min = Vec3::Zero(), max = Vec3::Zero(), spacing = Vec3::Zero();  // lattice, random
    std::size_t count = 0;                                                // random
    uint64_t seed = 0;                                                    // random, lattice
    double volume_fraction = 0.0;                                         // random
    std::optional<SizeDistribution> size;  ///< [[particles]] radius table (radius = its max)
    std::size_t first_id = 0;                                             ///< set when placed
};

/// `spheres = [[x, y, z, r], …]` of a clump: body-frame centres [m] and radii [m] > 0,
/// 1 … kMaxClumpSpheres of them. Computes the template (mass properties of the union).
bool read_clump_spheres(Reader& r, const Ctx& c, BodyEntry& e) {
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

/// The fields [[particles]] and [[body]] share; false if any is missing or wrong.
/// `single`: a [[body]] entry, which may be a capsule or an ellipsoid; fills take spheres
/// and clumps.
/// A grain radius above 1 m is legal but most likely millimetres written as metres.
void warn_large_radius(Reader& r, const Ctx& c, double radius) {
    r.warning_at(c, "radius",
                 fmt::format("{:g} m is a grain {:g} m across: radii are in metres (5 mm is "
                             "0.005)", radius, 2.0 * radius));
}

bool read_common(Reader& r, const Ctx& c, const MaterialTable& materials, BodyEntry& e,
                 bool single) {
    bool ok = true;
    if (auto shape = r.string(c, "shape", Need::Required)) {
        if (*shape == "sphere") {
            e.shape = Shape::Sphere;
        } else if (*shape == "clump") {
            e.shape = Shape::Clump;
        } else if (single && *shape == "capsule") {
            e.shape = Shape::Capsule;
        } else if (single && *shape == "ellipsoid") {
            e.shape = Shape::Ellipsoid;
        } else if (*shape == "capsule" || *shape == "ellipsoid") {
            r.problem_at(c, "shape",
                         fmt::format("[[particles]] fills take only spheres and clumps; give "
                                     "each {} as a [[body]]", *shape));
            return false;
        } else {
            r.problem_at(c, "shape",
                         fmt::format("unknown shape '{}'{}", *shape,
                                     single ? suggest(*shape, {"sphere", "capsule", "ellipsoid", "clump"}, "known")
                                            : suggest(*shape, {"sphere", "clump"}, "known")));
            return false;
        }
    } else {
        return false;
    }
    const auto unused = [&](std::string_view k, std::string_view hint) {
        if (!r.find(c, k)) return;
        r.problem_at(c, k, fmt::format("not used by a {}{}",
                                       e.shape == Shape::Sphere      ? "sphere"
                                       : e.shape == Shape::Capsule   ? "capsule"
                                       : e.shape == Shape::Ellipsoid ? "ellipsoid"
                                                                     : "clump",
                                       hint));
        ok = false;
    };
    const auto positive = [](double x) { return x > 0.0; };
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
            if (auto v = r.number(
                    c, "length", Need::Required, [](double x) { return x >= 0.0; }, "≥ 0"))
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
    if (e.shape == Shape::Clump) {
        // no `radius` (reported above): the spheres give the bounding radius
    } else if (!single && radius_node && radius_node->is_table()) {
        if ((e.size = read_size(r, c, "radius")))
            e.radius = e.size->max;  // spacing and reach checks use the largest radius
        else
            ok = false;
    } else if (e.shape == Shape::Sphere || e.shape == Shape::Capsule) {
        if (auto v = r.number(c, "radius", Need::Required, positive, "> 0"))
            e.radius = *v;
        else
            ok = false;
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

std::optional<BodyEntry> read_particles(Reader& r, const Ctx& c, const MaterialTable& materials) {
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
        if (auto seed = r.integer(*f, "seed", Need::Optional, 0, INT64_MAX))
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
                                         e.shape == Shape::Clump ? "clump's bounding" : "sphere",
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
                                  "'volume_fraction' (solid fraction of the box min..max)");
            return std::nullopt;
        }
        if (has_fraction && e.shape == Shape::Clump) {
            // the fill measures its solid fraction with sphere volumes of each body's radius,
            // which for a clump is the bounding radius, not the union of its spheres
            r.problem_at(*f, "volume_fraction",
                         "clump fills take 'count', not 'volume_fraction' (the fill measures "
                         "sphere volumes)");
            return std::nullopt;
        }
        const auto seed = r.integer(*f, "seed", Need::Required, 0, INT64_MAX);
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
            const auto phi = r.number(
                *f, "volume_fraction", Need::Required, [](double x) { return x > 0.0 && x < 1.0; },
                "in (0, 1)");
            if (!phi) return std::nullopt;
            e.volume_fraction = *phi;
            const double r_min = e.size ? e.size->min : e.radius;
            const double estimate =
                *phi * (e.max - e.min).prod() / (4.0 / 3.0 * 3.14159265358979323846 * r_min * r_min * r_min);
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
    if (auto v = r.number(c, "mass", Need::Optional, [](double x) { return x > 0.0; }, "> 0"))
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
                if (!res.complete && e.volume_fraction > 0.0)
                    r.problem(e.fill_place, e.path + ".random",
                              fmt::format("reached only a volume fraction of {:.4g} of {} ({} "
                                          "spheres) in {} attempts; enlarge min/max or lower "
                                          "volume_fraction (random packing saturates near 0.38)",
                                          res.volume / (e.max - e.min).prod(), e.volume_fraction,
                                          res.placed, res.attempts));
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
                              fmt::format("placed only {} of {} spheres in {} attempts; enlarge "
                                          "min/max or lower count",
                                          res.placed, e.count, random_fill_budget(e.count)));
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
        if (e.fill != BodyEntry::Fill::Single && e.shape == Shape::Clump) {
            // Clump centres of mass at the fill's points. Lattice: the spheres' frame keeps
            // the world axes; random: a uniform random rotation per clump, from its own
            // stream seeded by the fill's seed (Shoemake's method from raw mt19937_64 bits).
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
                bodies.add_clump(bodies.size(), x, tmpl, density, e.material, e.velocity,
                                 Vec3::Zero(), q_user * bodies.clumps.principal[tmpl]);
            }
            continue;
        }
        if (e.fill != BodyEntry::Fill::Single) {
            for (std::size_t k = 0; k < centres.size(); ++k)
                bodies.add_sphere(bodies.size(), centres[k], radii[k], density, e.material,
                                  e.velocity, e.angular_velocity);
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

/// A count held in a double, digits grouped ("1,000,000"; "1.2e+25" beyond 64 bits).
std::string count_text(double n) {
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

/// A joint's body: a stable id of an existing body, or "world" (→ −1).
std::optional<long> body_ref(Reader& r, const Ctx& c, std::string_view k, std::size_t bodies) {
    const toml::node* n = r.find(c, k);
    if (!n) return std::nullopt;
    if (auto s = n->as_string()) {
        if (s->get() == "world") return -1;
        r.problem_at(c, k, fmt::format("expected a body id or \"world\", got \"{}\"", s->get()));
        return std::nullopt;
    }
    const auto id = r.integer(c, k, Need::Required, 0, INT64_MAX);
    if (!id) return std::nullopt;
    if (std::size_t(*id) >= bodies) {
        r.problem_at(c, k, fmt::format("no body with id {} (the scene has bodies 0 to {})", *id,
                                       bodies - 1));
        return std::nullopt;
    }
    return long(*id);
}

/// [[joint]] entries, after the bodies are placed (ids are dense indices at this point).
void read_joints(Reader& r, const Ctx& root, World& world) {
    const BodyStore& bodies = world.bodies;
    for (const Ctx& c : r.entries(root, "joint")) {
        const auto type_name = r.string(c, "type", Need::Required);
        if (!type_name) continue;
        JointType type;
        if (*type_name == "spherical") type = JointType::Spherical;
        else if (*type_name == "distance") type = JointType::Distance;
        else if (*type_name == "revolute") type = JointType::Revolute;
        else if (*type_name == "prismatic") type = JointType::Prismatic;
        else if (*type_name == "fixed") type = JointType::Fixed;
        else {
            r.problem_at(c, "type", fmt::format("unknown joint type '{}'{}", *type_name,
                                                suggest(*type_name, {"spherical", "distance", "revolute",
                                                                     "prismatic", "fixed"},
                                                        "known")));
            continue;
        }
        bool ok = true;
        const auto unused = [&](std::string_view k, std::string_view hint = {}) {
            if (!r.find(c, k)) return;
            r.problem_at(c, k, fmt::format("not used by a {} joint{}", *type_name, hint));
            ok = false;
        };
        if (!r.find(c, "body_a")) r.problem(c.place, c.key("body_a"), "missing required key");
        const auto a = body_ref(r, c, "body_a", bodies.size());
        const auto b = r.find(c, "body_b") ? body_ref(r, c, "body_b", bodies.size())
                                           : std::optional<long>(-1);
        if (!a || !b) continue;
        if (*a < 0) {
            r.problem_at(c, "body_a", "must be a body (only body_b may be \"world\")");
            continue;
        }
        if (*a == *b) {
            r.problem_at(c, "body_b", fmt::format("must differ from body_a ({})", *a));
            continue;
        }
        // A joint needs a dynamic body: between two kinematic bodies (or one and the world)
        // its row would have no mass to act on (1 / (G M⁻¹ Gᵀ) infinite).
        const auto kinematic = [&](long i) { return i < 0 || bodies.kinematic(std::size_t(i)); };
        if (kinematic(*a) && kinematic(*b)) {
            r.problem_at(c, *b < 0 ? "body_a" : "body_b",
                         fmt::format("a joint needs at least one dynamic body; body {} {} {}",
                                     *a, *b < 0 ? "has a motion and body_b is" : "and body",
                                     *b < 0 ? std::string("\"world\"")
                                            : fmt::format("{} both have a motion", *b)));
            continue;
        }
        const bool distance = type == JointType::Distance;
        const bool has_axis = type == JointType::Revolute || type == JointType::Prismatic;
        if (!has_axis) unused("axis");
        if (type != JointType::Revolute) unused("motor_speed");
        if (!distance) {
            unused("anchor_a", " (the anchor is the same point on both bodies: give 'anchor')");
            unused("length");
        }
        // distance: `anchor` is the end on body_b (default: its centre), `anchor_a` the end
        // on body_a (default: its centre); others: `anchor` is on both bodies.
        const bool need_anchor = !distance || *b < 0;
        std::optional<Vec3> anchor = r.vec3(c, "anchor", need_anchor ? Need::Required : Need::Optional);
        if (!anchor && (need_anchor || r.find(c, "anchor"))) ok = false;
        std::optional<Vec3> anchor_a = distance ? r.vec3(c, "anchor_a", Need::Optional) : std::nullopt;
        if (distance && !anchor_a && r.find(c, "anchor_a")) ok = false;
        Vec3 axis = Vec3::UnitZ();
        if (has_axis) {
            if (auto v = r.vec3(c, "axis", Need::Required)) {
                if (v->norm() > 0.0)
                    axis = v->normalized();
                else {
                    r.problem_at(c, "axis", "must not be zero");
                    ok = false;
                }
            } else {
                ok = false;
            }
        }
        std::optional<double> length;
        if (distance) {
            length = r.number(c, "length", Need::Optional, [](double x) { return x > 0.0; }, "> 0");
            if (!length && r.find(c, "length")) ok = false;
        }
        std::optional<double> motor;
        if (type == JointType::Revolute) {
            motor = r.number(c, "motor_speed", Need::Optional);
            if (!motor && r.find(c, "motor_speed")) ok = false;
        }
        if (!ok) continue;
        Joint j;
        if (distance) {
            const Vec3 pa = anchor_a ? *anchor_a : bodies.position[std::size_t(*a)];
            const Vec3 pb = anchor ? *anchor : bodies.position[std::size_t(*b)];
            j = make_joint(type, bodies, *a, *b, pa, axis, pb);
            if (length) {
                j.length = *length;
            } else if (!(j.length > 0.0)) {
                r.problem(c.place, c.key("length"),
                          "the two ends coincide at t = 0: give the length (> 0)");
                continue;
            }
        } else {
            j = make_joint(type, bodies, *a, *b, *anchor, axis);
        }
        if (motor) {
            j.motor = true;
            j.motor_speed = *motor;
        }
        world.joints.push_back(j);
    }
}

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
            if (auto v = r.number(c, "radius", Need::Required, [](double x) { return x > 0.0; }, "> 0")) {
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
            if (auto v = r.number(c, key, Need::Required, [](double x) { return x > 0.0; }, "> 0")) {
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
        if (auto v = r.number(c, "start", Need::Optional, [](double x) { return x >= 0.0; }, "≥ 0"))
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
        if (auto s = r.integer(c, "seed", Need::Required, 0, INT64_MAX)) e.seed = uint64_t(*s);
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
        if (*type == "box") {
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
        } else if (*type == "plane") {
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
                                                suggest(*type, {"box", "plane"}, "known")));
            continue;
        }
        if (ok) world.outlets.push_back(o);
    }
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

    const Ctx top{&root, "", r.line_place(1)};
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
        if (auto e = read_particles(r, c, world.materials)) entries.push_back(std::move(*e));
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
    place_bodies(r, entries, world);
    r.throw_if_any();
    // kinematic bodies at their pose at t = 0 (a sine with a phase starts displaced)
    place_kinematic(world.bodies, 0.0, 0.0, world.simulation.dt, false);
    check_overlaps(r, entries, world, wall_places);
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
    world.next_id = world.bodies.size();  // emitted bodies continue the ids 0 … n−1
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
