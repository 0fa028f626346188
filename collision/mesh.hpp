#pragma once
/// Static triangle-mesh walls: an indexed triangle soup with shared vertices, its edge and
/// vertex adjacency, an AABB tree over the triangles, and sphere–triangle contacts on
/// faces, edges and vertices without snagging on the inner edges of a flat surface
/// (docs/design.md §7). Built once; every query is read-only and deterministic.
#include <array>
#include <cstdint>
#include <vector>

#include "core/math.hpp"

namespace talus {

/// Where on a triangle the closest point to a query point lies.
enum class TriangleRegion : uint8_t { Face, Edge, Vertex };

/// Closest point of triangle (a, b, c) to p, and the region it lies in; `index` is the
/// edge (0 = ab, 1 = bc, 2 = ca) or vertex (0 = a, 1 = b, 2 = c), 0 for the face.
struct TrianglePoint {
    Vec3 point = Vec3::Zero();
    TriangleRegion region = TriangleRegion::Face;
    int index = 0;
};
TrianglePoint closest_point_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c);

/// One sphere–mesh contact: normal from the mesh to the sphere centre, gap Φ = distance − r,
/// point = centre − r n (on the sphere, as for plane walls; the triangle point is Φ further
/// along −n), feature = index of the triangle that owns the contact.
struct MeshContact {
    Vec3 point = Vec3::Zero();
    Vec3 normal = Vec3::UnitZ();
    double gap = 0.0;
    uint32_t triangle = 0;
};

class TriangleMesh {
public:
    /// Builds the mesh from vertices and triangles (vertex indices). Vertices must already be
    /// welded for edges to be shared. Degenerate triangles (zero area) are dropped and
    /// counted in dropped(); throws std::invalid_argument on an index out of range.
    TriangleMesh(std::vector<Vec3> vertices, const std::vector<std::array<uint32_t, 3>>& triangles);

    std::size_t size() const { return tri_.size(); }
    const std::vector<Vec3>& vertices() const { return vertex_; }
    const std::array<uint32_t, 3>& triangle(std::size_t t) const { return tri_[t]; }
    const Vec3& normal(std::size_t t) const { return normal_[t]; }  ///< unit, right-hand winding
    std::size_t dropped() const { return dropped_; }
    const Vec3& lower() const { return lo_; }   ///< bounding box of the vertices [m]
    const Vec3& upper() const { return hi_; }

    /// Triangles whose distance to `centre` is ≤ radius, ascending by index, into `out`.
    void query(const Vec3& centre, double radius, std::vector<uint32_t>& out) const;
    /// Distance from p to triangle t [m].
    double distance(std::size_t t, const Vec3& p) const;

    /// Contacts of a sphere (centre x, radius r) with gap ≤ envelope, ascending by triangle,
    /// appended to `out` (cleared first). `scratch` is reused between calls.
    struct Scratch {
        std::vector<uint32_t> found;
        struct Candidate {
            TrianglePoint closest;
            double dist;
        };
        std::vector<Candidate> cand;
    };
    void collide_sphere(const Vec3& x, double r, double envelope, std::vector<MeshContact>& out,
                        Scratch& scratch) const;

    /// Triangles sharing the edge (u, v) or the vertex v, ascending.
    const uint32_t* edge_triangles(uint32_t u, uint32_t v, std::size_t& count) const;
    const uint32_t* vertex_triangles(uint32_t v, std::size_t& count) const;

private:
    struct Node {
        Vec3 lo, hi;
        uint32_t first, count;  // leaf: triangles order_[first, first + count); inner: count = 0
        uint32_t left, right;   // children (inner nodes)
    };
    uint32_t build(uint32_t first, uint32_t count, std::vector<Vec3>& centroid);

    std::vector<Vec3> vertex_;
    std::vector<std::array<uint32_t, 3>> tri_;
    std::vector<Vec3> normal_;
    std::vector<Node> node_;
    std::vector<uint32_t> order_;  // triangle indices in tree-leaf order
    // Edge adjacency: (min vertex, max vertex, triangle), sorted; vertex adjacency as CSR.
    std::vector<std::array<uint32_t, 3>> edge_;
    std::vector<uint32_t> edge_tri_;
    std::vector<uint32_t> vertex_start_, vertex_tri_;
    std::size_t dropped_ = 0;
    Vec3 lo_ = Vec3::Zero(), hi_ = Vec3::Zero();
};

}  // namespace talus
