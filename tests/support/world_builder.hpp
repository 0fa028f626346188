#pragma once
// Builds small worlds in code for physics tests, so a test reads as the physical setup.
#include <cmath>
#include <limits>
#include <vector>

#include "engine/world/world.hpp"

namespace talus::testing {

inline constexpr double kPi = 3.14159265358979323846;

/// Density giving a sphere of radius r the mass m.
inline double density_for_mass(double m, double r) { return m / (4.0 / 3.0 * kPi * r * r * r); }

inline World make_world(double dt, const Vec3& gravity, double tolerance = 1e-10,
                        int max_iterations = 500) {
    World w;
    w.simulation.dt = dt;
    w.simulation.gravity = gravity;
    w.solver.tolerance = tolerance;
    w.solver.max_iterations = max_iterations;
    return w;
}

inline uint32_t add_material(World& w, double density, double friction) {
    return w.materials.add(Material{"m" + std::to_string(w.materials.size()), density, friction});
}

/// A ball (radius 0.1 m, id 1) with 200 beads (radius 0.01 m, ids 10–209) resting on it,
/// spread evenly (a Fibonacci lattice): more contacts on one body than 63
/// colours, so an overflow colour.
inline World ball_with_beads() {
    World w = make_world(1e-3, Vec3(0, 0, -9.81), 1e-6, 200);
    const uint32_t m = add_material(w, 1000.0, 0.4);
    w.bodies.add_sphere(1, Vec3::Zero(), 0.1, 1000.0, m);
    const double golden = kPi * (3.0 - std::sqrt(5.0));
    for (int k = 0; k < 200; ++k) {
        const double z = 1.0 - 2.0 * (k + 0.5) / 200.0, rho = std::sqrt(1.0 - z * z);
        const Vec3 dir(rho * std::cos(golden * k), rho * std::sin(golden * k), z);
        w.bodies.add_sphere(uint64_t(10 + k), dir * 0.1099, 0.01, 1000.0, m);
    }
    return w;
}

inline void add_plane(World& w, const Vec3& point, const Vec3& normal, uint32_t material,
                      const Vec3& velocity = Vec3::Zero()) {
    Wall wall;
    wall.type = WallType::Plane;
    wall.point = point;
    wall.normal = normal.normalized();
    wall.material = material;
    if (velocity.squaredNorm() > 0.0) {
        wall.motion.kind = MotionKind::Translation;
        wall.motion.velocity = velocity;
    }
    w.walls.push_back(wall);
}

/// A cylinder wall: axis through `point` along `axis`, radius R, bodies inside or outside,
/// length along the axis (∞ by default); `motion` as given.
inline void add_cylinder(World& w, const Vec3& point, const Vec3& axis, double radius, bool inside,
                         uint32_t material, const WallMotion& motion = {},
                         double length = std::numeric_limits<double>::infinity()) {
    Wall wall;
    wall.type = WallType::Cylinder;
    wall.point = point;
    wall.axis = axis.normalized();
    wall.radius = radius;
    wall.inside = inside;
    wall.length = length;
    wall.material = material;
    wall.motion = motion;
    w.walls.push_back(wall);
}

/// Motions for tests (core/wall_motion.hpp).
inline WallMotion rotation_motion(const Vec3& centre, const Vec3& axis, double omega, double start = 0.0) {
    WallMotion m;
    m.kind = MotionKind::Rotation;
    m.centre = centre;
    m.axis = axis.normalized();
    m.omega = omega;
    m.start = start;
    return m;
}
inline WallMotion sine_motion(const Vec3& direction, double amplitude, double frequency, double phase = 0.0) {
    WallMotion m;
    m.kind = MotionKind::Sine;
    m.direction = direction.normalized();
    m.amplitude = amplitude;
    m.frequency = frequency;
    m.phase = phase;
    return m;
}
inline WallMotion table_motion(std::vector<double> times, std::vector<Vec3> displacements, double start = 0.0) {
    WallMotion m;
    m.kind = MotionKind::Table;
    m.times = std::move(times);
    m.displacements = std::move(displacements);
    m.start = start;
    return m;
}

inline void add_box(World& w, const Vec3& lo, const Vec3& hi, uint32_t material) {
    Wall wall;
    wall.type = WallType::Box;
    wall.min = lo;
    wall.max = hi;
    wall.material = material;
    w.walls.push_back(wall);
}

inline std::size_t add_sphere(World& w, const Vec3& x, double r, uint32_t material,
                              const Vec3& v = Vec3::Zero(), const Vec3& omega = Vec3::Zero()) {
    return w.bodies.add_sphere(w.bodies.size(), x, r, w.materials.materials[material].density,
                               material, v, omega);
}

/// Spheres of radius r on a jittered lattice filling [lo, hi], none overlapping.
inline void fill_lattice(World& w, const Vec3& lo, const Vec3& hi, double r, uint32_t material,
                         double jitter_fraction = 0.2) {
    const double spacing = 2.0 * r * (1.0 + jitter_fraction);
    uint64_t state = 12345;
    auto next = [&]() {  // small LCG, deterministic jitter in [−1, 1)
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        return double(state >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    };
    const double amp = 0.45 * (spacing - 2.0 * r);
    for (double z = lo.z() + r; z <= hi.z() - r; z += spacing)
        for (double y = lo.y() + r; y <= hi.y() - r; y += spacing)
            for (double x = lo.x() + r; x <= hi.x() - r; x += spacing) {
                Vec3 p(x, y, z);
                p += amp * Vec3(next(), next(), next());
                p = p.cwiseMax(lo + Vec3::Constant(r)).cwiseMin(hi - Vec3::Constant(r));
                add_sphere(w, p, r, material);
            }
}

/// Runs `steps` steps and fails the test on a failed step.
inline void run_steps(World& w, int steps) {
    for (int k = 0; k < steps; ++k) {
        const StepStatus s = w.step();
        if (!s.ok) throw std::runtime_error(s.message);
    }
}

/// Grains of radius r (glass, μ = 0.5) dropped from a jittered lattice filling [0, fill_hi]
/// into a box [0, box_hi], after `steps` bgs steps of 2 ms: a bed of grains on grains and
/// on the walls, whose next problem the solver tests take.
inline World dropped_bed(const Vec3& box_hi, const Vec3& fill_hi, double r, int steps) {
    World w = make_world(2e-3, Vec3(0, 0, -9.81), 1e-4, 100);
    w.solver.type = SolverType::BGS;
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(0, 0, 0), box_hi, m);
    fill_lattice(w, Vec3(0, 0, 0), fill_hi, r, m);
    run_steps(w, steps);
    return w;
}

/// Every body's position, velocity and angular velocity, then the last step's residual,
/// iterations and contacts, as one flat vector: compare two runs bit for bit.
/// A small pile (3 layers, 75 spheres, μ = 0.5) settled for `steps` steps of 2 ms in a box
/// with PGS: the solver tests' common multi-contact input.
inline World settled_pile(int steps = 150) {
    World w = make_world(2e-3, Vec3(0, 0, -9.81), 1e-4, 100);
    const uint32_t m = add_material(w, 2500.0, 0.5);
    add_box(w, Vec3(0, 0, 0), Vec3(0.06, 0.06, 0.2), m);
    fill_lattice(w, Vec3(0, 0, 0), Vec3(0.06, 0.06, 0.036), 0.005, m);
    run_steps(w, steps);
    return w;
}

inline std::vector<double> state_vector(const World& w) {
    std::vector<double> s;
    for (std::size_t i = 0; i < w.bodies.size(); ++i)
        for (int k = 0; k < 3; ++k) {
            s.push_back(w.bodies.position[i][k]);
            s.push_back(w.bodies.velocity[i][k]);
            s.push_back(w.bodies.angular_velocity[i][k]);
        }
    s.push_back(w.diagnostics().residual);
    s.push_back(double(w.diagnostics().iterations));
    s.push_back(double(w.diagnostics().contacts));
    return s;
}

}  // namespace talus::testing
