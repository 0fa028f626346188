#pragma once
/// The per-contact kernels of PGS (solvers/pgs.cpp), bgs (solvers/bgs.cpp) and PJ (solvers/pj.cpp) over ranges of
/// contacts. Each comes twice and both compute the same bits: scalar, and four contacts at
/// once in 256-bit AVX registers (same operations in the same order per lane, no fused
/// multiply-add). The AVX kernels that write bodies need the four contacts to share no
/// dynamic body, which holds within a colour; AVX is chosen at run time when the CPU has
/// it (and TALUS_PGS_SCALAR is not set). bgs's sweep also comes in eight AVX-512 lanes.
#include <cstddef>

#include "core/solver_table.hpp"
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

/// bgs's sweep of contacts [lo, hi) (solvers/bgs.cpp): bgs_block of
/// solvers/contact_operator.hpp on each, in the metric batch.eta_n / eta_t (filled by
/// BodyOperator::bgs_prepare), under the CCP or (`law` Coulomb) exact Coulomb friction;
/// returns what pgs_range does. Scalar, four AVX lanes and (on a CPU with AVX-512 F and DQ,
/// unless TALUS_LANES=4) eight AVX-512 lanes: the same bits.
double bgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                 double omega, double tol2, bool independent, FrictionLaw law = FrictionLaw::CCP);
double bgs_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2, FrictionLaw law = FrictionLaw::CCP);
double bgs_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                       std::size_t hi, double omega, double tol2, FrictionLaw law = FrictionLaw::CCP);
/// The eight-lane kernel, for tests: requires bgs_lanes8_available(), pgs_lanes_available()
/// and an independent range.
double bgs_range_lanes8(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2, FrictionLaw law = FrictionLaw::CCP);
bool bgs_lanes8_available();

/// PJ's contact pass over [lo, hi): next_i = Π_K(γ_i − step_i d_i) from the current
/// velocities (read only); returns the largest docs/design.md §6 residual term
/// ‖γ_i − Π_K(γ_i − η_i d_i)‖ / η_i (0 for an empty range). `lanes`: allow the AVX kernel.
double pj_contacts_range(const AssembledBatch& batch, SolverBodies& bodies, const double* step,
                         Vec3* next, std::size_t lo, std::size_t hi, bool lanes = true);

/// The largest docs/design.md §6 residual term ‖γ_i − Π_K(γ_i − η_i d_i)‖ / η_i over
/// contacts [lo, hi) at the solver bodies' velocities (read only: the contacts may share
/// bodies; 0 for an empty range); under `law` Coulomb with De Saxcé's ĉ_i for d_i.
/// `lanes`: allow the AVX kernels, four lanes or eight (the same bits).
double residual_range(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                      std::size_t hi, bool lanes = true, FrictionLaw law = FrictionLaw::CCP);
/// Its four- and eight-lane kernels, for tests (as bgs_range_lanes and bgs_range_lanes8).
double residual_range_lanes(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                            std::size_t hi, FrictionLaw law = FrictionLaw::CCP);
double residual_range_lanes8(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                             std::size_t hi, FrictionLaw law = FrictionLaw::CCP);

/// PJ's second pass over [lo, hi): ν += M⁻¹ D_i (next_i − γ_i), then γ_i ← next_i.
/// `independent` as for pgs_range.
void pj_apply_range(AssembledBatch& batch, const Vec3* next, SolverBodies& bodies, std::size_t lo,
                    std::size_t hi, bool independent);

}  // namespace talus
