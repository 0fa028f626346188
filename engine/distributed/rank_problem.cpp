// One rank's part of a whole contact problem (engine/distributed/rank_problem.hpp).
#include "engine/distributed/rank_problem.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "core/parallel.hpp"
#include "engine/distributed/decomposition.hpp"

namespace talus {
namespace {

// A rank's share of contacts given by their two bodies: the contacts with an own body (in
// their given order), and the bodies the rank holds (own ones and the other ends of those
// contacts, in the whole store's order), with each held body's local index.
struct Share {
    std::vector<uint32_t> contact, body;
    std::vector<int32_t> local;  ///< per body of the whole store: local index, or kNoBody
    /// A contact end's local body (kNoBody stays kNoBody).
    int32_t end(int32_t body) const { return body == kNoBody ? kNoBody : local[std::size_t(body)]; }
};
Share share_of(std::span<const int32_t> a, std::span<const int32_t> b, std::span<const int32_t> owner, int rank) {
    Share s;
    auto own = [&](int32_t body) { return body != kNoBody && owner[std::size_t(body)] == rank; };
    for (std::size_t i = 0; i < a.size(); ++i)
        if (own(a[i]) || own(b[i])) s.contact.push_back(uint32_t(i));
    std::vector<uint8_t> held(owner.size(), 0);
    for (std::size_t k = 0; k < owner.size(); ++k) held[k] = owner[k] == rank;
    for (uint32_t i : s.contact)
        for (int32_t body : {a[i], b[i]})
            if (body != kNoBody) held[std::size_t(body)] = 1;
    s.local.assign(owner.size(), kNoBody);
    for (std::size_t k = 0; k < owner.size(); ++k)
        if (held[k]) {
            s.local[k] = int32_t(s.body.size());
            s.body.push_back(uint32_t(k));
        }
    return s;
}

}  // namespace

SweepColours sweep_colours_of(const AssembledBatch& batch) {
    SweepColours out;
    const std::size_t n = batch.size();
    out.colour.assign(n, 0);
    if (batch.colour_start.size() < 2) return out;
    const std::size_t colours = batch.colour_start.size() - 1;
    for (std::size_t k = 0; k < colours; ++k)
        for (std::size_t i = batch.colour_start[k]; i < batch.colour_start[k + 1]; ++i) out.colour[i] = uint32_t(k);
    out.count = uint32_t(colours);
    if (!batch.overflow_colour) return out;
    const uint32_t base = uint32_t(colours - 1);
    std::vector<uint32_t> next;  // per body: the lowest level its next overflow contact may take
    uint32_t levels = 0;
    for (std::size_t i = batch.colour_start[colours - 1]; i < n; ++i) {
        const int32_t a = batch.a[i], b = batch.b[i];
        const std::size_t need = std::size_t(std::max(a, b)) + 1;
        if (next.size() < need) next.resize(need, 0);
        uint32_t level = 0;
        if (a != kNoBody) level = std::max(level, next[std::size_t(a)]);
        if (b != kNoBody) level = std::max(level, next[std::size_t(b)]);
        out.colour[i] = base + level;
        if (a != kNoBody) next[std::size_t(a)] = level + 1;
        if (b != kNoBody) next[std::size_t(b)] = level + 1;
        levels = std::max(levels, level + 1);
    }
    out.count = base + levels;
    return out;
}

Decomposition body_decomposition(const BodyStore& bodies, double edge, int ranks) {
    const std::size_t n = bodies.size();
    Vec3 lo = n > 0 ? bodies.position[0] : Vec3::Zero();
    for (std::size_t i = 0; i < n; ++i) lo = lo.cwiseMin(bodies.position[i]);
    return decompose(block_grid(lo, edge, 1), bodies.position, std::vector<uint32_t>(n, 1), ranks);
}

std::vector<int32_t> body_owners(const BodyStore& bodies, double envelope, int ranks) {
    const std::size_t n = bodies.size();
    if (n == 0) return {};
    double r_max = 0.0;
    for (std::size_t i = 0; i < n; ++i) r_max = std::max(r_max, bodies.radius[i]);
    const Decomposition d = body_decomposition(bodies, 2.0 * r_max + envelope, ranks);
    // the owners alone (split_bodies also lists every rank's ghosts, which took 8 % of a
    // step when the step's solves ran over the ranks)
    std::vector<int32_t> owner(n);
    parallel_each(n, [&](std::size_t i) { owner[i] = d.owner_of(bodies.position[i]); }, grain::kBodies);
    return owner;
}

RankProblem rank_problem(const BodyStore& bodies, const AssembledBatch& batch, std::span<const int32_t> owner,
                         int rank) {
    if (!batch.bilateral.empty())
        throw std::invalid_argument("joints (bilateral constraints) do not run over MPI ranks yet");
    if (!batch.rolling.empty())
        throw std::invalid_argument("rolling and spinning resistance do not run over MPI ranks yet");
    if (owner.size() != bodies.size()) throw std::invalid_argument("rank_problem: an owner for every body");
    const SweepColours sweep = sweep_colours_of(batch);
    RankProblem p;
    Share share = share_of(batch.a, batch.b, owner, rank);
    p.global_contact = std::move(share.contact);
    std::stable_sort(p.global_contact.begin(), p.global_contact.end(),
                     [&](uint32_t x, uint32_t y) { return sweep.colour[x] < sweep.colour[y]; });
    p.global_body = std::move(share.body);
    for (uint32_t b : p.global_body) {
        p.owner.push_back(owner[b]);
        p.bodies.append_from(bodies, b);
    }
    // the contacts, field by field
    AssembledBatch& c = p.batch;
    const std::size_t n = batch.size();
    c.for_each_row_array([&](auto& dst, const auto& src) {
        // only the arrays every row has: bgs's metric is left out when rows appended for a
        // resolve lack theirs, and an empty tangent or push stays empty
        if (src.size() != n) return;
        dst.reserve(p.global_contact.size());
        for (uint32_t i : p.global_contact) dst.push_back(src[i]);
    }, batch);
    for (int32_t& body : c.a) body = share.end(body);
    for (int32_t& body : c.b) body = share.end(body);
    c.lipschitz = batch.lipschitz;
    c.normal_only = batch.normal_only;
    c.overflow_colour = false;
    c.colour_start.assign(std::size_t(sweep.count) + 1, 0);
    for (uint32_t i : p.global_contact) ++c.colour_start[std::size_t(sweep.colour[i]) + 1];
    std::partial_sum(c.colour_start.begin(), c.colour_start.end(), c.colour_start.begin());
    return p;
}

ContactList rank_contacts(const ContactList& c, std::span<const int32_t> owner, int rank,
                          std::vector<uint32_t>& global_body, std::vector<uint32_t>& global_contact) {
    Share share = share_of(c.a, c.b, owner, rank);
    global_contact = std::move(share.contact);
    global_body = std::move(share.body);
    ContactList out;
    c.for_each_filled_array([&](const auto& from, auto& to) {
        to.reserve(global_contact.size());
        for (uint32_t i : global_contact) to.push_back(from[i]);
    }, out);
    for (int32_t& body : out.a) body = share.end(body);
    for (int32_t& body : out.b) body = share.end(body);
    return out;
}

}  // namespace talus
