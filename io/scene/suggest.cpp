// Suggestions for a misspelt key or name ("did you mean …"), and small text helpers.
#include "io/scene/reader.hpp"

namespace talus::scene_read {

/// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
/// neighbouring characters each cost 1 ("tolerence" → "tolerance" is 1).
static std::size_t edit_distance(std::string_view a, std::string_view b) {
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

}  // namespace talus::scene_read
