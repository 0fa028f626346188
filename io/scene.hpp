#pragma once
/// Scene files (docs/design.md §10): a TOML description of a run → a configured World.
/// Every key, default, unit and range is a row of the schema (io/scene/schema.cpp), printed
/// as docs/scene-format.md by scene_reference(); the reader rejects unknown keys, wrong
/// types and impossible values with the file, line and key.
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/settings.hpp"
#include "engine/world/stages.hpp"
#include "engine/world/world.hpp"

namespace talus {

/// Everything wrong with a scene, one problem per line:
///   "<file>:<line>: <key path>: <problem>"
/// e.g. "scenes/x.toml:12: solver.tolerence: unknown key (did you mean 'tolerance'?)".
/// A problem caused by an override is located by the override instead of a line:
///   "--set solver.tolerence=1: solver.tolerence: unknown key (did you mean 'tolerance'?)".
/// Key paths index arrays of tables from 0, as overrides do: "material.1.friction".
struct SceneError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// A parsed, validated scene, ready to run.
struct Scene {
    std::filesystem::path file;          ///< as given
    std::string text;                    ///< the full scene text as read
    std::vector<std::string> overrides;  ///< the --set strings, as given
    OutputSettings output;               ///< output.path resolved against the scene's directory
    World world;                         ///< simulation, solver, materials, walls and bodies set
    /// The run's stages, in order (at least one: without [[stage]], one stage of
    /// [simulation] duration and stop condition).
    std::vector<Stage> stages;
    /// Legal values that are probably mistakes (a unit slip: a density of 2.5, a radius of
    /// 5 m), one per line in the form of a problem: "<file>:<line>: <key>: <text>".
    std::vector<std::string> warnings;
    /// The file [start] took the bodies from, a trajectory or a checkpoint, resolved against
    /// the scene's directory (empty without [start]): a run must write neither its
    /// trajectory nor its checkpoint over it.
    std::filesystem::path start_from;
};

/// Reads and validates `file`. Overrides are "key=value" strings (the command line's
/// --set): a dotted key path, arrays of tables indexed from 0 ("material.0.friction"),
/// and a TOML value ("1e-5", "[0, 0, -9.81]", "true", "\"a\""; a value that is not valid
/// TOML is taken as a bare string). They are applied to the parsed document before it is
/// validated. Bodies get stable ids 0, 1, 2, … in file order of their [[particles]] and
/// [[body]] entries, and within a lattice with x fastest, then y, then z.
/// Throws SceneError listing every problem found.
/// Bodies a scene may generate unless SceneLimits says otherwise (≈ 34 GB of body state).
inline constexpr double kDefaultMaxBodies = 1e8;

/// Bounds on what a scene may ask for, and how a long load reports on itself.
struct SceneLimits {
    /// Bodies the scene's entries may generate in all; more is an error naming the entry
    /// (the fuzzer lowers it, so that an input's cost stays small).
    double max_bodies = kDefaultMaxBodies;
    /// Called now and then while a random fill works, with a line saying which fill and how
    /// far it has got ("particles.0 (scene.toml:12): 120,000 of 1,000,000 spheres placed");
    /// empty: silent.
    std::function<void(const std::string&)> progress;
    /// Memory the run may use [bytes]; 0: no check. A scene whose bodies (with what its
    /// emitters can add over the run) need more at least (run_memory(...).least) is
    /// refused before any grain is generated, with the estimate in the message.
    double memory_bytes = 0.0;
};

/// The memory a run of `bodies` bodies needs at its peak [bytes], two figures:
/// - `least`, the refusal's threshold: a fixed 44 MB, 340 bytes per body and 520 per
///   contact with one contact per body. It stays above the resident set on purpose: under
///   RLIMIT_AS the address space a run maps (thread stacks, allocator arenas, libraries)
///   exceeds what it touches, and a scene let through at the resident figure ran out of
///   memory in its first step (test io.memory_limits).
/// - `typical`, what `talus check` prints: the resident peak measured on 10⁶ beads, 44 MB,
///   343 bytes per body and, per contact, 290 under the sweep solvers (pgs, bgs: no work
///   vectors per contact) or 400 under APGD (520, the first measurement, for the others),
///   with three contacts per body, as a settled random pack holds (3.15 in the random-pack
///   twin at rest). benchmarks/README.md, "The whole million"; docs/memory.md.
struct MemoryEstimate {
    double least = 0.0, typical = 0.0;
};
inline MemoryEstimate run_memory(double bodies, SolverType solver = SolverType::BGS) {
    const double fixed = 44e6;
    const double contact = solver == SolverType::BGS || solver == SolverType::PGS ? 290.0
                           : solver == SolverType::APGD                          ? 400.0
                                                                                 : 520.0;
    return {fixed + bodies * (340.0 + 520.0), fixed + bodies * (343.0 + 3.0 * contact)};
}

/// The memory this process may use [bytes]: the least of the machine's physical memory, the
/// cgroup's memory.max (a container or a batch job's allocation) and RLIMIT_AS.
double available_memory_bytes();

Scene load_scene(const std::filesystem::path& file, const std::vector<std::string>& overrides = {},
                 const SceneLimits& limits = {});

/// As load_scene, from text in memory; `name` stands for the file in messages and output.path
/// is resolved against its directory.
Scene parse_scene(std::string_view text, const std::filesystem::path& name,
                  const std::vector<std::string>& overrides = {}, const SceneLimits& limits = {});

/// The scene reference, generated from the schema's rows: one Markdown table per TOML table
/// (key, type, default, unit, accepted values, meaning). `talus keys` prints it;
/// docs/scene-format.md is its output, kept up to date by the test io.scene_format_doc.
std::string scene_reference();

}  // namespace talus
