// The start-up overlap search (engine/flow/start_overlaps.hpp): the same measures as the
// step's narrow phase at t = 0, so that what is refused at load is what would have been a
// contact at the first step.
#include "engine/flow/start_overlaps.hpp"

#include <array>
#include <limits>
#include <optional>

#include "collision/narrow_phase.hpp"
#include "collision/wall_clearance.hpp"

namespace talus {

namespace {

/// Body pairs: bounding spheres, then the exact gap of a pair that is not two spheres.
void body_pairs(const BodyStore& bodies, double rel_tol, const PeriodicBox& periodic, StartOverlaps& out) {
    for (BodyOverlap o : find_body_overlaps(bodies.position, bodies.radius, rel_tol, periodic)) {
        if (bodies.kinematic(o.a) && bodies.kinematic(o.b)) continue;  // they never touch
        if (bodies.shape[o.a] != Shape::Sphere || bodies.shape[o.b] != Shape::Sphere) {
            std::vector<ShapeContact> c;
            const int n = collide_pair_image(bodies, o.a, o.b, o.shift, std::numeric_limits<double>::infinity(), c);
            double gap = std::numeric_limits<double>::infinity();
            for (int k = 0; k < n; ++k) gap = std::min(gap, c[k].gap);
            o.depth = -gap;
            if (o.depth <= rel_tol * std::max(bodies.radius[o.a], bodies.radius[o.b])) continue;
        }
        out.bodies.push_back(o);
    }
}

/// Planes and boxes: bounding spheres against the faces, then a capsule or an ellipsoid
/// measured exactly; the deepest face per (body, wall).
void wall_faces_of(const BodyStore& bodies, const std::vector<Wall>& walls, const WallClearance& clearance,
                   double rel_tol, StartOverlaps& out) {
    std::vector<WallOverlap> reached;  // by body, then wall: the deepest face of each
    for (std::size_t i = 0; i < bodies.size(); ++i)
        for (std::size_t w = 0; w < walls.size(); ++w) {
            if (walls[w].type != WallType::Plane && walls[w].type != WallType::Box) continue;
            if (auto hit = clearance.reach(w, bodies.position[i], bodies.radius[i], rel_tol))
                reached.push_back({i, w, hit->feature, hit->depth});
        }
    std::array<WallFace, 6> faces;
    for (WallOverlap o : reached) {
        if (bodies.kinematic(o.body)) continue;  // kinematic bodies pass through walls
        if (bodies.shape[o.body] != Shape::Sphere) {
            const int nf = wall_faces(walls[o.wall], 0.0, faces);
            o.face = -1;
            o.depth = rel_tol * bodies.radius[o.body];
            for (int f = 0; f < nf; ++f) {
                std::vector<ShapeContact> c;
                const int n = collide_face(bodies, o.body, faces[std::size_t(f)], uint32_t(f),
                                           std::numeric_limits<double>::infinity(), c);
                for (int k = 0; k < n; ++k)
                    if (-c[k].gap > o.depth) {
                        o.depth = -c[k].gap;
                        o.face = f;
                    }
            }
            if (o.face < 0) continue;
        }
        wall_faces(walls[o.wall], 0.0, faces);
        const WallFace& face = faces[std::size_t(o.face)];
        out.faces.push_back({o, face.normal.dot(bodies.position[o.body] - face.point) < 0.0});
    }
}

/// Mesh walls: the nearest triangle within the radius (each sphere of a clump, the first
/// that reaches the mesh), at the mesh's pose at t = 0 (WallClearance::reach); a capsule
/// by the narrow phase's contacts (collide_capsule_mesh), its deepest, against its radius;
/// other shapes by their bounding radius.
void meshes_of(const BodyStore& bodies, const std::vector<Wall>& walls, const WallClearance& clearance,
               double rel_tol, StartOverlaps& out) {
    for (std::size_t w = 0; w < walls.size(); ++w) {
        if (walls[w].type != WallType::Mesh) continue;
        for (std::size_t i = 0; i < bodies.size(); ++i) {
            if (bodies.kinematic(i)) continue;
            double r_i = bodies.radius[i];
            std::optional<WallClearance::Reach> hit;
            if (bodies.shape[i] == Shape::Capsule && walls[w].active && walls[w].mesh &&
                walls[w].mesh->size() <= (std::size_t(1) << kMeshSubFeatureShift)) {
                std::vector<MeshContact> c;
                CapsuleMeshScratch scratch;
                collide_capsule_mesh(bodies, i, walls[w], wall_state(walls[w].motion, 0.0, 0.0, 1.0), 0.0, c, scratch);
                const MeshContact* deepest = nullptr;
                for (const MeshContact& m : c)
                    if (!deepest || m.gap < deepest->gap) deepest = &m;
                r_i = bodies.shape_param[i].x();
                if (deepest && -deepest->gap > rel_tol * r_i)
                    out.meshes.push_back({i, w, deepest->triangle & ((1u << kMeshSubFeatureShift) - 1), r_i,
                                          r_i + deepest->gap});
                continue;
            }
            if (bodies.shape[i] == Shape::Clump) {
                const ClumpTable& t = bodies.clumps;
                const uint32_t id = bodies.clump_of(i);
                for (uint32_t k = t.begin(id); k < t.end(id) && !hit; ++k) {
                    r_i = t.radius[k];
                    hit = clearance.reach(w, bodies.position[i] + bodies.orientation[i] * t.centre[k], r_i, rel_tol);
                }
            } else {
                hit = clearance.reach(w, bodies.position[i], r_i, rel_tol);
            }
            if (!hit) continue;
            out.meshes.push_back({i, w, uint32_t(hit->feature), r_i, hit->distance});
        }
    }
}

/// Cylinder, cone and orifice walls: the distance at t = 0 (a cylinder's radial, signed; a
/// thin wall's to its nearest point), for a sphere or the deepest sphere of a clump; for a
/// capsule or an ellipsoid against a cylinder, and a capsule against a cone or an orifice,
/// the narrow phase's gap, reported against its thickness (the capsule's radius, the
/// smallest semi-axis); an ellipsoid against a cone or an orifice by its bounding radius
/// (those walls have no routine for it).
void cylinders_of(const BodyStore& bodies, const std::vector<Wall>& walls, const WallClearance& clearance,
                  double rel_tol, StartOverlaps& out) {
    constexpr double kAny = -std::numeric_limits<double>::infinity();  // the distance, whatever it is
    for (std::size_t w = 0; w < walls.size(); ++w) {
        const WallType type = walls[w].type;
        if (type != WallType::Cylinder && type != WallType::Cone && type != WallType::Orifice) continue;
        for (std::size_t i = 0; i < bodies.size(); ++i) {
            if (bodies.kinematic(i)) continue;
            double r_i = bodies.radius[i];
            double dist = 0.0;
            if (bodies.shape[i] == Shape::Clump) {
                const ClumpTable& t = bodies.clumps;
                const uint32_t id = bodies.clump_of(i);
                bool found = false;
                for (uint32_t k = t.begin(id); k < t.end(id); ++k) {
                    const Vec3 c = bodies.position[i] + bodies.orientation[i] * t.centre[k];
                    const auto hit = clearance.reach(w, c, t.radius[k], kAny);
                    if (!hit) continue;
                    const double d = hit->distance;
                    if (!found || t.radius[k] - d > r_i - dist) {
                        r_i = t.radius[k];
                        dist = d;
                        found = true;
                    }
                }
                if (!found) continue;
            } else if (walls[w].active && (bodies.shape[i] == Shape::Capsule ||
                                           (type == WallType::Cylinder && bodies.shape[i] == Shape::Ellipsoid))) {
                const WallState at = wall_state(walls[w].motion, 0.0, 0.0, 1.0);
                constexpr double kAll = std::numeric_limits<double>::infinity();
                std::vector<ShapeContact> c;
                if (type == WallType::Cylinder)
                    collide_cylinder(bodies, i, CylinderAt(walls[w], at), kAll, c);
                else
                    collide_thin_wall(bodies, i, ThinWallAt(walls[w], at), kAll, c);
                if (c.empty()) continue;
                double gap = std::numeric_limits<double>::infinity();
                for (const ShapeContact& k : c) gap = std::min(gap, k.gap);
                const Vec3& p = bodies.shape_param[i];
                r_i = bodies.shape[i] == Shape::Capsule ? p.x() : p.minCoeff();
                dist = r_i + gap;
            } else if (const auto hit = clearance.reach(w, bodies.position[i], r_i, kAny)) {
                dist = hit->distance;
            } else {
                continue;
            }
            if (r_i - dist <= rel_tol * r_i) continue;
            out.cylinders.push_back({i, w, r_i, dist});
        }
    }
}

}  // namespace

StartOverlaps find_start_overlaps(const BodyStore& bodies, const std::vector<Wall>& walls, double rel_tol,
                                  const PeriodicBox& periodic) {
    StartOverlaps out;
    body_pairs(bodies, rel_tol, periodic, out);
    const WallClearance clearance(walls, 0.0);  // every wall at its pose at t = 0
    wall_faces_of(bodies, walls, clearance, rel_tol, out);
    meshes_of(bodies, walls, clearance, rel_tol, out);
    cylinders_of(bodies, walls, clearance, rel_tol, out);
    return out;
}

}  // namespace talus
