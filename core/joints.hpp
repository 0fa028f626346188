#pragma once
/// Joints: bilateral constraints g(q, t) = 0 between two bodies, or a body and the world
/// (docs/design.md §4). Plain data: bodies by stable id (World renumbers the dense indices), anchor
/// points and axes in each body's frame. solvers/bilateral.cpp turns them into rows.
#include <cstdint>
#include <limits>

#include "body_store.hpp"
#include "math.hpp"
#include "core/enum_names.hpp"

namespace talus {

/// Joint kinds and the rows each one adds (one row per scalar constraint):
enum class JointType : uint8_t {
    Spherical,  ///< 3 rows: the anchors coincide, p_B − p_A = 0
    Distance,   ///< 1 row: ‖p_B − p_A‖ = length
    Revolute,   ///< 5 rows: spherical + the axes stay aligned (2 rows); +1 with a motor
    Prismatic,  ///< 5 rows: relative orientation fixed (3) + no sliding ⊥ the axis (2)
    Fixed       ///< 6 rows: relative orientation fixed (3) + spherical (3)
};

template <>
struct EnumNames<JointType> {
    static constexpr NamedValue<JointType> table[] = {{JointType::Spherical, "spherical"},
                                                      {JointType::Distance, "distance"},
                                                      {JointType::Revolute, "revolute"},
                                                      {JointType::Prismatic, "prismatic"},
                                                      {JointType::Fixed, "fixed"}};
};

inline const char* joint_name(JointType t) { return name_of(t).data(); }

/// Stable id standing for the world (an immovable frame equal to the world frame).
inline constexpr uint64_t kWorldBody = std::numeric_limits<uint64_t>::max();

struct Joint {
    JointType type = JointType::Spherical;
    uint64_t body_a = 0;            ///< stable id of A (kWorldBody: the world)
    uint64_t body_b = kWorldBody;   ///< stable id of B (kWorldBody: the world)
    Vec3 anchor_a = Vec3::Zero();   ///< anchor on A, A's body frame (world frame for the world) [m]
    Vec3 anchor_b = Vec3::Zero();   ///< anchor on B, B's body frame (world frame for the world) [m]
    Vec3 axis_a = Vec3::UnitZ();    ///< unit joint axis in A's frame (revolute, prismatic) [-]
    Vec3 axis_b = Vec3::UnitZ();    ///< the same axis in B's frame (revolute) [-]
    Quat rest = Quat::Identity();   ///< q_A⁻¹ q_B at creation (prismatic, fixed) [-]
    double length = 0.0;            ///< distance joint: ‖p_B − p_A‖ [m]
    bool motor = false;             ///< revolute: drive ω_A − ω_B along the axis at motor_speed
    double motor_speed = 0.0;       ///< target (ω_A − ω_B)·axis, A spinning relative to B [rad/s]

    /// Rows this joint adds to a step's bilateral batch.
    int rows() const {
        switch (type) {
            case JointType::Spherical: return 3;
            case JointType::Distance: return 1;
            case JointType::Revolute: return motor ? 6 : 5;
            case JointType::Prismatic: return 5;
            case JointType::Fixed: return 6;
        }
        return 0;
    }
};

/// A joint of `type` between dense bodies ia and ib of `bodies` (−1: the world) as they are
/// now: `anchor_world` and `axis_world` (unit) become body-frame data for both sides; the
/// same world point is the anchor on both bodies. A distance joint instead links
/// `anchor_world` on A to `anchor_b_world` on B at their current distance.
inline Joint make_joint(JointType type, const BodyStore& bodies, long ia, long ib,
                        const Vec3& anchor_world, const Vec3& axis_world = Vec3::UnitZ(),
                        const Vec3& anchor_b_world = Vec3::Zero()) {
    Joint j;
    j.type = type;
    const Vec3 axis = axis_world.normalized();
    const Vec3 pb = type == JointType::Distance ? anchor_b_world : anchor_world;
    Quat qa = Quat::Identity(), qb = Quat::Identity();
    if (ia >= 0) {
        j.body_a = bodies.id[std::size_t(ia)];
        qa = bodies.orientation[std::size_t(ia)];
        j.anchor_a = qa.conjugate() * (anchor_world - bodies.position[std::size_t(ia)]);
    } else {
        j.body_a = kWorldBody;
        j.anchor_a = anchor_world;
    }
    if (ib >= 0) {
        j.body_b = bodies.id[std::size_t(ib)];
        qb = bodies.orientation[std::size_t(ib)];
        j.anchor_b = qb.conjugate() * (pb - bodies.position[std::size_t(ib)]);
    } else {
        j.body_b = kWorldBody;
        j.anchor_b = pb;
    }
    j.axis_a = qa.conjugate() * axis;
    j.axis_b = qb.conjugate() * axis;
    j.rest = qa.conjugate() * qb;
    j.length = (pb - anchor_world).norm();
    return j;
}

}  // namespace talus
