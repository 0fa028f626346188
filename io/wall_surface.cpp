// The walls as triangles for the output (io/wall_surface.hpp).
#include "io/wall_surface.hpp"

#include <algorithm>
#include <cmath>

#include "collision/mesh.hpp"
#include "core/body_store.hpp"
#include "core/math.hpp"

namespace talus {

namespace {

struct Builder {
    WallSurface& s;
    uint32_t wall = 0;
    uint32_t add_point(const Vec3& p) {
        s.points.push_back(p);
        return uint32_t(s.points.size() - 1);
    }
    void add_triangle(uint32_t a, uint32_t b, uint32_t c) {
        s.triangles.push_back({a, b, c});
        s.triangle_wall.push_back(wall);
    }
    void add_quad(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
        add_triangle(a, b, c);
        add_triangle(a, c, d);
    }
};

}  // namespace

void scene_extent(const std::vector<Wall>& walls, const BodyStore& bodies, Vec3& lo, Vec3& hi) {
    const double inf = std::numeric_limits<double>::infinity();
    lo = Vec3::Constant(inf);
    hi = Vec3::Constant(-inf);
    const auto grow = [&](const Vec3& a, const Vec3& b) {
        lo = lo.cwiseMin(a);
        hi = hi.cwiseMax(b);
    };
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        const Vec3 r = Vec3::Constant(bodies.radius[i]);
        grow(bodies.position[i] - r, bodies.position[i] + r);
    }
    for (const Wall& w : walls) {
        if (w.type == WallType::Box) grow(w.min.cwiseMin(w.max), w.max.cwiseMax(w.min));
        if (w.type == WallType::Mesh && w.mesh && w.mesh->size() > 0) grow(w.mesh->lower(), w.mesh->upper());
        if (w.type == WallType::Cone) {
            const Vec3 end = w.point + w.length * w.axis;
            const Vec3 r0 = Vec3::Constant(w.radius), r1 = Vec3::Constant(w.end_radius);
            grow((w.point - r0).cwiseMin(end - r1), (w.point + r0).cwiseMax(end + r1));
        }
        if (w.type == WallType::Cylinder && std::isfinite(w.length)) {
            const Vec3 half = 0.5 * w.length * w.axis, r = Vec3::Constant(w.radius);
            grow((w.point - half).cwiseMin(w.point + half) - r, (w.point - half).cwiseMax(w.point + half) + r);
        }
    }
    if (!(lo.array() <= hi.array()).all()) {
        lo = Vec3::Constant(-0.5);
        hi = Vec3::Constant(0.5);
        return;
    }
    const double margin = 0.2 * std::max((hi - lo).norm(), 1e-3);
    lo -= Vec3::Constant(margin);
    hi += Vec3::Constant(margin);
}

WallSurface wall_surface(const std::vector<Wall>& walls, const BodyStore& bodies) {
    WallSurface s;
    Vec3 lo, hi;
    scene_extent(walls, bodies, lo, hi);
    const Vec3 centre = 0.5 * (lo + hi);
    const double size = (hi - lo).norm();
    for (std::size_t k = 0; k < walls.size(); ++k) {
        const Wall& w = walls[k];
        s.first_point.push_back(uint32_t(s.points.size()));
        Builder b{s, uint32_t(k)};
        switch (w.type) {
            case WallType::Plane: {
                // a square of the scene's size about the scene centre's projection on the plane
                const Vec3 n = w.normal.normalized();
                const Vec3 c = centre - n * n.dot(centre - w.point);
                Vec3 u, v;
                orthonormal_basis(n, u, v);
                const double h = 0.5 * size;
                const uint32_t p0 = b.add_point(c - h * u - h * v), p1 = b.add_point(c + h * u - h * v),
                               p2 = b.add_point(c + h * u + h * v), p3 = b.add_point(c - h * u + h * v);
                b.add_quad(p0, p1, p2, p3);
                break;
            }
            case WallType::Box: {
                uint32_t corner[8];
                for (int i = 0; i < 8; ++i)
                    corner[i] = b.add_point(Vec3(i & 1 ? w.max.x() : w.min.x(), i & 2 ? w.max.y() : w.min.y(),
                                                 i & 4 ? w.max.z() : w.min.z()));
                b.add_quad(corner[0], corner[2], corner[3], corner[1]);  // z = min
                b.add_quad(corner[4], corner[5], corner[7], corner[6]);  // z = max
                b.add_quad(corner[0], corner[1], corner[5], corner[4]);  // y = min
                b.add_quad(corner[2], corner[6], corner[7], corner[3]);  // y = max
                b.add_quad(corner[0], corner[4], corner[6], corner[2]);  // x = min
                b.add_quad(corner[1], corner[3], corner[7], corner[5]);  // x = max
                break;
            }
            case WallType::Cylinder: {
                const Vec3 a = w.axis.normalized();
                Vec3 u, v;
                orthonormal_basis(a, u, v);
                // an unbounded cylinder is drawn across the scene, about the scene centre
                const Vec3 mid = std::isfinite(w.length) ? w.point : Vec3(w.point + a * a.dot(centre - w.point));
                const double half = std::isfinite(w.length) ? 0.5 * w.length : 0.5 * size;
                const uint32_t first = uint32_t(s.points.size());
                for (int i = 0; i < kCylinderSegments; ++i) {
                    const double phi = 2.0 * 3.14159265358979323846 * i / kCylinderSegments;
                    const Vec3 r = w.radius * (std::cos(phi) * u + std::sin(phi) * v);
                    b.add_point(mid + r - half * a);
                    b.add_point(mid + r + half * a);
                }
                for (int i = 0; i < kCylinderSegments; ++i) {
                    const uint32_t j = (i + 1) % kCylinderSegments;
                    b.add_quad(first + 2 * i, first + 2 * j, first + 2 * j + 1, first + 2 * i + 1);
                }
                break;
            }
            case WallType::Cone: {
                Vec3 u, v;
                orthonormal_basis(w.axis, u, v);
                const Vec3 end = w.point + w.length * w.axis;
                const uint32_t first = uint32_t(s.points.size());
                for (int i = 0; i < kCylinderSegments; ++i) {
                    const double phi = 2.0 * 3.14159265358979323846 * i / kCylinderSegments;
                    const Vec3 e = std::cos(phi) * u + std::sin(phi) * v;
                    b.add_point(w.point + w.radius * e);
                    b.add_point(end + w.end_radius * e);
                }
                for (int i = 0; i < kCylinderSegments; ++i) {
                    const uint32_t j = (i + 1) % kCylinderSegments;
                    b.add_quad(first + 2 * i, first + 2 * j, first + 2 * j + 1, first + 2 * i + 1);
                }
                break;
            }
            case WallType::Orifice: {
                // the plate as a square of the scene's size about the hole (at least twice
                // the hole's size), with the hole cut out
                const Vec3 n = w.normal;
                Vec3 u, v;
                if (w.hole_radius > 0.0) {
                    orthonormal_basis(n, u, v);
                } else {
                    u = w.hole_direction;
                    v = n.cross(u);
                }
                const double hole = w.hole_radius > 0.0 ? w.hole_radius : 0.5 * std::max(w.hole_size[0], w.hole_size[1]);
                const double h = std::max(0.5 * size, 2.0 * hole);
                const uint32_t first = uint32_t(s.points.size());
                if (w.hole_radius > 0.0) {
                    // each direction of the hole's rim out to the square's border
                    for (int i = 0; i < kCylinderSegments; ++i) {
                        const double phi = 2.0 * 3.14159265358979323846 * i / kCylinderSegments;
                        const double c = std::cos(phi), sn = std::sin(phi);
                        const double out = h / std::max(std::abs(c), std::abs(sn));
                        b.add_point(w.point + w.hole_radius * (c * u + sn * v));
                        b.add_point(w.point + out * (c * u + sn * v));
                    }
                    for (int i = 0; i < kCylinderSegments; ++i) {
                        const uint32_t j = (i + 1) % kCylinderSegments;
                        b.add_quad(first + 2 * i, first + 2 * j, first + 2 * j + 1, first + 2 * i + 1);
                    }
                } else {
                    const double a = 0.5 * w.hole_size[0], c = 0.5 * w.hole_size[1];
                    const double su[4] = {-1, 1, 1, -1}, sv[4] = {-1, -1, 1, 1};
                    for (int i = 0; i < 4; ++i) {
                        b.add_point(w.point + su[i] * a * u + sv[i] * c * v);
                        b.add_point(w.point + su[i] * h * u + sv[i] * h * v);
                    }
                    for (uint32_t i = 0; i < 4; ++i) {
                        const uint32_t j = (i + 1) % 4;
                        b.add_quad(first + 2 * i, first + 2 * j, first + 2 * j + 1, first + 2 * i + 1);
                    }
                }
                break;
            }
            case WallType::Mesh: {
                if (!w.mesh) break;
                const uint32_t first = uint32_t(s.points.size());
                for (const Vec3& p : w.mesh->vertices()) b.add_point(p);
                for (std::size_t t = 0; t < w.mesh->size(); ++t) {
                    const auto& tri = w.mesh->triangle(t);
                    b.add_triangle(first + tri[0], first + tri[1], first + tri[2]);
                }
                break;
            }
        }
    }
    s.first_point.push_back(uint32_t(s.points.size()));
    return s;
}

void posed_wall_points(const WallSurface& surface, const std::vector<Wall>& walls, double t,
                       std::vector<Vec3>& out) {
    out.resize(surface.points.size());
    for (std::size_t k = 0; k + 1 < surface.first_point.size() && k < walls.size(); ++k) {
        const uint32_t a = surface.first_point[k], b = surface.first_point[k + 1];
        if (a == b) continue;
        if (!walls[k].active) {
            std::fill(out.begin() + a, out.begin() + b, surface.points[a]);
            continue;
        }
        const WallState pose = wall_state(walls[k].motion, t, t, 1.0);
        for (uint32_t i = a; i < b; ++i) out[i] = pose.to_world(surface.points[i]);
    }
}

}  // namespace talus
