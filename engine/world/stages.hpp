#pragma once
/// Multi-stage runs and stop conditions: a run is a list of stages (settle, then open a
/// gate; fill, then start a drum). Each stage lasts at most its duration and may end
/// earlier once the kinetic energy has stayed below a threshold for a hold time. At its
/// start a stage may remove walls (a gate that vanishes) and start walls' motions. A scene
/// without [[stage]] is one stage of [simulation] duration. The run loop (tools/talus_main.cpp, tests) drives it:
///   for each stage: begin_stage(stage, world); StageMonitor m(stage, world);
///                   do world.step() until m.done(world) …
#include <cstdint>
#include <string>
#include <vector>

namespace talus {

class World;

struct Stage {
    std::string name;                    ///< for messages and the progress line
    double duration = 1.0;               ///< longest the stage lasts [s]
    /// Stop condition: the stage ends early once the total kinetic energy has stayed below
    /// this for `hold` seconds; ≤ 0 = no early end [J].
    double kinetic_energy_below = 0.0;
    double hold = 0.0;                   ///< [s], ≥ 0 (0: the first step below ends the stage)
    std::vector<uint32_t> remove_walls;  ///< indices into World::walls made inactive at the start
    /// Indices into World::walls whose prescribed motion begins when the stage begins (a drum
    /// that starts turning once filled). Until then the scene holds each at its reference
    /// pose with motion.start = +∞; begin_stage sets motion.start to the current time.
    std::vector<uint32_t> start_motion;
};

/// Applies the stage's start actions to `world` (walls removed, wall motions started).
void begin_stage(const Stage& stage, World& world);

/// Watches one stage: construct at the stage's start, call done() after every step.
class StageMonitor {
public:
    StageMonitor(const Stage& stage, const World& world);

    /// True once the stage is over: its duration is reached, or the kinetic energy has been
    /// below the threshold for `hold` (measured on step ends; the stretch starts at the
    /// first step found below and restarts whenever the energy rises to the threshold).
    bool done(const World& world);

    /// Why the stage ended ("" while it runs): "duration reached" or the energy criterion.
    const std::string& reason() const { return reason_; }
    /// Last step of the stage if it runs its full duration (fixed step).
    uint64_t end_step() const { return end_step_; }
    /// Time at which the stage ends if it runs its full duration: with the adaptive step,
    /// the run passes it to World::step as a time to land on exactly [s].
    double end_time() const { return end_time_; }

    /// What the monitor has seen so far (checkpoints): restoring it into a monitor of the
    /// same stage continues the stage as if uninterrupted.
    struct State {
        uint64_t end_step = 0;
        double below_since = -1.0;
        double end_time = 0.0;
    };
    State state() const { return {end_step_, below_since_, end_time_}; }
    void restore(const State& s) {
        end_step_ = s.end_step;
        below_since_ = s.below_since;
        end_time_ = s.end_time;
    }

private:
    const Stage& stage_;
    uint64_t end_step_ = 0;
    double end_time_ = 0.0;
    /// Fixed step: time at the end of the first step of the current stretch below; adaptive
    /// step: at its start. −1 = none.
    double below_since_ = -1.0;
    std::string reason_;
};

}  // namespace talus
