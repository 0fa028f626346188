#pragma once
/// The PGS block update over a range of contacts (solvers/pgs.cpp sweeps the colours).
/// Two kernels compute the same bits: a scalar one, and one that updates four contacts at
/// once in 256-bit AVX registers (same operations in the same order per lane, no fused
/// multiply-add). The AVX kernel needs the four contacts to share no dynamic body, which
/// holds within a colour; it is chosen at run time when the CPU has AVX.
#include <cstddef>

#include "solvers/assemble.hpp"
#include "solvers/solver_bodies.hpp"

namespace talus {

/// Sweep contacts [lo, hi): for each, d_i from the current velocities,
/// γ_i ← Π_K(γ_i − ω η_i d_i), and M⁻¹ D_i Δγ_i applied to its bodies at once. Returns the
/// largest excess ‖γ_i − Π_K(γ_i − η_i d_i)‖² − tol2 η_i² of a contact when visited (≤ 0:
/// every contact was within the tolerance), or −1 for an empty range. `independent`: no
/// two contacts of the range share a dynamic body (false for the overflow colour).
double pgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                 double omega, double tol2, bool independent);

/// The two kernels, for tests. pgs_range_lanes requires pgs_lanes_available() and an
/// independent range; groups with an anisotropic body fall back to the scalar update.
double pgs_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2);
double pgs_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                       std::size_t hi, double omega, double tol2);
bool pgs_lanes_available();

}  // namespace talus
