#pragma once
/// Numbers in messages as people write them (digit groups, plurals, rounded durations), and
/// the two JSON scalars the commands' --json output needs.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace talus {

/// 1234567 → "1,234,567".
inline std::string group_digits(uint64_t n) {
    std::string s = std::to_string(n);
    for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(std::size_t(i), ",");
    return s;
}

/// "1 step", "2 steps", "1,000 bodies": the count with its noun, singular for exactly one.
/// `plural` defaults to the noun + "s".
inline std::string count_of(uint64_t n, std::string_view noun, std::string_view plural = {}) {
    return fmt::format("{} {}", group_digits(n),
                       n == 1 ? noun : (plural.empty() ? std::string(noun) + "s" : std::string(plural)));
}

/// A wall-clock duration to 3 significant figures below a minute ("0.0529 s", "26.4 s"),
/// then as m:ss or h:mm:ss ("4:07", "1:02:03").
inline std::string format_seconds(double s) {
    if (!std::isfinite(s) || s < 0.0) return "--";
    if (s < 59.95) return fmt::format("{:.3g} s", s);
    const long t = std::lround(s);
    if (t >= 3600) return fmt::format("{}:{:02}:{:02}", t / 3600, (t / 60) % 60, t % 60);
    return fmt::format("{}:{:02}", t / 60, t % 60);
}

/// A JSON string literal of s: quotes and backslashes escaped, control characters as \u00XX.
inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) {
            out += fmt::format("\\u{:04x}", int(static_cast<unsigned char>(c)));
            continue;
        }
        out += c;
    }
    return out + "\"";
}

/// The shortest text that reads back as the same double; JSON has no inf or nan: null.
inline std::string json_number(double x) { return std::isfinite(x) ? fmt::format("{}", x) : "null"; }

}  // namespace talus
