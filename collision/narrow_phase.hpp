#pragma once
/// Narrow phase: geometric contacts (point, normal, gap) between bodies of every shape
/// (spheres, capsules, ellipsoids, clumps of spheres) and between bodies and walls, with
/// gap Φ ≤ δ (docs/design.md §3, §7). Every pair of shapes has a routine; a clump meets a
/// capsule or an ellipsoid sphere by sphere.
#include <cstdint>
#include <vector>

#include "collision/mesh.hpp"
#include "core/body_store.hpp"
#include "core/contacts.hpp"
#include "core/thin_walls.hpp"
#include "core/walls.hpp"

namespace talus {

/// Reusable buffers of the narrow phase.
struct NarrowPhaseScratch {
    std::vector<uint32_t> wall_count;  ///< per body: wall contacts, then their prefix sum
    std::vector<uint32_t> pair_count;  ///< per pair: contacts, then their prefix sum
    /// Ellipsoids whose bounding sphere (with envelope) reaches a mesh wall (and clumps and
    /// capsules near a mesh of more than 2²⁴ triangles), and ellipsoids whose bounding
    /// sphere reaches a cone or orifice wall: no contact routine for them. Callers
    /// must not ignore them either. (Cylinders collide with every shape.)
    std::vector<uint32_t> unsupported_mesh, unsupported_thin;
    std::vector<uint8_t> wall_flag;  ///< per body: bit 1 mesh, bit 4 cone or orifice
};

/// One contact of two shapes, before it is written to a ContactList.
struct ShapeContact {
    Vec3 point = Vec3::Zero();     ///< contact point, world, midway across the gap [m]
    Vec3 normal = Vec3::UnitZ();   ///< unit normal from the first shape to the second
    double gap = 0.0;              ///< signed distance Φ [m], negative = penetration
    uint32_t feature = 0;          ///< see ContactList::feature
};

/// Most contacts one body other than a clump makes with one wall face or with one other
/// body (a clump makes one per sphere or pair of spheres: use the std::vector overloads):
/// two capsules near parallel, their closest pair, four ends and six inner points.
inline constexpr int kMaxShapeContacts = 11;

/// Contacts of body i with the plane `face` (normal pointing at the body) whose gap is
/// ≤ envelope [m]: a sphere or ellipsoid gives at most one, a capsule one per end sphere
/// (sub-feature 0 = +x end, 1 = −x end). Normal = face normal (wall → body). Returns the
/// count written to out[0 … ), or −1 for a clump (use the std::vector overload).
int collide_face(const BodyStore& bodies, std::size_t i, const WallFace& face, uint32_t face_index,
                 double envelope, ShapeContact* out);
/// The same for every shape, clumps included (one contact per sphere of a clump, sub-feature
/// = its sphere number); `out` is cleared first. Returns the count.
int collide_face(const BodyStore& bodies, std::size_t i, const WallFace& face, uint32_t face_index,
                 double envelope, std::vector<ShapeContact>& out);

/// Contacts of bodies a and b (normal from a to b) whose gap is ≤ envelope [m]; returns
/// their count (0–2), or −1 for any pair with a clump (use the std::vector overload).
int collide_pair(const BodyStore& bodies, std::size_t a, std::size_t b, double envelope,
                 ShapeContact* out);
/// The same for every pair of shapes, clumps included: a clump against a sphere or a clump
/// gives one contact per touching pair of spheres (sub-features in contacts.hpp), against a
/// capsule or an ellipsoid one per sphere of the clump within reach (sub-feature = its
/// number), as that sphere alone would. `out` is cleared first. Returns the count.
int collide_pair(const BodyStore& bodies, std::size_t a, std::size_t b, double envelope,
                 std::vector<ShapeContact>& out);
/// The same with b displaced by `shift` (whole periods: b's image nearest a across periodic
/// faces); a zero shift is collide_pair itself.
int collide_pair_image(const BodyStore& bodies, std::size_t a, std::size_t b, const Vec3& shift,
                       double envelope, std::vector<ShapeContact>& out);

/// Closest point of the ellipsoid surface Σ (x_k/s_k)² = 1 (semi-axes s [m], centred, in
/// its own frame) to the point y [m]. Writes the surface point and its outward unit normal;
/// returns the signed distance (negative when y is inside) [m].
double ellipsoid_closest_point(const Vec3& s, const Vec3& y, Vec3& point, Vec3& normal);

/// The unit normal n (A → B) of two ellipsoids, with M_A = S_A R_Aᵀ and M_B = S_B R_Bᵀ
/// (S = diag of the semi-axes, R the orientation) and d = x_B − x_A: the maximiser of
/// n·d − ‖M_A n‖ − ‖M_B n‖ over unit vectors (that maximum is the pair's signed distance),
/// by Newton's method on the sphere from `start`.
Vec3 ellipsoid_pair_normal(const Mat3& ma, const Mat3& mb, const Vec3& d, const Vec3& start);

/// Contacts of body i with the cylinder `cyl` (normal radial, from the wall to the body)
/// whose gap is ≤ envelope [m]: a sphere one, when its centre lies between the cylinder's
/// ends; a capsule one per end sphere inside a drum (sub-feature 0 = +x end, 1 = −x end,
/// each when its centre lies between the ends) and one at its point nearest the axis
/// outside (both ends when it lies along the axis); an ellipsoid one, at its support point
/// farthest from the axis inside (nearest outside), when that point lies between the ends.
/// Returns the count (0 for a clump: use the std::vector overload).
int collide_cylinder(const BodyStore& bodies, std::size_t i, const CylinderAt& cyl, double envelope,
                     ShapeContact* out);
/// The same for every shape: one contact per sphere of a clump whose centre lies between
/// the ends (sub-feature = its sphere number); `out` is cleared first. Returns the count.
int collide_cylinder(const BodyStore& bodies, std::size_t i, const CylinderAt& cyl, double envelope,
                     std::vector<ShapeContact>& out);

/// Reusable buffers of collide_capsule_mesh.
struct CapsuleMeshScratch {
    std::vector<MeshContact> sphere;
    TriangleMesh::Scratch mesh;
    std::vector<uint32_t> found;
    std::vector<double> along;
};
/// Contacts of capsule i with the mesh wall `wall` (its triangles fewer than 2²⁴) at pose
/// `state`, each with gap ≤ envelope [m], into `out` (cleared first): its end spheres as
/// spheres meet a mesh (sub-feature 0 = +x end, 1 = −x end), and, where the core's point
/// nearest a triangle lies inside the segment (across a ridge, an edge or a rim), a sphere
/// of the capsule's radius there (sub-feature 2). Feature = triangle | sub-feature <<
/// kMeshSubFeatureShift; one contact per feature (the deepest), ascending. Normals from
/// the mesh to the capsule, points on the capsule. Returns the count.
int collide_capsule_mesh(const BodyStore& bodies, std::size_t i, const Wall& wall, const WallState& state,
                         double envelope, std::vector<MeshContact>& out, CapsuleMeshScratch& scratch);

/// Contacts of sphere, clump or capsule i with a cone or orifice wall (core/thin_walls.hpp),
/// each with gap ≤ envelope [m]: feature = the wall's feature | sub << kSubFeatureShift, sub
/// = the clump's sphere, or for a capsule 0 = +x end, 1 = −x end (each collided as a
/// sphere) and 2, 3, … = the minima of the wall's distance inside its core segment (across
/// a rim or a hole's edge, on the outside of a cone), in ascending order along it; `out` is
/// cleared first. Returns the count (0 for an ellipsoid).
int collide_thin_wall(const BodyStore& bodies, std::size_t i, const ThinWallAt& wall, double envelope,
                      std::vector<ShapeContact>& out);

/// Contacts of the candidate `pairs` (selected by the broad phase with the bounding
/// radii and the envelope; for two spheres every pair is a contact, for other shapes those
/// with Φ ≤ (reach_a − r_a) + (reach_b − r_b)) and of every body i with every wall,
/// each wall at the pose `states[w]` (core/walls.hpp: wall_states), when
/// Φ ≤ (reach_i − r_i) + wall_margin. A wall contact's velocity_a is the wall's velocity at
/// the contact point, states[w].velocity_at(p).
/// `reach` is the per-body bounding radius plus envelope share given to the broad phase.
/// Cylinder and mesh walls give their contacts after the plane and box faces of the body.
/// Cylinder feature = clump sphere or capsule end << kSubFeatureShift (0 for a sphere or an
/// ellipsoid); mesh feature = triangle index (collision/mesh.hpp), | sphere <<
/// kMeshSubFeatureShift for a clump, | sub-feature << kMeshSubFeatureShift for a capsule
/// (collide_capsule_mesh).
/// Order: body–body in pair order (then sub-feature), then body–wall by (body, wall, face,
/// sub-feature), then body–cylinder by (body, wall, sphere), then body–cone and body–orifice
/// by (body, wall, sphere, feature), then body–mesh by (body, wall, sphere, triangle);
/// independent of thread count.
void narrow_phase(const BodyStore& bodies, const std::vector<Wall>& walls,
                  const std::vector<WallState>& states, const PairList& pairs,
                  const std::vector<double>& reach, double wall_margin, ContactList& out,
                  NarrowPhaseScratch& scratch);

}  // namespace talus
