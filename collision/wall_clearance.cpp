// Why one routine: the emitter once checked plane, box and mesh walls but not cylinders,
// and the random fill checked cylinders but not meshes, so grains appeared outside a drum
// or inside a silo's floor without a word. Every placement path now asks this class.
#include "collision/wall_clearance.hpp"

#include "collision/mesh.hpp"

namespace talus {

WallClearance::WallClearance(const std::vector<Wall>& walls, double t) {
    std::array<WallFace, 6> buf;
    for (const Wall& w : walls) {
        if (!w.active) continue;
        const WallState s = wall_state(w.motion, t, t, 1.0);
        switch (w.type) {
            case WallType::Plane:
            case WallType::Box: {
                const int n = wall_faces(w, s, buf);
                faces_.insert(faces_.end(), buf.begin(), buf.begin() + n);
                break;
            }
            case WallType::Cylinder: cylinders_.emplace_back(w, s); break;
            case WallType::Mesh:
                if (w.mesh) meshes_.push_back({&w, s});
                break;
        }
    }
}

bool WallClearance::clear(const Vec3& x, double r) const {
    for (const WallFace& f : faces_)
        if (f.normal.dot(x - f.point) < r) return false;
    for (const CylinderAt& c : cylinders_) {
        double dist;
        Vec3 n;
        if (c.distance(x, dist, n) && dist < r) return false;
    }
    for (const MeshAt& m : meshes_) {
        // the tree stays in the mesh's reference frame: move the query there
        m.wall->mesh->query(m.state.to_reference(x), r, near_);
        if (!near_.empty()) return false;
    }
    return true;
}

}  // namespace talus
