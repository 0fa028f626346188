#pragma once
/// Is a sphere clear of every wall? One answer for every place that puts grains into a
/// scene (random fills, emitters) so that no placement path forgets a wall kind: planes and
/// boxes by their faces, cylinders by their radial distance, meshes by their triangles within
/// the radius. Walls are taken at their pose at one time t (a moving wall where it is then);
/// removed walls are ignored.
#include <array>
#include <vector>

#include "core/walls.hpp"

namespace talus {

class WallClearance {
public:
    WallClearance(const std::vector<Wall>& walls, double t);

    /// True when a sphere of centre x and radius r [m] touches no wall: on the bodies' side
    /// of every plane and box face by at least r, at least r from every cylinder on its
    /// bodies' side (a centre beyond a finite cylinder's ends is not seen by it, as in the
    /// narrow phase), and no mesh triangle within r.
    bool clear(const Vec3& x, double r) const;

private:
    struct MeshAt {
        const Wall* wall;
        WallState state;
    };
    std::vector<WallFace> faces_;
    std::vector<CylinderAt> cylinders_;
    std::vector<MeshAt> meshes_;
    mutable std::vector<uint32_t> near_;  // scratch of mesh queries
};

}  // namespace talus
