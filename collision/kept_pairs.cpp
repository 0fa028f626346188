// Candidate pairs kept over steps (collision/kept_pairs.hpp; docs/design.md §7).
#include "collision/kept_pairs.hpp"

#include <algorithm>

#include "core/parallel.hpp"

namespace talus {

void KeptPairs::clear() {
    pairs.clear();
    position.clear();
    reach.clear();
    served = 0;
}

bool KeptPairs::cover(const std::vector<Vec3>& x, const std::vector<double>& r) const {
    if (position.empty() || x.size() != position.size() || r.size() != reach.size()) return false;
    // A pair within reach now, |x_a − x_b| ≤ r_a + r_b, was within r_a + d_a + r_b + d_b at
    // the search (d: how far each moved since), so within the searched reaches when every
    // r_i + d_i stays under its searched reach. The share 1e-9 left over is far above the
    // rounding of these sums and of the broad phase's test (about 1e-16 of a reach).
    const double over = parallel_max(x.size(), [&](std::size_t i) {
        const double need = r[i] + (x[i] - position[i]).norm();
        return need <= reach[i] * (1.0 - 1e-9) ? 0.0 : 1.0;
    });
    return over == 0.0;
}

void filter_kept_pairs(KeptPairs& kept, const std::vector<Vec3>& x, const std::vector<double>& r,
                       PairList& out) {
    // The broad phase's test (collision/broad_phase.cpp, envelope 0): |x_j − x_i|² ≤ (r_i +
    // r_j)², with i the body it visits from; x_i − x_j is x_j − x_i negated, whose squares
    // are the same, so the test has the same outcome whichever of a, b it visited from.
    const PairList& in = kept.pairs;
    const std::size_t n = in.size();
    constexpr std::size_t kChunk = grain::kPairs * 8;
    kept.keep.resize(n);
    const std::size_t total = count_kept_before(n, kChunk, kept.kept_before, [&](std::size_t k) {
        const std::size_t a = std::size_t(in.a[k]), b = std::size_t(in.b[k]);
        const double reach = r[a] + r[b];
        const bool within = (x[b] - x[a]).squaredNorm() <= reach * reach;
        kept.keep[k] = within;
        return within;
    });
    out.clear();
    out.a.resize(total);
    out.b.resize(total);
    parallel_chunks(n, kChunk, [&](std::size_t c, std::size_t lo, std::size_t hi) {
        std::size_t at = kept.kept_before[c];
        for (std::size_t k = lo; k < hi; ++k)
            if (kept.keep[k]) {
                out.a[at] = in.a[k];
                out.b[at] = in.b[k];
                ++at;
            }
    });
}

std::string search_kept_pairs(const std::vector<Vec3>& position, const std::vector<double>& radius,
                              const std::vector<double>& reach, KeptPairs& kept, BroadPhaseScratch& scratch) {
    const std::size_t n = position.size();
    kept.reach.resize(n);
    parallel_each(n, [&](std::size_t i) { kept.reach[i] = reach[i] + kSkinShare * radius[i]; }, grain::kBodies);
    const std::string why = broad_phase(position, kept.reach, 0.0, kept.pairs, scratch);
    if (!why.empty()) {
        kept.clear();
        return why;
    }
    kept.position.assign(position.begin(), position.end());
    kept.served = 0;
    return {};
}

}  // namespace talus
