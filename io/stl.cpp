// STL reader. Binary layout: an 80-byte header, a little-endian uint32 triangle count n,
// then n records of 50 bytes (normal, three vertices as 12 float32, a uint16 attribute).
// ASCII layout: "solid name", then per triangle "facet normal nx ny nz / outer loop /
// vertex x y z (3×) / endloop / endfacet", and "endsolid name"; several solids may follow
// one another. Vertices are welded by exact equality of their coordinates (first
// appearance fixes the index), which is what CAD exporters produce for shared corners:
// the mesh then knows which triangles share an edge. Nothing is tolerance-merged, so the
// result does not depend on a guessed length scale. STL coordinates are single precision:
// ASCII numbers are rounded to the nearest float, so the ASCII and binary encodings of one
// mesh give the same vertices.
#include "io/stl.hpp"

#include <fmt/format.h>

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

namespace talus {
namespace {

class Welder {
public:
    explicit Welder(StlMesh& m) : mesh_(m) {}
    uint32_t add(const Vec3& p) {
        const auto [it, fresh] = index_.try_emplace({p.x(), p.y(), p.z()}, uint32_t(mesh_.vertices.size()));
        if (fresh) mesh_.vertices.push_back(p);
        return it->second;
    }

private:
    StlMesh& mesh_;
    std::map<std::array<double, 3>, uint32_t> index_;
};

float read_f32(const char* p) {
    uint32_t bits;
    std::memcpy(&bits, p, 4);
    if constexpr (std::endian::native == std::endian::big) bits = __builtin_bswap32(bits);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

uint32_t read_u32(const char* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
    return v;
}

StlMesh parse_binary(std::string_view b, const std::string& name) {
    StlMesh m;
    m.binary = true;
    Welder weld(m);
    const uint32_t n = read_u32(b.data() + 80);
    for (uint32_t t = 0; t < n; ++t) {
        const char* rec = b.data() + 84 + 50 * std::size_t(t);
        std::array<uint32_t, 3> tri;
        for (int k = 0; k < 3; ++k) {
            const char* v = rec + 12 + 12 * k;
            const Vec3 p(read_f32(v), read_f32(v + 4), read_f32(v + 8));
            if (!p.allFinite())
                throw StlError(fmt::format("{}: triangle {}: vertex {} is not finite", name, t, k));
            tri[k] = weld.add(p);
        }
        m.triangles.push_back(tri);
    }
    return m;
}

/// Whitespace-separated words with their line numbers.
class Words {
public:
    Words(std::string_view text, const std::string& name) : s_(text), name_(name) {}
    bool done() {
        skip();
        return i_ >= s_.size();
    }
    std::string_view next(std::string_view what) {
        skip();
        if (i_ >= s_.size())
            throw StlError(fmt::format("{}:{}: unexpected end of file, expected {}", name_, line_, what));
        const std::size_t b = i_;
        while (i_ < s_.size() && !std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
        return s_.substr(b, i_ - b);
    }
    void expect(std::string_view word) {
        const std::size_t at = line_;
        const std::string_view w = next(fmt::format("'{}'", word));
        if (w != word) throw StlError(fmt::format("{}:{}: expected '{}', got '{}'", name_, at, word, w));
    }
    double number(std::string_view what) {
        const std::string_view w = next(what);
        float v = 0.0f;  // STL is single precision: both encodings give the same floats
        const auto r = std::from_chars(w.data(), w.data() + w.size(), v);
        if (r.ec != std::errc() || r.ptr != w.data() + w.size() || !std::isfinite(v))
            throw StlError(fmt::format("{}:{}: expected {} as a finite single-precision number, got '{}'",
                                       name_, line_, what, w));
        return double(v);
    }
    void skip_line() {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
    }
    std::size_t line() const { return line_; }

private:
    void skip() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) {
            if (s_[i_] == '\n') ++line_;
            ++i_;
        }
    }
    std::string_view s_;
    const std::string& name_;
    std::size_t i_ = 0, line_ = 1;
};

StlMesh parse_ascii(std::string_view text, const std::string& name) {
    StlMesh m;
    Welder weld(m);
    Words w(text, name);
    w.expect("solid");
    w.skip_line();  // the solid's name, if any
    for (;;) {
        const std::size_t at = w.line();
        const std::string_view word = w.next("'facet' or 'endsolid'");
        if (word == "endsolid") {
            w.skip_line();
            if (w.done()) break;
            w.expect("solid");
            w.skip_line();
            continue;
        }
        if (word != "facet")
            throw StlError(fmt::format("{}:{}: expected 'facet' or 'endsolid', got '{}'", name, at, word));
        w.expect("normal");
        for (int k = 0; k < 3; ++k) w.number("a normal component");
        w.expect("outer");
        w.expect("loop");
        std::array<uint32_t, 3> tri;
        for (int k = 0; k < 3; ++k) {
            w.expect("vertex");
            Vec3 p;
            for (int j = 0; j < 3; ++j) p[j] = w.number("a vertex coordinate");
            tri[k] = weld.add(p);
        }
        w.expect("endloop");
        w.expect("endfacet");
        m.triangles.push_back(tri);
    }
    return m;
}

bool starts_with_solid(std::string_view b) {
    std::size_t i = 0;
    while (i < b.size() && std::isspace(static_cast<unsigned char>(b[i]))) ++i;
    return b.substr(i, 5) == "solid";
}

}  // namespace

StlMesh parse_stl(std::string_view bytes, const std::string& name) {
    if (bytes.size() >= 84) {
        const uint64_t n = read_u32(bytes.data() + 80);
        if (84 + 50 * n == bytes.size()) return parse_binary(bytes, name);
        // A header may begin with "solid" too: text never holds a NUL byte.
        if (!starts_with_solid(bytes) || bytes.find('\0') != std::string_view::npos)
            throw StlError(fmt::format(
                "{}: binary STL truncated or garbled: the header announces {} triangles "
                "({} bytes) but the file has {} bytes",
                name, n, 84 + 50 * n, bytes.size()));
    }
    if (starts_with_solid(bytes)) return parse_ascii(bytes, name);
    throw StlError(fmt::format("{}: not an STL file: {} bytes, too short for a binary STL and "
                               "not starting with 'solid'",
                               name, bytes.size()));
}

StlMesh read_stl(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw StlError(fmt::format("{}: cannot open the STL file", file.string()));
    std::ostringstream data;
    data << in.rdbuf();
    if (in.bad()) throw StlError(fmt::format("{}: cannot read the STL file", file.string()));
    return parse_stl(data.str(), file.string());
}

}  // namespace talus
