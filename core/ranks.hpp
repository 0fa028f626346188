#pragma once
/// The processes of one run: a single process (the default, and every library caller), or
/// the ranks of an MPI job (`mpirun -np P talus run`, docs/mpi.md). The libraries see only
/// this interface; the MPI implementation lives with the talus command (tools/mpi_ranks.cpp),
/// so that nothing below it links MPI.
#include <cstdint>
#include <span>
#include <string>

namespace talus {

class Ranks {
public:
    virtual ~Ranks() = default;
    int rank() const { return rank_; }
    int size() const { return size_; }
    bool root() const { return rank_ == 0; }

    /// Every rank's `values`, element by element, replaced by their largest over the ranks
    /// (a collective: every rank calls it with the same length).
    virtual void max(std::span<int64_t> values) {}
    /// `bytes` of rank `from` on every rank (a collective).
    virtual void broadcast(std::string& bytes, int from) {}

protected:
    int rank_ = 0, size_ = 1;
};

}  // namespace talus
