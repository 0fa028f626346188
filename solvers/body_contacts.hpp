#pragma once
/// Per-body lists of contacts, to rebuild ν = ν* + M⁻¹ D γ body by body: in parallel, with
/// each body's sum taken in contact order, so the result does not depend on the threads.
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "solvers/assemble.hpp"
#include "solvers/contact_ops.hpp"

namespace talus {

struct BodyContacts {
    std::vector<uint32_t> start;  ///< per body: first entry; size bodies + 1
    std::vector<uint32_t> entry;  ///< 2 × contact + side (0: A, 1: B), in contact order

    /// Counting sort of the batch's contact ends by body (serial, deterministic).
    void build(const AssembledBatch& c, std::size_t body_count);
    std::size_t body_count() const { return start.empty() ? 0 : start.size() - 1; }
};

/// For every body b, in parallel: out(b, F, T) with the world-frame impulse F = Σ ±A_i γ_i
/// and angular impulse T = Σ ±r_i × A_i γ_i of its contacts (+ on side B, − on side A),
/// each summed in ascending contact order.
/// How many contact ends ahead the gather asks for its contacts' data (a hint only).
inline constexpr std::size_t kGatherPrefetch = 8;

template <class Out>
void for_each_body_impulse(const AssembledBatch& c, const BodyContacts& bc,
                           const std::vector<Vec3>& gamma, Out&& out) {
    parallel_ranges(0, bc.body_count(), grain::kBodies, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t b = lo; b != hi; ++b) {
            Vec3 f = Vec3::Zero(), t = Vec3::Zero();
            for (uint32_t k = bc.start[b]; k < bc.start[b + 1]; ++k) {
                if (k + kGatherPrefetch < bc.entry.size()) {  // contacts come scattered
                    const uint32_t ahead = bc.entry[k + kGatherPrefetch];
                    const std::size_t j = ahead >> 1;
                    __builtin_prefetch(&c.normal[j]);
                    __builtin_prefetch((ahead & 1) ? &c.lever_b[j] : &c.lever_a[j]);
                    __builtin_prefetch(&gamma[j]);
                }
                const uint32_t e = bc.entry[k];
                const std::size_t i = e >> 1;
                const Vec3 p = contact_frame(c, i).to_world(gamma[i]);
                const Vec3 tp = cross((e & 1) ? c.lever_b[i] : c.lever_a[i], p);
                if (e & 1) { f += p; t += tp; } else { f -= p; t -= tp; }
            }
            out(b, f, t);
        }
    });
}

/// Every body's F and T of for_each_body_impulse, summed in the same order with the same
/// operations (so the same bits), left in sb.body[b].v (F) and sb.body[b].w (T): the
/// velocities there are overwritten. A batch whose colours hold all its contacts (every
/// solve's) is summed by a scatter colour by colour, each colour in parallel where no two
/// of its contacts share a body and the overflow colour serially: contact order is colour
/// order, and a body has at most one contact a colour (outside the overflow colour), so each
/// body adds its contacts in ascending order, as the gather does. The contacts are then
/// read in order, where the gather reached them scattered, body by body. But each colour
/// reads and writes the bodies' lines again, so once they no longer stay in the caches the
/// gather catches up: BM_BodyGather, 2 threads, `vm (AMD EPYC, 2 cores)`, 32 MB L3
/// (benchmarks/README.md): the scatter 1.9–3.6× faster at 27,000 bodies, 2.0–3.1× at
/// 97,000, 1.1–2.1× at 262,000, and at 10⁶ as fast or 1.5× slower. So from kScatterBodies
/// bodies on, and for a batch not coloured whole: the gather. Either way the same bits.
inline constexpr std::size_t kScatterBodies = 200'000;
void sum_body_impulses(const AssembledBatch& c, const BodyContacts& bc, const std::vector<Vec3>& gamma,
                       SolverBodies& sb);
/// Whether the scatter applies: every contact in a colour, and `bc` over sb's bodies.
bool scatters(const AssembledBatch& c, const BodyContacts& bc, const SolverBodies& sb);
/// The scatter alone, at any size (where scatters(): sum_body_impulses's choice, and its
/// benchmark's).
void scatter_body_impulses(const AssembledBatch& c, const std::vector<Vec3>& gamma, SolverBodies& sb);

/// After sum_body_impulses, for the first `bodies` bodies: sb's velocities at ν* + M⁻¹ (F, T)
/// (world frame), then also(b, F, T), in parallel.
template <class Also>
void velocities_from_sums(SolverBodies& sb, std::size_t bodies, Also&& also) {
    parallel_ranges(0, bodies, grain::kBodies, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t b = lo; b != hi; ++b) {
            const Vec3 f = sb.body[b].v, t = sb.body[b].w;
            sb.body[b].v = sb.v_free[b] + sb.body[b].inv_mass * f;
            sb.body[b].w = sb.w_free[b] + sb.inv_inertia_times(b, t);
            also(b, f, t);
        }
    });
}

/// Solver bodies at ν* + M⁻¹ D γ (world frame).
void solver_velocities(const AssembledBatch& c, const BodyContacts& bc,
                       const std::vector<Vec3>& gamma, SolverBodies& sb);

}  // namespace talus
