#pragma once
/// The scene reader's toolkit (io/scene/): where a node is, the problems collected so far,
/// typed access that reports a wrong type or a missing required key itself, the key schema
/// and the suggestions for a misspelt name. Internal to io/scene/; the public entry points
/// are io/scene.hpp's.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/value_range.hpp"
#include "io/scene.hpp"

namespace talus::scene_read {

/// More bodies than this in one scene is certainly a typo (≈ 16 GB of body state).
inline constexpr double kMaxBodies = kDefaultMaxBodies;
/// Overlaps allowed at t = 0, relative to the larger radius: round-off only.
inline constexpr double kOverlapTolerance = 1e-9;
/// Overlap problems listed before the rest are summarised.
inline constexpr std::size_t kMaxListedOverlaps = 20;

// ---------------------------------------------------------------------------------------
// Schema: every key of every table as a row (io/scene/schema.cpp): its kind, type, unit,
// accepted range, default and meaning. The rows drive the unknown-key check, the range
// checks of the typed access below (Reader::number, Reader::integer) and the scene
// reference docs/scene-format.md (`talus keys`); a reader adds logic only where a rule
// spans several keys or needs the scene's state.

enum class Kind { Value, Table, TableArray };

/// What a key's value is (the reference's "type" column; the typed access asserts it).
enum class Type : uint8_t {
    Number,         ///< a real (an integer is accepted)
    Integer,
    Boolean,
    String,
    Vec3,           ///< [x, y, z]
    Quaternion,     ///< [w, x, y, z]
    NumberOrVec3,   ///< a number or [x, y, z]
    NumberOrTable,  ///< a number or a table (a radius or its distribution)
    Interval,       ///< [lo, hi]
    Array,          ///< an array whose form the key's doc gives
    BodyRef,        ///< a body id (integer ≥ 0) or "world"
    Table,
    TableArray,
};

/// A numeric key's accepted values (core/value_range.hpp): the settings structs' own ranges
/// where the key sets one of their fields. rule() is what messages and the reference print
/// ("> 0", "≥ 0", "in (0, 1]"), followed by the note.
using Range = ValueRange;

struct Field;
using Fields = std::vector<Field>;

/// One key of one table.
struct Field {
    std::string_view name;
    Kind kind = Kind::Value;
    const Fields* sub = nullptr;  ///< a table's (or a number-or-table's) keys
    Type type = Type::Table;
    std::string_view unit{};      ///< SI unit, empty when dimensionless or not a number
    Range range{};                ///< numbers and integers: the accepted values
    std::string_view fallback{};  ///< the default, as the reference prints it ("required")
    std::string_view doc{};       ///< one paragraph for the reference
    /// A word chosen from a list: the list (the reference prints it; the reader suggests
    /// from the same list).
    std::vector<std::string_view> (*choices)() = nullptr;
};

extern const Fields kRootKeys;    ///< the document's top level
extern const Fields kMotionKeys;  ///< a wall's or a [[body]]'s motion table

const Field* find_field(const Fields& fields, std::string_view name);

// ---------------------------------------------------------------------------------------
// Suggestions and text (io/scene/suggest.cpp)

/// " (did you mean 'x'?)" for the nearest candidate if it is close enough, otherwise
/// " (<what>: a, b, c)".
std::string suggest(std::string_view word, const std::vector<std::string_view>& candidates,
                    std::string_view what);
std::vector<std::string_view> field_names(const Fields& fields);
std::string_view type_name(const toml::node& n);
std::string trim(std::string_view s);

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
    const Fields* fields = nullptr;  ///< the table's schema rows (null: none known)

    /// Key `k`'s row, or null.
    const Field* row(std::string_view k) const { return fields ? find_field(*fields, k) : nullptr; }

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

    /// Records a problem once (a key read by two readers reports its problem once).
    void problem(const Place& p, std::string_view key, std::string_view text) {
        std::string line = fmt::format("{}: {}: {}", p.where, key, text);
        for (const Entry& e : problems_)
            if (e.text == line) return;
        problems_.push_back({p.line, std::move(line)});
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

    /// A number, checked against its schema row's range.
    std::optional<double> number(const Ctx& c, std::string_view k, Need need) {
        const Field* f = typed_row(c, k, {Type::Number, Type::NumberOrVec3, Type::NumberOrTable});
        const toml::node* n = present(c, k, need);
        auto v = n ? to_number(*n, c, k) : std::nullopt;
        if (v && f && f->range.any() && !f->range.holds(*v)) {
            problem_at(c, k, fmt::format("must be {} (got {})", f->range.rule(), *v));
            return std::nullopt;
        }
        return v;
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

    /// An integer in its schema row's range.
    std::optional<int64_t> integer(const Ctx& c, std::string_view k, Need need) {
        const Field* f = typed_row(c, k, {Type::Integer, Type::BodyRef});
        const Range& range = f ? f->range : Range{};
        const auto read = any_integer(c, k, need);
        if (!read) return std::nullopt;
        const int64_t v = *read;
        if (range.any() && !range.holds(double(v))) {
            problem_at(c, k, fmt::format("must be {} (got {})", range.rule(), v));
            return std::nullopt;
        }
        return v;
    }

    /// An integer in [lo, hi] where hi depends on the scene (a count against the body limit).
    std::optional<int64_t> integer(const Ctx& c, std::string_view k, Need need, int64_t lo,
                                   int64_t hi) {
        typed_row(c, k, {Type::Integer, Type::BodyRef});
        const auto read = any_integer(c, k, need);
        if (!read) return std::nullopt;
        const int64_t v = *read;
        if (v < lo || v > hi) {
            problem_at(c, k,
                       hi == INT64_MAX ? fmt::format("must be ≥ {} (got {})", lo, v)
                                       : fmt::format("must be in [{}, {}] (got {})", lo, hi, v));
            return std::nullopt;
        }
        return v;
    }

    std::optional<std::string> string(const Ctx& c, std::string_view k, Need need) {
        typed_row(c, k, {Type::String});
        const toml::node* n = present(c, k, need);
        if (!n) return std::nullopt;
        if (auto s = n->as_string()) return s->get();
        problem_at(c, k, fmt::format("expected a string, got {}", type_name(*n)));
        return std::nullopt;
    }

    std::optional<bool> boolean(const Ctx& c, std::string_view k, Need need) {
        typed_row(c, k, {Type::Boolean});
        const toml::node* n = present(c, k, need);
        if (!n) return std::nullopt;
        if (auto b = n->as_boolean()) return b->get();
        problem_at(c, k, fmt::format("expected true or false, got {}", type_name(*n)));
        return std::nullopt;
    }

    std::optional<Vec3> vec3(const Ctx& c, std::string_view k, Need need) {
        typed_row(c, k, {Type::Vec3, Type::NumberOrVec3});
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
        typed_row(c, k, {Type::Quaternion});
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
        if (auto t = n->as_table()) return Ctx{t, c.key(k), place_of(t, c.place), sub_fields(c, k)};
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
                    out.push_back({t, fmt::format("{}.{}", c.key(k), i), place_of(t, c.place),
                                   sub_fields(c, k)});
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
    /// Key `k`'s row in `c`'s schema, after asserting that the reader's access matches the
    /// row's type (a mismatch is a reader written against another schema: a bug, thrown).
    static const Field* typed_row(const Ctx& c, std::string_view k, std::initializer_list<Type> read_as) {
        const Field* f = c.row(k);
        if (f && std::find(read_as.begin(), read_as.end(), f->type) == read_as.end())
            throw std::logic_error(fmt::format("scene schema: {} is read as another type than its row's",
                                               c.key(k)));
        return f;
    }
    /// Key `k` as an integer, any value; a missing required key or another type is reported.
    std::optional<int64_t> any_integer(const Ctx& c, std::string_view k, Need need) {
        const toml::node* n = present(c, k, need);
        if (!n) return std::nullopt;
        if (auto i = n->as_integer()) return i->get();
        problem_at(c, k, fmt::format("expected an integer, got {}", type_name(*n)));
        return std::nullopt;
    }
    static const Fields* sub_fields(const Ctx& c, std::string_view k) {
        const Field* f = c.row(k);
        return f ? f->sub : nullptr;
    }

    struct Entry {
        uint32_t line;
        std::string text;
    };
    std::string file_;
    std::vector<Entry> problems_;
    std::vector<std::string> warnings_;
};

}  // namespace talus::scene_read
