// Narrow phase for spheres (DESIGN §3, §7).
//
// Sphere–sphere: n = (x_B − x_A)/‖x_B − x_A‖, Φ = ‖x_B − x_A‖ − r_A − r_B, point midway
// across the gap, p = x_A + (r_A + Φ/2) n. The broad phase already kept exactly the pairs
// with Φ ≤ δ_pair, so every pair gives one contact and the output can be filled by index.
// Sphere–wall: each wall is one plane (or the six inner faces of a box) with the normal
// pointing at the bodies; Φ = n·(x − p₀(t)) − r, A is the wall, the normal goes from the
// wall to the sphere, and the point is the sphere's surface point nearest the wall,
// p = x − r n. Wall contacts are counted per body, prefix-summed and then filled, so the
// order is (body, wall, face) whatever the number of threads.
#include "collision/narrow_phase.hpp"

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>

#include <array>

namespace talus {
namespace {

constexpr std::size_t kGrain = 1024;

template <class F>
void for_chunks(std::size_t n, F&& f) {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n, kGrain),
                      [&](const tbb::blocked_range<std::size_t>& r) {
                          for (std::size_t i = r.begin(); i != r.end(); ++i) f(i);
                      });
}

void resize(ContactList& c, std::size_t n) {
    c.a.resize(n); c.b.resize(n); c.key_a.resize(n); c.key_b.resize(n); c.feature.resize(n);
    c.point.resize(n); c.normal.resize(n); c.gap.resize(n); c.velocity_a.resize(n);
    c.material_a.resize(n);
}

}  // namespace

void narrow_phase(const BodyStore& bodies, const std::vector<Wall>& walls, const PairList& pairs,
                  const std::vector<double>& reach, double wall_margin, double t,
                  ContactList& out, NarrowPhaseScratch& scratch) {
    const std::size_t np = pairs.size();
    const std::size_t nb = bodies.size();

    // Faces of every wall at time t, flattened, with their wall and face number.
    struct Face { WallFace geom; uint32_t wall, face; };
    std::vector<Face> faces;
    for (std::size_t w = 0; w < walls.size(); ++w) {
        std::array<WallFace, 6> f;
        const int k = wall_faces(walls[w], t, f);
        for (int j = 0; j < k; ++j) faces.push_back({f[j], uint32_t(w), uint32_t(j)});
    }
    auto wall_gap = [&](std::size_t i, const Face& f) {
        return f.geom.normal.dot(bodies.position[i] - f.geom.point) - bodies.radius[i];
    };

    scratch.wall_count.assign(nb + 1, 0);
    for_chunks(nb, [&](std::size_t i) {
        uint32_t c = 0;
        const double envelope = reach[i] - bodies.radius[i] + wall_margin;
        for (const Face& f : faces) c += wall_gap(i, f) <= envelope;
        scratch.wall_count[i + 1] = c;
    });
    for (std::size_t i = 0; i < nb; ++i) scratch.wall_count[i + 1] += scratch.wall_count[i];
    const std::size_t nw = scratch.wall_count[nb];
    resize(out, np + nw);

    for_chunks(np, [&](std::size_t k) {
        const int32_t a = pairs.a[k], b = pairs.b[k];
        const Vec3 d = bodies.position[b] - bodies.position[a];
        const double dist = d.norm();
        const Vec3 n = dist > 0.0 ? Vec3(d / dist) : Vec3::UnitZ();
        const double gap = dist - bodies.radius[a] - bodies.radius[b];
        out.a[k] = a;
        out.b[k] = b;
        out.key_a[k] = bodies.id[a];
        out.key_b[k] = bodies.id[b];
        out.feature[k] = 0;
        out.point[k] = bodies.position[a] + (bodies.radius[a] + 0.5 * gap) * n;
        out.normal[k] = n;
        out.gap[k] = gap;
        out.velocity_a[k] = Vec3::Zero();
        out.material_a[k] = bodies.material[a];
    });

    for_chunks(nb, [&](std::size_t i) {
        std::size_t k = np + scratch.wall_count[i];
        if (scratch.wall_count[i + 1] == scratch.wall_count[i]) return;
        const double envelope = reach[i] - bodies.radius[i] + wall_margin;
        for (const Face& f : faces) {
            const double gap = wall_gap(i, f);
            if (gap > envelope) continue;
            const Wall& w = walls[f.wall];
            out.a[k] = kNoBody;
            out.b[k] = int32_t(i);
            out.key_a[k] = kWallKeyBit | f.wall;
            out.key_b[k] = bodies.id[i];
            out.feature[k] = f.face;
            out.point[k] = bodies.position[i] - bodies.radius[i] * f.geom.normal;
            out.normal[k] = f.geom.normal;
            out.gap[k] = gap;
            out.velocity_a[k] = w.velocity;
            out.material_a[k] = w.material;
            ++k;
        }
    });
}

}  // namespace talus
