#pragma once
/// One rank's part of a contact problem held whole (docs/mpi.md, "Solvers across ranks"):
/// what solve_ccp_on_rank (solvers/rank_operator.hpp) runs on. The rank keeps its own
/// bodies, a ghost of every other body that shares a contact with one of them, and every
/// contact of its own bodies, in the order of the sweep. Until ranks find their contacts
/// themselves, this is how a problem reaches them, and how the tests give every rank
/// count the same problem.
#include <cstdint>
#include <span>
#include <vector>

#include "core/body_store.hpp"
#include "core/contacts.hpp"
#include "engine/distributed/decomposition.hpp"
#include "solvers/assemble.hpp"

namespace talus {

/// The colours a distributed sweep visits, for each contact of a coloured batch: its own
/// colour, except that the overflow colour (contacts that may share bodies, swept in
/// order) is cut into levels, each a colour of contacts that share no body: a contact's
/// level is one past the highest level of the earlier overflow contacts it shares a body
/// with. Each body then meets its contacts in the order the one-process sweep gives them.
struct SweepColours {
    std::vector<uint32_t> colour;  ///< per contact
    uint32_t count = 0;            ///< colours, levels included
};
SweepColours sweep_colours_of(const AssembledBatch& batch);

/// Every body's rank in the decomposition of docs/mpi.md over `ranks` ranks: blocks one
/// contact reach (largest diameter + `envelope`) wide from the bodies' lowest corner, cut
/// along the Morton curve into ranges of equal grain counts.
std::vector<int32_t> body_owners(const BodyStore& bodies, double envelope, int ranks);

/// The decomposition body_owners uses, with blocks `edge` wide (at least the largest
/// distance over which two bodies can make a contact) from the bodies' lowest corner, cut
/// into ranges of equal grain counts; split_bodies gives every rank's own bodies and ghosts.
Decomposition body_decomposition(const BodyStore& bodies, double edge, int ranks);

struct RankProblem {
    BodyStore bodies;                      ///< own bodies and ghosts, in the whole store's order
    std::vector<int32_t> owner;            ///< per local body: its rank
    std::vector<uint32_t> global_body;     ///< per local body: its index in the whole store
    AssembledBatch batch;                  ///< every contact of an own body, by sweep colour
    std::vector<uint32_t> global_contact;  ///< per local contact: its index in the whole batch
};

/// Rank `rank`'s part of the problem (bodies at ν*, batch coloured, with its warm start);
/// `owner`: every body's rank. Throws std::invalid_argument, naming them, for what is not
/// distributed yet: joints and rolling/spinning resistance.
RankProblem rank_problem(const BodyStore& bodies, const AssembledBatch& batch, std::span<const int32_t> owner,
                         int rank);

/// Rank `rank`'s contacts of a whole contact list (what a rank finds itself once it holds
/// only its bodies and ghosts): those with an own body, in the list's order, their bodies
/// numbered as rank_problem numbers them (own bodies and the other ends of their contacts,
/// in the whole store's order: `global_body`). `global_contact`: each one's index in `c`.
ContactList rank_contacts(const ContactList& c, std::span<const int32_t> owner, int rank,
                          std::vector<uint32_t>& global_body, std::vector<uint32_t>& global_contact);

}  // namespace talus
