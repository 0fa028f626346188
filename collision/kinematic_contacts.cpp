// Kinematic bodies in the contact list (collision/kinematic_contacts.hpp). One serial pass
// over the contacts, order kept: the result does not depend on the thread count. Runs only
// when the store holds kinematic bodies.
#include "collision/kinematic_contacts.hpp"

#include <algorithm>
#include <vector>

namespace talus {

namespace {
bool any_kinematic(const BodyStore& bodies) {
    return !bodies.motions.empty() &&
           std::any_of(bodies.motion.begin(), bodies.motion.end(), [](int32_t m) { return m != kDynamic; });
}
}  // namespace

void forget_kinematic_unsupported(const BodyStore& bodies, NarrowPhaseScratch& scratch) {
    if (!any_kinematic(bodies)) return;
    const auto kinematic = [&](uint32_t i) { return bodies.kinematic(i); };
    std::erase_if(scratch.unsupported_mesh, kinematic);
    std::erase_if(scratch.unsupported_thin, kinematic);
}

void route_kinematic_contacts(const BodyStore& bodies, ContactList& c) {
    if (!any_kinematic(bodies)) return;
    if (c.velocity_a.empty()) c.velocity_a.assign(c.size(), Vec3::Zero());  // (no wall moves)
    const auto kinematic = [&](int32_t i) { return i != kNoBody && bodies.kinematic(std::size_t(i)); };
    std::size_t k = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
        const int32_t a = c.a[i], b = c.b[i];
        const bool ka = kinematic(a), kb = kinematic(b);
        if (kb && (a == kNoBody || ka)) continue;  // wall–kinematic or kinematic–kinematic
        // Move contact i to slot k, then fix it up.
        c.for_each_filled_array([i, k](auto& v) { v[k] = v[i]; });
        if (ka || kb) {
            const std::size_t kin = std::size_t(ka ? a : b), dyn = std::size_t(ka ? b : a);
            if (kb) {  // K was B: swap the sides and turn the normal round
                c.normal[k] = -c.normal[k];
                if (bodies.shape[kin] == Shape::Clump && bodies.shape[dyn] == Shape::Clump) {
                    const uint32_t sub = c.feature[k] >> kSubFeatureShift;
                    const uint32_t swapped = (sub & 0xffu) << 8 | (sub >> 8);
                    c.feature[k] = (c.feature[k] & ((1u << kSubFeatureShift) - 1)) |
                                   swapped << kSubFeatureShift;
                }
            }
            c.a[k] = kNoBody;
            c.b[k] = int32_t(dyn);
            c.key_a[k] = bodies.id[kin];
            c.key_b[k] = bodies.id[dyn];
            const Vec3 omega = bodies.orientation[kin] * bodies.angular_velocity[kin];
            c.velocity_a[k] = bodies.velocity[kin] + omega.cross(c.point[k] - bodies.position[kin]);
            c.material_a[k] = bodies.material[kin];
            if (!c.shift_b.empty()) c.shift_b[k] = Vec3::Zero();
        }
        ++k;
    }
    c.resize(k, !c.shift_b.empty());
}

}  // namespace talus
