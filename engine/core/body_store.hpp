#pragma once
/// BodyStore: the state of every dynamic body, as structure of arrays (DESIGN §2).
/// Indexed by a dense body index; `id` is the stable user-visible id.
#include <cstdint>
#include <vector>

#include "math.hpp"

namespace talus {

enum class Shape : uint8_t { Sphere };

/// Reorder v so that its new element k is the old element order[k] (order: a permutation).
template <class T>
void apply_order(const std::vector<uint32_t>& order, std::vector<T>& v) {
    std::vector<T> out(v.size());
    for (std::size_t k = 0; k < order.size(); ++k) out[k] = v[order[k]];
    v.swap(out);
}

struct BodyStore {
    std::vector<uint64_t> id;               ///< stable id, survives renumbering
    std::vector<Vec3> position;             ///< centre of mass, world [m]
    std::vector<Quat> orientation;          ///< body -> world, unit
    std::vector<Vec3> velocity;             ///< linear velocity, world [m/s]
    std::vector<Vec3> angular_velocity;     ///< ω̄, body frame [rad/s]
    std::vector<double> radius;             ///< bounding/sphere radius [m]
    std::vector<double> inv_mass;           ///< 1/m [1/kg]
    std::vector<Vec3> inv_inertia;          ///< J̄⁻¹, principal, body frame [1/(kg m²)]
    std::vector<uint32_t> material;         ///< index into the material table
    std::vector<Shape> shape;

    std::size_t size() const { return id.size(); }

    /// Append a dynamic sphere of radius r and density rho; returns its dense index.
    std::size_t add_sphere(uint64_t stable_id, const Vec3& x, double r, double rho, uint32_t mat,
                           const Vec3& v = Vec3::Zero(), const Vec3& omega_body = Vec3::Zero(),
                           const Quat& q = Quat::Identity()) {
        const double pi = 3.14159265358979323846;
        const double m = rho * 4.0 / 3.0 * pi * r * r * r;
        const double j = 0.4 * m * r * r;
        id.push_back(stable_id);
        position.push_back(x);
        orientation.push_back(q);
        velocity.push_back(v);
        angular_velocity.push_back(omega_body);
        radius.push_back(r);
        inv_mass.push_back(1.0 / m);
        inv_inertia.push_back(Vec3::Constant(1.0 / j));
        material.push_back(mat);
        shape.push_back(Shape::Sphere);
        return id.size() - 1;
    }

    double mass(std::size_t i) const { return 1.0 / inv_mass[i]; }

    /// Renumber: the body at new index k is the one at old index order[k]. `order` must be
    /// a permutation of 0 … size−1. Stable ids travel with their bodies.
    void permute(const std::vector<uint32_t>& order) {
        apply_order(order, id); apply_order(order, position); apply_order(order, orientation);
        apply_order(order, velocity); apply_order(order, angular_velocity);
        apply_order(order, radius); apply_order(order, inv_mass); apply_order(order, inv_inertia);
        apply_order(order, material); apply_order(order, shape);
    }

};

}  // namespace talus
