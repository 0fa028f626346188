#pragma once
/// Per-body lists of contacts, to rebuild ν = ν* + M⁻¹ D γ body by body: in parallel, with
/// each body's sum taken in contact order, so the result does not depend on the threads.
#include <cstdint>
#include <vector>

#include "engine/core/body_store.hpp"
#include "solvers/assemble.hpp"

namespace talus {

struct BodyContacts {
    std::vector<uint32_t> start;  ///< per body: first entry; size bodies + 1
    std::vector<uint32_t> entry;  ///< 2 × contact + side (0: A, 1: B), in contact order

    /// Counting sort of the batch's contact ends by body (serial, deterministic).
    void build(const AssembledBatch& c, std::size_t body_count);
};

/// out_v/out_w = base_v/base_w + M⁻¹ D γ for every body (γ: one impulse per contact).
/// Pass zero bases to get M⁻¹ D γ alone.
void gather_velocities(const AssembledBatch& c, const BodyStore& bodies, const BodyContacts& bc,
                       const std::vector<Vec3>& gamma, const std::vector<Vec3>* base_v,
                       const std::vector<Vec3>* base_w, std::vector<Vec3>& out_v,
                       std::vector<Vec3>& out_w);

}  // namespace talus
