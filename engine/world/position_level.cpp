// The position-level variant of Stewart & Trinkle (seed 000 §3.6), selected by
// `[solver] position_iterations = K > 0`.
//
// The velocity-level step linearises every contact at the start of the step, q^l:
// Φ(q^{l+1}) ≈ Φ(q^l) + h n(q^l)ᵀ ν. On curved surfaces (an ellipse rocking, a rod's
// rounded end) q^{l+1} can then be admissible for that linearisation and still penetrate,
// and the next step pays for it with a large impulse. §3.6 asks instead for the non-linear
// condition Φ(q^{l+1}) ≥ 0 ⊥ c_n ≥ 0 with n = n(q^{l+1}), solved by a fixed-point sequence
// of LCPs: with the latest estimate q̂ = q^l + h ν̂, linearise there,
//   Φ(q^{l+1}) ≈ Φ(q̂) + h n(q̂)ᵀ (ν − ν̂),
// i.e. the same problem as a velocity-level step at q̂ with the gap Φ(q̂) and the constant
// shifted by −n(q̂)ᵀ ν̂. The condition is Φ(q^{l+1}) ≥ 0, so a penetration at q̂ is removed
// in full (γ_s = 1, docs/design.md §4), only capped by recovery_speed. Frames, lever arms and the world inertia come from q̂ too. The first solve is
// the ordinary one at q^l; each further solve re-linearises at q^l + h ν⁺ of the previous,
// up to K times or until ν⁺ changes by at most the solver tolerance [m/s]. Walls in q̂ are
// where they will be at t + h; their motion is prescribed, so it takes no shift. Joint rows
// are kept as built at q^l (velocity level, γ-stabilised), their λ warm from the last solve.
#include <algorithm>

#include "core/kinematic.hpp"
#include "core/parallel.hpp"
#include "engine/world/pipeline.hpp"
#include "engine/world/world.hpp"
#include "solvers/contact_ops.hpp"

namespace talus {

void World::relinearise(double h, double wall_margin, StepAt at) {
    StepPipeline& p = pipeline_;
    for (int k = 0; k < solver.position_iterations; ++k) {
        // q̂ = q^l + h ν̂, with ν̂ the last solve's velocities (still in `bodies`).
        BodyStore& pred = p.predicted;
        pred = bodies;
        parallel_each(pred.size(), [&](std::size_t i) {
            pred.position[i] += h * pred.velocity[i];
            pred.orientation[i] = integrate_orientation(pred.orientation[i], pred.angular_velocity[i], h);
        }, grain::kBodies);
        // kinematic bodies where they will be, moving as over this step (like the walls)
        place_kinematic(pred, time + h, time, h, true);

        // The step's own collide-and-assemble stage, at q̂ with the step's candidate pairs
        // and reaches; walls at t + h, moving as over this step; full stabilisation (the
        // condition is Φ(q^{l+1}) ≥ 0). Its report of shapes with no contact routine is not
        // read here: the pairs are the step's, already checked at q^l, and bodies near a
        // mesh or cylinder wall at q̂ are checked where they really arrive, by the next step.
        SolverSettings full = solver;
        full.stabilization = 1.0;
        full.split_push_out = false;  // the overlaps go into this solve (Φ(q^{l+1}) ≥ 0)
        const std::vector<WallState> wall_at = wall_states(walls, time + h, time, h);
        collide_and_assemble({.bodies = pred,
                              .walls = walls,
                              .states = wall_at,
                              .pairs = p.pairs,
                              .reach = p.reach,
                              .wall_margin = wall_margin,
                              .materials = materials,
                              .solver = full,
                              .h = h,
                              .warm = warm_,
                              .lean = false,
                              .at = at,
                              .joint_a = {},  // nothing is set aside here (set_aside false)
                              .joint_b = {}},
                             p.next_contacts, p.next_batch, p.collide);
        p.next_batch.bilateral = batch_.bilateral;  // joints stay linearised at q^l (λ: warm)

        // Shift each contact by the relative normal velocity ν̂ gives it at q̂ (wall terms
        // cancel: rhs_n = b − n·v_wall and the shift is n·(v̂_B − v_wall) for a wall).
        SolverBodies hat(pred);  // world-frame ν̂ at q̂
        AssembledBatch& c = p.next_batch;
        parallel_each(c.size(), [&](std::size_t i) {
            // d_n = n·v̂_rel(bodies) + b − n·v_wall, so the shift n·v̂_rel − n·v_wall = d_n − b.
            const double shift = contact_velocity(c, hat, i)[0] - c.stab[i];
            c.stab[i] -= shift;
            c.rhs[i][0] -= shift;
        }, grain::kContacts);

        // Solve at q̂ from ν* again.
        std::copy(p.star_v.begin(), p.star_v.end(), pred.velocity.begin());
        std::copy(p.star_w.begin(), p.star_w.end(), pred.angular_velocity.begin());
        SolverResult r = solve_contacts(p.next_batch, pred, step_solver_);
        const bool refused = !r.refused.empty();
        double change = 0.0;
        for (std::size_t i = 0; i < bodies.size() && !refused; ++i)
            change = std::max({change, (pred.velocity[i] - bodies.velocity[i]).cwiseAbs().maxCoeff(),
                               (pred.angular_velocity[i] - bodies.angular_velocity[i]).cwiseAbs().maxCoeff()});
        r.iterations += result_.iterations;  // report the work of the whole sequence
        result_ = std::move(r);
        if (refused) return;
        std::copy(pred.velocity.begin(), pred.velocity.end(), bodies.velocity.begin());
        std::copy(pred.angular_velocity.begin(), pred.angular_velocity.end(),
                  bodies.angular_velocity.begin());
        std::swap(contacts_, p.next_contacts);
        std::swap(batch_, p.next_batch);
        ++diag_.relinearisations;
        if (change <= solver.tolerance) return;
    }
}

}  // namespace talus
