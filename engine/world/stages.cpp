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
    // Fixed step: steps, not a running time sum, decide the end (t = k h exactly). Adaptive
    // step: the end time, which World::step lands on exactly when given it as `until`.
    end_step_ = world.step_count + uint64_t(std::llround(stage.duration / world.simulation.dt));
    end_time_ = world.time + stage.duration;
}

bool StageMonitor::done(const World& world) {
    const bool adaptive = world.simulation.adaptive;
    if (stage_.kinetic_energy_below > 0.0) {
        const double e = world.diagnostics().kinetic_energy;
        if (e < stage_.kinetic_energy_below) {
            // the first step below counts as one step of the stretch
            double held = 0.0, h = world.simulation.dt;
            if (adaptive) {
                h = world.diagnostics().dt;
                if (below_since_ < 0.0) below_since_ = world.time - h;
                held = world.time - below_since_;
            } else {
                if (below_since_ < 0.0) below_since_ = world.time;
                held = world.time - below_since_ + h;
            }
            if (held >= stage_.hold - 1e-9 * h) {
                reason_ = fmt::format("kinetic energy {:.3g} J below {:.3g} J for {:.3g} s", e,
                                      stage_.kinetic_energy_below, held);
                return true;
            }
        } else {
            below_since_ = -1.0;
        }
    }
    // (adaptive: within 1e-9 of the duration, the same time as the end, as for frames)
    if (adaptive ? world.time >= end_time_ - 1e-9 * stage_.duration
                 : world.step_count >= end_step_) {
        reason_ = "duration reached";
        return true;
    }
    return false;
}

}  // namespace talus
