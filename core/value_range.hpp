#pragma once
/// The values a numeric setting accepts: an interval with open, closed or no bounds. The
/// settings structs (core/settings.hpp, core/materials.hpp) declare one per setting, their
/// problems() check a World built in C++ against them, and the scene schema's rows
/// (io/scene/schema.cpp) use the same ones, so a scene and C++ code are held to one rule.
#include <charconv>
#include <string>
#include <string_view>
#include <vector>

namespace talus {

struct ValueRange {
    enum class Bound : unsigned char { None, Open, Closed };
    Bound lo_bound = Bound::None;
    double lo = 0.0;
    Bound hi_bound = Bound::None;
    double hi = 0.0;
    std::string_view note{};  ///< printed after the rule: " [m]", " (0: none)"

    constexpr bool any() const { return lo_bound != Bound::None || hi_bound != Bound::None; }
    constexpr bool holds(double v) const {
        if (lo_bound == Bound::Open && !(v > lo)) return false;
        if (lo_bound == Bound::Closed && !(v >= lo)) return false;
        if (hi_bound == Bound::Open && !(v < hi)) return false;
        if (hi_bound == Bound::Closed && !(v <= hi)) return false;
        return true;
    }
    /// "> 0", "≥ 0", "< 2", "in (0, 1]", then the note.
    std::string rule() const {
        std::string r;
        if (lo_bound != Bound::None && hi_bound != Bound::None)
            r = std::string("in ") + (lo_bound == Bound::Open ? "(" : "[") + shortest(lo) + ", " +
                shortest(hi) + (hi_bound == Bound::Open ? ")" : "]");
        else if (lo_bound != Bound::None)
            r = std::string(lo_bound == Bound::Open ? "> " : "≥ ") + shortest(lo);
        else if (hi_bound != Bound::None)
            r = std::string(hi_bound == Bound::Open ? "< " : "≤ ") + shortest(hi);
        return r + std::string(note);
    }
    /// "NAME: must be RULE (got V)" when `v` is outside, else "".
    std::string problem(std::string_view name, double v) const {
        return holds(v) ? std::string() : std::string(name) + ": must be " + rule() + " (got " + shortest(v) + ")";
    }
    /// The shortest text that reads back as `v` (0, 2147483647, 0.001, 1e-09).
    static std::string shortest(double v) {
        char buf[32];
        const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
        return ec == std::errc() ? std::string(buf, end) : std::string("?");
    }
};

/// Appends where() + "NAME: must be RULE (got V)" to `out` when `v` is outside `r`. `where`
/// makes the prefix and is called only then, so a check that passes allocates nothing
/// (World::step runs the settings' checks every step).
template <class Where>
void check_range(std::vector<std::string>& out, const Where& where, std::string_view name,
                 const ValueRange& r, double v) {
    if (!r.holds(v)) out.push_back(where() + r.problem(name, v));
}

/// Collects "PREFIX.NAME: must be RULE (got V)" for each value outside its range.
struct RangeCheck {
    std::string_view prefix;
    std::vector<std::string> problems{};
    void operator()(std::string_view name, const ValueRange& r, double v) {
        check_range(problems, [this] { return std::string(prefix) + "."; }, name, r, v);
    }
};

/// Shorthands for the common ranges.
inline constexpr ValueRange above(double lo) { return {ValueRange::Bound::Open, lo}; }
inline constexpr ValueRange at_least(double lo) { return {ValueRange::Bound::Closed, lo}; }

}  // namespace talus
