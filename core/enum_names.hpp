#pragma once
/// Each enum's names, written once. A scene names a wall type, a shape, a joint type and so
/// on by a word; the reader parses the word with value_of, messages and output print it with
/// name_of, and a misspelt word is answered with names_of's list, in the table's order. An
/// enum takes part by specialising EnumNames beside its definition:
///
///     template <> struct EnumNames<WallType> {
///         static constexpr NamedValue<WallType> table[] = {{WallType::Plane, "plane"}, …};
///     };
///
/// Values left out of the table (a "none" state, say) have no name a scene could give.
#include <optional>
#include <string_view>
#include <vector>

namespace talus {

template <class E>
struct NamedValue {
    E value;
    std::string_view name;
};

/// Specialised per enum with `static constexpr NamedValue<E> table[]`.
template <class E>
struct EnumNames;

/// The name of `e`; "?" for a value the table does not name.
template <class E>
constexpr std::string_view name_of(E e) {
    for (const NamedValue<E>& row : EnumNames<E>::table)
        if (row.value == e) return row.name;
    return "?";
}

/// The value named `name` exactly; nullopt for any other word.
template <class E>
constexpr std::optional<E> value_of(std::string_view name) {
    for (const NamedValue<E>& row : EnumNames<E>::table)
        if (row.name == name) return row.value;
    return std::nullopt;
}

/// Every name, in the table's order (the known list of a suggestion).
template <class E>
std::vector<std::string_view> names_of() {
    std::vector<std::string_view> out;
    for (const NamedValue<E>& row : EnumNames<E>::table) out.push_back(row.name);
    return out;
}

}  // namespace talus
