#pragma once
/// Candidate pairs kept over steps (a Verlet list with a skin; docs/design.md §7).
///
/// The broad phase finds every pair within reach_a + reach_b. Bodies at rest keep the same
/// pairs step after step, and a bed that has settled spent a sixth of its step finding them
/// again. So a search may be run at each body's reach plus a skin, and its pairs kept with
/// the positions and reaches they were found at. A later step whose bodies each stay within
/// their skin (reach_i + |x_i − x_i at the search| ≤ the reach searched) takes the kept
/// pairs that pass the broad phase's own test at its positions and reaches: by the triangle
/// inequality every pair the broad phase would find is among the kept ones, and the test
/// is the broad phase's, in the same operations, so the pairs are exactly its pairs. Their
/// order differs, on which no bit of a step depends (docs/design.md §7).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collision/broad_phase.hpp"
#include "core/contacts.hpp"
#include "core/math.hpp"

namespace talus {

/// The share of its radius a body's reach is searched beyond it when pairs are to be kept
/// (the skin): 0.1 r. At rest a body moves microns a step and the pairs last until the next
/// renumbering; a grain falling a tenth of its radius a step outruns it in a step or two,
/// and the searches then go without a skin (KeptPairs::kWaitAfterMiss).
inline constexpr double kSkinShare = 0.1;

struct KeptPairs {
    PairList pairs;               ///< every pair within the searched reaches (dense indices)
    std::vector<Vec3> position;   ///< each body's position at the search [m]
    std::vector<double> reach;    ///< each body's reach searched (its reach + skin) [m]
    std::size_t served = 0;       ///< steps that took their pairs from this search
    std::vector<uint8_t> keep;    ///< scratch of filter_kept_pairs: the pairs within reach
    std::vector<std::size_t> kept_before;  ///< scratch: pairs within reach before each chunk
    int wait = 0;                 ///< searches still to run without a skin
    /// After a search whose pairs served no later step, this many searches run without a
    /// skin (as the broad phase alone, nothing kept): a pour's falling grains outrun any
    /// skin worth searching, and it would only widen every search.
    static constexpr int kWaitAfterMiss = 8;

    bool empty() const { return position.empty(); }
    /// Forget the search (its pairs, positions and reaches; `wait` stays).
    void clear();
    /// Whether every body is still within its skin at these positions and reaches: the
    /// kept pairs then hold every pair within reach.
    bool cover(const std::vector<Vec3>& position, const std::vector<double>& reach) const;
};

/// The pairs of `kept` within reach_a + reach_b at these positions, by the broad phase's
/// test (collision/broad_phase.hpp, without periodic axes), into `out` as kept (a < b
/// from a search; a renumbering may have swapped them: orient_by_id orders them by id).
void filter_kept_pairs(KeptPairs& kept, const std::vector<Vec3>& position,
                       const std::vector<double>& reach, PairList& out);

/// A search for `kept`: the broad phase at each reach plus kSkinShare of the body's radius,
/// its pairs and the positions and reaches searched kept. Returns the broad phase's answer
/// ("" when it found the pairs).
std::string search_kept_pairs(const std::vector<Vec3>& position, const std::vector<double>& radius,
                              const std::vector<double>& reach, KeptPairs& kept, BroadPhaseScratch& scratch);

}  // namespace talus
