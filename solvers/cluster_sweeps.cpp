// Cluster sweeps ([solver] cluster_sweeps; docs/design.md §6, "Cluster sweeps"): once a bgs
// solve has only a few contacts left above its tolerance, those contacts and the contacts
// around them are swept alone until they are within it.
//
// Why: in a settled random pack the last contacts above 1e-4 m/s are few (often one to a
// few dozen of 77,000) and sit in small frustrated clusters: sticking contacts of light
// grains, inside their cones, that still open and slide at 1e-5–1e-4 m/s. Whole sweeps
// relax such a cluster slowly, and each costs the whole pack (a step of the random-pack
// twin's settled bed took 1,996 sweeps to 1e-4 m/s, where 200 left a single contact above
// it). Swept alone, with the pack around it held, the cluster comes within the tolerance
// in 7–60 local sweeps of 40–300 contacts (benchmarks/README.md, "Cluster sweeps").
//
// Deterministic whatever the thread count: the scan's decision (more than kClusterSeeds
// contacts above the tolerance, or not) and its list do not depend on the threads, and the
// local sweeps run serially in contact order.
#include <algorithm>
#include <atomic>

#include "core/parallel.hpp"
#include "solvers/body_operator.hpp"
#include "solvers/contact_kernels.hpp"

namespace talus {

namespace {

constexpr std::size_t kScanChunk = 4096;  // a multiple of kScanGroup
constexpr std::size_t kScanGroup = 4;

}  // namespace

bool BodyOperator::graded_masses() const {
    // The largest ratio over the contacts, by chunks in parallel: a maximum, so the same
    // whatever the threads. A fixed or kinematic body (1/m = 0) is a boundary, not a load.
    const double worst = parallel_max(batch_.size(), [&](std::size_t i) {
        const int32_t a = batch_.a[i], b = batch_.b[i];
        if (a == kNoBody || b == kNoBody) return 0.0;
        const double ia = sb_.body[std::size_t(a)].inv_mass, ib = sb_.body[std::size_t(b)].inv_mass;
        if (ia <= 0.0 || ib <= 0.0) return 0.0;
        return std::max(ia, ib) / std::min(ia, ib);
    });
    return worst > SolverSettings::kClusterMassRatio;
}

ClusterOutcome BodyOperator::cluster_sweeps(double tol, double omega) {
    const std::size_t n = batch_.size();
    // Contacts only: a batch with rolling or joint rows leaves them to the whole sweeps.
    if (n == 0 || !batch_.rolling.empty() || !batch_.bilateral.empty()) return {};

    // 1. The contacts above the tolerance, by chunks in parallel; a scan that finds more than
    // kClusterSeeds stops early. It stops only once more than that were found, so whether
    // it ran to the end, and what it found then, does not depend on the threads.
    const std::size_t chunks = (n + kScanChunk - 1) / kScanChunk;
    cluster_found_.resize(chunks);
    std::atomic<std::size_t> count{0};
    parallel_each(chunks, [&](std::size_t k) {
        std::vector<uint32_t>& out = cluster_found_[k];
        out.clear();
        const std::size_t lo = k * kScanChunk, end = std::min(n, lo + kScanChunk);
        // §6's residual term with the AVX kernel (the same bits as one contact at a time),
        // the whole chunk first (near convergence most hold none above it), then by
        // groups of four, then contact by contact
        if (count.load(std::memory_order_relaxed) > kClusterSeeds) return;
        if (residual_range(batch_, sb_, lo, end, true, law_) <= tol) return;
        for (std::size_t i = lo; i < end; i += kScanGroup) {
            if (count.load(std::memory_order_relaxed) > kClusterSeeds) return;
            const std::size_t hi = std::min(end, i + kScanGroup);
            if (residual_range(batch_, sb_, i, hi, true, law_) <= tol) continue;
            for (std::size_t j = i; j < hi; ++j)
                if (residual_range(batch_, sb_, j, j + 1, false, law_) > tol) {
                    out.push_back(uint32_t(j));
                    count.fetch_add(1, std::memory_order_relaxed);
                }
        }
    }, 1);
    // None above it: the solve may be done (the caller's residual, on ν rebuilt, decides).
    if (count.load() == 0) return {0, true};
    if (count.load() > kClusterSeeds) return {};

    // 2. The cluster: those contacts and kClusterRings rings of contacts around them, a ring
    // being every contact of a body the cluster already touches.
    std::vector<uint32_t>& cluster = cluster_;
    cluster.clear();
    for (const std::vector<uint32_t>& f : cluster_found_) cluster.insert(cluster.end(), f.begin(), f.end());
    // membership flags, all clear between calls (cleared below from the cluster's own lists)
    std::vector<uint8_t>& in = cluster_in_;
    std::vector<uint8_t>& body_in = cluster_body_in_;
    if (in.size() < n) in.resize(n, 0);
    if (body_in.size() < sb_.size()) body_in.resize(sb_.size(), 0);
    for (uint32_t i : cluster) in[i] = 1;
    const BodyContacts& bc = work_.body_contacts;
    std::size_t ring_start = 0;
    for (int r = 0; r < kClusterRings; ++r) {
        const std::size_t ring_end = cluster.size();
        for (std::size_t q = ring_start; q < ring_end; ++q)
            for (const int32_t b : {batch_.a[cluster[q]], batch_.b[cluster[q]]}) {
                if (b == kNoBody || body_in[std::size_t(b)]) continue;
                body_in[std::size_t(b)] = 1;
                for (uint32_t k = bc.start[std::size_t(b)]; k < bc.start[std::size_t(b) + 1]; ++k) {
                    const uint32_t j = bc.entry[k] >> 1;
                    if (in[j]) continue;
                    in[j] = 1;
                    cluster.push_back(j);
                }
            }
        ring_start = ring_end;
    }
    // every flag set above belongs to a contact of the cluster or to one of its bodies
    for (const uint32_t i : cluster) {
        in[i] = 0;
        for (const int32_t b : {batch_.a[i], batch_.b[i]})
            if (b != kNoBody) body_in[std::size_t(b)] = 0;
    }
    // A cluster that is much of the batch is what the whole sweeps already do.
    if (cluster.size() * kClusterShare > n) return {};
    std::sort(cluster.begin(), cluster.end());

    // 3. Sweep the cluster alone until every one of its contacts is within half the
    // tolerance (so that the whole sweeps after it do not find them back just above it).
    // The local sweeps are accelerated as a nonsmooth nonlinear conjugate gradient method
    // (NNCG; Silcowitz, Niebe and Erleben 2010): with r_k the change a sweep made to the
    // cluster's impulses, a sweep that changed them less than the one before, in the norm
    // ‖r‖² = Σ ‖r_i‖² / η_i (diag W's energy: a heavy grain's contacts, whose slow mode the
    // cluster is for, count by their effective mass, not by their larger impulses), is
    // followed by the step β p_{k−1}, β = ‖r_k‖² / ‖r_{k−1}‖², and p_k = β p_{k−1} + r_k; a
    // sweep that changed them more restarts with p_k = r_k. The step may leave a contact
    // outside its cone: the next sweep projects it, and no step follows the last sweep, so
    // the cluster always ends on a sweep (benchmarks/README.md, "Session 62").
    const double tol2 = 0.25 * tol * tol;
    const bool coulomb = law_ == FrictionLaw::Coulomb;
    // At most one whole sweep's work (n contact steps) a call: a cluster that does not
    // settle alone then costs at most a sweep, and the random-pack twin's needed a tenth of it.
    const std::size_t m = cluster.size();
    const int local_sweeps = int(std::min<std::size_t>(kClusterLocalSweeps, n / m));
    std::vector<Vec3>& gamma = batch_.gamma;
    std::vector<Vec3>& start = cluster_start_;
    std::vector<Vec3>& before = cluster_before_;
    std::vector<Vec3>& dir = cluster_dir_;
    start.resize(m);
    before.resize(m);
    dir.resize(m);
    for (std::size_t k = 0; k < m; ++k) start[k] = gamma[cluster[k]];
    double rr_before = 0.0, worst_first = 0.0, worst = 0.0;
    ClusterOutcome out;
    for (int s = 0; s < local_sweeps && !out.settled; ++s) {
        out.updates += m;
        for (std::size_t k = 0; k < m; ++k) before[k] = gamma[cluster[k]];
        worst = -1.0;
        for (const uint32_t i : cluster)
            worst = std::max(worst, coulomb ? bgs_block<true>(*this, i, omega, tol2)
                                            : bgs_block<false>(*this, i, omega, tol2));
        if (s == 0) worst_first = worst;
        out.settled = worst <= 0.0;
        if (out.settled || s + 1 == local_sweeps) break;
        double rr = 0.0;  // serially, in the cluster's order: the same on any threads
        for (std::size_t k = 0; k < m; ++k)
            if (const double eta = batch_.eta[cluster[k]]; eta > 0.0)
                rr += (gamma[cluster[k]] - before[k]).squaredNorm() / eta;
        const bool step = s > 0 && rr_before > 0.0 && rr <= rr_before;
        const double beta = step ? rr / rr_before : 0.0;
        for (std::size_t k = 0; k < m; ++k) {
            const uint32_t i = cluster[k];
            const Vec3 r = gamma[i] - before[k];
            if (step) {
                const Vec3 push = beta * dir[k];
                gamma[i] += push;
                apply(i, push);
                dir[k] = push + r;
            } else {
                dir[k] = r;
            }
        }
        rr_before = rr;
    }
    // 4. A cluster that did not settle is taken back, impulses and bodies, when its normal
    // impulses grew (in sum) while its largest excess over half the tolerance did not fall
    // by 1 % (its last local sweep's against its first's), or grew by more than a fifth while
    // that excess did not halve: the whole sweeps go on from where the call found it.
    // Gauss–Seidel can walk along a self-stress without end: a grain wedged in a box's corner
    // at μ ≥ 1 can hold the floor and the wall pushing against each other on the rims of
    // their cones, and the local sweeps, 500 a call, grew such impulses call after call, the
    // excess barely moving, until the solve's over-constrained check stopped the run
    // (docs/design.md §6, "Cluster sweeps"; benchmarks/README.md, "Session 63").
    bool back = false;
    if (!out.settled && worst >= 0.5 * worst_first) {
        double before_sum = 0.0, after_sum = 0.0;  // serially, in the cluster's order
        for (std::size_t k = 0; k < m; ++k) {
            before_sum += start[k][0];
            after_sum += gamma[cluster[k]][0];
        }
        back = after_sum > (worst >= 0.99 * worst_first ? 1.0 : 1.2) * before_sum;
    }
    if (back) {
        for (std::size_t k = 0; k < m; ++k) {
            const uint32_t i = cluster[k];
            const Vec3 undo = start[k] - gamma[i];
            gamma[i] = start[k];
            apply(i, undo);
        }
        out.taken_back = true;
    }
    return out;
}

}  // namespace talus
