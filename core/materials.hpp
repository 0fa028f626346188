#pragma once
/// Materials and the friction, restitution, rolling and spinning resistance of a pair
/// (docs/design.md §10): the pair table when the scene gives the pair, otherwise the smaller of the
/// two coefficients.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/value_range.hpp"

namespace talus {

struct Material {
    std::string name;
    double density = 2500.0;  ///< [kg/m³]
    double friction = 0.5;    ///< Coulomb coefficient μ [-]
    double restitution = 0.0; ///< Newton's coefficient e ∈ [0, 1] on the normal velocity [-]
    double rolling_friction = 0.0;   ///< μ_r: rolling torque ≤ μ_r γ_n (Tasora–Anitescu 2013) [m]
    double spinning_friction = 0.0;  ///< μ_s: spinning torque ≤ μ_s γ_n [m]

    /// The values each field accepts (pairs take the same).
    struct Accepted {
        static constexpr ValueRange density = above(0.0);
        static constexpr ValueRange friction = at_least(0.0);
        static constexpr ValueRange restitution{ValueRange::Bound::Closed, 0.0, ValueRange::Bound::Closed, 1.0};
        static constexpr ValueRange rolling_friction = at_least(0.0);
        static constexpr ValueRange spinning_friction = at_least(0.0);
    };
};

struct MaterialTable {
    std::vector<Material> materials;
    /// Explicit pair coefficients, row-major n×n; negative = not given.
    std::vector<double> pair_friction, pair_restitution, pair_rolling, pair_spinning;

    std::size_t size() const { return materials.size(); }

    uint32_t add(Material m) {
        const std::size_t n = materials.size();
        for (std::vector<double>* table :
             {&pair_friction, &pair_restitution, &pair_rolling, &pair_spinning}) {
            std::vector<double> grown((n + 1) * (n + 1), -1.0);
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = 0; j < n; ++j) grown[i * (n + 1) + j] = (*table)[i * n + j];
            *table = std::move(grown);
        }
        materials.push_back(std::move(m));
        return static_cast<uint32_t>(n);
    }

    void set_pair_friction(uint32_t a, uint32_t b, double mu) { set_pair(pair_friction, a, b, mu); }
    void set_pair_restitution(uint32_t a, uint32_t b, double e) { set_pair(pair_restitution, a, b, e); }
    void set_pair_rolling(uint32_t a, uint32_t b, double mu_r) { set_pair(pair_rolling, a, b, mu_r); }
    void set_pair_spinning(uint32_t a, uint32_t b, double mu_s) { set_pair(pair_spinning, a, b, mu_s); }

    /// Coulomb μ of a pair [-].
    double friction(uint32_t a, uint32_t b) const {
        return pair_value(pair_friction, &Material::friction, a, b);
    }
    /// Newton's e of a pair [-].
    double restitution(uint32_t a, uint32_t b) const {
        return pair_value(pair_restitution, &Material::restitution, a, b);
    }
    /// μ_r of a pair [m].
    double rolling(uint32_t a, uint32_t b) const {
        return pair_value(pair_rolling, &Material::rolling_friction, a, b);
    }
    /// μ_s of a pair [m].
    double spinning(uint32_t a, uint32_t b) const {
        return pair_value(pair_spinning, &Material::spinning_friction, a, b);
    }

    /// "material.K.KEY: must be RULE (got V)" (K the material's index) for each coefficient
    /// out of its range, and likewise for each pair given explicitly; empty when all hold.
    std::vector<std::string> problems() const {
        std::vector<std::string> out;
        // each `where` makes its prefix only for a value out of range (check_range)
        using A = Material::Accepted;
        for (std::size_t k = 0; k < materials.size(); ++k) {
            const Material& m = materials[k];
            const auto where = [k] { return "material." + std::to_string(k) + "."; };
            check_range(out, where, "density", A::density, m.density);
            check_range(out, where, "friction", A::friction, m.friction);
            check_range(out, where, "restitution", A::restitution, m.restitution);
            check_range(out, where, "rolling_friction", A::rolling_friction, m.rolling_friction);
            check_range(out, where, "spinning_friction", A::spinning_friction, m.spinning_friction);
        }
        const std::size_t n = materials.size();
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i; j < n; ++j) {
                const std::size_t at = i * n + j;
                const auto where = [i, j] {
                    return "pair of materials " + std::to_string(i) + " and " + std::to_string(j) + ": ";
                };
                // negative = not given
                if (pair_friction[at] >= 0.0) check_range(out, where, "friction", A::friction, pair_friction[at]);
                if (pair_restitution[at] >= 0.0) check_range(out, where, "restitution", A::restitution, pair_restitution[at]);
            }
        return out;
    }

    /// Whether some pair can have rolling or spinning resistance (else assembly skips the
    /// torque block entirely).
    bool any_rolling() const {
        for (const Material& m : materials)
            if (m.rolling_friction > 0.0 || m.spinning_friction > 0.0) return true;
        for (std::size_t k = 0; k < pair_rolling.size(); ++k)
            if (pair_rolling[k] > 0.0 || pair_spinning[k] > 0.0) return true;
        return false;
    }

    /// Index of the material called `name`, or -1.
    int find(const std::string& name) const {
        for (std::size_t i = 0; i < materials.size(); ++i)
            if (materials[i].name == name) return static_cast<int>(i);
        return -1;
    }

private:
    void set_pair(std::vector<double>& table, uint32_t a, uint32_t b, double value) {
        const std::size_t n = materials.size();
        table[a * n + b] = value;
        table[b * n + a] = value;
    }

    /// The pair table's entry when the scene gives one, else the smaller coefficient.
    double pair_value(const std::vector<double>& table, double Material::*coefficient,
                      uint32_t a, uint32_t b) const {
        const double given = table[a * materials.size() + b];
        if (given >= 0.0) return given;
        return std::min(materials[a].*coefficient, materials[b].*coefficient);
    }
};

}  // namespace talus
