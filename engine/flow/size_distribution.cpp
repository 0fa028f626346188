// Radius distributions. Why our own sampling: std::normal_distribution and friends are
// implementation-defined, so the same seed would give other grains with another standard
// library. Uniform: r = min + u (max − min). Normal: Box–Muller (core/random.hpp).
// Log-normal: r = exp(mu + sigma z). Truncation by rejection, whose cost is
// 1 / window_probability() attempts per radius (the scene reader refuses windows that hold
// less than 0.1 % of the law). Discrete: the first k with u < cumulative[k].
#include "engine/flow/size_distribution.hpp"

#include <algorithm>
#include <cmath>

#include "core/random.hpp"

namespace talus {

SizeDistribution SizeDistribution::fixed(double r) {
    SizeDistribution d;
    d.min = d.max = r;
    return d;
}

SizeDistribution SizeDistribution::uniform(double min, double max) {
    SizeDistribution d;
    d.kind = SizeKind::Uniform;
    d.min = min;
    d.max = max;
    return d;
}

SizeDistribution SizeDistribution::normal(double mean, double std, double min, double max) {
    SizeDistribution d;
    d.kind = SizeKind::Normal;
    d.mu = mean;
    d.sigma = std;
    d.min = min;
    d.max = max;
    return d;
}

SizeDistribution SizeDistribution::lognormal(double mu_ln, double sigma_ln, double min, double max) {
    SizeDistribution d;
    d.kind = SizeKind::LogNormal;
    d.mu = mu_ln;
    d.sigma = sigma_ln;
    d.min = min;
    d.max = max;
    return d;
}

SizeDistribution SizeDistribution::discrete(const std::vector<double>& values,
                                            const std::vector<double>& weights) {
    SizeDistribution d;
    d.kind = SizeKind::Discrete;
    d.values = values;
    double total = 0.0;
    for (double w : weights) total += w;
    double run = 0.0;
    for (double w : weights) {
        run += w;
        d.cumulative.push_back(run / total);
    }
    if (!d.cumulative.empty()) d.cumulative.back() = 1.0;  // no gap above the last by round-off
    d.min = values.empty() ? 0.0 : *std::min_element(values.begin(), values.end());
    d.max = values.empty() ? 0.0 : *std::max_element(values.begin(), values.end());
    return d;
}

double SizeDistribution::sample(std::mt19937_64& rng) const {
    switch (kind) {
        case SizeKind::Fixed: return min;
        case SizeKind::Uniform: return min + bits_to_unit(rng()) * (max - min);
        case SizeKind::Normal:
            for (;;) {
                const double r = mu + sigma * standard_normal(rng);
                if (r >= min && r <= max) return r;
            }
        case SizeKind::LogNormal:
            for (;;) {
                const double r = std::exp(mu + sigma * standard_normal(rng));
                if (r >= min && r <= max) return r;
            }
        case SizeKind::Discrete: {
            const double u = bits_to_unit(rng());
            const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
            return values[std::size_t(it - cumulative.begin())];
        }
    }
    return min;
}

double SizeDistribution::window_probability() const {
    const auto phi = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
    switch (kind) {
        case SizeKind::Normal:
            if (!(sigma > 0.0)) return (mu >= min && mu <= max) ? 1.0 : 0.0;
            return phi((max - mu) / sigma) - phi((min - mu) / sigma);
        case SizeKind::LogNormal:
            if (!(min > 0.0)) return 0.0;
            if (!(sigma > 0.0)) return (mu >= std::log(min) && mu <= std::log(max)) ? 1.0 : 0.0;
            return phi((std::log(max) - mu) / sigma) - phi((std::log(min) - mu) / sigma);
        case SizeKind::Fixed:
        case SizeKind::Uniform:
        case SizeKind::Discrete: return 1.0;
    }
    return 1.0;
}

}  // namespace talus
