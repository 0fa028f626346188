#pragma once
/// Prescribed (kinematic) motion of a wall: plain data, and the pose and velocity field it
/// gives at any time (docs/design.md §2, §3: infinite mass, velocity enters the contacts only).
///
/// A wall's geometry is given at its reference pose; at time t it is the rigid image
///     x(t) = R(t) (x_ref − c) + c + d(t)
/// (c: the centre of rotation, fixed; d: translation), and a wall point moves with
///     v(x, t) = v_lin(t) + ω(t) × (x − (c + d(t))).
/// Every kind starts at `start`: with τ = max(0, t − start) the wall is at its τ = 0 pose
/// (at rest) before the start. Kinds:
///   None         d = 0, R = I.
///   Translation  d = V τ.
///   Rotation     R = rotation by Ω τ about the unit axis through `centre`, d = 0.
///   Table        d(τ) piecewise linear through (0, 0), (τ_1, d_1), …, (τ_n, d_n), and
///                d_n after the last entry (a piston, a gate opening at a given time).
///   Sine         d = A sin(2π f τ + φ) ê (a vibrating plate).
/// Over a step [t0, t0 + h] a contact uses the wall's mean motion (docs/design.md §3: "its
/// prescribed motion between t and t + h"): v_lin = (d(t0 + h) − d(t0))/h and
/// ω = (θ(t0 + h) − θ(t0))/h ê_axis, so a body that stays in contact ends the step exactly on
/// the wall's surface at t0 + h, for every kind (for a rotation about a fixed axis the secant
/// angle is exact; a point's chord differs from ω × r h by O(Ω² h² r), round-off for a drum or
/// turntable whose surface is invariant under its rotation).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "math.hpp"
#include "core/enum_names.hpp"

namespace talus {

enum class MotionKind : uint8_t { None, Translation, Rotation, Table, Sine };
/// A motion table's `type` (None is the absence of a motion, not a name).
template <>
struct EnumNames<MotionKind> {
    static constexpr NamedValue<MotionKind> table[] = {{MotionKind::Translation, "translation"},
                                                       {MotionKind::Rotation, "rotation"},
                                                       {MotionKind::Table, "table"},
                                                       {MotionKind::Sine, "sine"}};
};

struct WallMotion {
    MotionKind kind = MotionKind::None;
    double start = 0.0;                ///< the motion begins at this time; at rest before [s]
    // Translation
    Vec3 velocity = Vec3::Zero();      ///< constant translation velocity [m/s]
    // Rotation
    Vec3 centre = Vec3::Zero();        ///< a point on the rotation axis [m]
    Vec3 axis = Vec3::UnitZ();         ///< unit axis, right-handed (ω = omega · axis)
    double omega = 0.0;                ///< angular speed [rad/s]
    // Table: displacements d_k at times τ_k after `start`, τ strictly increasing, τ_1 ≥ 0
    std::vector<double> times;         ///< [s]
    std::vector<Vec3> displacements;   ///< [m]
    // Sine: d = amplitude · sin(2π frequency τ + phase) · direction
    Vec3 direction = Vec3::UnitZ();    ///< unit
    double amplitude = 0.0;            ///< [m]
    double frequency = 0.0;            ///< [Hz]
    double phase = 0.0;                ///< [rad]

    bool moving() const { return kind != MotionKind::None; }

    /// Translation d at time t [m].
    Vec3 displacement(double t) const {
        const double tau = std::max(0.0, t - start);
        switch (kind) {
            case MotionKind::None:
            case MotionKind::Rotation: return Vec3::Zero();
            case MotionKind::Translation: return velocity * tau;
            case MotionKind::Table: return table_at(tau);
            case MotionKind::Sine:
                return amplitude * std::sin(2.0 * 3.14159265358979323846 * frequency * tau + phase) *
                       direction;
        }
        return Vec3::Zero();
    }
    /// Rotation angle θ about `axis` at time t [rad] (0 unless kind == Rotation).
    double angle(double t) const {
        return kind == MotionKind::Rotation ? omega * std::max(0.0, t - start) : 0.0;
    }

private:
    Vec3 table_at(double tau) const {
        if (times.empty() || tau <= 0.0) return Vec3::Zero();
        if (tau >= times.back()) return displacements.back();
        // First entry with time > τ; the segment before it (the first from (0, 0)).
        const std::size_t k = std::size_t(std::upper_bound(times.begin(), times.end(), tau) - times.begin());
        const double t0 = k == 0 ? 0.0 : times[k - 1];
        const Vec3 d0 = k == 0 ? Vec3(Vec3::Zero()) : displacements[k - 1];
        const double s = (tau - t0) / (times[k] - t0);
        return d0 + s * (displacements[k] - d0);
    }
};

/// A wall's pose at one time, and its mean velocity field over the step that follows.
struct WallState {
    bool rotates = false;          ///< R ≠ I possible (a Rotation motion)
    Mat3 rotation = Mat3::Identity();
    Vec3 centre = Vec3::Zero();    ///< c, the fixed point of R [m]
    Vec3 shift = Vec3::Zero();     ///< d [m]
    Vec3 velocity = Vec3::Zero();  ///< v_lin over the step [m/s]
    Vec3 omega = Vec3::Zero();     ///< ω over the step, world [rad/s]

    /// Reference-pose point → world point at this time.
    Vec3 to_world(const Vec3& x) const { return rotates ? Vec3(rotation * (x - centre) + centre + shift) : Vec3(x + shift); }
    /// Reference-pose direction → world direction.
    Vec3 dir_to_world(const Vec3& n) const { return rotates ? Vec3(rotation * n) : n; }
    /// World point → reference-pose point.
    Vec3 to_reference(const Vec3& x) const {
        return rotates ? Vec3(rotation.transpose() * (x - shift - centre) + centre) : Vec3(x - shift);
    }
    /// Velocity of the wall material at world point p [m/s].
    Vec3 velocity_at(const Vec3& p) const {
        return rotates ? Vec3(velocity + omega.cross(p - (centre + shift))) : velocity;
    }
    /// Upper bound of the wall's speed at points within `reach` of world point x [m/s].
    double speed_near(const Vec3& x, double reach) const {
        return velocity.norm() + (rotates ? omega.norm() * ((x - centre - shift).norm() + reach) : 0.0);
    }
};

/// The pose of `m` at t_pose, with the mean velocity over [t0, t0 + h] (h > 0).
inline WallState wall_state(const WallMotion& m, double t_pose, double t0, double h) {
    WallState s;
    // Constant rates are used as given once the motion runs (no round-off from the secant).
    const bool running = t0 >= m.start;
    s.shift = m.displacement(t_pose);
    s.velocity = m.kind == MotionKind::Translation && running
                     ? m.velocity
                     : Vec3((m.displacement(t0 + h) - m.displacement(t0)) / h);
    if (m.kind == MotionKind::Rotation) {
        s.rotates = true;
        s.centre = m.centre;
        s.rotation = Eigen::AngleAxisd(m.angle(t_pose), m.axis).toRotationMatrix();
        s.omega = (running ? m.omega : (m.angle(t0 + h) - m.angle(t0)) / h) * m.axis;
    }
    return s;
}

}  // namespace talus
