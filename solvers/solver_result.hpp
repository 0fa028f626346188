#pragma once
/// What every solver reports (DESIGN §6).
#include <cstdint>

namespace talus {

struct SolverResult {
    int iterations = 0;         ///< sweeps performed
    double residual = 0.0;      ///< DESIGN §6 natural-map residual at exit [m/s]
    bool converged = false;     ///< residual ≤ tolerance before the iteration cap
    double wall_time = 0.0;     ///< seconds in the solver [s]
};

}  // namespace talus
