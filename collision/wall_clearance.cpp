// Why one routine: the emitter once checked plane, box and mesh walls but not cylinders,
// and the random fill checked cylinders but not meshes, so grains appeared outside a drum
// or inside a silo's floor without a word. Every placement path now asks this class.
#include "collision/wall_clearance.hpp"

#include "collision/mesh.hpp"

namespace talus {

WallClearance::WallClearance(const std::vector<Wall>& walls, double t) {
    std::array<WallFace, 6> buf;
    for (const Wall& w : walls) {
        Entry& e = walls_.emplace_back(Entry{w.type});
        if (!w.active) continue;
        const WallState s = wall_state(w.motion, t, t, 1.0);
        switch (w.type) {
            case WallType::Plane:
            case WallType::Box: {
                const int n = wall_faces(w, s, buf);
                e = {w.type, faces_.size(), n};
                faces_.insert(faces_.end(), buf.begin(), buf.begin() + n);
                break;
            }
            case WallType::Cylinder:
                e = {w.type, cylinders_.size(), 1};
                cylinders_.emplace_back(w, s);
                break;
            case WallType::Mesh:
                if (!w.mesh) break;
                e = {w.type, meshes_.size(), 1};
                meshes_.push_back({&w, s});
                break;
            case WallType::Cone:
            case WallType::Orifice:
                e = {w.type, thin_.size(), 1};
                thin_.emplace_back(w, s);
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
    for (const ThinWallAt& w : thin_)
        if (w.outside(x) || w.distance(x) < r) return false;
    return true;
}

std::optional<WallClearance::Reach> WallClearance::reach(std::size_t wall, const Vec3& x, double r,
                                                         double rel_tol) const {
    const Entry& e = walls_[wall];
    if (e.count == 0) return std::nullopt;
    switch (e.type) {
        case WallType::Plane:
        case WallType::Box: {
            Reach deepest{-1, rel_tol * r, 0.0};
            for (int f = 0; f < e.count; ++f) {
                const WallFace& face = faces_[e.first + std::size_t(f)];
                const double distance = face.normal.dot(x - face.point);
                if (r - distance > deepest.depth) deepest = {f, r - distance, distance};
            }
            if (deepest.feature < 0) return std::nullopt;
            return deepest;
        }
        case WallType::Cylinder: {
            double distance;
            Vec3 n;
            if (!cylinders_[e.first].distance(x, distance, n) || !(r - distance > rel_tol * r)) return std::nullopt;
            return Reach{-1, r - distance, distance};
        }
        case WallType::Mesh: {
            // the tree stays in the mesh's reference frame: move the query there
            const MeshAt& m = meshes_[e.first];
            const Vec3 at = m.state.to_reference(x);
            m.wall->mesh->query(at, r * (1.0 - rel_tol), near_);
            if (near_.empty()) return std::nullopt;
            uint32_t nearest = near_[0];
            double best = m.wall->mesh->distance(nearest, at);
            for (uint32_t tri : near_)
                if (const double d = m.wall->mesh->distance(tri, at); d < best) {
                    best = d;
                    nearest = tri;
                }
            return Reach{int(nearest), r - best, best};
        }
        case WallType::Cone:
        case WallType::Orifice: {
            const double distance = thin_[e.first].distance(x);
            if (!(r - distance > rel_tol * r)) return std::nullopt;
            return Reach{-1, r - distance, distance};
        }
    }
    return std::nullopt;
}

}  // namespace talus
