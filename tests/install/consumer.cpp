// Uses an installed Talus as a library: a scene from text, stepped to rest. A bead of radius
// 5 mm dropped 2 cm onto a floor must come to rest on it, its centre one radius above.
#include <cmath>
#include <cstdio>

#include "io/scene.hpp"

int main() {
    const char* text = R"(
[simulation]
duration = 0.5
gravity = [0, 0, -9.81]

[[material]]
name = "glass"
density = 2500
friction = 0.5

[[wall]]
type = "plane"
material = "glass"
point = [0, 0, 0]
normal = [0, 0, 1]

[[body]]
shape = "sphere"
radius = 0.005
material = "glass"
position = [0, 0, 0.025]
)";
    talus::Scene scene = talus::parse_scene(text, "consumer.toml");
    talus::World& w = scene.world;
    while (w.time < w.simulation.duration)
        if (!w.step(w.simulation.duration).ok) return 1;
    const double z = w.bodies.position[0].z(), v = w.bodies.velocity[0].norm();
    std::printf("consumer: bead at z = %.6g m, speed %.3g m/s after %.3g s\n", z, v, w.time);
    return std::abs(z - 0.005) < 5e-5 && v < 1e-3 ? 0 : 1;
}
