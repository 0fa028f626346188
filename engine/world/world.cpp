// World::step — the step pipeline of docs/design.md §1 as a list of stage calls:
//   forces → envelope → broad phase → narrow phase → assemble → solve → warm-start store →
//   integrate positions → sources and sinks (outlets remove, emitters add). Each stage takes
//   its data explicitly; none reaches into another.
// Semi-implicit Euler (docs/design.md §4): velocities first (free velocities, then contact
// impulses), then positions with the new velocities, orientations by ε ⊗ exp(h ω̄/2).
#include "engine/world/world.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string_view>

#include "collision/kinematic_contacts.hpp"
#include "core/kinematic.hpp"
#include "core/parallel.hpp"

namespace talus {
namespace {

/// Wall-clock seconds between successive laps, for the per-stage breakdown.
class StageClock {
public:
    void restart() { t0_ = Clock::now(); }
    void lap(double& into) {
        const auto t1 = Clock::now();
        into = std::chrono::duration<double>(t1 - t0_).count();
        t0_ = t1;
    }

private:
    using Clock = std::chrono::steady_clock;
    Clock::time_point t0_ = Clock::now();
};

}  // namespace

StepStatus World::step() {
    const double h = simulation.dt;
    saved_v_.assign(bodies.velocity.begin(), bodies.velocity.end());
    saved_w_.assign(bodies.angular_velocity.begin(), bodies.angular_velocity.end());

    StageClock clock;
    const auto [envelope, colours] = prepare_solve(h);                   // 1.–4.
    StepStatus supported = check_supported();
    if (supported.ok && !crowded_.empty()) {
        supported.ok = false;
        supported.message = crowded_;
    }
    if (supported.ok && !joint_error_.empty()) {
        supported.ok = false;
        supported.message = "at t = " + std::to_string(time) + " s: " + joint_error_;
    }
    if (StepStatus s = supported; !s.ok) {
        std::copy(saved_v_.begin(), saved_v_.end(), bodies.velocity.begin());
        std::copy(saved_w_.begin(), saved_w_.end(), bodies.angular_velocity.begin());
        return s;
    }
    const bool lean = lean_step();
    if (lean) {  // see lean_bodies
        pairs_ = PairList{};
        reach_ = std::vector<double>{};
        warm_.release_entries();  // assembly has read them; store() writes this step's
    }
    clock.restart();
    const bool relinearise_after = relinearising();
    if (relinearise_after) {
        star_v_.assign(bodies.velocity.begin(), bodies.velocity.end());
        star_w_.assign(bodies.angular_velocity.begin(), bodies.angular_velocity.end());
    }
    result_ = solve_ccp(batch_, bodies, solver, solver_work_);           // 5.
    if (lean) solver_work_ = SolverWorkspace{};
    diag_.relinearisations = 0;
    if (relinearise_after && result_.refused.empty()) relinearise(h, star_v_, star_w_);  // 5b.
    clock.lap(diag_.solver_wall_time);

    StepStatus status;
    if (!result_.refused.empty()) {
        std::ostringstream m;
        m << "the solver refused the contact problem at t = " << time << " s (step "
          << step_count + 1 << "): " << result_.refused;
        status.ok = false;
        status.message = m.str();
    }
    if (status.ok) status = check_finite();
    if (status.ok) status = check_bounded();
    if (!status.ok) {  // leave the state as it was before the step
        std::copy(saved_v_.begin(), saved_v_.end(), bodies.velocity.begin());
        std::copy(saved_w_.begin(), saved_w_.end(), bodies.angular_velocity.begin());
        return status;
    }
    warm_.store(contacts_, batch_, h);
    accumulate_wall_loads(h);
    integrate_positions(h);                                              // 6.
    clock.lap(diag_.time_integrate);
    diag_.contact_infeasibility = 0.0;
    for (double gap : contacts_.gap) diag_.contact_infeasibility = std::max(diag_.contact_infeasibility, -gap);
    diag_.joint_infeasibility =
        joints.empty() ? 0.0 : joint_infeasibility(joints, joint_a_, joint_b_, bodies);
    time = double(step_count + 1) * h;  // t = k h, not a running sum: no drift
    ++step_count;
    apply_flow();                                                        // 7.

    diag_.step = step_count;
    diag_.time = time;
    diag_.contacts = uint32_t(contacts_.size());
    diag_.iterations = uint32_t(result_.iterations);
    diag_.colours = uint32_t(colours);
    diag_.residual = result_.residual;
    diag_.converged = result_.converged;
    diag_.envelope = envelope;
    diag_.kinetic_energy = kinetic_energy();
    diag_.potential_energy = potential_energy();
    return status;
}

std::pair<double, std::size_t> World::prepare_solve(double h) {
    StageClock clock;
    place_kinematic(bodies, time, time, h, true);  // kinematic poses at t, velocities over [t, t + h]
    apply_forces(h);                                                     // 1. ν*
    wall_states_ = wall_states(walls, time, time, h);  // poses at t, motion over [t, t + h]
    const double envelope = choose_margins();
    clock.lap(diag_.time_forces);
    crowded_.clear();
    if (StepStatus s = check_finite("after the forces"); !s.ok || !std::isfinite(envelope)) {
        crowded_ = s.ok ? "non-finite collision margins after the forces" : s.message;
        contacts_.clear();
        return {envelope, 0};
    }
    broad_phase(bodies.position, reach_, 0.0, pairs_, broad_scratch_, simulation.periodic);  // 2.
    if (simulation.renumber_interval > 0 && step_count % simulation.renumber_interval == 0)
        renumber();
    const bool lean = lean_step();
    if (lean) broad_scratch_ = BroadPhaseScratch{};
    clock.lap(diag_.time_broad);
    // A step far too long for the speeds gives every body margins spanning many grains:
    // hundreds of candidate pairs each, and the contacts built from them (≈ 700 bytes
    // each) would fill the memory (a 24k-grain bed at dt = 10 ms reached 24 GB). Equal
    // spheres have at most 12 neighbours and a settling bed's margins add a few more, so
    // past 64 per body the run stops and says why, before the narrow phase allocates.
    if (pairs_.size() > kMaxPairsPerBody * bodies.size() + 100000) {
        double vmax = 0.0;
        for (const Vec3& v : bodies.velocity) vmax = std::max(vmax, v.norm());
        std::ostringstream m;
        m << "at t = " << time << " s (step " << step_count + 1 << "): " << pairs_.size()
          << " candidate pairs for " << bodies.size() << " bodies (more than "
          << kMaxPairsPerBody << " per body): collision margins of up to " << envelope
          << " m (1.25 dt |v| per body, speeds up to " << vmax
          << " m/s) span many grains; simulation.dt = " << h
          << " s is too long for these speeds, reduce it";
        crowded_ = m.str();
        contacts_.clear();
        return {envelope, 0};
    }
    narrow_phase(bodies, walls, wall_states_, pairs_, reach_, wall_margin_, contacts_,
                 narrow_scratch_);                                      // 3.
    route_kinematic_contacts(bodies, contacts_);  // kinematic bodies act as moving walls
    forget_kinematic_unsupported(bodies, pairs_, narrow_scratch_);
    clock.lap(diag_.time_narrow);
    const std::size_t colours = colour_contacts(bodies.size(), contacts_, colouring_, lean);
    if (lean) colouring_ = ColouringScratch{};
    assemble(bodies, contacts_, materials, solver, h, warm_, batch_);     // 4.
    build_joint_rows(h);                                                 // 4b.
    if (lean) contacts_.release_geometry();  // the batch holds what the rest of the step needs
    clock.lap(diag_.time_assemble);
    return {envelope, colours};
}

void World::build_joint_rows(double h) {
    // Joints name bodies by stable id; the dense indices are looked up again only after a
    // renumbering. Rows are built at the poses of the step's start, like the contacts.
    if (joints.empty()) {
        batch_.bilateral.clear();
        joint_error_.clear();
        return;
    }
    joint_error_ = map_joint_bodies(joints, bodies, joint_a_, joint_b_);
    if (!joint_error_.empty()) {
        batch_.bilateral.clear();
        return;
    }
    build_bilateral_rows(joints, joint_a_, joint_b_, bodies, solver.stabilization, h,
                         solver.warm_start, batch_.bilateral);
}

void World::renumber() {
    // Bodies take the broad phase's order (sorted by Morton cell key), so neighbours sit
    // near each other in memory; the candidate pairs are mapped to the new indices (their
    // order is kept, so it stays deterministic). Stable ids, and hence warm start and
    // output, are unaffected.
    const std::vector<uint32_t>& order = broad_scratch_.order;
    if (order.size() != bodies.size()) return;
    bodies.permute(order);
    apply_order(order, reach_);
    renumbered_.resize(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) renumbered_[order[k]] = uint32_t(k);
    const bool periodic = !pairs_.shift.empty();
    for (std::size_t p = 0; p < pairs_.size(); ++p) {
        const int32_t a = int32_t(renumbered_[pairs_.a[p]]), b = int32_t(renumbered_[pairs_.b[p]]);
        pairs_.a[p] = std::min(a, b);
        pairs_.b[p] = std::max(a, b);
        // the image shift belongs to the second body: it changes sign when the two swap
        if (periodic && a > b) pairs_.shift[p] = -pairs_.shift[p];
    }
    // keep the restore copies (velocities at step start) in step with the new numbering
    apply_order(order, saved_v_);
    apply_order(order, saved_w_);
}

void World::apply_flow() {
    // Bodies leave and arrive only here, between steps: every array keyed by dense index
    // (margins, pairs, contacts, colours, joint indices, restore copies) is rebuilt at the
    // start of the next step, and the warm start matches by stable id.
    if (emitters.empty() && outlets.empty()) return;
    drain(outlets, bodies);
    if (emitters.empty()) return;
    for (uint64_t id : bodies.id) next_id = std::max(next_id, id + 1);
    for (Emitter& e : emitters) emit(e, bodies, walls, materials, time, next_id);
}

World::Problem World::next_problem() const {
    World w = *this;
    w.prepare_solve(w.simulation.dt);
    return {std::move(w.bodies), std::move(w.batch_)};
}

void World::apply_forces(double h) {
    // ν* = ν + h M⁻¹ f: gravity, and the gyroscopic torque −ω̄ × J̄ω̄ in the body frame.
    const Vec3 dv = h * simulation.gravity;
    parallel_each(bodies.size(), [&](std::size_t i) {
        if (bodies.inv_mass[i] == 0.0) return;
        bodies.velocity[i] += dv;
        const Vec3& inv_j = bodies.inv_inertia[i];
        const Vec3& w = bodies.angular_velocity[i];
        const Vec3 jw = w.cwiseQuotient(inv_j);
        bodies.angular_velocity[i] -= h * inv_j.cwiseProduct(w.cross(jw));
    });
}

double World::choose_margins() {
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
    const double h = simulation.dt;
    reach_.resize(bodies.size());
    const double half = 0.5 * solver.envelope;
    const Vec3 dv = h * simulation.gravity;  // what apply_forces added to every dynamic body
    const double fall = 0.5 * dv.norm() * h;
    const double margin_max = parallel_max(bodies.size(), [&](std::size_t i) {
        double speed = bodies.inv_mass[i] > 0.0 ? (bodies.velocity[i] - dv).norm()
                                                : bodies.velocity[i].norm();
        // A non-sphere's surface also moves by its rotation: ≤ ‖ω̄‖ × bounding radius.
        if (bodies.shape[i] != Shape::Sphere)
            speed += bodies.angular_velocity[i].norm() * bodies.radius[i];
        const double margin = std::max(half, 1.25 * h * speed + fall);
        reach_[i] = bodies.radius[i] + margin;
        return margin;
    });
    // A rotating wall's speed grows with the distance from its axis: bound it at the bodies.
    double wall_speed = 0.0;
    for (const WallState& s : wall_states_) {
        if (!s.rotates) {
            wall_speed = std::max(wall_speed, s.velocity.norm());
            continue;
        }
        wall_speed = std::max(wall_speed, parallel_max(bodies.size(), [&](std::size_t i) {
                                  return s.speed_near(bodies.position[i], reach_[i]);
                              }));
    }
    wall_margin_ = half + 1.25 * h * wall_speed + fall;
    return std::max(2.0 * margin_max, margin_max + wall_margin_);
}

void World::integrate_positions(double h) {
    const PeriodicBox& periodic = simulation.periodic;
    const bool wrap = periodic.any();
    parallel_each(bodies.size(), [&](std::size_t i) {
        bodies.position[i] += h * bodies.velocity[i];
        if (wrap) bodies.position[i] = periodic.wrap(bodies.position[i]);  // leave at hi, enter at lo
        bodies.orientation[i] =
            integrate_orientation(bodies.orientation[i], bodies.angular_velocity[i], h);
    });
    // Kinematic bodies: the exact pose of their motion at t + h (t = k h, as in step()),
    // not the integrated one, so they do not drift.
    const double t1 = double(step_count + 1) * h;
    place_kinematic(bodies, t1, t1, h, false);
}

StepStatus World::check_finite(const char* when) const {
    // NaN, Inf, or a speed beyond simulation.max_speed after the solve: the run has blown
    // up (or is about to: the envelope would swallow the whole domain next step). Checked
    // after the forces too: absurd forces (gravity of 1e300) give margins no broad phase
    // can grid.
    StepStatus s;
    const double vmax = simulation.max_speed;
    bool too_fast = false;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        const bool finite = bodies.velocity[i].allFinite() &&
                            bodies.angular_velocity[i].allFinite() && bodies.position[i].allFinite();
        // a kinematic body moves as prescribed: only its finiteness is checked
        const bool fast = finite && !bodies.kinematic(i) && bodies.velocity[i].norm() > vmax;
        if (!finite || fast) {
            s.ok = false;
            too_fast = too_fast || fast;
            if (s.bad_bodies.size() < 20) s.bad_bodies.push_back(bodies.id[i]);
        }
    }
    if (!s.ok) {
        std::ostringstream m;
        m << (too_fast ? "velocity beyond max_speed = " + std::to_string(vmax) + " m/s or non-finite"
                       : std::string("non-finite velocity"))
          << ' ' << when << " at t = " << time << " s (step " << step_count + 1
          << "), bodies with id";
        for (uint64_t id : s.bad_bodies) m << ' ' << id;
        if (std::string_view(when) == "after the solve" && !result_.converged)
            m << "; the solver did not converge (residual " << result_.residual << " m/s)";
        s.message = m.str();
    }
    return s;
}

StepStatus World::check_supported() const {
    // Candidate pairs whose shapes have no contact routine (collision/narrow_phase.hpp):
    // stepping on would let them pass through each other silently.
    StepStatus s;
    if (simulation.periodic.any() && !bodies.motions.empty()) {
        // collision/kinematic_contacts.hpp: image shifts are not handled (the scene refuses it)
        for (std::size_t i = 0; i < bodies.size(); ++i)
            if (bodies.kinematic(i) && s.bad_bodies.size() < 20) s.bad_bodies.push_back(bodies.id[i]);
        if (!s.bad_bodies.empty()) {
            s.ok = false;
            s.message = "kinematic bodies (with a prescribed motion) are not supported with "
                        "periodic boundaries; bodies with id";
            for (uint64_t id : s.bad_bodies) s.message += ' ' + std::to_string(id);
            return s;
        }
    }
    if (narrow_scratch_.unsupported.empty() && narrow_scratch_.unsupported_mesh.empty() &&
        narrow_scratch_.unsupported_cylinder.empty())
        return s;
    s.ok = false;
    std::ostringstream m;
    if (!narrow_scratch_.unsupported.empty()) {
        // Name each kind of pair once, in the order met.
        const auto name = [](Shape sh) {
            switch (sh) {
                case Shape::Sphere: return "sphere";
                case Shape::Capsule: return "capsule";
                case Shape::Ellipsoid: return "ellipsoid";
                case Shape::Clump: return "clump";
            }
            return "?";
        };
        std::vector<std::string> kinds;
        for (uint32_t k : narrow_scratch_.unsupported) {
            Shape sa = bodies.shape[pairs_.a[k]], sb = bodies.shape[pairs_.b[k]];
            if (sa > sb) std::swap(sa, sb);
            const std::string kind = std::string(name(sa)) + "–" + name(sb);
            if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
        }
        m << "no contact routine for these shape pairs at t = " << time << " s (step "
          << step_count + 1 << "): ";
        for (std::size_t k = 0; k < kinds.size(); ++k) m << (k ? ", " : "") << kinds[k];
        m << " contact is not implemented; bodies with id";
        for (uint32_t k : narrow_scratch_.unsupported) {
            for (int32_t i : {pairs_.a[k], pairs_.b[k]})
                if (std::find(s.bad_bodies.begin(), s.bad_bodies.end(), bodies.id[i]) == s.bad_bodies.end() &&
                    s.bad_bodies.size() < 20) {
                    s.bad_bodies.push_back(bodies.id[i]);
                    m << ' ' << bodies.id[i];
                }
        }
    }
    for (const char* kind : {"mesh", "cylinder"}) {
        const bool mesh = kind[0] == 'm';
        const std::vector<uint32_t>& list = mesh ? narrow_scratch_.unsupported_mesh
                                                 : narrow_scratch_.unsupported_cylinder;
        if (list.empty()) continue;
        if (m.tellp() > 0) m << "\n";
        m << "no contact routine for these bodies and a " << kind << " wall at t = " << time
          << " s (step " << step_count + 1 << "): " << kind
          << (mesh ? " walls collide with spheres and clumps only (clumps: meshes of at most 2^24 "
                     "triangles); bodies with id"
                   : " walls collide with spheres and clumps only; bodies with id");
        for (uint32_t i : list)
            if (s.bad_bodies.size() < 20) {
                s.bad_bodies.push_back(bodies.id[i]);
                m << ' ' << bodies.id[i];
            }
    }
    s.message = m.str();
    return s;
}

StepStatus World::check_bounded() const {
    // The solver found impulses growing without bound (docs/design.md §4): the contact problem has
    // no solution. Name the bodies and walls involved instead of letting them blow up.
    StepStatus s;
    if (result_.unbounded_contacts.empty()) return s;
    s.ok = false;
    std::ostringstream m;
    m << "over-constrained contacts at t = " << time << " s (step " << step_count + 1
      << "): impulses grow without bound while the residual stalls at " << result_.residual
      << " m/s, so no contact impulses can keep these bodies apart:";
    std::size_t shown = 0;
    for (uint32_t i : result_.unbounded_contacts) {
        const uint64_t ka = contacts_.key_a[i], kb = contacts_.key_b[i];
        if (std::find(s.bad_bodies.begin(), s.bad_bodies.end(), kb) == s.bad_bodies.end())
            s.bad_bodies.push_back(kb);
        if (++shown > 20) continue;
        m << "\n  body " << kb << " against ";
        if ((ka & kWallKeyBit) && walls[ka & ~kWallKeyBit].type == WallType::Mesh)
            m << "wall " << (ka & ~kWallKeyBit) << " (triangle "
              << (contacts_.feature[i] & ((1u << kMeshSubFeatureShift) - 1)) << ")";
        else if ((ka & kWallKeyBit) && walls[ka & ~kWallKeyBit].type == WallType::Cylinder)
            m << "wall " << (ka & ~kWallKeyBit) << " (cylinder)";
        else if (ka & kWallKeyBit)
            m << "wall " << (ka & ~kWallKeyBit) << " (face "
              << (contacts_.feature[i] & ((1u << kSubFeatureShift) - 1)) << ")";
        else
            m << "body " << ka;
        m << ", normal impulse " << batch_.gamma[i][0] << " N s, gap " << contacts_.gap[i] << " m";
    }
    if (shown > 20) m << "\n  and " << shown - 20 << " more contacts";
    m << "\n(a grain jammed between opposing walls, or squeezed by a moving wall)";
    s.message = m.str();
    return s;
}

void World::reset_wall_loads() {
    wall_loads_.impulse.assign(walls.size(), Vec3::Zero());
    wall_loads_.angular_impulse.assign(walls.size(), Vec3::Zero());
    wall_loads_.time = 0.0;
}

void World::accumulate_wall_loads(double h) {
    // The wall receives −P of each contact's impulse P = γ_n n + γ_u u + γ_w (n × u) on body
    // B, and −A γ_k of a rolling/spinning entry's torque impulse (a couple: the same about
    // any point). Serial, in contact order: the sums are bitwise independent of the thread
    // count.
    wall_contacts_.clear();
    wall_contacts_.step = h;
    if (walls.empty()) return;
    if (wall_loads_.impulse.size() != walls.size()) reset_wall_loads();
    const RollingBatch& rolling = batch_.rolling;
    std::size_t k = 0;  // rolling entries are ordered by contact
    for (std::size_t i = 0; i < batch_.size(); ++i) {
        // walls only: a kinematic body is also a non-dynamic A, keyed by its id without the bit
        if (batch_.a[i] != kNoBody || !(contacts_.key_a[i] & kWallKeyBit)) continue;
        const uint64_t w = contacts_.key_a[i] & ~kWallKeyBit;
        const Vec3& n = batch_.normal[i];
        const Vec3& u = batch_.tangent[i];
        const Vec3 v = n.cross(u);
        const Vec3& g = batch_.gamma[i];
        const Vec3 on_wall = -(g[0] * n + g[1] * u + g[2] * v);
        while (k < rolling.contact.size() && rolling.contact[k] < i) ++k;
        Vec3 couple = Vec3::Zero();
        if (k < rolling.contact.size() && rolling.contact[k] == i) {
            const Vec3& t = rolling.gamma[k];
            couple = -(t[0] * n + t[1] * u + t[2] * v);
        }
        // A large run's contact list keeps no points (lean_bodies): B's lever arm gives it.
        const std::size_t b = std::size_t(batch_.b[i]);
        const Vec3 point = contacts_.point.empty() ? Vec3(bodies.position[b] + batch_.lever_b[i])
                                                   : contacts_.point[i];
        wall_loads_.impulse[w] += on_wall;
        wall_loads_.angular_impulse[w] +=
            (point - wall_reference_point(walls[w])).cross(on_wall) + couple;
        if (record_wall_contacts) {
            wall_contacts_.wall.push_back(uint32_t(w));
            wall_contacts_.body.push_back(bodies.id[b]);
            wall_contacts_.point.push_back(point);
            wall_contacts_.impulse.push_back(on_wall);
            wall_contacts_.angular_impulse.push_back(couple);
        }
    }
    wall_loads_.time += h;
}

double World::kinetic_energy() const {
    // Sum in body order (serial): a fixed reduction order keeps the diagnostics bitwise
    // independent of the thread count.
    double e = 0.0;
    for (std::size_t i = 0; i < bodies.size(); ++i) {
        if (bodies.inv_mass[i] == 0.0) continue;
        const Vec3& w = bodies.angular_velocity[i];
        e += 0.5 * bodies.velocity[i].squaredNorm() / bodies.inv_mass[i] +
             0.5 * w.dot(w.cwiseQuotient(bodies.inv_inertia[i]));
    }
    return e;
}

double World::potential_energy() const {
    double e = 0.0;
    for (std::size_t i = 0; i < bodies.size(); ++i)
        if (bodies.inv_mass[i] != 0.0) e -= simulation.gravity.dot(bodies.position[i]) / bodies.inv_mass[i];
    return e;
}

}  // namespace talus
