// talus_decomposition_benchmark: what dividing a bed among P ranks costs in ghosts and
// exchanges (issue 25; docs/mpi.md, "What a rank exchanges"), counted with the
// decomposition the ranks will use (engine/distributed/decomposition.hpp). Counts, not
// times: the figures do not depend on the machine.
//
//   build/bin/talus_decomposition_benchmark [--csv benchmarks/results/decomposition.csv]
//
// The bed: N equal spheres (d = 2 mm) on a jittered simple cubic lattice of spacing 1.02 d
// (each grain touches its six neighbours within the envelope: a packed bed of 6 contacts a
// grain), in a box twice as wide as it is deep, as a settled bed lies. For each N and P it
// reports per rank: owned grains, ghosts, the neighbour ranks it exchanges with, the
// contacts it owns and those among them that reach a ghost (boundary contacts), and the
// bytes a rank sends per solver iteration for the scheme of docs/mpi.md: the velocities of
// its owned bodies that are ghosts elsewhere (6 doubles each, to each rank that holds the
// ghost) and, for each of its boundary contacts, the two velocity increments of the ghost
// body back to its owner (6 doubles).
#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "collision/broad_phase.hpp"
#include "engine/distributed/decomposition.hpp"

namespace {

using talus::Vec3;

struct Bed {
    std::vector<Vec3> x;
    std::vector<double> r;
    std::vector<uint64_t> id;
};

/// n grains (rounded to a whole lattice) on a jittered cubic lattice, 2:2:1 box.
Bed lattice_bed(std::size_t n, double d, uint64_t seed) {
    // nx = ny = 2 nz, nx ny nz ≈ n
    const auto nz = std::max<std::size_t>(1, std::size_t(std::llround(std::cbrt(double(n) / 4.0))));
    const std::size_t nx = 2 * nz;
    const double a = 1.02 * d;
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> jitter(-0.005 * d, 0.005 * d);
    Bed b;
    for (std::size_t k = 0; k < nz; ++k)
        for (std::size_t j = 0; j < nx; ++j)
            for (std::size_t i = 0; i < nx; ++i) {
                b.x.emplace_back(a * double(i) + jitter(rng), a * double(j) + jitter(rng), a * double(k) + jitter(rng));
                b.r.push_back(0.5 * d);
                b.id.push_back(b.id.size());
            }
    // stable ids in another order than the lattice's, as after a pour
    std::shuffle(b.id.begin(), b.id.end(), rng);
    return b;
}

struct Row {
    std::size_t n = 0;
    int ranks = 0;
    double owned_mean = 0, ghosts_mean = 0, ghosts_max = 0, neighbours_mean = 0, neighbours_max = 0;
    double contacts_mean = 0, boundary_mean = 0, bytes_mean = 0, bytes_max = 0, imbalance = 0;
};

Row count(const Bed& b, const talus::PairList& pairs, double reach, int p) {
    using namespace talus;
    Vec3 lo = b.x[0];
    for (const Vec3& x : b.x) lo = lo.cwiseMin(x);
    const BlockGrid grid = block_grid(lo - Vec3::Constant(reach), reach, 1);
    // a grain's weight: 1 + its contacts
    std::vector<uint32_t> weight(b.x.size(), 1);
    for (std::size_t k = 0; k < pairs.size(); ++k) ++weight[pairs.a[k]], ++weight[pairs.b[k]];
    const Decomposition d = decompose(grid, b.x, weight, p);
    const BodySplit split = split_bodies(d, b.x);
    const std::size_t P = std::size_t(p);
    std::vector<std::set<int>> neighbours(P);
    std::vector<double> bytes(P, 0.0), contacts(P, 0.0), boundary(P, 0.0);
    for (std::size_t r = 0; r < P; ++r)
        for (uint32_t i : split.ghosts[r]) {
            const std::size_t owner = std::size_t(split.owner[i]);
            neighbours[owner].insert(int(r));
            neighbours[r].insert(int(owner));
            bytes[owner] += 6 * 8;  // the body's velocities to the rank that ghosts it
        }
    for (std::size_t k = 0; k < pairs.size(); ++k) {
        const uint32_t a = uint32_t(pairs.a[k]), c = uint32_t(pairs.b[k]);
        const int rank = contact_owner(split, b.id, a, c);
        contacts[std::size_t(rank)] += 1;
        if (split.owner[a] != split.owner[c]) {
            boundary[std::size_t(rank)] += 1;
            bytes[std::size_t(rank)] += 6 * 8;  // the ghost body's increment back to its owner
        }
    }
    Row row;
    row.n = b.x.size();
    row.ranks = p;
    auto mean = [&](auto f) {
        double s = 0;
        for (std::size_t r = 0; r < P; ++r) s += f(r);
        return s / double(P);
    };
    auto most = [&](auto f) {
        double m = 0;
        for (std::size_t r = 0; r < P; ++r) m = std::max(m, double(f(r)));
        return m;
    };
    row.owned_mean = mean([&](std::size_t r) { return double(split.owned[r].size()); });
    row.ghosts_mean = mean([&](std::size_t r) { return double(split.ghosts[r].size()); });
    row.ghosts_max = most([&](std::size_t r) { return split.ghosts[r].size(); });
    row.neighbours_mean = mean([&](std::size_t r) { return double(neighbours[r].size()); });
    row.neighbours_max = most([&](std::size_t r) { return neighbours[r].size(); });
    row.contacts_mean = mean([&](std::size_t r) { return contacts[r]; });
    row.boundary_mean = mean([&](std::size_t r) { return boundary[r]; });
    row.bytes_mean = mean([&](std::size_t r) { return bytes[r]; });
    row.bytes_max = most([&](std::size_t r) { return bytes[r]; });
    row.imbalance = imbalance(rank_loads(d, b.x, weight));
    return row;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"Ghosts and exchanges of the ranks' decomposition, counted (issue 25)"};
    std::string csv_path = "benchmarks/results/decomposition.csv";
    std::vector<std::size_t> sizes{1000, 10000, 100000, 1000000};
    app.add_option("--csv", csv_path, "Where the rows go")->capture_default_str();
    app.add_option("--grains", sizes, "Bed sizes")->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    std::ofstream csv(csv_path);
    csv << "# talus_decomposition_benchmark: jittered cubic lattice of 2 mm grains, 2:2:1 box, "
           "blocks of one broad-phase cell; per-rank means (and maxima) over the ranks\n"
        << "grains,ranks,grains_per_rank,ghosts_mean,ghosts_max,ghost_share,neighbours_mean,"
           "neighbours_max,contacts_mean,boundary_contacts_mean,boundary_share,"
           "bytes_per_iteration_mean,bytes_per_iteration_max,imbalance\n";
    fmt::print("{:>9} {:>6} {:>10} {:>9} {:>7} {:>6} {:>9} {:>12} {:>10}\n", "grains", "ranks", "per rank",
               "ghosts", "share", "nbrs", "boundary", "kB/iter", "imbalance");
    const double d = 0.002, envelope = 0.1 * d, reach = d + envelope;
    for (std::size_t n : sizes) {
        const Bed bed = lattice_bed(n, d, 20261129);
        talus::PairList pairs;
        talus::BroadPhaseScratch scratch;
        talus::broad_phase(bed.x, bed.r, envelope, pairs, scratch);
        for (int p = 1; p <= 4096; p *= 2) {
            if (double(bed.x.size()) / p < 100.0) break;  // fewer than 100 grains a rank
            const Row row = count(bed, pairs, reach, p);
            csv << fmt::format("{},{},{:.1f},{:.1f},{:.0f},{:.4f},{:.2f},{:.0f},{:.1f},{:.1f},{:.4f},{:.0f},{:.0f},{:.4f}\n",
                               row.n, row.ranks, row.owned_mean, row.ghosts_mean, row.ghosts_max,
                               row.ghosts_mean / row.owned_mean, row.neighbours_mean, row.neighbours_max,
                               row.contacts_mean, row.boundary_mean,
                               row.contacts_mean > 0 ? row.boundary_mean / row.contacts_mean : 0.0,
                               row.bytes_mean, row.bytes_max, row.imbalance);
            fmt::print("{:>9} {:>6} {:>10.0f} {:>9.0f} {:>7.3f} {:>6.1f} {:>9.3f} {:>12.1f} {:>10.3f}\n", row.n,
                       row.ranks, row.owned_mean, row.ghosts_mean, row.ghosts_mean / row.owned_mean,
                       row.neighbours_mean, row.contacts_mean > 0 ? row.boundary_mean / row.contacts_mean : 0.0,
                       row.bytes_mean / 1e3, row.imbalance);
        }
    }
    fmt::print("wrote {}\n", csv_path);
    return 0;
}
