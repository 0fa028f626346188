#pragma once
/// What overlaps in a configuration about to start: pairs of bodies and bodies with walls of
/// every kind, measured the way the step's narrow phase will see them at t = 0. A run must
/// not start with grains inside each other or inside a wall (the solver would fling them
/// apart); the scene reader (io/scene/checks.cpp) turns these records into messages, and
/// needs no geometry of its own.
///
/// Bounding spheres first (find_body_overlaps in particle_fill.hpp; walls of every kind by
/// collision/wall_clearance.hpp's reach, the geometry that placement asks too); a pair with
/// a capsule or an ellipsoid is then measured by its contact routine. Kinematic
/// bodies are left out against walls (they pass through them) and against each other.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/body_store.hpp"
#include "core/walls.hpp"
#include "engine/flow/particle_fill.hpp"

namespace talus {

/// A body crossing a plane's or a box's face: `face` from wall_faces(), depth > rel_tol r.
struct FaceOverlap {
    WallOverlap overlap;
    bool centre_out = false;  ///< the centre itself is behind the face
};

/// A body (or, for a clump, its first sphere that does) reaching a mesh wall's triangles.
struct MeshOverlap {
    std::size_t body = 0, wall = 0;
    uint32_t triangle = 0;   ///< the nearest triangle within reach
    double radius = 0.0;     ///< the sphere's radius [m]
    double distance = 0.0;   ///< its centre's distance to that triangle [m]
};

/// A body (or a clump's deepest sphere) closer to a cylinder, cone or orifice wall than its
/// radius.
struct CylinderOverlap {
    std::size_t body = 0, wall = 0;
    double radius = 0.0;     ///< the sphere's radius [m]
    double distance = 0.0;   ///< signed distance of its centre from the shell, < 0 beyond it (a cylinder's) [m]
};

/// Every overlap deeper than rel_tol × the larger radius, by kind, each list in the order
/// the reader reports them (bodies by (b, a); walls in wall order, then body order).
struct StartOverlaps {
    std::vector<BodyOverlap> bodies;       ///< pairs, depth measured by their contact routine
    std::vector<FaceOverlap> faces;        ///< planes and boxes
    std::vector<MeshOverlap> meshes;
    std::vector<CylinderOverlap> cylinders;
};

/// With periodic axes, pairs are also found through the faces (the minimum image).
StartOverlaps find_start_overlaps(const BodyStore& bodies, const std::vector<Wall>& walls, double rel_tol,
                                  const PeriodicBox& periodic = {});

}  // namespace talus
