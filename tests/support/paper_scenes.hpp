#pragma once
/// The bodies, walls and materials of the seed papers' examples, as scene-file text shared
/// by the tests that run them; each test puts its own [simulation] and [solver] in front.
namespace talus::testing {

/// Stewart & Trinkle's spinning rod (seed 000 §4): a capsule 0.5 m between end centres,
/// end radius 0.05 m, 1 kg, transverse inertia 0.002 kg m², tilted 30° (+x end up),
/// spinning at 4 rad/s so that end keeps rising, centre 1 m above the table, μ = 0.6.
inline constexpr const char* kSpinningRodBodies = R"(
[[material]]
name = "rod"
density = 1000
friction = 0.6
[[wall]]
type = "plane"
point = [0, 0, 0]
normal = [0, 0, 1]
material = "rod"
[[body]]
shape = "capsule"
radius = 0.05
length = 0.5
material = "rod"
position = [0, 0, 1]
orientation = [0.9659258262890683, 0, -0.25881904510252074, 0]
angular_velocity = [0, -4, 0]
mass = 1.0
inertia = [0.00122, 0.002, 0.002]
)";

/// Anitescu, Miller & Hart's ellipse (seed 002 §4): axes 8 and 4 (an ellipsoid with
/// semi-axes 4, 2, 2 spinning about y), centre dropped from height 8 with angular velocity
/// 3, μ = 0.3.
inline constexpr const char* kAnitescuEllipseBodies = R"(
[[material]]
name = "m"
density = 1
friction = 0.3
[[wall]]
type = "plane"
point = [0, 0, 0]
normal = [0, 0, 1]
material = "m"
[[body]]
shape = "ellipsoid"
semi_axes = [4, 2, 2]
material = "m"
position = [0, 0, 8]
angular_velocity = [0, 3, 0]
)";

}  // namespace talus::testing
