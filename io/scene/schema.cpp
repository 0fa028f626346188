// The scene's key schema: which keys exist in which table (the unknown-key check and
// the --set overrides walk it).
#include "io/scene/reader.hpp"

namespace talus::scene_read {

const Fields kStopKeys{{"kinetic_energy_below"}, {"hold"}};
const Fields kSimulationKeys{{"dt"},        {"duration"},          {"gravity"},
                             {"max_speed"}, {"renumber_interval"}, {"stop", Kind::Table, &kStopKeys},
                             {"max_dt"},    {"min_dt"},            {"step_fraction"}};
const Fields kStageKeys{{"name"}, {"duration"}, {"stop", Kind::Table, &kStopKeys}, {"remove_walls"},
                       {"start_motion"}};
const Fields kSolverKeys{{"type"},     {"max_iterations"}, {"tolerance"},     {"relaxation"},
                         {"envelope"}, {"recovery_speed"}, {"stabilization"}, {"warm_start"},
                         {"friction_directions"}, {"position_iterations"}, {"bounce_speed"}, {"friction"},
                         {"relative_tolerance"}, {"push_out"}};
const Fields kOutputKeys{{"path"},        {"interval"},   {"wall_contacts"},      {"precision"},
                         {"compression"}, {"checkpoint"}, {"checkpoint_interval"}};
const Fields kMaterialKeys{{"name"},        {"density"},          {"friction"},
                           {"restitution"}, {"rolling_friction"}, {"spinning_friction"}};
const Fields kFrictionPairKeys{{"materials"},        {"friction"},         {"restitution"},
                               {"rolling_friction"}, {"spinning_friction"}};
const Fields kMotionKeys{{"type"},      {"start"},         {"velocity"},  {"centre"},
                         {"axis"},      {"omega"},         {"times"},     {"displacements"},
                         {"direction"}, {"amplitude"},     {"frequency"}, {"phase"}};
const Fields kWallKeys{{"type"},   {"name"},     {"material"}, {"velocity"}, {"point"},
                       {"normal"}, {"min"},      {"max"},      {"file"},
                       {"scale"},  {"translate"}, {"axis"},    {"radius"},
                       {"inside"}, {"length"},   {"motion", Kind::Table, &kMotionKeys}};
const Fields kLatticeKeys{{"min"}, {"max"}, {"spacing"}, {"seed"}};
const Fields kRandomKeys{{"min"}, {"max"}, {"count"}, {"volume_fraction"}, {"seed"}};
const Fields kRadiusKeys{{"distribution"}, {"min"},    {"max"},   {"mean"},   {"std"},
                         {"median"},       {"sigma"},  {"values"}, {"weights"}};
const Fields kParticlesKeys{{"shape"},
                            {"radius", Kind::Table, &kRadiusKeys},
                            {"spheres"},
                            {"material"},
                            {"velocity"},
                            {"lattice", Kind::Table, &kLatticeKeys},
                            {"random", Kind::Table, &kRandomKeys},
                            {"motion"}};  // refused with a reason by read_particles
const Fields kBodyKeys{{"shape"},       {"radius"},    {"length"},   {"semi_axes"},  {"spheres"},
                       {"material"},    {"position"},  {"velocity"}, {"angular_velocity"},
                       {"orientation"}, {"mass"},      {"inertia"},  {"motion", Kind::Table, &kMotionKeys}};
const Fields kJointKeys{{"type"},   {"body_a"}, {"body_b"},      {"anchor"},
                        {"anchor_a"}, {"axis"}, {"length"}, {"motor_speed"}};
const Fields kPeriodicKeys{{"x"}, {"y"}, {"z"}};
const Fields kEmitterKeys{{"radius", Kind::Table, &kRadiusKeys},
                          {"material"}, {"rate"}, {"mass_rate"}, {"min"}, {"max"},
                          {"velocity"}, {"start"}, {"stop"}, {"seed"},
                          {"motion"}};  // refused with a reason by read_emitters
const Fields kOutletKeys{{"type"}, {"min"}, {"max"}, {"point"}, {"normal"}};
const Fields kRootKeys{{"simulation", Kind::Table, &kSimulationKeys},
                       {"periodic", Kind::Table, &kPeriodicKeys},
                       {"solver", Kind::Table, &kSolverKeys},
                       {"output", Kind::Table, &kOutputKeys},
                       {"material", Kind::TableArray, &kMaterialKeys},
                       {"friction_pair", Kind::TableArray, &kFrictionPairKeys},
                       {"wall", Kind::TableArray, &kWallKeys},
                       {"particles", Kind::TableArray, &kParticlesKeys},
                       {"body", Kind::TableArray, &kBodyKeys},
                       {"joint", Kind::TableArray, &kJointKeys},
                       {"stage", Kind::TableArray, &kStageKeys},
                       {"emitter", Kind::TableArray, &kEmitterKeys},
                       {"outlet", Kind::TableArray, &kOutletKeys}};

const Field* find_field(const Fields& fields, std::string_view name) {
    for (const Field& f : fields)
        if (f.name == name) return &f;
    return nullptr;
}

}  // namespace talus::scene_read
