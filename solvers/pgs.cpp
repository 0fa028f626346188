// Projected Gauss–Seidel on the cone complementarity problem (docs/design.md §4–§6; seed 001),
// parallel by contact colouring. Written once over the contact operator
// (solvers/contact_operator.hpp): the rule is pgs_block, the pass op.pgs_sweep, the loop
// solvers/iteration.hpp.
//
// Matrix-free block sweep: for each contact, d_i from the current velocities,
// γ_i ← Π_K(γ_i − ω η_i d_i), and the change applied at once to both bodies, so later
// contacts see it. With η_i = 3/trace(W_ii) the block step decreases the QP objective
// while ω η_i λ_max(W_ii) < 2 (ω ≤ 1.5 for spheres). Contacts come grouped by colour
// (solvers/colouring.cpp): within a colour no two share a dynamic body, so a colour is a
// parallel loop without races, and since each update reads and writes only its own two
// bodies, the result is the same for any number of threads. Colours run in a fixed order;
// an overflow colour, whose contacts may share bodies, runs serially. The update itself is
// in solvers/contact_kernels.cpp (scalar, and four contacts at a time with AVX; same bits).
// Each sweep also records each contact's residual term at the moment it is visited (free:
// no extra memory traffic); once that drops below the tolerance, the residual of docs/design.md §6
// (every contact at the same ν) decides. At exit ν⁺ is rebuilt from ν* and γ.
// Joint rows (solvers/bilateral.hpp), when there are any, are a block type of the same
// sweep: λ_j ← λ_j − ω η_j (b_j + G_jᵀ ν), free cone. A joint's rows form one block,
// coloured with the contacts (solvers/colouring.cpp), so each colour sweeps its contacts
// and its joints together in parallel, a block's rows in row order.
// Rolling/spinning torque entries (solvers/rolling.hpp), when there are any, are swept
// right after the contacts of each range: they touch the same two bodies as their contact,
// so a colour stays race-free. Without them the range runs the contact kernel alone.
#include "solvers/assembled_operator.hpp"
#include "solvers/body_operator.hpp"
#include "solvers/iteration.hpp"
#include "solvers/methods.hpp"
#include "solvers/rank_operator.hpp"

namespace talus {

template <class Op>
SolverResult pgs_method(Op& op, const SolverSettings& settings) {
    return sweep_method(op, settings, [&](double omega, double tol2) { return op.pgs_sweep(omega, tol2); });
}

template SolverResult pgs_method(BodyOperator&, const SolverSettings&);
template SolverResult pgs_method(AssembledOperator&, const SolverSettings&);
template SolverResult pgs_method(RankOperator&, const SolverSettings&);

}  // namespace talus
