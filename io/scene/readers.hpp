#pragma once
/// The readers of the scene's tables, one file per table family in io/scene/, each
/// collecting its problems on the Reader (io/scene/reader.hpp); parse_scene
/// (io/scene/scene.cpp) calls them in order. Internal to io/scene/.
#include <filesystem>

#include "io/scene/reader.hpp"

namespace talus::scene_read {

// ---------------------------------------------------------------------------------------
// --set overrides (io/scene/overrides.cpp)

/// Applies one "key=value" override to the document; problems name the override.
void apply_override(toml::table& root, const std::string& text, Reader& r);

// ---------------------------------------------------------------------------------------
// [simulation], [[stage]], [periodic], [solver], [output] (io/scene/run_tables.cpp)

SimulationSettings read_simulation(Reader& r, const Ctx& root);
/// The step against the run's length and the frame cadence: a step longer than a stage
/// would run it for 0 steps (and overshoot), a frame interval shorter than the step cannot
/// be honoured.
void check_step(Reader& r, const Ctx& root, const SimulationSettings& sim,
                const std::vector<Stage>& stages, const OutputSettings& out);
/// The run's stages: the [[stage]] entries, or one stage of [simulation] duration and stop.
std::vector<Stage> read_stages(Reader& r, const Ctx& root, std::vector<Wall>& walls);
/// [periodic] x|y|z = [lo, hi]: the periodic range of each periodic axis [m].
PeriodicBox read_periodic(Reader& r, const Ctx& root);
/// [solver] envelope when the scene gives none: kSceneEnvelopeShare × the smallest radius of
/// its dynamic bodies and emitters (SolverSettings's 1 mm if it has neither).
void default_envelope(Reader& r, const Ctx& root, World& world);
/// [simulation] max_dt of an adaptive scene that gives none: the rest bound of
/// World::choose_step, √(kPenetrationTarget r_min / ‖g‖), for the smallest radius of its
/// dynamic bodies and emitters (standard gravity if the scene has none), and no shorter
/// than min_dt; SimulationSettings's 1 ms if it has neither bodies nor emitters.
void default_max_dt(Reader& r, const Ctx& root, World& world);
/// Every body inside the periodic range, and each periodic length long enough for the
/// broad phase (3 × (largest diameter + envelope)).
void check_periodic(Reader& r, const Ctx& root, const World& world);
SolverSettings read_solver(Reader& r, const Ctx& root);
OutputSettings read_output(Reader& r, const Ctx& root, const std::filesystem::path& scene_file);

// ---------------------------------------------------------------------------------------
// [[material]], [[friction_pair]] (io/scene/materials.cpp)

MaterialTable read_materials(Reader& r, const Ctx& root, const SolverSettings& solver);
/// The material named by key `k` of `c`, reporting an unknown name with a suggestion.
std::optional<uint32_t> material_ref(Reader& r, const Ctx& c, std::string_view k,
                                     const MaterialTable& materials, const toml::node* n = nullptr,
                                     std::string_view element = {});
void read_friction_pairs(Reader& r, const Ctx& root, MaterialTable& materials, const SolverSettings& solver);
/// Warns at a rolling_friction or spinning_friction ([[material]] or [[friction_pair]])
/// longer than the thickness radius of the thinnest grain it acts on (placed bodies and
/// emitters): μ_r is a length, and a dimensionless coefficient written in its place (as
/// LIGGGHTS's) holds every grain from rolling, legal but almost surely not meant.
void check_resistance_lengths(Reader& r, const Ctx& root, const World& world);

// ---------------------------------------------------------------------------------------
// [[wall]] and motions (io/scene/walls.cpp)

/// The `motion = { type = …, … }` table of a wall or a [[body]] (core/wall_motion.hpp);
/// nullopt after a problem was reported.
std::optional<WallMotion> read_motion(Reader& r, const Ctx& c);
/// Walls and the place of each (for overlap messages).
std::vector<Wall> read_walls(Reader& r, const Ctx& root, const MaterialTable& materials,
                             const std::filesystem::path& scene_file, std::vector<Place>& places);

// ---------------------------------------------------------------------------------------
// [[particles]] and [[body]] (io/scene/bodies.cpp)

/// One [[particles]] or [[body]] entry, read and checked but not yet placed.
struct BodyEntry {
    enum class Fill { Single, Lattice, Random };
    std::string path;  ///< "particles.1", "body.0"
    Place place;       ///< the entry's header
    Place fill_place;  ///< its lattice or random table
    Fill fill = Fill::Single;
    Shape shape = Shape::Sphere;
    /// sphere, capsule; in a fill of capsules or ellipsoids the bounding radius it spaces
    double radius = 0.0;
    double half_length = 0.0;                                             ///< capsule
    double capsule_radius = 0.0;  ///< a fill of capsules: their own radius
    Vec3 semi_axes = Vec3::Zero();                                        ///< ellipsoid
    ClumpTable clump;  ///< clump: its one template (spheres in the user's frame → principal)
    Quat orientation = Quat::Identity();                                  ///< single body
    std::optional<double> mass;                                           ///< override [kg]
    std::optional<Vec3> inertia;                                          ///< override [kg m²]
    std::optional<WallMotion> motion;  ///< single body: prescribed (kinematic) motion
    bool fixed = false;  ///< [[particles]] fixed = true: every grain held in place (kinematic, at rest)
    uint32_t material = 0;
    Vec3 velocity = Vec3::Zero();
    Vec3 angular_velocity = Vec3::Zero();
    Vec3 position = Vec3::Zero();                                         // single body
    Vec3 min = Vec3::Zero(), max = Vec3::Zero(), spacing = Vec3::Zero();  // lattice, random
    std::size_t count = 0;                                                // random
    uint64_t seed = 0;                                                    // random, lattice
    double volume_fraction = 0.0;                                         // random
    std::optional<SizeDistribution> size;  ///< [[particles]] radius table (radius = its max)
    std::size_t first_id = 0;                                             ///< set when placed
};

/// A radius distribution table (key `k` of `c`): { distribution = "uniform" | "normal" |
/// "lognormal" | "discrete", … } (README, "Radius distributions").
std::optional<SizeDistribution> read_size(Reader& r, const Ctx& parent, std::string_view k);
/// A grain radius above 1 m is legal but most likely millimetres written as metres.
void warn_large_radius(Reader& r, const Ctx& c, double radius);
std::optional<BodyEntry> read_particles(Reader& r, const Ctx& c, const MaterialTable& materials,
                                        bool periodic);
std::optional<BodyEntry> read_body(Reader& r, const Ctx& c, const MaterialTable& materials,
                                   bool periodic);
/// Generates every entry's bodies in order, ids 0, 1, 2, …
void place_bodies(Reader& r, std::vector<BodyEntry>& entries, World& world);

// ---------------------------------------------------------------------------------------
// Checks of the generated scene: memory, overlaps (io/scene/checks.cpp)

/// Bodies an entry will generate (a volume-fraction fill: at least, with the largest radius).
double entry_bodies(const BodyEntry& e);
/// Refuses a scene whose `bodies` cannot fit in `limit` bytes even at the least estimate;
/// the problem is located at `place`/`key`; `solver` chooses the typical figure's bytes per
/// contact.
void check_memory(Reader& r, double limit, double bodies, SolverType solver, const Place& place,
                  std::string_view key, std::string_view what);
/// Overlaps at t = 0 between bodies and with walls, reported at the later body's entry.
void check_overlaps(Reader& r, const std::vector<BodyEntry>& entries, const World& world,
                    const std::vector<Place>& wall_places);

// ---------------------------------------------------------------------------------------
// [[joint]] (io/scene/joints.cpp)

/// [[joint]] entries, after the bodies are placed (ids are dense indices at this point).
void read_joints(Reader& r, const Ctx& root, World& world);

// ---------------------------------------------------------------------------------------
// [[emitter]], [[outlet]] (io/scene/flow.cpp)

/// [[emitter]] entries: sources of spheres (engine/flow/flow.hpp).
void read_emitters(Reader& r, const Ctx& root, World& world);
/// [[outlet]] entries: sinks that remove bodies (engine/flow/flow.hpp).
void read_outlets(Reader& r, const Ctx& root, World& world);

}  // namespace talus::scene_read
