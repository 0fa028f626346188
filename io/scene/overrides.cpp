// --set key=value overrides, applied to the parsed document before anything is checked,
// so a value set on the command line is checked like one written in the file.
#include "io/scene/readers.hpp"

#include <charconv>

namespace talus::scene_read {

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

}  // namespace talus::scene_read
