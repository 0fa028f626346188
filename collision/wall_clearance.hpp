#pragma once
/// Is a sphere clear of every wall, and how far does it reach into one? One answer for every
/// place that puts grains into a scene (random fills and emitters through
/// engine/flow/free_space.hpp) and for the start-up overlap check
/// (engine/flow/start_overlaps.cpp), so that none of them forgets a wall kind: planes and
/// boxes by their faces, cylinders by their radial distance, meshes by their triangles within
/// the radius, cones and orifice plates by the distance to their nearest point (either side). Walls are taken at their pose at one time t (a moving wall where it is then);
/// removed walls are ignored. A new wall kind is a case in clear() and in reach().
#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "core/thin_walls.hpp"
#include "core/walls.hpp"

namespace talus {

class WallClearance {
public:
    WallClearance(const std::vector<Wall>& walls, double t);

    /// True when a sphere of centre x and radius r [m] touches no wall: on the bodies' side
    /// of every plane and box face by at least r, at least r from every cylinder on its
    /// bodies' side (a centre beyond a finite cylinder's ends is not seen by it, as in the
    /// narrow phase), no mesh triangle within r, and at least r from every cone and orifice
    /// plate (on either side of a plate; inside a cone, when between its ends: a fill box
    /// wider than a hopper fills the hopper).
    bool clear(const Vec3& x, double r) const;

    /// How a sphere of centre x and radius r stands against wall `wall` (its index in the
    /// walls given), when it reaches in by more than rel_tol × r:
    /// - plane, box: the deepest face, `feature` its index in wall_faces(), depth r − its
    ///   signed distance along the face's normal;
    /// - cylinder: `distance` the signed distance of the centre from the shell on the bodies'
    ///   side (a centre beyond a finite cylinder's ends does not reach it), depth r − distance;
    /// - mesh: the nearest triangle within r (1 − rel_tol), `feature` its index, `distance`
    ///   the centre's distance to it;
    /// - cone, orifice: `distance` from the centre to the wall's nearest point (≥ 0), depth
    ///   r − distance.
    /// Nothing when it does not reach (or the wall is removed). rel_tol = −∞ gives a
    /// cylinder's distance whatever it is.
    struct Reach {
        int feature = -1;
        double depth = 0.0;     ///< [m]
        double distance = 0.0;  ///< [m]
    };
    std::optional<Reach> reach(std::size_t wall, const Vec3& x, double r, double rel_tol) const;

private:
    struct MeshAt {
        const Wall* wall;
        WallState state;
    };
    /// Per wall given: its kind and where its faces, cylinder or mesh are below (count 0:
    /// removed, or a mesh wall without a mesh).
    struct Entry {
        WallType type;
        std::size_t first = 0;
        int count = 0;
    };
    std::vector<Entry> walls_;
    std::vector<WallFace> faces_;
    std::vector<CylinderAt> cylinders_;
    std::vector<MeshAt> meshes_;
    std::vector<ThinWallAt> thin_;
    mutable std::vector<uint32_t> near_;  // scratch of mesh queries
};

}  // namespace talus
