// The stages of a step (engine/world/pipeline.hpp). Each reads and writes only what its
// parameters name; the order they run in, and what a failure leaves behind, is World::step's.
// Semi-implicit Euler (docs/design.md §4): velocities first (free velocities, then contact
// impulses), then positions with the new velocities, orientations by ε ⊗ exp(h ω̄/2).
#include "engine/world/pipeline.hpp"

#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "collision/kinematic_contacts.hpp"
#include "core/kinematic.hpp"
#include "core/parallel.hpp"
#include "solvers/bilateral.hpp"

namespace talus {

Vec3 gyroscopic_step(const Vec3& inv_j, const Vec3& w, double h) {
    // The torque-free Euler equations in the body frame, J ω̇ = −ω × J ω, by the implicit
    // midpoint rule: J (ω⁺ − ω) = −h m × J m with m = (ω + ω⁺)/2, solved by two Newton
    // steps from ω⁺ = ω (the Jacobian of the residual is J + ½ h ([m]× J − [J m]×)). The
    // rule keeps both quadratic invariants, the energy ½ ω·Jω and |Jω|, where the explicit
    // step gains about h² of the energy every step: since a spinning grain's adaptive step
    // shrinks as 1/‖ω‖, that gain made the spin run away in finite time (a capsule kicked
    // to 1.4e4 rad/s reached 4.9e6 and stopped its run). Two Newton steps leave a residual
    // gain at large h‖ω‖, so ω⁺ is then scaled down to neither invariant's starting value.
    const bool isotropic = inv_j.x() == inv_j.y() && inv_j.y() == inv_j.z();
    if (isotropic || !(inv_j.minCoeff() > 0.0)) {
        // ω × J ω = 0 for an isotropic body up to rounding; the explicit expression is kept
        // so that spheres' trajectories keep their bits
        const Vec3 jw = w.cwiseQuotient(inv_j);
        return w - h * inv_j.cwiseProduct(w.cross(jw));
    }
    const Vec3 j = inv_j.cwiseInverse();
    const auto skew = [](const Vec3& v) {
        Mat3 m;
        m << 0.0, -v.z(), v.y(), v.z(), 0.0, -v.x(), -v.y(), v.x(), 0.0;
        return m;
    };
    Vec3 next = w;
    for (int newton = 0; newton < 2; ++newton) {
        const Vec3 m = 0.5 * (w + next);
        const Vec3 jm = j.cwiseProduct(m);
        const Vec3 residual = j.cwiseProduct(next - w) + h * m.cross(jm);
        const Mat3 jacobian = Mat3(j.asDiagonal()) + 0.5 * h * (skew(m) * j.asDiagonal() - skew(jm));
        next -= jacobian.partialPivLu().solve(residual);
    }
    const double e0 = w.dot(j.cwiseProduct(w)), e1 = next.dot(j.cwiseProduct(next));
    const double l0 = j.cwiseProduct(w).norm(), l1 = j.cwiseProduct(next).norm();
    double scale = 1.0;
    if (e1 > e0) scale = std::sqrt(e0 / e1);
    if (l1 * scale > l0) scale = l0 / l1;
    return std::isfinite(scale) ? Vec3(scale * next) : w;
}

void apply_forces(BodyStore& bodies, const Vec3& gravity, double h) {
    // ν* = ν + h M⁻¹ f: gravity, and the gyroscopic torque −ω̄ × J̄ω̄ in the body frame
    // (implicitly: gyroscopic_step).
    const Vec3 dv = h * gravity;
    parallel_each(bodies.size(), [&](std::size_t i) {
        if (bodies.inv_mass[i] == 0.0) return;
        bodies.velocity[i] += dv;
        bodies.angular_velocity[i] = gyroscopic_step(bodies.inv_inertia[i], bodies.angular_velocity[i], h);
    }, grain::kBodies);
}

Margins choose_margins(const BodyStore& bodies, const std::vector<WallState>& walls,
                       const Vec3& gravity, double envelope, double h, std::vector<double>& reach,
                       const MarginFloor& floor) {
    // δ must cover the largest closing distance in one step (docs/design.md §3): h (v_i + v_j)
    // between grains, h (v + v_wall) at walls. Each body gets the margin
    // m_i = max(δ_min/2, 1.25 h ‖v*_i‖) on top of its radius, so a pair is a contact when
    // Φ ≤ m_i + m_j: never less than the scene's envelope δ_min, and always more than the
    // pair can close in one step (ν* bounds the speeds the solve starts from). A wall
    // contact needs Φ ≤ δ_min + 1.25 h (‖v*_i‖ + ‖v_wall‖): the body's margin plus the
    // wall's share, so the wall margin is δ_min/2 + 1.25 h max ‖v_wall‖, the wall speed
    // taken over the step's mean motion (a rotating wall's at the bodies' distance from
    // its axis).
    //
    // Gravity's share is counted exactly, not through ν*: it adds h g to every dynamic
    // body's ν* and cancels between two grains moving freely, and the most it can close in
    // one step is a grain released from rest beside a supported one (or a wall): v⁺ = h g,
    // a closing of ‖g‖ h² (semi-implicit Euler, no estimate involved). So a body's margin
    // is max(δ_min/2, 1.25 h ‖v*_i − h g‖ + ½ ‖g‖ h²), and walls add ½ ‖g‖ h² to theirs.
    // A bed at rest then keeps 0.5 ‖g‖ h² per grain instead of 1.25 ‖g‖ h², which at h = 5 ms
    // was more than the 0.3 mm gaps of a loose lattice and tripled its (inactive) contacts.
    // (Subtracting the grains' mean velocity as well, which also cancels between two free
    // grains, broke a falling lattice: at impact a grain stopped by its support closes on
    // the next one at the full fall speed, so ν*'s common part does not cancel.)
    reach.resize(bodies.size());
    const double half = 0.5 * envelope;
    const Vec3 dv = h * gravity;  // what apply_forces added to every dynamic body
    const double fall = 0.5 * dv.norm() * h;
    const double margin_max = parallel_max(bodies.size(), [&](std::size_t i) {
        // (a non-sphere's surface also moves by its rotation: ≤ ‖ω̄‖ × bounding radius)
        const double speed = surface_speed(bodies, i, bodies.inv_mass[i] > 0.0 ? dv : Vec3::Zero());
        double margin = std::max(half, 1.25 * h * speed + fall);
        if (!floor.empty()) margin = std::max(margin, floor.of(bodies.id[i]));
        reach[i] = bodies.radius[i] + margin;
        return margin;
    });
    // A rotating wall's speed grows with the distance from its axis: bound it at the bodies.
    double wall_speed = 0.0;
    for (const WallState& s : walls) {
        if (!s.rotates) {
            wall_speed = std::max(wall_speed, s.velocity.norm());
            continue;
        }
        wall_speed = std::max(wall_speed, parallel_max(bodies.size(), [&](std::size_t i) {
                                  return s.speed_near(bodies.position[i], reach[i]);
                              }));
    }
    Margins m;
    m.wall = half + 1.25 * h * wall_speed + fall;
    m.body = margin_max;
    m.envelope = std::max(2.0 * margin_max, margin_max + m.wall);
    return m;
}

void MarginFloor::merge(const MarginFloor& more) {
    MarginFloor both;
    std::size_t i = 0, k = 0;
    while (i < id.size() || k < more.id.size()) {
        const bool mine = k == more.id.size() || (i < id.size() && id[i] <= more.id[k]);
        const bool theirs = i == id.size() || (k < more.id.size() && more.id[k] <= id[i]);
        both.id.push_back(mine ? id[i] : more.id[k]);
        both.margin.push_back(std::max(mine ? margin[i] : 0.0, theirs ? more.margin[k] : 0.0));
        i += mine;
        k += theirs;
    }
    *this = std::move(both);
}

MarginFloor outrunning(const BodyStore& bodies, const std::vector<double>& reach, const Vec3& gravity,
                       double h, double slack, std::span<const int32_t> owner, int me) {
    // A candidate pair is one whose gap is at most the sum of its two margins (choose_margins),
    // each meant to cover what its body moves in the step. The margins come from ν*, before
    // the solve; a collision in the solve can send a body off faster than that (a light grain
    // struck by a heavy one leaves at up to (1 + e) times the striker's speed) into a pair
    // that was never a candidate, which no solve then keeps apart. Measured against a common
    // ½ h g, the closing of two bodies over the step is at most the sum of their motions
    // h ‖v⁺ − ½ h g‖, and a body at rest or falling freely from rest moves ½ ‖g‖ h² by that
    // measure, the share of gravity its margin holds: so a pair closes within its margins
    // while each body's motion stays within its own.
    // Almost every step has no such body: one parallel pass finds that, and only a step with
    // one lists them (a serial pass: they are few).
    MarginFloor out;
    if (reach.size() != bodies.size()) return out;
    const Vec3 half_fall = 0.5 * h * gravity;
    const auto moved_past = [&](std::size_t i) {  // the motion when past the margin, else 0
        if (bodies.inv_mass[i] == 0.0 || (!owner.empty() && owner[i] != me)) return 0.0;
        const double moved = h * surface_speed(bodies, i, half_fall);
        return moved > reach[i] - bodies.radius[i] + slack ? moved : 0.0;
    };
    if (!(parallel_max(bodies.size(), moved_past) > 0.0)) return out;
    std::vector<std::pair<uint64_t, double>> found;
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (const double moved = moved_past(i); moved > 0.0) found.emplace_back(bodies.id[i], 1.25 * moved);
    std::sort(found.begin(), found.end());
    for (const auto& [id, margin] : found) {
        out.id.push_back(id);
        out.margin.push_back(margin);
    }
    return out;
}

StepError check_finite(const BodyStore& bodies, double max_speed, const char* when, StepAt at,
                       const SolverResult* solve) {
    // NaN, Inf, or a speed beyond simulation.max_speed after the solve: the run has blown
    // up (or is about to: the envelope would swallow the whole domain next step). Checked
    // after the forces too: absurd forces (gravity of 1e300) give margins no broad phase
    // can grid.
    std::vector<uint64_t> bad;
    bool too_fast = false;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        const bool finite = bodies.velocity[i].allFinite() &&
                            bodies.angular_velocity[i].allFinite() && bodies.position[i].allFinite();
        // a kinematic body moves as prescribed: only its finiteness is checked
        const bool fast = finite && !bodies.kinematic(i) && bodies.velocity[i].norm() > max_speed;
        if (!finite || fast) {
            too_fast = too_fast || fast;
            if (bad.size() < 20) bad.push_back(bodies.id[i]);
        }
    }
    if (bad.empty()) return {};
    std::ostringstream m;
    m << (too_fast ? "velocity beyond max_speed = " + std::to_string(max_speed) + " m/s or non-finite"
                   : std::string("non-finite velocity"))
      << ' ' << when << " at t = " << at.time << " s (step " << at.step << "), bodies with id";
    for (uint64_t id : bad) m << ' ' << id;
    if (solve && !solve->converged)
        m << "; the solver did not converge (residual " << solve->residual << " m/s)";
    return StepError::of(StepFault::NonFinite, m.str(), bad);
}

StepError check_kinematic_periodic(const BodyStore& bodies, const PeriodicBox& periodic) {
    // collision/kinematic_contacts.hpp: image shifts are not handled (the scene refuses it)
    if (!periodic.any() || bodies.motions.empty()) return {};
    std::vector<uint64_t> bad;
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (bodies.kinematic(i) && bad.size() < 20) bad.push_back(bodies.id[i]);
    if (bad.empty()) return {};
    std::string text = "kinematic bodies (with a prescribed motion) are not supported with "
                       "periodic boundaries; bodies with id";
    for (uint64_t id : bad) text += ' ' + std::to_string(id);
    return StepError::of(StepFault::KinematicPeriodic, text, bad);
}

void orient_by_id(const BodyStore& bodies, PairList& pairs) {
    const bool periodic = !pairs.shift.empty();
    parallel_each(pairs.size(), [&](std::size_t p) {
        const int32_t a = pairs.a[p], b = pairs.b[p];
        if (bodies.id[std::size_t(a)] < bodies.id[std::size_t(b)]) return;
        pairs.a[p] = b;
        pairs.b[p] = a;
        // the image shift belongs to the second body: it changes sign when the two swap
        if (periodic) pairs.shift[p] = -pairs.shift[p];
    }, grain::kPairs);
}

StepError find_pairs(const BodyStore& bodies, const std::vector<double>& reach,
                     const PeriodicBox& periodic, StepAt at, PairList& pairs,
                     BroadPhaseScratch& scratch) {
    const std::string why = broad_phase(bodies.position, reach, 0.0, pairs, scratch, periodic);
    if (why.empty()) {
        orient_by_id(bodies, pairs);
        return {};
    }
    return broad_phase_error(why, at);
}

StepError broad_phase_error(const std::string& why, StepAt at) {
    std::ostringstream m;
    m << "at t = " << at.time << " s (step " << at.step << "): " << why;
    return StepError::of(StepFault::BroadPhase, m.str());
}

void renumber(const std::vector<uint32_t>& order, BodyStore& bodies, std::vector<double>& reach,
              PairList& pairs, std::vector<Vec3>& saved_v, std::vector<Vec3>& saved_w,
              std::vector<uint32_t>& renumbered) {
    // Bodies take the broad phase's order (sorted by Morton cell key), so neighbours sit
    // near each other in memory; the candidate pairs are mapped to the new indices (their
    // order is kept, so it stays deterministic). Stable ids, and hence warm start and
    // output, are unaffected.
    if (order.size() != bodies.size()) return;
    bodies.permute(order);
    apply_order(order, reach);
    renumbered.resize(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) renumbered[order[k]] = uint32_t(k);
    renumber_pairs(renumbered, pairs);
    // keep the restore copies (velocities at step start) in step with the new numbering
    apply_order(order, saved_v);
    apply_order(order, saved_w);
}

void renumber_pairs(const std::vector<uint32_t>& renumbered, PairList& pairs) {
    for (std::size_t p = 0; p < pairs.size(); ++p) {
        pairs.a[p] = int32_t(renumbered[std::size_t(pairs.a[p])]);
        pairs.b[p] = int32_t(renumbered[std::size_t(pairs.b[p])]);
    }
}

StepError check_crowding(const PairList& pairs, const BodyStore& bodies, double envelope, double h,
                         StepAt at) {
    // A step far too long for the speeds gives every body margins spanning many grains:
    // hundreds of candidate pairs each, and the contacts built from them (≈ 700 bytes
    // each) would fill the memory (a 24k-grain bed at dt = 10 ms reached 24 GB). Equal
    // spheres have at most 12 neighbours and a settling bed's margins add a few more, so
    // past 64 per body the run stops and says why, before the narrow phase allocates.
    if (pairs.size() <= kMaxPairsPerBody * bodies.size() + 100000) return {};
    double vmax = 0.0;
    for (const Vec3& v : bodies.velocity) vmax = std::max(vmax, v.norm());
    return crowding_error(pairs.size(), bodies.size(), vmax, envelope, h, at);
}

StepError crowding_error(std::size_t pairs, std::size_t bodies, double vmax, double envelope, double h,
                         StepAt at) {
    if (pairs <= kMaxPairsPerBody * bodies + 100000) return {};
    std::ostringstream m;
    m << "at t = " << at.time << " s (step " << at.step << "): " << pairs
      << " candidate pairs for " << bodies << " bodies (more than " << kMaxPairsPerBody
      << " per body): collision margins of up to " << envelope
      << " m (1.25 dt |v| per body, speeds up to " << vmax << " m/s) span many grains; "
      << "the step of " << h << " s is too long for these speeds: lower [simulation] dt, or "
      << "remove it to let the adaptive step follow the speeds";
    return StepError::of(StepFault::Crowded, m.str());
}

StepError unsupported_error(const BodyStore& bodies, const NarrowPhaseScratch& narrow, StepAt at) {
    StepError e;
    std::vector<uint64_t> bad;  // shared cap of 20 over every list
    for (const WallType type : {WallType::Mesh, WallType::Cone}) {
        const bool mesh = type == WallType::Mesh;
        const std::string_view kind = mesh ? name_of(type) : "cone or orifice";
        const std::vector<uint32_t>& list = mesh ? narrow.unsupported_mesh : narrow.unsupported_thin;
        if (list.empty()) continue;
        std::ostringstream m;
        m << "no contact routine for these bodies and a " << kind << " wall at t = " << at.time
          << " s (step " << at.step << "): " << kind
          << (mesh ? " walls collide with spheres, clumps and capsules only (clumps and capsules: meshes "
                     "of at most 2^24 triangles); bodies with id"
                   : " walls collide with spheres, clumps and capsules only; bodies with id");
        std::vector<uint64_t> named;
        for (uint32_t i : list)
            if (bad.size() < 20) {
                bad.push_back(bodies.id[i]);
                named.push_back(bodies.id[i]);
                m << ' ' << bodies.id[i];
            }
        e.raise(StepFault::UnsupportedWall, m.str(), named);
    }
    return e;
}

Collided collide_and_assemble(const CollideInput& in, ContactList& contacts, AssembledBatch& batch,
                              CollideScratch& scratch) {
    Collided out;
    StageClock clock;
    narrow_phase(in.bodies, in.walls, in.states, in.pairs, in.reach, in.wall_margin, contacts,
                 scratch.narrow);                                          // 3.
    route_kinematic_contacts(in.bodies, contacts);  // kinematic bodies act as moving walls
    forget_kinematic_unsupported(in.bodies, scratch.narrow);
    out.error = unsupported_error(in.bodies, scratch.narrow, in.at);
    scratch.aside.clear();
    if (in.set_aside) {
        std::vector<int32_t> joined(in.joint_a.begin(), in.joint_a.end());
        joined.insert(joined.end(), in.joint_b.begin(), in.joint_b.end());
        set_aside_distant(in.bodies, in.gravity, in.h, in.solver.recovery_speed, contacts,
                          scratch.aside, joined, {}, nullptr, in.lean ? nullptr : &scratch.colouring);  // 3b.
        // The narrow phase wrote every pair's contact; most of a pour's are now aside. A
        // large run gives back the room they took (a million grains mid-pour: 3 M contacts
        // written, 1.2 M kept, 170 MB) instead of carrying it through the solve.
        if (in.lean) contacts.for_each_filled_array([](auto& v) { v.shrink_to_fit(); });
    }
    clock.lap(out.narrow_seconds);
    out.colours = colour_and_assemble(in.bodies, contacts, in.materials, in.solver, in.h, in.warm,
                                      in.lean, scratch.colouring, batch);  // 4.
    clock.lap(out.assemble_seconds);
    return out;
}

std::size_t colour_and_assemble(const BodyStore& bodies, ContactList& contacts,
                                const MaterialTable& materials, const SolverSettings& solver,
                                double h, const WarmStartCache& warm, bool lean,
                                ColouringScratch& scratch, AssembledBatch& batch) {
    const std::size_t colours = colour_contacts(bodies.size(), contacts, scratch, lean);
    if (lean) scratch = ColouringScratch{};
    assemble(bodies, contacts, materials, solver, h, warm, batch);
    return colours;
}

StepError build_joint_rows(const std::vector<Joint>& joints, const BodyStore& bodies,
                           const SolverSettings& solver, double h, StepAt at,
                           std::vector<int32_t>& joint_a, std::vector<int32_t>& joint_b,
                           BilateralBatch& rows) {
    // Joints name bodies by stable id; the dense indices are looked up again only after a
    // renumbering. Rows are built at the poses of the step's start, like the contacts.
    if (joints.empty()) {
        rows.clear();
        return {};
    }
    const std::string gone = map_joint_bodies(joints, bodies, joint_a, joint_b);
    if (!gone.empty()) {
        rows.clear();
        return StepError::of(StepFault::Joint, "at t = " + std::to_string(at.time) + " s: " + gone);
    }
    build_bilateral_rows(joints, joint_a, joint_b, bodies, solver.stabilization, h,
                         solver.warm_start, rows);
    return {};
}

namespace {

/// The solver found impulses growing without bound (docs/design.md §4): the contact problem
/// has no solution. Names the bodies and walls involved instead of letting them blow up.
StepError check_bounded(const SolverResult& result, const ContactList& contacts,
                        const AssembledBatch& batch, const std::vector<Wall>& walls, StepAt at) {
    if (result.unbounded_contacts.empty()) return {};
    std::vector<uint64_t> bad;
    std::ostringstream m;
    m << "over-constrained contacts at t = " << at.time << " s (step " << at.step
      << "): impulses grow without bound while the residual stalls at " << result.residual
      << " m/s, so no contact impulses can keep these bodies apart:";
    std::size_t shown = 0;
    for (uint32_t i : result.unbounded_contacts) {
        const uint64_t ka = contacts.key_a[i], kb = contacts.key_b[i];
        if (std::find(bad.begin(), bad.end(), kb) == bad.end()) bad.push_back(kb);
        if (++shown > 20) continue;
        m << "\n  body " << kb << " against ";
        if ((ka & kWallKeyBit) && walls[ka & ~kWallKeyBit].type == WallType::Mesh)
            m << "wall " << (ka & ~kWallKeyBit) << " (triangle "
              << (contacts.feature[i] & ((1u << kMeshSubFeatureShift) - 1)) << ")";
        else if ((ka & kWallKeyBit) && walls[ka & ~kWallKeyBit].type == WallType::Cylinder)
            m << "wall " << (ka & ~kWallKeyBit) << " (cylinder)";
        else if ((ka & kWallKeyBit) && (walls[ka & ~kWallKeyBit].type == WallType::Cone ||
                                        walls[ka & ~kWallKeyBit].type == WallType::Orifice))
            m << "wall " << (ka & ~kWallKeyBit) << " (" << name_of(walls[ka & ~kWallKeyBit].type) << ")";
        else if (ka & kWallKeyBit)
            m << "wall " << (ka & ~kWallKeyBit) << " (face "
              << (contacts.feature[i] & ((1u << kSubFeatureShift) - 1)) << ")";
        else
            m << "body " << ka;
        m << ", normal impulse " << batch.gamma[i][0] << " N s, gap " << contacts.gap[i] << " m";
    }
    if (shown > 20) m << "\n  and " << shown - 20 << " more contacts";
    m << "\n(a grain jammed between opposing walls, or squeezed by a moving wall)";
    return StepError::of(StepFault::OverConstrained, m.str(), bad);
}

}  // namespace

StepError check_solution(const SolverResult& result, const BodyStore& bodies,
                         const ContactList& contacts, const AssembledBatch& batch,
                         const std::vector<Wall>& walls, double max_speed, StepAt at) {
    if (!result.refused.empty()) {
        // solvers/ say why they refused as a string; the step makes it its error
        std::ostringstream m;
        m << "the solver refused the contact problem at t = " << at.time << " s (step " << at.step
          << "): " << result.refused;
        return StepError::of(StepFault::SolverRefused, m.str());
    }
    if (StepError e = check_finite(bodies, max_speed, "after the solve", at, &result); !e.ok) return e;
    return check_bounded(result, contacts, batch, walls, at);
}

double smallest_dynamic_radius(const BodyStore& bodies) {
    // (a max is exact whatever the split: the same bits on any thread count)
    return -parallel_max_ranges(
        0, bodies.size(), grain::kBodies, -std::numeric_limits<double>::infinity(),
        [&](std::size_t lo, std::size_t hi) {
            double m = -std::numeric_limits<double>::infinity();
            for (std::size_t i = lo; i < hi; ++i)
                if (bodies.inv_mass[i] > 0.0) m = std::max(m, -bodies.thickness_radius(i));
            return m;
        });
}

void integrate_positions(BodyStore& bodies, const PeriodicBox& periodic, double h, double t1) {
    const bool wrap = periodic.any();
    parallel_each(bodies.size(), [&](std::size_t i) {
        bodies.position[i] += h * bodies.velocity[i];
        if (wrap) bodies.position[i] = periodic.wrap(bodies.position[i]);  // leave at hi, enter at lo
        bodies.orientation[i] =
            integrate_orientation(bodies.orientation[i], bodies.angular_velocity[i], h);
    }, grain::kBodies);
    // Kinematic bodies: the exact pose of their motion at t + h (t = k h, as in World::step),
    // not the integrated one, so they do not drift.
    place_kinematic(bodies, t1, t1, h, false);
}

}  // namespace talus
