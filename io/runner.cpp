// The run driver (io/runner.hpp): the loop of `talus run` over stages and steps, with its
// frame and checkpoint cadences and the stop between two steps.
#include "io/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "engine/world/rank_world.hpp"

namespace talus {

RunMetadata prepare_run_output(Scene& scene) {
    World& world = scene.world;
    RunMetadata meta;
    meta.scene_text = scene.text;
    meta.scene_path = scene.file.string();
    meta.overrides = scene.overrides;
    meta.talus_version = TALUS_VERSION;
    meta.emitters = world.emitters.size();
    meta.outlets = world.outlets.size();
    for (std::size_t w = 0; w < world.walls.size(); ++w) {
        const Wall& wall = world.walls[w];
        meta.wall_names.push_back(wall.name.empty() ? fmt::format("wall.{}", w) : wall.name);
        meta.wall_reference_points.push_back(wall_reference_point(wall));
    }
    meta.wall_contacts = scene.output.wall_contacts && !world.walls.empty();
    meta.contacts = scene.output.contacts;
    meta.shapes = std::any_of(world.bodies.shape.begin(), world.bodies.shape.end(),
                              [](Shape s) { return s != Shape::Sphere; });
    meta.wall_surface = wall_surface(world.walls, world.bodies);
    meta.dt = world.simulation.adaptive ? 0.0 : world.simulation.dt;  // adaptive: per frame in /walls/contacts/dt
    meta.precision = scene.output.precision;
    meta.compression = scene.output.compression;
    meta.rows_per_frame = world.bodies.size();
    for (const Stage& stage : scene.stages) meta.stage_names.push_back(stage.name);
    world.record_wall_contacts = meta.wall_contacts;
    world.record_contacts = meta.contacts;
    return meta;
}

void add_step_series(StepDiagnostics& d, const World& world) {
    const WallLoads& loads = world.wall_loads();
    d.wall_force.assign(world.walls.size(), Vec3::Zero());
    if (d.dt > 0.0 && loads.step_impulse.size() == world.walls.size())
        for (std::size_t w = 0; w < world.walls.size(); ++w) d.wall_force[w] = loads.step_impulse[w] / d.dt;
    for (const Emitter& e : world.emitters) {
        d.emitted_total_count.push_back(e.emitted.count);
        d.emitted_total_mass.push_back(e.emitted.mass);
    }
    for (const Outlet& o : world.outlets) {
        d.removed_total_count.push_back(o.removed.count);
        d.removed_total_mass.push_back(o.removed.mass);
    }
}

void write_world_frame(TrajectoryWriter& writer, World& world, const BodyStore* bodies) {
    std::vector<FlowTally> emitted, removed;
    for (const Emitter& e : world.emitters) emitted.push_back(e.emitted);
    for (const Outlet& o : world.outlets) removed.push_back(o.removed);
    writer.write_frame(bodies ? *bodies : world.bodies, world.time, world.step_count, emitted, removed, &world.wall_loads(),
                       &world.wall_contacts(), &world.contact_record(), &world.walls);
    world.reset_wall_loads();
    // A large run waits for its frame to reach the file: the packed copy (~130 bytes a body
    // in float64) would otherwise be held through the next step's peak, which it would raise
    // by a tenth (docs/memory.md); the run's first frame as much as the others. A frame of a
    // million bodies takes ~2 s, against steps of several seconds and frames hundreds of
    // steps apart.
    if (world.large_run()) writer.flush();
}

Runner::Runner(Scene& scene, TrajectoryWriter* writer, RunSetup setup)
    : scene_(scene), writer_(writer), setup_(std::move(setup)) {
    const double dt = scene_.world.simulation.dt;
    frame_every_ = cadence_steps(scene_.output.interval, dt);
    checkpoint_every_ = scene_.output.checkpoint_interval > 0.0 ? cadence_steps(scene_.output.checkpoint_interval, dt) : 0;
    // a resumed run's checkpoint is on disk already
    if (setup_.resuming) checkpointed_ = scene_.world.step_count;
}

template <class F>
void Runner::on_writing_rank(F&& write) {
    World& world = scene_.world;
    if (!world.distributed()) {
        write();
        return;
    }
    Ranks& ranks = *world.on_ranks.ranks;
    std::exception_ptr failure;
    if (ranks.root()) {
        try {
            write();
        } catch (...) {
            failure = std::current_exception();
        }
    }
    // the others would otherwise wait for rank 0 in the next step's collectives
    if (ranks.any(failure != nullptr)) {
        if (failure) std::rethrow_exception(failure);
        throw PeerFailed();
    }
}

bool Runner::parallel_writer() const { return writer_ != nullptr && writer_->parallel(); }

void Runner::checkpoint_now(const RunPosition& at) {
    World& world = scene_.world;
    if (setup_.checkpoint.empty() || checkpointed_ == world.step_count) return;
    // a file written from every rank is brought up to date by every rank (a collective)
    if (parallel_writer()) writer_->sync();
    // over ranks, the whole state as one process holds it (on rank 0), which the scene
    // holds while write_checkpoint reads it
    std::optional<World> whole;
    if (world.distributed()) whole = gather_whole(world);
    on_writing_rank([&] {
        // (every rank steps the whole world and writes the file in parallel: rank 0 alone
        // writes the checkpoint)
        if (parallel_writer() && !writer_->writes_shared()) return;
        if (writer_ && !parallel_writer()) writer_->sync();
        if (whole) std::swap(scene_.world, *whole);
        try {
            write_checkpoint(setup_.checkpoint, scene_, at, setup_.trajectory);
        } catch (...) {
            if (whole) std::swap(scene_.world, *whole);
            throw;
        }
        if (whole) std::swap(scene_.world, *whole);
    });
    checkpointed_ = world.step_count;
}

std::optional<BodyStore> Runner::gathered_bodies() const {
    const World& world = scene_.world;
    if (!world.distributed()) return std::nullopt;
    return gather_bodies(world);
}

void Runner::write_frame() {
    World& world = scene_.world;
    if (parallel_writer()) {
        write_own_frame();
        return;
    }
    const std::optional<BodyStore> whole = gathered_bodies();
    on_writing_rank([&] {
        if (!writer_) return;
        write_world_frame(*writer_, world, whole ? &*whole : nullptr);
    });
    if (world.distributed()) world.reset_wall_loads();  // on every rank, as on rank 0
}

void Runner::write_own_frame() {
    World& world = scene_.world;
    // every rank its own bodies: in parts the ones it owns, else rank 0 all of them
    const BodyStore none;
    const std::optional<BodyStore> own =
        world.distributed() ? std::optional<BodyStore>(own_bodies(world)) : std::nullopt;
    write_world_frame(*writer_, world, own ? &*own : writer_->writes_shared() ? nullptr : &none);
}

void Runner::close_after_failure() {
    World& world = scene_.world;
    const bool adaptive = world.simulation.adaptive;
    // whether the last good state is not a frame yet (asked where the writer is)
    const auto frame_missing = [&] {
        return adaptive ? writer_->last_frame_step() != world.step_count : world.step_count % frame_every_ != 0;
    };
    if (parallel_writer()) {  // every rank, as at every frame
        if (frame_missing()) write_own_frame();
        writer_->close();
        return;
    }
    const std::optional<BodyStore> whole = gathered_bodies();  // over ranks: rank 0 decides
    on_writing_rank([&] {
        if (!writer_) return;
        if (frame_missing()) write_world_frame(*writer_, world, whole ? &*whole : nullptr);
        writer_->close();
    });
}

RunOutcome Runner::run(const RunEvents& events) {
    World& world = scene_.world;
    const bool adaptive = world.simulation.adaptive;
    const double interval = scene_.output.interval;
    const double checkpoint_interval = scene_.output.checkpoint_interval;
    double next_frame = next_multiple(world.time, interval);
    double next_checkpoint = checkpoint_interval > 0.0 ? next_multiple(world.time, checkpoint_interval)
                                                       : std::numeric_limits<double>::infinity();
    // A frame time reached within 1e-9 of the interval counts as reached: a stage's end and
    // a frame time that differ in the last bits are one time, not two steps apart.
    const auto frame_due = [&] {
        return adaptive ? world.time >= next_frame - 1e-9 * interval : world.step_count % frame_every_ == 0;
    };
    const RunPosition& start = setup_.start;
    for (std::size_t s = start.stage; s < scene_.stages.size(); ++s) {
        const Stage& stage = scene_.stages[s];
        // the stage a checkpoint was taken in has begun: its start actions are in the
        // restored state, and its monitor continues
        const bool fresh = !(setup_.resuming && s == start.stage);
        if (fresh) begin_stage(stage, world);
        StageMonitor monitor(stage, world);
        if (!fresh) monitor.restore(start.monitor);
        if (events.stage_begins) events.stage_begins(stage, fresh);
        bool over = false;
        while (!over) {
            // Between two steps: stop if asked, else the periodic checkpoint if due. (Here,
            // not at the end of a step, so that a stage that has just ended is followed by
            // the next one begun: a checkpoint always names a running stage.)
            if (const int sig = events.stop_requested ? events.stop_requested() : 0; sig != 0) {
                checkpoint_now({s, monitor.state()});
                if (writer_) writer_->close();
                RunOutcome out;
                out.end = RunOutcome::End::Stopped;
                out.signal = sig;
                out.at = {s, monitor.state()};
                return out;
            }
            if (adaptive ? world.time >= next_checkpoint
                         : checkpoint_every_ > 0 && world.step_count > 0 && world.step_count % checkpoint_every_ == 0) {
                checkpoint_now({s, monitor.state()});
                next_checkpoint = next_multiple(world.time, checkpoint_interval);
            }
            const double until = std::min(next_frame, monitor.end_time());
            const StepStatus status = world.distributed() ? step_on_ranks(world, until) : world.step(until);
            if (!status.ok) {
                RunOutcome out;
                out.status = status;
                if (status.has(StepFault::OutOfMemory)) {
                    out.end = RunOutcome::End::OutOfMemory;
                    return out;
                }
                // the failed step left the state as it was before it: the last good state,
                // which becomes the trajectory's last frame (unless it is one)
                close_after_failure();
                out.end = RunOutcome::End::SimulationFailed;
                return out;
            }
            if (writer_) {
                StepDiagnostics d = world.diagnostics();
                d.stage = uint32_t(s);  // the file's record of when each stage began
                add_step_series(d, world);
                writer_->write_diagnostics(d);
            }
            over = monitor.done(world);
            // frames on the global cadence, and the state at every stage's end
            const bool due = frame_due();
            if (due || over) write_frame();
            if (adaptive && due) next_frame = next_multiple(world.time, interval);
            if (events.after_step) events.after_step(world);
        }
        if (events.stage_ends) events.stage_ends(stage, monitor.reason());
    }
    // A run that keeps checkpoints keeps its end state too, so that a later scene can start
    // from the settled bed ([start] from the checkpoint); talus run then marks it finished.
    // Its position is past the last stage: resumed, it has nothing left to do.
    if (checkpoint_interval > 0.0) checkpoint_now({scene_.stages.size(), {}});
    if (writer_) writer_->close();
    return {};
}

}  // namespace talus
