// The talus command's ranks (tools/mpi_ranks.hpp): MPI when the command was started by an
// MPI launcher and built with TALUS_MPI; a single process otherwise.
#include "tools/mpi_ranks.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef TALUS_MPI
// the C interface only (Open MPI's and MPICH's headers otherwise declare their removed C++
// bindings, which live in another library)
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace talus {
namespace {

/// What a launcher tells its processes: the job's size and this process's rank (Open MPI's
/// variables, or the PMI ones of MPICH's and Slurm's launchers); size 0 when not launched.
int launched_value(const char* const* names) {
    for (const char* const* n = names; *n; ++n)
        if (const char* v = std::getenv(*n); v && *v) return std::atoi(v);
    return -1;
}
int launched_size() {
    static const char* const names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", nullptr};
    return std::max(0, launched_value(names));
}
#ifndef TALUS_MPI
int launched_rank() {  // without MPI, only to let the first process speak
    static const char* const names[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", nullptr};
    return std::max(0, launched_value(names));
}
#endif

/// The descriptor every rank but 0 writes its stderr into (-1: none), read back when that
/// rank's failure is the one reported.
int g_held_stderr = -1;

/// From here on, this process's stderr goes into memory instead of the terminal.
void hold_back_stderr() {
    std::fflush(stderr);
    const int fd = memfd_create("talus-rank-stderr", MFD_CLOEXEC);
    if (fd < 0) return;  // no memfd: the rank's messages are shown as they come
    if (dup2(fd, STDERR_FILENO) < 0) {
        close(fd);
        return;
    }
    g_held_stderr = fd;
}

/// What this process wrote to stderr since hold_back_stderr (its last 64 kB).
std::string held_stderr() {
    std::fflush(stderr);
    if (g_held_stderr < 0) return {};
    const off_t size = lseek(g_held_stderr, 0, SEEK_END);
    const off_t keep = std::min<off_t>(size, 64 * 1024);
    std::string text(std::size_t(std::max<off_t>(keep, 0)), '\0');
    if (keep <= 0 || pread(g_held_stderr, text.data(), text.size(), size - keep) != keep) return {};
    return text;
}

#ifdef TALUS_MPI
std::size_t checked_count(std::size_t n) {
    if (n > std::size_t(INT_MAX)) throw std::length_error("an MPI exchange of more than 2^31 - 1 bytes");
    return n;
}

class MpiRanks final : public Ranks {
public:
    MpiRanks(int& argc, char**& argv) {
        int provided = 0;
        // only the main thread calls MPI (the trajectory writer's thread never does)
        MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
    }
    void max(std::span<int64_t> values) override {
        MPI_Allreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_INT64_T, MPI_MAX,
                      MPI_COMM_WORLD);
    }
    void broadcast(std::string& bytes, int from) override {
        int64_t n = int64_t(bytes.size());
        MPI_Bcast(&n, 1, MPI_INT64_T, from, MPI_COMM_WORLD);
        bytes.resize(std::size_t(n));
        if (n > 0) MPI_Bcast(bytes.data(), int(n), MPI_CHAR, from, MPI_COMM_WORLD);
    }
    // (byte counts past 2³¹ − 1 in one call are refused, not truncated: a rank's share of
    // a solve's exchange is megabytes)
    void exchange(const std::vector<std::string>& outbox, std::vector<std::string>& inbox) override {
        const std::size_t p = std::size_t(size_);
        std::vector<int> send_n(p), recv_n(p), send_at(p), recv_at(p);
        std::string sent;
        for (std::size_t q = 0; q < p; ++q) {
            send_at[q] = int(sent.size());
            send_n[q] = int(checked_count(outbox[q].size()));
            sent += outbox[q];
            checked_count(sent.size());
        }
        MPI_Alltoall(send_n.data(), 1, MPI_INT, recv_n.data(), 1, MPI_INT, MPI_COMM_WORLD);
        std::size_t total = 0;
        for (std::size_t q = 0; q < p; ++q) {
            recv_at[q] = int(checked_count(total));
            total += std::size_t(recv_n[q]);
        }
        std::string got(checked_count(total), '\0');
        MPI_Alltoallv(sent.data(), send_n.data(), send_at.data(), MPI_CHAR, got.data(), recv_n.data(),
                      recv_at.data(), MPI_CHAR, MPI_COMM_WORLD);
        inbox.resize(p);
        for (std::size_t q = 0; q < p; ++q) inbox[q].assign(got, std::size_t(recv_at[q]), std::size_t(recv_n[q]));
    }
    void all_gather(const std::string& mine, std::vector<std::string>& all) override {
        const std::size_t p = std::size_t(size_);
        int n = int(checked_count(mine.size()));
        std::vector<int> counts(p), at(p);
        MPI_Allgather(&n, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
        std::size_t total = 0;
        for (std::size_t q = 0; q < p; ++q) {
            at[q] = int(checked_count(total));
            total += std::size_t(counts[q]);
        }
        std::string got(checked_count(total), '\0');
        MPI_Allgatherv(mine.data(), n, MPI_CHAR, got.data(), counts.data(), at.data(), MPI_CHAR, MPI_COMM_WORLD);
        all.resize(p);
        for (std::size_t q = 0; q < p; ++q) all[q].assign(got, std::size_t(at[q]), std::size_t(counts[q]));
    }
    const void* mpi_communicator() const override { return &comm_; }
    void finish() { MPI_Finalize(); }

private:
    MPI_Comm comm_ = MPI_COMM_WORLD;
};
#endif

}  // namespace

std::unique_ptr<Ranks> start_ranks(int& argc, char**& argv, std::string& launch_error) {
    const int launched = launched_size();
#ifdef TALUS_MPI
    if (launched > 0) {
        auto ranks = std::make_unique<MpiRanks>(argc, argv);
        if (!ranks->root()) hold_back_stderr();
        return ranks;
    }
#else
    if (launched > 1) {
        launch_error =
            "this talus was built without MPI (cmake -DTALUS_MPI=OFF), so the " +
            std::to_string(launched) +
            " processes the launcher started would each run the whole scene into the same "
            "files: build it with -DTALUS_MPI=ON (the default), or run it without mpirun";
        // one message, from the first process
        if (launched_rank() != 0) hold_back_stderr();
    }
#endif
    return std::make_unique<Ranks>();
}

void stop_ranks(Ranks& ranks) {
#ifdef TALUS_MPI
    if (auto* mpi = dynamic_cast<MpiRanks*>(&ranks)) mpi->finish();
#endif
}

bool same_arguments(Ranks& ranks, int argc, char** argv) {
    if (ranks.size() == 1) return true;
    // FNV-1a over the arguments after the program's name, kept to 62 bits so that its
    // negation fits: the largest of h and of −h give the largest and the smallest h
    uint64_t h = 1469598103934665603ull;
    for (int i = 1; i < argc; ++i)
        for (const char* c = argv[i];; ++c) {
            h = (h ^ uint8_t(*c)) * 1099511628211ull;
            if (!*c) break;
        }
    const int64_t mine = int64_t(h >> 2);
    int64_t v[2] = {mine, -mine};
    ranks.max(v);
    return v[0] == -v[1];
}

int agree_between_steps(Ranks& ranks, int signal) {
    if (ranks.size() == 1) return signal;
    // [the exit code of a rank that has left the loop, the signal, a rank still stepping]
    int64_t v[3] = {0, signal, 1};
    ranks.max(v);
    if (v[0] != 0) throw PeerFailed();
    return int(v[1]);
}

int agree_exit(Ranks& ranks, int code) {
    if (ranks.size() == 1) return code;
    // Ranks still stepping take part through agree_between_steps, each of whose rounds
    // matches one round here; they see this rank's code and stop (or, with code 0, step on
    // until they end too).
    int64_t v[3];
    do {
        v[0] = code, v[1] = 0, v[2] = 0;
        ranks.max(v);
    } while (v[2] != 0);
    const int agreed = int(v[0]);
    if (agreed == 0) return 0;
    // the lowest rank whose own code is the agreed one reports
    int64_t lowest[1] = {code == agreed ? ranks.size() - ranks.rank() : 0};
    ranks.max(lowest);
    const int reporter = ranks.size() - int(lowest[0]);
    if (reporter != 0) {
        std::string text = ranks.rank() == reporter ? held_stderr() : std::string();
        ranks.broadcast(text, reporter);
        if (ranks.root()) {
            std::fprintf(stderr, "talus: rank %d of %d failed:\n%s", reporter, ranks.size(), text.c_str());
            if (!text.empty() && text.back() != '\n') std::fputc('\n', stderr);
        }
    }
    return agreed;
}

}  // namespace talus
