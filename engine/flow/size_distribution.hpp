#pragma once
/// Radius distributions of generated spheres ([[particles]] fills and [[emitter]]s): one
/// fixed radius, uniform, truncated normal, truncated log-normal, or a discrete list with
/// weights. Draws come from a caller's std::mt19937_64 through our own formulas
/// (core/random.hpp), so a seed gives the same radii on every machine.
#include <cstdint>
#include <random>
#include <vector>

#include "core/enum_names.hpp"

namespace talus {

enum class SizeKind : uint8_t {
    Fixed,      ///< every radius = min (= max); consumes no random numbers
    Uniform,    ///< r uniform in [min, max]
    Normal,     ///< r ~ N(mu, sigma²) truncated to [min, max]
    LogNormal,  ///< ln r ~ N(mu, sigma²) truncated to r ∈ [min, max]
    Discrete    ///< r = values[k] with probability weight[k] / Σ weight
};
/// A radius table's `distribution` (a fixed radius is a number, not a table, so not named).
template <>
struct EnumNames<SizeKind> {
    static constexpr NamedValue<SizeKind> table[] = {{SizeKind::Uniform, "uniform"},
                                                     {SizeKind::Normal, "normal"},
                                                     {SizeKind::LogNormal, "lognormal"},
                                                     {SizeKind::Discrete, "discrete"}};
};

struct SizeDistribution {
    SizeKind kind = SizeKind::Fixed;
    double min = 0.0;    ///< smallest radius drawn [m] (Fixed: the radius)
    double max = 0.0;    ///< largest radius drawn [m] (Fixed: the radius)
    double mu = 0.0;     ///< Normal: mean of r [m]; LogNormal: mean of ln r [ln m]
    double sigma = 0.0;  ///< Normal: std of r [m]; LogNormal: std of ln r [-]
    std::vector<double> values;      ///< Discrete: the radii [m]
    std::vector<double> cumulative;  ///< Discrete: Σ_{j≤k} weight_j / Σ weight; last is 1

    static SizeDistribution fixed(double r);
    static SizeDistribution uniform(double min, double max);
    /// Normal of mean and std (of the untruncated law) [m], truncated to [min, max].
    static SizeDistribution normal(double mean, double std, double min, double max);
    /// Log-normal with ln r ~ N(mu_ln, sigma_ln²) (median e^mu_ln, mean e^(mu_ln + σ²/2) of
    /// the untruncated law), truncated to [min, max].
    static SizeDistribution lognormal(double mu_ln, double sigma_ln, double min, double max);
    /// Discrete radii with positive weights (normalised here).
    static SizeDistribution discrete(const std::vector<double>& values,
                                     const std::vector<double>& weights);

    /// One radius [m]. Truncated laws redraw until the value falls in [min, max] (rejection,
    /// which keeps the shape of the law inside the window exactly); each attempt consumes two
    /// outputs (Box–Muller), a uniform or discrete draw one.
    double sample(std::mt19937_64& rng) const;

    /// Probability that an untruncated Normal/LogNormal draw lands in [min, max] (1 for the
    /// others): the acceptance rate of sample's rejection loop.
    double window_probability() const;
};

}  // namespace talus
