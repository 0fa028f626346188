#pragma once
/// Small math shared by every stage: vector and quaternion types, the contact basis.
/// Quaternions are Hamilton, body -> world; Talus writes them scalar first (w, x, y, z).
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cmath>

namespace talus {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Quat = Eigen::Quaterniond;

/// Orthonormal tangents (u, w) completing a unit normal n to a right-handed basis (n, u, w).
/// Duff et al. 2017, "Building an orthonormal basis, revisited": no singular direction,
/// deterministic, and exact for the vertical normals that dominate granular contacts.
inline void orthonormal_basis(const Vec3& n, Vec3& u, Vec3& w) {
    const double s = std::copysign(1.0, n.z());
    const double a = -1.0 / (s + n.z());
    const double b = n.x() * n.y() * a;
    u = Vec3(1.0 + s * n.x() * n.x() * a, s * b, -s * n.x());
    w = Vec3(b, s + n.y() * n.y() * a, -n.y());
}

/// The first vector u of orthonormal_basis(n), alone (w's arithmetic, unused, is dropped
/// when inlined).
inline Vec3 first_tangent(const Vec3& n) {
    Vec3 u, w;
    orthonormal_basis(n, u, w);
    return u;
}

/// eps ⊗ exp(h ω̄ / 2) for a body-frame angular velocity ω̄, normalised (docs/design.md §4).
/// Uses the series form of sin(θ/2)/θ for small θ = h‖ω̄‖.
inline Quat integrate_orientation(const Quat& q, const Vec3& omega_body, double h) {
    const double wn = omega_body.norm();
    const double theta = h * wn;
    double c, k;  // cos(θ/2) and sin(θ/2)/‖ω̄‖ so that the vector part is k ω̄
    if (theta < 1e-4) {
        const double t2 = theta * theta;
        c = 1.0 - t2 / 8.0;
        k = 0.5 * h * (1.0 - t2 / 24.0);
    } else {
        c = std::cos(0.5 * theta);
        k = std::sin(0.5 * theta) / wn;
    }
    const Quat dq(c, k * omega_body.x(), k * omega_body.y(), k * omega_body.z());
    Quat r = q * dq;
    r.normalize();
    return r;
}

}  // namespace talus
