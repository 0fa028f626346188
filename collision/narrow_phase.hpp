#pragma once
/// Narrow phase: geometric contacts (point, normal, gap) for sphere–sphere pairs and
/// sphere–wall pairs with gap Φ ≤ δ (DESIGN §3, §7).
#include <vector>

#include "engine/core/body_store.hpp"
#include "engine/core/contacts.hpp"
#include "engine/core/walls.hpp"

namespace talus {

/// Reusable buffers of the narrow phase.
struct NarrowPhaseScratch {
    std::vector<uint32_t> wall_count;  ///< per body: wall contacts, then their prefix sum
};

/// Contacts of the candidate `pairs` (every pair becomes a contact: the broad phase already
/// selected them with the envelope) and of every body i with every wall face, at time t
/// (walls at their position at t), when Φ ≤ (reach_i − r_i) + wall_margin. `reach` is the
/// per-body radius plus envelope share given to the broad phase. Order: sphere–sphere in
/// pair order, then sphere–wall by (body, wall, face); independent of thread count.
void narrow_phase(const BodyStore& bodies, const std::vector<Wall>& walls, const PairList& pairs,
                  const std::vector<double>& reach, double wall_margin, double t,
                  ContactList& out, NarrowPhaseScratch& scratch);

}  // namespace talus
