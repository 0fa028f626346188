#pragma once
/// The per-contact kernels of PGS (solvers/pgs.cpp), bgs (solvers/bgs.cpp), PJ (solvers/pj.cpp)
/// and the residual pass over ranges of contacts. Each comes three times and all compute
/// the same bits: scalar, four contacts at once in 256-bit AVX registers, and eight at once
/// in 512-bit AVX-512 registers (same operations in the same order per lane, no fused
/// multiply-add; solvers/contact_lanes.hpp). The lane kernels that write bodies need the
/// contacts of a group to share no dynamic body, which holds within a colour. The widest
/// kernel the CPU has is chosen at run time: eight lanes with AVX-512 F and DQ, four with
/// AVX; TALUS_LANES=4 keeps four lanes and TALUS_PGS_SCALAR=1 the scalar kernel (to measure
/// them).
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

/// bgs's sweep of contacts [lo, hi) (solvers/bgs.cpp): bgs_block of
/// solvers/contact_operator.hpp on each, in the metric batch.eta_n / eta_t (filled by
/// BodyOperator::bgs_prepare), under the CCP or (`law` Coulomb) exact Coulomb friction;
/// returns what pgs_range does.
double bgs_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                 double omega, double tol2, bool independent, FrictionLaw law = FrictionLaw::CCP);

/// PJ's contact pass over [lo, hi): next_i = Π_K(γ_i − step_i d_i) from the current
/// velocities (read only); returns the largest docs/design.md §6 residual term
/// ‖γ_i − Π_K(γ_i − η_i d_i)‖ / η_i (0 for an empty range). `lanes`: allow the lane kernels.
double pj_contacts_range(const AssembledBatch& batch, SolverBodies& bodies, const double* step,
                         Vec3* next, std::size_t lo, std::size_t hi, bool lanes = true);

/// PJ's second pass over [lo, hi): ν += M⁻¹ D_i (next_i − γ_i), then γ_i ← next_i.
/// `independent` as for pgs_range.
void pj_apply_range(AssembledBatch& batch, const Vec3* next, SolverBodies& bodies, std::size_t lo,
                    std::size_t hi, bool independent);

/// The largest docs/design.md §6 residual term ‖γ_i − Π_K(γ_i − η_i d_i)‖ / η_i over
/// contacts [lo, hi) at the solver bodies' velocities (read only: the contacts may share
/// bodies; 0 for an empty range); under `law` Coulomb with De Saxcé's ĉ_i for d_i.
/// `lanes`: allow the lane kernels.
double residual_range(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                      std::size_t hi, bool lanes = true, FrictionLaw law = FrictionLaw::CCP);

/// PGS on the rolling entries [first, last) (AssembledBatch::rolling, solvers/rolling.hpp),
/// with AVX lanes when `independent` (one colour's entries); returns the largest residual
/// term's excess, or −1. Same bits either way.
double pgs_rolling_range(AssembledBatch& batch, SolverBodies& bodies, std::size_t first, std::size_t last,
                         double omega, double tol2, bool independent);

/// Whether the CPU has AVX (four lanes) and AVX-512 F and DQ (eight lanes).
bool pgs_lanes_available();
bool lanes8_available();

/// Each kernel at one width, for tests and benchmarks: the scalar kernel, and the lanes at
/// `width` 4 (requires pgs_lanes_available()) or 8 (requires lanes8_available()) on an
/// independent range (the residual's may share bodies). Anisotropic bodies (clumps,
/// capsules, ellipsoids) ride in the lanes with their world I⁻¹; a range's last contacts
/// fewer than the width go to narrower lanes or to the scalar update.
double pgs_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2);
double pgs_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                       std::size_t hi, double omega, double tol2, int width = 4);
double pgs_rolling_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t first, std::size_t last,
                                double omega, double tol2);
double pgs_rolling_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t first, std::size_t last,
                               double omega, double tol2, int width = 4);
double bgs_range_scalar(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo,
                        std::size_t hi, double omega, double tol2, FrictionLaw law = FrictionLaw::CCP);
double bgs_range_lanes(AssembledBatch& batch, SolverBodies& bodies, std::size_t lo, std::size_t hi,
                       double omega, double tol2, FrictionLaw law = FrictionLaw::CCP, int width = 4);
double pj_contacts_range_lanes(const AssembledBatch& batch, SolverBodies& bodies, const double* step,
                               Vec3* next, std::size_t lo, std::size_t hi, int width = 4);
void pj_apply_range_lanes(AssembledBatch& batch, const Vec3* next, SolverBodies& bodies, std::size_t lo,
                          std::size_t hi, int width = 4);
double residual_range_lanes(const AssembledBatch& batch, const SolverBodies& bodies, std::size_t lo,
                            std::size_t hi, FrictionLaw law = FrictionLaw::CCP, int width = 4);

/// The impulses γ of contacts [lo, hi) added to their bodies' sums (B: +p and +r_B × p, A: −p
/// and −r_A × p, p = A_i γ_i; solvers/body_contacts.cpp, scatter_body_impulses), in contact
/// order. `independent` (no two contacts of the range share a body): `width` contacts at a
/// time (−1: the CPU's lanes, 0: one by one), the same bits.
void scatter_impulses_range(const AssembledBatch& batch, const std::vector<Vec3>& gamma, SolverBodies& bodies,
                            std::size_t lo, std::size_t hi, bool independent, int width = -1);

}  // namespace talus
