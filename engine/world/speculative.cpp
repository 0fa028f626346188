// Speculative contacts (docs/design.md §3, "Speculative contacts"): the envelope makes the
// narrow phase report pairs a step before they touch, so that no contact is missed, but a
// pair that cannot close within the step only costs the colouring and every sweep a visit
// that leaves its impulse at zero. set_aside_distant moves those out of the solve before
// the colouring; after the solve, take_back_closing checks each with the velocities the
// solve produced, and a pair that would then close comes back for another solve. So the
// step's answer is the one with every candidate in the solve (each pair set aside ends
// the step apart: its impulse zero is what the full problem gives it, geometrically), and
// a bed at rest sweeps only the pairs that touch.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "core/bytes.hpp"
#include "core/parallel.hpp"
#include "core/ranks.hpp"
#include "engine/world/collide_on_rank.hpp"
#include "engine/world/pipeline.hpp"
#include "engine/world/world.hpp"
#include "solvers/assemble.hpp"
#include "solvers/colouring.hpp"
#include "solvers/contact_ops.hpp"
#include "solvers/warm_start.hpp"

namespace talus {
namespace {

/// Normal velocity of contact i, B relative to A along n (A → B) [m/s]: negative = closing.
/// The store keeps ω̄ in the body frame: ω = R ω̄ turns it into the world's. A sphere's
/// contact point lies on the line through its centre along n, so its spin adds nothing
/// along n (ω × r ⊥ n) and only its centre's velocity counts.
double normal_velocity(const BodyStore& bodies, const ContactList& c, std::size_t i) {
    auto point_velocity = [&](int32_t body, const Vec3& centre) {
        if (bodies.shape[body] == Shape::Sphere) return Vec3(bodies.velocity[body]);
        return Vec3(bodies.velocity[body] +
                    (bodies.orientation[body] * bodies.angular_velocity[body]).cross(c.point[i] - centre));
    };
    const int32_t a = c.a[i], b = c.b[i];
    const Vec3 va = a == kNoBody ? c.velocity_of_a(i) : point_velocity(a, bodies.position[a]);
    const Vec3 vb = point_velocity(b, bodies.position[b] + c.shift_of(i));
    return c.normal[i].dot(vb - va);
}

/// Moves the contacts with keep[i] == 0 from `from` to the end of `to`, both in order.
/// With `spare` (ColouringScratch's spare arrays, one per field type), in parallel: each
/// fixed chunk of contacts knows from a count where its kept and moved ones go, the kept
/// are gathered into the spare array of the field's type, which is then swapped in (the
/// spare keeps the old array's memory for the next field and step). Without, serially in
/// place, with no second copy of any field (a large run, where that copy would add to
/// the peak memory). Both give the same lists.
void split(ContactList& from, const std::vector<uint8_t>& keep, ContactList& to, ColouringScratch* spare) {
    const std::size_t n = from.size();
    constexpr std::size_t kChunk = 4 * grain::kContacts;
    std::vector<std::size_t> kept_before;  // kept contacts in the chunks before
    const std::size_t kept = count_kept_before(n, kChunk, kept_before, [&](std::size_t i) { return keep[i] != 0; });
    const std::size_t moved = n - kept;
    if (moved == 0) return;
    const std::size_t base = to.size();
    // In parallel, where each contact goes, once for every field: index[0, kept) the kept
    // contacts in order, index[kept, n) the moved ones. keep is as often 0 as 1 in a pour,
    // and a loop that branched on it in every field mispredicted half its contacts; here
    // the slot is a select and both counts advance by arithmetic.
    std::vector<uint32_t> index;
    if (spare != nullptr) {
        index.resize(n);
        parallel_chunks(n, kChunk, [&](std::size_t c, std::size_t begin, std::size_t end) {
            std::size_t k = kept_before[c], m = kept + begin - kept_before[c];
            for (std::size_t i = begin; i < end; ++i) {
                const std::size_t kk = keep[i] != 0 ? 1 : 0;
                index[kk != 0 ? k : m] = uint32_t(i);
                k += kk;
                m += 1 - kk;
            }
        });
    }
    from.for_each_filled_array([&](auto& src, auto& dst) {
        dst.resize(base + moved);
        if (spare == nullptr) {
            std::size_t k = 0, out = base;
            for (std::size_t i = 0; i < n; ++i) {
                if (keep[i]) src[k++] = src[i];
                else dst[out++] = src[i];
            }
            src.resize(kept);
            return;
        }
        using T = typename std::decay_t<decltype(src)>::value_type;
        std::vector<T>& gathered = std::get<std::vector<T>>(spare->spare);
        gathered.resize(kept);
        parallel_chunks(n, kChunk, [&](std::size_t c, std::size_t begin, std::size_t end) {
            const std::size_t k0 = kept_before[c], k1 = kept_before[c + 1];
            const std::size_t m0 = begin - k0, m1 = end - k1;
            for (std::size_t k = k0; k < k1; ++k) gathered[k] = src[index[k]];
            for (std::size_t m = m0; m < m1; ++m) dst[base + m] = src[index[kept + m]];
        });
        src.swap(gathered);
    }, to);
}

}  // namespace

std::size_t set_aside_distant(const BodyStore& bodies, const Vec3& gravity, double h,
                              double recovery_speed, ContactList& contacts, ContactList& aside,
                              std::span<const int32_t> joined, std::span<const int32_t> owner, Ranks* ranks,
                              ColouringScratch* spare) {
    // The envelope has two parts (choose_margins, docs/design.md §3): what a body can move
    // in the step, 1.25 h ‖ν*_i − h g‖ + ½ ‖g‖ h² (plus ‖ω‖ r for a non-sphere), and the
    // scene's floor δ_min/2 under it. A pair whose gap exceeds the sum of its two bodies'
    // motion parts (a wall's: 1.25 h ‖v_wall‖ + ½ ‖g‖ h²) is a candidate only through the
    // floor: it cannot close within the step, whatever the solve does to speeds within
    // the bound the envelope trusts.
    //
    // That bound lets each side turn round, which only the solve can make it do, and only
    // to a body that meets something in it. A body none of whose pairs closes at the free
    // velocities (Φ ≤ h (max(0, −v_n(ν*)) + ‖g‖ h) + h v_rec: what ν* closes, with a step's
    // gravity and the push-out's speed to spare) meets nothing: the solve leaves it at ν*.
    // So a pair of two such bodies is set aside too unless ν* itself closes it: the grains
    // of a falling cloud, side by side at one speed, no longer enter the solve by the
    // thousand. A body held by a joint counts as meeting something (its rows are in the
    // solve). take_back_closing checks every pair set aside after the solve, so a
    // body that met something after all (a pair set aside, taken back) is caught there.
    aside.clear();
    const std::size_t n = contacts.size();
    if (n == 0 && ranks == nullptr) return 0;  // over ranks, every rank takes part in the exchange below
    const Vec3 dv = h * gravity;
    const double gh = dv.norm();  // what gravity adds to a speed over the step
    const double fall = 0.5 * gh * h;
    const double push = h * recovery_speed;
    // each body's motion part, once (a body has several pairs; the same operations as per pair)
    std::vector<double> motion(bodies.size());
    parallel_each(bodies.size(), [&](std::size_t i) {
        motion[i] = 1.25 * h * surface_speed(bodies, i, bodies.inv_mass[i] > 0.0 ? dv : Vec3::Zero()) + fall;
    }, grain::kContacts);
    // keep: 0 apart whatever the solve does, 1 may close if a side turns, 2 closes at ν*
    std::vector<uint8_t> keep(n);
    std::vector<uint8_t> meets(bodies.size(), 0);  // has a pair that closes at ν*, or a joint
    parallel_each(n, [&](std::size_t i) {
        const double a = contacts.a[i] == kNoBody ? 1.25 * h * contacts.velocity_of_a(i).norm() + fall
                                                  : motion[std::size_t(contacts.a[i])];
        if (contacts.gap[i] > a + motion[std::size_t(contacts.b[i])] + push) {
            keep[i] = 0;
        } else if (contacts.gap[i] <= h * (std::max(0.0, -normal_velocity(bodies, contacts, i)) + gh) + push) {
            keep[i] = 2;
            // every thread stores the same value, so relaxed atomic stores: no order matters
            auto mark = [&](int32_t body) {
                std::atomic_ref<uint8_t>(meets[std::size_t(body)]).store(1, std::memory_order_relaxed);
            };
            if (contacts.a[i] != kNoBody) mark(contacts.a[i]);
            mark(contacts.b[i]);
        } else {
            keep[i] = 1;
        }
    }, grain::kContacts);
    for (const int32_t j : joined)
        if (j != kNoBody && std::size_t(j) < meets.size()) meets[std::size_t(j)] = 1;
    // over ranks: a ghost's pairs with a third rank's bodies are its owner's to see
    if (ranks != nullptr) refresh_ghost_flags(bodies, owner, contacts.a, contacts.b, meets, *ranks);
    parallel_each(n, [&](std::size_t i) {
        if (keep[i] == 1)
            keep[i] = (contacts.a[i] != kNoBody && meets[std::size_t(contacts.a[i])]) ||
                      meets[std::size_t(contacts.b[i])];
    }, grain::kContacts);
    split(contacts, keep, aside, spare);
    return aside.size();
}

std::size_t take_back_closing(const BodyStore& bodies, double h, double allowance, bool all,
                              ContactList& aside, ContactList& back, Ranks* ranks, ColouringScratch* spare) {
    back.clear();
    const std::size_t n = aside.size();
    if (all) {
        split(aside, std::vector<uint8_t>(n, 0), back, spare);
        return back.size();
    }
    // apart at the end of the step with the solved velocities: its zero impulse stands
    std::vector<uint8_t> keep(n, 1);
    parallel_each(n, [&](std::size_t i) {
        keep[i] = aside.gap[i] + h * (normal_velocity(bodies, aside, i) + allowance) >= 0.0 ? 1 : 0;
    }, grain::kContacts);
    // A pair that closes brings its two grains' other pairs aside with it: solved, it
    // changes those grains' speeds, and one of their pairs closing then would cost another
    // round (a resolve of the whole problem) for a handful of pairs. The grains are named by
    // stable id, gathered over the ranks, so the pairs taken back are the same whatever
    // the decomposition; walls, kinematic and fixed bodies pass nothing on.
    std::vector<uint64_t> moved;
    auto movable = [&](int32_t body) { return body != kNoBody && bodies.inv_mass[body] > 0.0; };
    for (std::size_t i = 0; i < n; ++i) {
        if (keep[i]) continue;
        if (movable(aside.a[i])) moved.push_back(aside.key_a[i]);
        if (movable(aside.b[i])) moved.push_back(aside.key_b[i]);
    }
    if (ranks != nullptr) {
        std::string mine;
        for (uint64_t key : moved) put_bytes(mine, key);
        std::vector<std::string> all_ranks;
        ranks->all_gather(mine, all_ranks);
        moved.clear();
        for (const std::string& m : all_ranks)
            for (std::size_t at = 0; at < m.size();) moved.push_back(take_bytes<uint64_t>(m, at));
    }
    std::sort(moved.begin(), moved.end());
    moved.erase(std::unique(moved.begin(), moved.end()), moved.end());
    if (!moved.empty())
        parallel_each(n, [&](std::size_t i) {
            auto in_moved = [&](uint64_t key) { return std::binary_search(moved.begin(), moved.end(), key); };
            if (keep[i] && ((movable(aside.a[i]) && in_moved(aside.key_a[i])) ||
                            (movable(aside.b[i]) && in_moved(aside.key_b[i]))))
                keep[i] = 0;
        }, grain::kContacts);
    split(aside, keep, back, spare);
    return back.size();
}

void append_contacts(ContactList& into, const ContactList& more) {
    into.for_each_filled_array([&](auto& dst, const auto& src) {
        dst.insert(dst.end(), src.begin(), src.end());
    }, more);
    into.colour_start.clear();
    into.overflow_colour = false;
}

namespace {

/// Appends `more`'s rows to `into` (both assembled with the same settings), the colour
/// ranges aside: the caller sets them.
void append_rows(AssembledBatch& into, const AssembledBatch& more) {
    into.for_each_row_array([&](auto& dst, const auto& src) {
        // bgs's metric (eta_n, eta_t) stays as the last solve left it, for the rows before
        // these: the next bgs solve computes it for the new rows only (BodyOperator::bgs_prepare)
        if (static_cast<const void*>(&dst) == &into.eta_n || static_cast<const void*>(&dst) == &into.eta_t) return;
        dst.insert(dst.end(), src.begin(), src.end());  // (tangent: both empty when assembled)
    }, more);
}

/// The contacts taken back (`back`) in colours of their own after the solve's, appended to
/// `contacts` and, assembled, to `batch`, whose rows keep their impulses (the solution so
/// far: the warm start of the solve again) while the new ones start from zero, as a pair
/// set aside has no impulse to carry. The colours of `back` are colour_contacts' on `back`
/// alone (Jones and Plassmann's, over the ranks when `ranks` is not null), so the sweep
/// order is the same whatever the decomposition. Returns the colours of the sweep, or 0
/// when the solve's colours must be made again over every contact instead: the appended
/// colours would pass the 63 proper ones (or the solve's own already had the overflow
/// colour), or rolling resistance, whose rows the batch builds for all its contacts.
std::size_t colour_and_append(const BodyStore& bodies, std::span<const int32_t> owner, Ranks* ranks,
                              const MaterialTable& materials, const SolverSettings& solver, double h,
                              std::size_t colours, ContactList& back, ContactList& contacts,
                              AssembledBatch& batch) {
    if (materials.any_rolling() || colours >= kOverflowColour) return 0;
    const JonesPlassmann jp = ranks != nullptr ? jones_plassmann_on_rank(bodies.size(), back, owner, *ranks)
                                               : jones_plassmann(bodies.size(), back);
    const std::array<int64_t, 2> most = colour_counts(jp, ranks);  // proper colours, overflow
    if (most[1] != 0 || colours + std::size_t(most[0]) >= kOverflowColour) return 0;
    ColouringScratch scratch;
    order_by_colour(back, jp.colour, std::size_t(most[0]), scratch);
    AssembledBatch extra;
    assemble(bodies, back, materials, solver, h, WarmStartCache{}, extra);
    const uint32_t base = uint32_t(contacts.size());
    std::vector<uint32_t> starts = contacts.colour_start;
    if (starts.empty()) starts = {0, base};
    for (std::size_t k = 1; k < back.colour_start.size(); ++k) starts.push_back(base + back.colour_start[k]);
    append_contacts(contacts, back);
    contacts.colour_start = starts;
    contacts.overflow_colour = false;
    append_rows(batch, extra);
    batch.colour_start = std::move(starts);
    batch.overflow_colour = false;
    return colours + std::size_t(most[0]);
}

/// colour_and_append's fallback, colouring and assembling every contact again, for a
/// contact list whose geometry has been given back (a large run, World::lean_bodies; no
/// rolling entries): the rows and order colour_and_assemble would make from the geometry.
/// A row of the solve's contacts depends on its contact's geometry, the bodies' poses, ν*
/// and the settings, none of which has changed since it was assembled, so it is kept and
/// only its γ is made again from `warm` (the solution so far), as assembly makes it; the
/// contacts taken back are assembled; then the rows follow the contacts into the colours
/// made over all of them.
std::size_t recolour_rows(const BodyStore& bodies, const MaterialTable& materials, const SolverSettings& solver,
                          double h, const WarmStartCache& warm, bool in_place, ColouringScratch& scratch,
                          const ContactList& back, ContactList& contacts, AssembledBatch& batch) {
    parallel_each(contacts.size(), [&](std::size_t i) {
        batch.gamma[i] = solver.warm_start ? warm_impulse(warm, contacts.key_a[i], contacts.key_b[i], contacts.feature[i],
                                                          contact_frame(batch, i), batch.mu[i], h)
                                           : Vec3::Zero();
    }, grain::kContacts);
    AssembledBatch extra;
    assemble(bodies, back, materials, solver, h, warm, extra);
    append_rows(batch, extra);
    append_contacts(contacts, back);
    const std::size_t colours = colour_contacts(bodies.size(), contacts, scratch, in_place);
    batch.eta_n.clear();  // bgs's metric, made again for every row as after assemble()
    batch.eta_t.clear();
    const std::size_t n = batch.size();
    batch.for_each_row_array([&](auto& v) {
        if (v.size() == n) follow_colour_order(v, scratch, in_place);  // empty ones stay so
    });
    if (in_place) scratch = ColouringScratch{};
    batch.colour_start = contacts.colour_start;
    batch.overflow_colour = contacts.overflow_colour;
    batch.lipschitz = solver.warm_start ? warm.lipschitz() : 0.0;
    return colours;
}

}  // namespace

std::size_t World::take_back_and_resolve(double h, bool lean, std::size_t colours) {
    // Each round takes back the contacts the solved velocities would close (with their
    // grains' other pairs aside) and solves again; a round moves at least one contact, and
    // the last takes back all that are left, so the loop ends with every contact still aside
    // apart at the end of the step. The last round is the safety net of a long cascade, not
    // the usual end: it solves every pair aside (as many again as the solve's own, mid-pour
    // at a million grains) where the round before found one or two closing.
    constexpr int kRounds = 8;
    StepPipeline& p = pipeline_;
    ContactList& aside = p.collide.aside;
    ContactList& back = p.collide.back;
    StageClock clock;
    for (int round = 1; round <= kRounds && any_over_ranks(!aside.empty()); ++round) {
        // closing by more than the solve leaves its own contacts closing (its residual)
        const double allowance = std::max(solver.tolerance, result_.residual);
        // over ranks: a ghost of an aside contact outside the solve has only its ν*
        if (distributed()) refresh_ghost_velocities(bodies, on_ranks.owner, aside.a, aside.b, *on_ranks.ranks);
        const bool none = take_back_closing(bodies, h, allowance, round == kRounds, aside, back,
                                            on_ranks.ranks, lean ? nullptr : &p.collide.colouring) == 0;
        if (!any_over_ranks(!none)) break;
        // the solve's workspace is built again by the re-solve; a large run does not carry
        // it through the colouring and the appending, where the batch grows
        if (lean) p.solver = SolverWorkspace{};
        if (p.star_v.empty()) {
            free_velocities(h);
        } else {
            std::copy(p.star_v.begin(), p.star_v.end(), bodies.velocity.begin());
            std::copy(p.star_w.begin(), p.star_w.end(), bodies.angular_velocity.begin());
        }
        clock.restart();
        const std::size_t appended = colour_and_append(bodies, on_ranks.owner, on_ranks.ranks, materials,
                                                       solver, h, colours, back, contacts_, batch_);
        if (appended != 0) {
            colours = appended;
        } else {  // colour and assemble everything again, warm-started by the solution so far
            p.resolve_warm.store(contacts_, batch_, h, lean);
            if (contacts_.point.size() != contacts_.size()) {  // the geometry is given back (lean)
                colours = recolour_rows(bodies, materials, solver, h, p.resolve_warm, lean, p.collide.colouring,
                                        back, contacts_, batch_);
            } else {
                append_contacts(contacts_, back);
                colours = distributed()
                          ? colour_and_assemble_on_rank(bodies, on_ranks.owner, contacts_, materials, solver,
                                                        h, p.resolve_warm, batch_, *on_ranks.ranks)
                          : colour_and_assemble(bodies, contacts_, materials, solver, h, p.resolve_warm,
                                                lean, p.collide.colouring, batch_);
            }
        }
        double seconds = 0.0;
        clock.lap(seconds);
        p.reassemble_seconds += seconds;
        SolverResult again = solve_contacts(batch_, bodies, step_solver_);
        again.iterations += result_.iterations;
        again.gathers += result_.gathers;
        again.wall_time += result_.wall_time;
        again.friction_updates += result_.friction_updates;
        result_ = std::move(again);
        ++diag_.resolves;
        if (!result_.refused.empty()) break;
    }
    // What the rounds leave aside is apart at the step's end within the solve's residual
    // (the allowance above). A capped solve's residual can be large (0.17 m/s on
    // benchmarks/polydisperse_1to5.toml, where a pair so left closed by 98 µm), so the
    // retake's test (deepens_past_limit) asks these pairs too. It reads them only after a
    // capped solve, so a converged step pays nothing (converged is agreed over ranks, so
    // every rank enters aside_deepens' collectives or none does).
    aside_deepens_ = !result_.converged && aside_deepens(h);
    return colours;
}

bool World::aside_deepens(double h) {
    const ContactList& aside = pipeline_.collide.aside;
    // over ranks: a ghost of an aside contact outside the solve has only its ν*
    if (distributed()) refresh_ghost_velocities(bodies, on_ranks.owner, aside.a, aside.b, *on_ranks.ranks);
    const RetakeBounds k = retake_bounds();
    if (aside.size() == 0 || !(k.limit > 0.0)) return false;
    return parallel_max(aside.size(), [&](std::size_t i) {
        return k.deepens(aside.gap[i], normal_velocity(bodies, aside, i), h) ? 1.0 : 0.0;
    }) > 0.0;
}

}  // namespace talus
