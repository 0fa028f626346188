#pragma once
/// Plain values in and out of a byte string: the messages ranks exchange
/// (core/ranks.hpp). Both ends are the same binary, so a value travels as its bytes.
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/math.hpp"

namespace talus {

/// Appends x's bytes to `out`.
template <class T>
void put_bytes(std::string& out, const T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    out.append(reinterpret_cast<const char*>(&x), sizeof x);
}

/// The value at `at` in `in`; `at` moves past it. Throws when `in` ends first.
template <class T>
T take_bytes(const std::string& in, std::size_t& at) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (at + sizeof(T) > in.size()) throw std::runtime_error("a rank's message ended early");
    T x;
    std::memcpy(&x, in.data() + at, sizeof x);
    at += sizeof x;
    return x;
}

/// A vector's three components.
inline void put_vec(std::string& out, const Vec3& x) {
    for (int k = 0; k < 3; ++k) put_bytes(out, x[k]);
}

inline Vec3 take_vec(const std::string& in, std::size_t& at) {
    const double x = take_bytes<double>(in, at), y = take_bytes<double>(in, at), z = take_bytes<double>(in, at);
    return Vec3(x, y, z);
}

}  // namespace talus
