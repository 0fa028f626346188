#pragma once
// Triangle meshes built in code for tests: flat grids, closed boxes, STL text and bytes.
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collision/mesh.hpp"
#include "engine/world/world.hpp"

namespace talus::testing {

struct TriangleSoup {
    std::vector<Vec3> vertices;
    std::vector<std::array<uint32_t, 3>> triangles;
};

/// The square [x0, x0 + n s] × [y0, y0 + n s] at height z, n × n cells of side s, two
/// triangles per cell (alternating diagonals), normals +z.
inline TriangleSoup flat_grid(int n, double s, double x0, double y0, double z = 0.0) {
    TriangleSoup m;
    for (int j = 0; j <= n; ++j)
        for (int i = 0; i <= n; ++i) m.vertices.emplace_back(x0 + i * s, y0 + j * s, z);
    auto id = [n](int i, int j) { return uint32_t(j * (n + 1) + i); };
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i) {
            const uint32_t a = id(i, j), b = id(i + 1, j), c = id(i + 1, j + 1), d = id(i, j + 1);
            if ((i + j) % 2 == 0) {
                m.triangles.push_back({a, b, c});
                m.triangles.push_back({a, c, d});
            } else {
                m.triangles.push_back({a, b, d});
                m.triangles.push_back({b, c, d});
            }
        }
    return m;
}

/// The closed box [lo, hi] as 12 triangles, normals outward.
inline TriangleSoup box_mesh(const Vec3& lo, const Vec3& hi) {
    TriangleSoup m;
    for (int k = 0; k < 8; ++k)
        m.vertices.emplace_back(k & 1 ? hi.x() : lo.x(), k & 2 ? hi.y() : lo.y(), k & 4 ? hi.z() : lo.z());
    const uint32_t quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                  {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    for (const auto& q : quads) {
        m.triangles.push_back({q[0], q[1], q[2]});
        m.triangles.push_back({q[0], q[2], q[3]});
    }
    return m;
}

inline std::shared_ptr<const TriangleMesh> make_mesh(const TriangleSoup& s) {
    return std::make_shared<TriangleMesh>(s.vertices, s.triangles);
}

inline void add_mesh(World& w, const TriangleSoup& s, uint32_t material) {
    Wall wall;
    wall.type = WallType::Mesh;
    wall.mesh = make_mesh(s);
    wall.material = material;
    w.walls.push_back(wall);
}

inline Vec3 facet_normal(const TriangleSoup& s, const std::array<uint32_t, 3>& t) {
    return (s.vertices[t[1]] - s.vertices[t[0]]).cross(s.vertices[t[2]] - s.vertices[t[0]]).normalized();
}

/// ASCII STL text of the soup (coordinates printed exactly, as shortest round-trip floats).
inline std::string ascii_stl(const TriangleSoup& s) {
    std::string out = "solid test\n";
    for (const auto& t : s.triangles) {
        const Vec3 n = facet_normal(s, t);
        out += fmt::format("  facet normal {} {} {}\n    outer loop\n", float(n.x()), float(n.y()), float(n.z()));
        for (uint32_t v : t)
            out += fmt::format("      vertex {} {} {}\n", float(s.vertices[v].x()),
                               float(s.vertices[v].y()), float(s.vertices[v].z()));
        out += "    endloop\n  endfacet\n";
    }
    return out + "endsolid test\n";
}

/// Binary STL bytes of the soup (little-endian host assumed, as on every test machine).
inline std::string binary_stl(const TriangleSoup& s) {
    std::string out(80, ' ');
    out.replace(0, 11, "solid talus");  // a header may start with "solid"
    const uint32_t n = uint32_t(s.triangles.size());
    out.append(reinterpret_cast<const char*>(&n), 4);
    for (const auto& t : s.triangles) {
        const Vec3 nn = facet_normal(s, t);
        float f[12] = {float(nn.x()), float(nn.y()), float(nn.z())};
        for (int k = 0; k < 3; ++k)
            for (int j = 0; j < 3; ++j) f[3 + 3 * k + j] = float(s.vertices[t[k]][j]);
        out.append(reinterpret_cast<const char*>(f), 48);
        out.append(2, '\0');
    }
    return out;
}

}  // namespace talus::testing
