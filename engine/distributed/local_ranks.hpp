#pragma once
/// P ranks inside one process, one thread each: the collectives of core/ranks.hpp over
/// shared memory. The distributed algorithms run here exactly as under mpirun (each rank
/// holds only its own part and learns the rest from messages), so tests can prove them
/// against the one-process run without a launcher, and under the sanitizers.
#include <functional>
#include <stdexcept>

#include "core/ranks.hpp"

namespace talus {

/// Another rank of run_local_ranks failed: this one's collective cannot complete.
struct LocalRankFailed : std::runtime_error {
    LocalRankFailed() : std::runtime_error("another local rank failed") {}
};

/// Runs body(ranks) on `count` ranks, each in its own thread, and returns when all have
/// returned. An exception on a rank ends the others at their next collective
/// (LocalRankFailed) and is rethrown here (the first rank's, by rank).
void run_local_ranks(int count, const std::function<void(Ranks&)>& body);

}  // namespace talus
