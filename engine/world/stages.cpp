// Multi-stage runs: start actions and the end-of-stage test (engine/world/stages.hpp).
#include "engine/world/stages.hpp"

#include <cmath>

#include <fmt/format.h>

#include "engine/world/world.hpp"

namespace talus {

void begin_stage(const Stage& stage, World& world) {
    for (uint32_t w : stage.remove_walls) world.walls.at(w).active = false;
    for (uint32_t w : stage.start_motion) world.walls.at(w).motion.start = world.time;
}

StageMonitor::StageMonitor(const Stage& stage, const World& world) : stage_(stage) {
    // Steps, not a running time sum, decide the end: t = k h exactly (World::step).
    end_step_ = world.step_count + uint64_t(std::llround(stage.duration / world.simulation.dt));
}

bool StageMonitor::done(const World& world) {
    if (stage_.kinetic_energy_below > 0.0) {
        const double e = world.diagnostics().kinetic_energy;
        if (e < stage_.kinetic_energy_below) {
            if (below_since_ < 0.0) below_since_ = world.time;
            // the first step below counts as one step of the stretch
            const double held = world.time - below_since_ + world.simulation.dt;
            if (held >= stage_.hold - 1e-9 * world.simulation.dt) {
                reason_ = fmt::format("kinetic energy {:.3g} J below {:.3g} J for {:.3g} s", e,
                                      stage_.kinetic_energy_below, held);
                return true;
            }
        } else {
            below_since_ = -1.0;
        }
    }
    if (world.step_count >= end_step_) {
        reason_ = "duration reached";
        return true;
    }
    return false;
}

}  // namespace talus
