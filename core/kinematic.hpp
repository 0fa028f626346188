#pragma once
/// Kinematic bodies (docs/design.md §2, §3): bodies whose pose is prescribed by a WallMotion
/// (BodyStore::motions). They have infinite mass and inertia, so neither gravity nor contact
/// impulses change their velocity; their velocity enters the contacts with dynamic bodies
/// like a moving wall's, and the pose is evaluated from the motion rather than integrated,
/// so it does not drift:
///     x(t) = R(t) (x0 − c) + c + d(t),   q(t) = q_R(t) ⊗ q0.
/// Over a step [t, t + h] the body moves with the motion's mean velocity field
/// (core/wall_motion.hpp): v = v_lin + ω × (x(t) − c − d(t)) at its centre of mass,
/// ω over the step (stored in the body frame, ω̄ = q(t)⁻¹ ω), so that any point p of the body
/// moves with WallState::velocity_at(p), exactly as a wall point does.
#include <cmath>

#include "body_store.hpp"
#include "wall_motion.hpp"

namespace talus {

/// Sets every kinematic body of `bodies` to its pose at time t [s]; with `velocities`, also
/// sets its velocities to those of the motion's mean velocity field over [t0, t0 + h]
/// (h > 0 [s]) at that pose. Dynamic bodies are untouched.
inline void place_kinematic(BodyStore& bodies, double t, double t0, double h, bool velocities) {
    if (bodies.motions.empty()) return;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        if (!bodies.kinematic(i)) continue;
        const BodyMotion& bm = bodies.motions[std::size_t(bodies.motion[i])];
        const WallState s = wall_state(bm.motion, t, t0, h);
        bodies.position[i] = s.to_world(bm.x0);
        if (s.rotates) {
            const Quat qr(Eigen::AngleAxisd(bm.motion.angle(t), bm.motion.axis));
            bodies.orientation[i] = (qr * bm.q0).normalized();
        } else {
            bodies.orientation[i] = bm.q0;
        }
        if (!velocities) continue;
        bodies.velocity[i] = s.velocity_at(bodies.position[i]);
        bodies.angular_velocity[i] = bodies.orientation[i].conjugate() * s.omega;
    }
}

}  // namespace talus
