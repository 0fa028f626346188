#pragma once
/// Contact-graph colouring for the parallel Gauss–Seidel sweep (DESIGN §6, §8).
#include <cstdint>
#include <vector>

#include "engine/core/contacts.hpp"

namespace talus {

struct ColouringScratch {
    std::vector<uint64_t> body_colours;  ///< per body: bit k set = colour k holds the body
    std::vector<uint32_t> colour;        ///< per contact
    std::vector<uint32_t> order;         ///< contacts sorted by colour
    std::vector<uint8_t> done;           ///< per contact: placed by the in-place reordering
};

/// Greedy colouring: each contact, in order, takes the first colour that holds neither of
/// its dynamic bodies (walls do not count); past 63 colours, contacts go to a last
/// "overflow" colour that the solvers sweep serially. Then the contacts are reordered
/// colour by colour (stable within a colour) and contacts.colour_start is set. Serial and
/// deterministic; returns the number of colours.
std::size_t colour_contacts(std::size_t body_count, ContactList& contacts, ColouringScratch& s);

/// Index of the overflow colour (always the last one if present).
inline constexpr uint32_t kOverflowColour = 63;

}  // namespace talus
