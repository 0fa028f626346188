// Static triangle meshes as walls (docs/design.md §7): sphere–triangle contacts on face, edge and
// vertex features, found through an AABB tree.
//
// Closest point of a triangle to a point: the Voronoi-region walk of Ericson, "Real-Time
// Collision Detection" (2005) §5.1.5, which also says which feature (face, edge, vertex)
// the closest point lies on.
//
// Normals come from the winding: n = (b − a) × (c − a) / ‖…‖; the normal stored in the STL
// file is not used. Contact is two-sided: a face contact's normal is +n or −n, whichever
// points at the sphere centre, so open surfaces (a floor, a chute) need no particular
// orientation. A sphere whose centre crosses a face is pushed out on the far side.
//
// Which features make contacts ("feature ownership", no snagging on inner edges):
//   1. Every triangle within r + envelope of the centre x proposes its closest point q,
//      at distance d_t (for the face region d_t = |n·(x − a)|, the plane formula).
//   2. A face-region proposal is a contact with normal ±n and Φ = d_t − r, point x − r n:
//      exactly the plane wall's formula, so a flat mesh reproduces a plane bit for bit.
//   3. An edge or vertex proposal is kept only when no triangle sharing that edge or vertex
//      is closer to x (d_t' < d_t − τ, τ = 1e-10 (d_t + r)). Every triangle holding the
//      feature contains q, so d_t' ≤ d_t always; equality for all of them means x lies in
//      the feature's own Voronoi region (its normal cone), where the feature is a genuine
//      local minimum of the distance. Otherwise a neighbouring face (or edge) is closer and
//      makes the contact itself: on a flat surface, or at a concave edge, a sphere never
//      feels the inner edges. Boundary edges and convex edges and corners keep their
//      contacts, with normal (x − q)/‖x − q‖.
//   4. A kept edge or vertex contact whose normal is within 1e-9 (in cosine) of the normal
//      of a triangle holding the feature becomes that triangle's face contact (sphere
//      centre exactly above an inner edge or vertex of a flat surface).
//   5. Contacts whose normals agree within 1e-9 in cosine and whose gaps agree within
//      1e-9 (r + |Φ|) are one contact (for a sphere, the same constraint: point and
//      normal coincide): the first is kept, face contacts before edge and vertex ones, each
//      in ascending triangle order. This absorbs round-off at region borders
//      (two coplanar triangles both claiming the centre's projection).
// A contact is named by the triangle that owns it (ContactList::feature), so the impulse
// of a sphere rolling over one triangle is warm-started step after step.
//
// AABB tree: built once, top-down, splitting the triangles at the median of their
// centroids along the longest axis of the centroid bounds, ties broken by triangle index,
// so the tree (and every query) is the same on every run; at most 4 triangles per leaf.
#include "collision/mesh.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace talus {
namespace {

constexpr uint32_t kLeafSize = 4;
constexpr double kSameDirection = 1e-9;  // 1 − cos of the angle below which normals agree
constexpr double kCloser = 1e-10;        // relative distance margin of rule 3

double box_distance2(const Vec3& lo, const Vec3& hi, const Vec3& p) {
    double d2 = 0.0;
    for (int k = 0; k < 3; ++k) {
        const double e = p[k] < lo[k] ? lo[k] - p[k] : (p[k] > hi[k] ? p[k] - hi[k] : 0.0);
        d2 += e * e;
    }
    return d2;
}

}  // namespace

TrianglePoint closest_point_on_triangle(const Vec3& p, const Vec3& a, const Vec3& b, const Vec3& c) {
    const Vec3 ab = b - a, ac = c - a, ap = p - a;
    const double d1 = ab.dot(ap), d2 = ac.dot(ap);
    if (d1 <= 0.0 && d2 <= 0.0) return {a, TriangleRegion::Vertex, 0};
    const Vec3 bp = p - b;
    const double d3 = ab.dot(bp), d4 = ac.dot(bp);
    if (d3 >= 0.0 && d4 <= d3) return {b, TriangleRegion::Vertex, 1};
    const double vc = d1 * d4 - d3 * d2;
    if (vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0) {
        const double v = d1 / (d1 - d3);
        return {a + v * ab, TriangleRegion::Edge, 0};
    }
    const Vec3 cp = p - c;
    const double d5 = ab.dot(cp), d6 = ac.dot(cp);
    if (d6 >= 0.0 && d5 <= d6) return {c, TriangleRegion::Vertex, 2};
    const double vb = d5 * d2 - d1 * d6;
    if (vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0) {
        const double w = d2 / (d2 - d6);
        return {a + w * ac, TriangleRegion::Edge, 2};
    }
    const double va = d3 * d6 - d5 * d4;
    if (va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0) {
        const double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return {b + w * (c - b), TriangleRegion::Edge, 1};
    }
    const double denom = 1.0 / (va + vb + vc);
    return {a + (vb * denom) * ab + (vc * denom) * ac, TriangleRegion::Face, 0};
}

TriangleMesh::TriangleMesh(std::vector<Vec3> vertices,
                           const std::vector<std::array<uint32_t, 3>>& triangles)
    : vertex_(std::move(vertices)) {
    for (const auto& t : triangles) {
        for (uint32_t v : t)
            if (v >= vertex_.size())
                throw std::invalid_argument("triangle mesh: vertex index " + std::to_string(v) +
                                            " out of range (" + std::to_string(vertex_.size()) +
                                            " vertices)");
        const Vec3 n = (vertex_[t[1]] - vertex_[t[0]]).cross(vertex_[t[2]] - vertex_[t[0]]);
        const double len = n.norm();
        if (!(len > 0.0) || !std::isfinite(len)) {
            ++dropped_;
            continue;
        }
        tri_.push_back(t);
        normal_.push_back(n / len);
    }
    if (!vertex_.empty()) {
        lo_ = hi_ = vertex_[0];
        for (const Vec3& v : vertex_) {
            lo_ = lo_.cwiseMin(v);
            hi_ = hi_.cwiseMax(v);
        }
    }
    const std::size_t nt = tri_.size();

    // Edge adjacency, sorted by (min vertex, max vertex, triangle).
    edge_.reserve(3 * nt);
    for (std::size_t t = 0; t < nt; ++t)
        for (int k = 0; k < 3; ++k) {
            const uint32_t u = tri_[t][k], v = tri_[t][(k + 1) % 3];
            edge_.push_back({std::min(u, v), std::max(u, v), uint32_t(t)});
        }
    std::sort(edge_.begin(), edge_.end());
    edge_tri_.resize(edge_.size());
    for (std::size_t e = 0; e < edge_.size(); ++e) edge_tri_[e] = edge_[e][2];

    // Vertex adjacency (compressed rows, triangles ascending).
    vertex_start_.assign(vertex_.size() + 1, 0);
    for (const auto& t : tri_)
        for (uint32_t v : t) ++vertex_start_[v + 1];
    for (std::size_t v = 0; v < vertex_.size(); ++v) vertex_start_[v + 1] += vertex_start_[v];
    vertex_tri_.resize(vertex_start_.back());
    std::vector<uint32_t> fill(vertex_start_.begin(), vertex_start_.end() - 1);
    for (std::size_t t = 0; t < nt; ++t)
        for (uint32_t v : tri_[t]) vertex_tri_[fill[v]++] = uint32_t(t);

    if (nt == 0) return;
    std::vector<Vec3> centroid(nt);
    for (std::size_t t = 0; t < nt; ++t)
        centroid[t] = (vertex_[tri_[t][0]] + vertex_[tri_[t][1]] + vertex_[tri_[t][2]]) / 3.0;
    order_.resize(nt);
    for (std::size_t t = 0; t < nt; ++t) order_[t] = uint32_t(t);
    node_.reserve(2 * nt / kLeafSize + 2);
    build(0, uint32_t(nt), centroid);
}

uint32_t TriangleMesh::build(uint32_t first, uint32_t count, std::vector<Vec3>& centroid) {
    const uint32_t id = uint32_t(node_.size());
    node_.push_back({Vec3::Zero(), Vec3::Zero(), 0, 0, 0, 0});
    Vec3 lo = vertex_[tri_[order_[first]][0]], hi = lo;
    Vec3 clo = centroid[order_[first]], chi = clo;
    for (uint32_t k = first; k < first + count; ++k) {
        const uint32_t t = order_[k];
        for (uint32_t v : tri_[t]) {
            lo = lo.cwiseMin(vertex_[v]);
            hi = hi.cwiseMax(vertex_[v]);
        }
        clo = clo.cwiseMin(centroid[t]);
        chi = chi.cwiseMax(centroid[t]);
    }
    if (count <= kLeafSize) {
        node_[id] = {lo, hi, first, count, 0, 0};
        return id;
    }
    int axis = 0;
    const Vec3 ext = chi - clo;
    if (ext[1] > ext[axis]) axis = 1;
    if (ext[2] > ext[axis]) axis = 2;
    std::sort(order_.begin() + first, order_.begin() + first + count, [&](uint32_t a, uint32_t b) {
        const double ca = centroid[a][axis], cb = centroid[b][axis];
        return ca < cb || (ca == cb && a < b);
    });
    const uint32_t half = count / 2;
    const uint32_t left = build(first, half, centroid);
    const uint32_t right = build(first + half, count - half, centroid);
    node_[id] = {lo, hi, first, 0, left, right};
    return id;
}

double TriangleMesh::distance(std::size_t t, const Vec3& p) const {
    const auto& v = tri_[t];
    return (p - closest_point_on_triangle(p, vertex_[v[0]], vertex_[v[1]], vertex_[v[2]]).point).norm();
}

void TriangleMesh::query(const Vec3& centre, double radius, std::vector<uint32_t>& out) const {
    out.clear();
    if (node_.empty()) return;
    const double r2 = radius * radius;
    uint32_t stack[64];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
        const Node& n = node_[stack[--top]];
        if (box_distance2(n.lo, n.hi, centre) > r2) continue;
        if (n.count > 0) {
            for (uint32_t k = n.first; k < n.first + n.count; ++k)
                if (distance(order_[k], centre) <= radius) out.push_back(order_[k]);
        } else {
            stack[top++] = n.right;
            stack[top++] = n.left;
        }
    }
    std::sort(out.begin(), out.end());
}

const uint32_t* TriangleMesh::edge_triangles(uint32_t u, uint32_t v, std::size_t& count) const {
    const std::array<uint32_t, 3> lo{std::min(u, v), std::max(u, v), 0};
    const std::array<uint32_t, 3> hi{lo[0], lo[1], UINT32_MAX};
    const auto b = std::lower_bound(edge_.begin(), edge_.end(), lo);
    const auto e = std::upper_bound(b, edge_.end(), hi);
    count = std::size_t(e - b);
    return edge_tri_.data() + (b - edge_.begin());
}

const uint32_t* TriangleMesh::vertex_triangles(uint32_t v, std::size_t& count) const {
    count = vertex_start_[v + 1] - vertex_start_[v];
    return vertex_tri_.data() + vertex_start_[v];
}

void TriangleMesh::collide_sphere(const Vec3& x, double r, double envelope,
                                  std::vector<MeshContact>& out, Scratch& s) const {
    out.clear();
    query(x, r + envelope, s.found);
    const std::size_t nf = s.found.size();
    s.cand.resize(nf);
    for (std::size_t k = 0; k < nf; ++k) {
        const auto& v = tri_[s.found[k]];
        const Vec3& a = vertex_[v[0]];
        TrianglePoint cp = closest_point_on_triangle(x, a, vertex_[v[1]], vertex_[v[2]]);
        const double d = cp.region == TriangleRegion::Face ? std::abs(normal_[s.found[k]].dot(x - a))
                                                           : (x - cp.point).norm();
        s.cand[k] = {cp, d};
    }
    auto dist_of = [&](uint32_t t) {  // distance of a found triangle (∞ if not found)
        const auto it = std::lower_bound(s.found.begin(), s.found.end(), t);
        if (it == s.found.end() || *it != t) return std::numeric_limits<double>::infinity();
        return s.cand[std::size_t(it - s.found.begin())].dist;
    };
    auto face_contact = [&](uint32_t t) {
        const Vec3& n = normal_[t];
        const double h = n.dot(x - vertex_[tri_[t][0]]);
        const Vec3 nn = h >= 0.0 ? n : Vec3(-n);
        return MeshContact{x - r * nn, nn, std::abs(h) - r, t};
    };
    auto add = [&](const MeshContact& c) {
        if (c.gap > envelope) return;
        for (const MeshContact& o : out)
            if (o.normal.dot(c.normal) >= 1.0 - kSameDirection &&
                std::abs(o.gap - c.gap) <= kSameDirection * (r + std::abs(c.gap)))
                return;
        out.push_back(c);
    };
    // Rules 1–2: face contacts.
    for (std::size_t k = 0; k < nf; ++k)
        if (s.cand[k].closest.region == TriangleRegion::Face) add(face_contact(s.found[k]));
    // Rules 3–5: edge and vertex contacts.
    for (std::size_t k = 0; k < nf; ++k) {
        const auto& c = s.cand[k];
        if (c.closest.region == TriangleRegion::Face || c.dist - r > envelope) continue;
        const uint32_t t = s.found[k];
        const auto& v = tri_[t];
        std::size_t count = 0;
        const uint32_t* shared =
            c.closest.region == TriangleRegion::Edge
                ? edge_triangles(v[c.closest.index], v[(c.closest.index + 1) % 3], count)
                : vertex_triangles(v[c.closest.index], count);
        const double tau = kCloser * (c.dist + r);
        bool owned = true;
        for (std::size_t j = 0; j < count && owned; ++j)
            if (shared[j] != t && dist_of(shared[j]) < c.dist - tau) owned = false;
        if (!owned) continue;
        if (!(c.dist > 0.0)) {  // centre on the feature: fall back to the face normal
            add(face_contact(t));
            continue;
        }
        const Vec3 n = (x - c.closest.point) / c.dist;
        bool snapped = false;
        for (std::size_t j = 0; j < count && !snapped; ++j)
            if (std::abs(normal_[shared[j]].dot(n)) >= 1.0 - kSameDirection) {
                add(face_contact(shared[j]));
                snapped = true;
            }
        if (!snapped) add({x - r * n, n, c.dist - r, t});
    }
    std::sort(out.begin(), out.end(),
              [](const MeshContact& a, const MeshContact& b) { return a.triangle < b.triangle; });
    out.erase(std::unique(out.begin(), out.end(),
                          [](const MeshContact& a, const MeshContact& b) { return a.triangle == b.triangle; }),
              out.end());
}

}  // namespace talus
