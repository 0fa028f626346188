#pragma once
/// Contact-graph colouring for the parallel Gauss–Seidel sweep (docs/design.md §6, §8).
#include <cstdint>
#include <tuple>
#include <vector>

#include "core/contacts.hpp"

namespace talus {

struct ColouringScratch {
    std::vector<uint64_t> body_colours;  ///< per body: bit k set = colour k holds the body
    std::vector<uint32_t> colour;        ///< per contact
    std::vector<uint32_t> order;         ///< contacts sorted by colour
    std::vector<uint8_t> done;           ///< per contact: placed by the in-place reordering
    /// One spare array per field type of ContactList, for the reordering by copy.
    std::tuple<std::vector<int32_t>, std::vector<uint32_t>, std::vector<uint64_t>,
               std::vector<double>, std::vector<Vec3>> spare;
};

/// Greedy colouring: each contact, in order, takes the first colour that holds neither of
/// its dynamic bodies (walls do not count); past 63 colours, contacts go to a last
/// "overflow" colour that the solvers sweep serially. Then the contacts are reordered
/// colour by colour (stable within a colour) and contacts.colour_start is set. The
/// colouring is serial and deterministic; returns the number of colours. The reordering
/// gathers each field into a spare array in parallel, or with `in_place` walks the
/// permutation's cycles serially and needs no second copy of any field (large runs, where
/// that copy would add to the peak memory). Both give the same order.
std::size_t colour_contacts(std::size_t body_count, ContactList& contacts, ColouringScratch& s,
                            bool in_place = false);

/// Index of the overflow colour (always the last one if present).
inline constexpr uint32_t kOverflowColour = 63;

}  // namespace talus
