#pragma once
/// Platform-independent random numbers: std::mt19937_64 (whose output sequence the C++
/// standard fixes) turned into doubles by our own formulas, because the standard's
/// distributions (uniform_real_distribution, normal_distribution, …) are implementation-
/// defined and would give other grains with another standard library.
#include <cmath>
#include <cstdint>
#include <random>

namespace talus {

/// Seed offset of the radius stream of fills and emitters: their radii come from
/// mt19937_64(seed ^ kRadiusStream), their positions from mt19937_64(seed).
inline constexpr uint64_t kRadiusStream = 0x9E3779B97F4A7C15ull;

/// Maps 64 random bits to a double uniform in [0, 1) using the top 53 bits, so the
/// result is the same on every platform and standard library.
inline double bits_to_unit(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

/// A standard normal deviate by the Box–Muller transform from two consecutive outputs:
/// z = √(−2 ln u₁) cos(2π u₂) with u₁ ∈ (0, 1] (so the log is finite), u₂ ∈ [0, 1).
/// The sine partner is discarded, so each call consumes exactly two outputs.
inline double standard_normal(std::mt19937_64& rng) {
    const double u1 = 1.0 - bits_to_unit(rng());
    const double u2 = bits_to_unit(rng());
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586476925 * u2);
}

}  // namespace talus
