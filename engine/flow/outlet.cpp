// Outlets: bodies whose centre enters the region leave the world between steps. The body
// store is compacted in place, keeping the survivors' order, so the dense indices of the
// next step are a deterministic function of the state (no swap-with-last, whose result
// would depend on which bodies left first). Everything the World keys by dense index is
// rebuilt at the next step's start (margins, pairs, contacts, joint indices); the warm-start
// cache is keyed by stable ids, which are never reused, so it needs nothing.
#include "engine/flow/flow.hpp"

namespace talus {

std::size_t drain(std::vector<Outlet>& outlets, BodyStore& bodies, std::vector<int32_t>* owner, int rank) {
    if (outlets.empty()) return 0;
    std::vector<uint8_t> gone(bodies.size(), 0);
    std::size_t removed = 0, held = 0;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        if (bodies.inv_mass[i] == 0.0) continue;
        for (Outlet& o : outlets)
            if (o.contains(bodies.position[i])) {
                gone[i] = 1;
                ++held;
                if (owner && (*owner)[i] != rank) break;  // another rank's: it counts it
                o.removed.count += 1;
                o.removed.mass += bodies.mass(i);
                ++removed;
                break;
            }
    }
    if (held > 0) {
        bodies.erase_marked(gone);
        if (owner) talus::erase_marked(gone, *owner);
    }
    return removed;
}

}  // namespace talus
