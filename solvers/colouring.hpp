#pragma once
/// Colouring of the contact graph, and of the joint rows with it, for the parallel
/// Gauss–Seidel sweep (docs/design.md §6, §8).
#include <cstdint>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "core/contacts.hpp"
#include "core/ranks.hpp"

namespace talus {

struct ColouringScratch {
    std::vector<uint64_t> body_colours;  ///< per body: bit k set = colour k holds the body
    std::vector<uint32_t> colour;        ///< per contact
    std::vector<uint32_t> order;         ///< contacts sorted by colour
    std::vector<uint64_t> words;         ///< per contact: one word of a field, the in-place reordering
    std::vector<std::pair<uint64_t, uint32_t>> visit;  ///< (priority, contact), visit order
    std::vector<std::pair<uint64_t, uint32_t>> visit_spare;  ///< the visit order's bucket pass
    std::vector<uint32_t> bucket_start;  ///< the visit order's buckets by priority (where each starts)
    /// One spare array per field type of ContactList, for the reordering by copy.
    std::tuple<std::vector<int32_t>, std::vector<uint32_t>, std::vector<uint64_t>,
               std::vector<double>, std::vector<Vec3>> spare;
};

/// The priority of a contact in the colouring's visit order: a hash of its key.
uint64_t contact_priority(uint64_t key_a, uint64_t key_b, uint32_t feature);

/// Greedy colouring: each contact, in the order of contact_priority (ties by key), takes
/// the first colour that holds neither of its dynamic bodies (walls do not count); past
/// 63 colours, contacts go to a last "overflow" colour that the solvers sweep serially, in
/// that order. Then the contacts are reordered colour by colour (stable within a proper
/// colour) and contacts.colour_start is set. The colours depend only on the contacts'
/// keys and bodies, not on their order or dense indices; returns the number of colours. The reordering
/// gathers each field into a spare array in parallel, or with `in_place` moves each field
/// one 8-byte word at a time through one spare word per contact and needs no second copy
/// of any field (large runs, where that copy would add to the peak memory). Both give the
/// same order.
std::size_t colour_contacts(std::size_t body_count, ContactList& contacts, ColouringScratch& s,
                            bool in_place = false);

/// Reorders `v`, one entry per contact, as the last colour_contacts with this scratch
/// reordered its contacts (with the same `in_place`): rows kept beside a contact list, such
/// as an assembled batch's, follow their contacts into the colour order.
void follow_colour_order(std::vector<int32_t>& v, ColouringScratch& s, bool in_place);
void follow_colour_order(std::vector<double>& v, ColouringScratch& s, bool in_place);
void follow_colour_order(std::vector<Vec3>& v, ColouringScratch& s, bool in_place);

/// Index of the overflow colour (always the last one if present).
inline constexpr uint32_t kOverflowColour = 63;

/// Reorders `contacts` colour by colour for colours found elsewhere (`colour`, per contact:
/// a proper colour below `proper_colours`, or kOverflowColour), exactly as colour_contacts
/// orders its own: stable within a proper colour, the overflow colour in priority order.
/// colour_start holds all `proper_colours` colours, empty ones included, then the overflow
/// colour if a contact has it: a rank gives its held contacts the colours of
/// jones_plassmann_on_rank and the sweep's colour count of every rank.
void order_by_colour(ContactList& contacts, std::span<const uint32_t> colour, std::size_t proper_colours,
                     ColouringScratch& s);

/// The colours of Jones and Plassmann's parallel colouring, in rounds: in each round every
/// contact whose higher-priority neighbours (contacts sharing a dynamic body, priority as
/// colour_contacts orders them) are all coloured takes, at once, the lowest colour they
/// left, or the overflow colour past 63. What ranks will run, each on its own contacts,
/// exchanging the colours of their boundary contacts after every round; it gives exactly
/// colour_contacts' colours, with no serial visit. For tests and counts: `colour[i]` is
/// contact i's colour in c's order (kOverflowColour for the overflow), `rounds` the
/// number of rounds (the longest chain of neighbours in decreasing priority).
struct JonesPlassmann {
    std::vector<uint32_t> colour;
    std::size_t rounds = 0;
};
JonesPlassmann jones_plassmann(std::size_t body_count, const ContactList& c);

/// The same rounds run by one rank of P (a collective: every rank calls it), on the
/// contacts it holds: every contact of its own bodies (`owner[b]`: local body b's rank;
/// `held`'s a and b are local bodies). A contact's neighbours through an own body are all
/// held here; through another rank's body they are held there, so in each round the two
/// ranks of a boundary contact exchange what their side says (still waiting, colours
/// taken) and both decide the same colour. The colours are exactly jones_plassmann's on
/// the whole contact set, for any P; `rounds` is the same too, and each round is one
/// exchange with the neighbour ranks plus one flag over all ranks.
JonesPlassmann jones_plassmann_on_rank(std::size_t body_count, const ContactList& held,
                                       std::span<const int32_t> owner, Ranks& ranks);

/// The overflow colour cut into levels over ranks (a collective): each level a colour of
/// contacts that share no body, a contact one level past the highest of the earlier (in
/// priority order) overflow contacts it shares a body with, which is how one process cuts
/// it (sweep_colours_of, engine/distributed/rank_problem.hpp). `held`: a rank's contacts
/// ordered by order_by_colour (every contact of its own bodies; `owner[b]`: local body b's
/// rank). A contact depends on at most two others (the one before it on each body); one
/// through another rank's body is that rank's, so in each round the two ranks of a
/// boundary contact exchange their side's level once known, and both decide alike.
/// `level` per held contact (0 outside the overflow colour); `count` the levels over all
/// ranks; `rounds` the exchanges.
struct OverflowLevels {
    std::vector<uint32_t> level;
    uint32_t count = 0;
    std::size_t rounds = 0;
};
OverflowLevels overflow_levels_on_rank(std::size_t body_count, const ContactList& held,
                                       std::span<const int32_t> owner, Ranks& ranks);

struct AssembledBatch;

/// Where the joint rows of a batch sit in its colour sweep (colour_joint_rows). The sweep
/// has colours() colours; colour k holds the contacts [contact_start[k], contact_start[k+1])
/// and the row blocks order[block_start[k]] … order[block_start[k+1] − 1]. A row block is
/// a run of consecutive rows on the same two bodies (one joint's rows): its rows share
/// both bodies, so they are swept one after the other by one task.
struct JointColouring {
    std::vector<uint32_t> block_rows;     ///< block b holds rows [block_rows[b], block_rows[b+1])
    std::vector<uint32_t> order;          ///< the blocks colour by colour, in row order within one
    std::vector<uint32_t> block_start;    ///< per sweep colour, its range of `order`
    std::vector<uint32_t> contact_start;  ///< per sweep colour, its range of contacts
    bool overflow = false;                ///< the last colour may share bodies: swept serially
    std::vector<uint64_t> body_colours;   ///< scratch: per body, bit k = colour k holds it

    std::size_t colours() const { return contact_start.empty() ? 0 : contact_start.size() - 1; }
};

/// Colours the batch's joint rows into its contacts' colours (batch.joint_colours): each
/// row block, in row order, takes the first colour that holds neither of its dynamic
/// bodies, among the contacts' colours and after them; past 63 colours it joins the
/// overflow colour, swept serially after its contacts. Contacts keep their colours and
/// order, so a batch without rows sweeps exactly as before. Serial and deterministic, one
/// pass over the contacts; the solve calls it when there are rows.
void colour_joint_rows(std::size_t body_count, AssembledBatch& batch);

}  // namespace talus
