#pragma once
/// Run settings as plain structs with documented defaults (README lists the same values).
#include <cstdint>
#include <string>

#include "math.hpp"

namespace talus {

struct SimulationSettings {
    double dt = 1e-3;                         ///< time step h [s]
    double duration = 1.0;                    ///< simulated time [s]
    Vec3 gravity = Vec3(0.0, 0.0, -9.81);     ///< [m/s²]
};

enum class SolverType : uint8_t { PGS };

struct SolverSettings {
    SolverType type = SolverType::PGS;
    int max_iterations = 100;       ///< iteration cap per step [-]
    double tolerance = 1e-4;        ///< residual r at which to stop [m/s] (DESIGN §6)
    double relaxation = 1.0;        ///< ω of the projected Gauss–Seidel step [-]
    double envelope = 1e-3;         ///< minimum collision envelope δ [m]; grows per step
    double recovery_speed = 0.1;    ///< v_rec, cap on penetration correction [m/s]
    double stabilization = 0.2;     ///< γ_s ∈ (0, 1], share of a penetration corrected per step [-]
    bool warm_start = true;         ///< start from the last step's impulses
};

struct OutputSettings {
    std::string path = "out.h5";    ///< trajectory file; relative to the scene file
    double interval = 0.01;         ///< simulated time between frames [s]
};

}  // namespace talus
