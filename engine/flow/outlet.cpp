// Outlets: bodies whose centre enters the region leave the world between steps. The body
// store is compacted in place, keeping the survivors' order, so the dense indices of the
// next step are a deterministic function of the state (no swap-with-last, whose result
// would depend on which bodies left first). Everything the World keys by dense index is
// rebuilt at the next step's start (margins, pairs, contacts, joint indices); the warm-start
// cache is keyed by stable ids, which are never reused, so it needs nothing.
#include "engine/flow/flow.hpp"

namespace talus {

namespace {

// Removes the held bodies in an outlet; sums[2k], sums[2k + 1] receive the count and mass
// of those `owner` names `rank`'s (every body without owners).
std::size_t remove_in_outlets(std::vector<Outlet>& outlets, BodyStore& bodies, std::vector<int32_t>* owner,
                              int rank, std::vector<ExactSum>& sums) {
    sums.assign(2 * outlets.size(), ExactSum{});
    if (outlets.empty()) return 0;
    std::vector<uint8_t> gone(bodies.size(), 0);
    std::size_t removed = 0, held = 0;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        if (bodies.inv_mass[i] == 0.0) continue;
        for (std::size_t k = 0; k < outlets.size(); ++k)
            if (outlets[k].contains(bodies.position[i])) {
                gone[i] = 1;
                ++held;
                if (owner && (*owner)[i] != rank) break;  // another rank's: it counts it
                sums[2 * k].add(1.0);
                sums[2 * k + 1].add(bodies.mass(i));
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

}  // namespace

std::size_t drain(std::vector<Outlet>& outlets, BodyStore& bodies) {
    std::vector<ExactSum> sums;
    const std::size_t removed = remove_in_outlets(outlets, bodies, nullptr, 0, sums);
    add_drained(outlets, sums);
    return removed;
}

std::vector<ExactSum> drain_on_rank(std::vector<Outlet>& outlets, BodyStore& bodies, std::vector<int32_t>& owner,
                                    int rank) {
    std::vector<ExactSum> sums;
    remove_in_outlets(outlets, bodies, &owner, rank, sums);
    return sums;
}

void add_drained(std::vector<Outlet>& outlets, std::span<const ExactSum> sums) {
    for (std::size_t k = 0; k < outlets.size() && 2 * k + 1 < sums.size(); ++k) {
        outlets[k].removed.count += uint64_t(sums[2 * k].value());
        // an outlet nothing left by keeps its tally's bits (+0.0 would turn −0 into +0)
        const double mass = sums[2 * k + 1].value();
        if (mass != 0.0) outlets[k].removed.mass += mass;
    }
}

}  // namespace talus
