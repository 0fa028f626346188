#pragma once
/// The processes of one run: a single process (the default, and every library caller), or
/// the ranks of an MPI job (`mpirun -np P talus run`, docs/mpi.md). The libraries see only
/// this interface; the MPI implementation lives with the talus command (tools/mpi_ranks.cpp),
/// so that nothing below it links MPI.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace talus {

/// Another rank failed: this one stops too (between two steps, agree_between_steps in
/// tools/mpi_ranks.hpp; after rank 0 failed to write, io/runner.hpp), and that rank reports.
struct PeerFailed : std::runtime_error {
    PeerFailed() : std::runtime_error("another rank of the run failed") {}
};

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
    /// A personal exchange (a collective): `outbox[q]` goes to rank q (size() entries, this
    /// rank's own included); on return `inbox[q]` holds what rank q sent this one.
    virtual void exchange(const std::vector<std::string>& outbox, std::vector<std::string>& inbox) {
        inbox = outbox;
    }
    /// Every rank's `mine`, in rank order, on every rank (a collective).
    virtual void all_gather(const std::string& mine, std::vector<std::string>& all) { all.assign(1, mine); }
    /// The job's MPI communicator (an `MPI_Comm*`), for a library that speaks MPI itself
    /// (the trajectory writer's parallel HDF5); null when the ranks are not MPI's.
    virtual const void* mpi_communicator() const { return nullptr; }

    /// The largest and the smallest of every rank's x (collectives): std::max and std::min
    /// over the values in rank order, as one process's loop over them.
    double max_of(double x) {
        fold(std::span<double>(&x, 1), kLargest);
        return x;
    }
    double min_of(double x) {
        fold(std::span<double>(&x, 1), kSmallest);
        return x;
    }
    /// The same for several values at once, element by element, in one collective.
    void max_of(std::span<double> xs) { fold(xs, kLargest); }
    void min_of(std::span<double> xs) { fold(xs, kSmallest); }

    /// The sum of every rank's x (a collective), added in rank order.
    int64_t sum_of(int64_t x) {
        fold(std::span<int64_t>(&x, 1), [](int64_t s, int64_t v) { return s + v; });
        return x;
    }

    /// Whether `x` holds on any rank (a collective).
    bool any(bool x) {
        std::vector<std::string> all;
        all_gather(std::string(1, x ? '\1' : '\0'), all);
        for (const std::string& s : all)
            if (!s.empty() && s[0] != 0) return true;
        return false;
    }

protected:
    int rank_ = 0, size_ = 1;

private:
    static constexpr auto kLargest = [](double x, double v) { return std::max(x, v); };
    static constexpr auto kSmallest = [](double x, double v) { return std::min(x, v); };

    /// xs[k] ← combine(…combine(rank 0's xs[k], rank 1's xs[k])…, the last rank's xs[k]) on
    /// every rank: one all-gather, then the same loop in the same order everywhere.
    template <class T, class Combine>
    void fold(std::span<T> xs, Combine combine) {
        std::string mine(xs.size_bytes(), '\0');
        if (!xs.empty()) std::memcpy(mine.data(), xs.data(), xs.size_bytes());
        std::vector<std::string> all;
        all_gather(mine, all);
        for (std::size_t k = 0; k < xs.size(); ++k)
            for (std::size_t q = 0; q < all.size(); ++q) {
                T v;
                std::memcpy(&v, all[q].data() + k * sizeof v, sizeof v);
                xs[k] = q == 0 ? v : combine(xs[k], v);
            }
    }
};

}  // namespace talus
