// Clump contacts (collision/narrow_phase.cpp) against brute force: every pair of spheres
// of two clumps (or a clump and a sphere, or a clump and a plane) within the envelope gives
// exactly one contact, with the gap |c_a − c_b| − r_a − r_b, the normal along c_b − c_a and
// a feature that differs from every other contact of the pair (warm start keys on it).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "collision/narrow_phase.hpp"

namespace talus {
namespace {

Quat random_rotation(std::mt19937_64& rng) {
    std::normal_distribution<double> g;
    Quat q(g(rng), g(rng), g(rng), g(rng));
    return q.normalized();
}

std::vector<Vec3> world_spheres(const BodyStore& b, std::size_t i, std::vector<double>& r) {
    std::vector<Vec3> c;
    r.clear();
    if (b.shape[i] != Shape::Clump) {
        r.push_back(b.radius[i]);
        return {b.position[i]};
    }
    const ClumpTable& t = b.clumps;
    for (uint32_t k = t.begin(b.clump_of(i)); k < t.end(b.clump_of(i)); ++k) {
        c.push_back(b.position[i] + b.orientation[i] * t.centre[k]);
        r.push_back(t.radius[k]);
    }
    return c;
}

TEST(ClumpContacts, EveryTouchingSpherePairGivesOneContact) {
    std::mt19937_64 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    const double env = 0.002;
    int checked = 0;
    ClumpTable templates;
    const uint32_t t4 = templates.add({Vec3(0, 0, 0), Vec3(0.03, 0, 0), Vec3(0, 0.03, 0), Vec3(0, 0, 0.03)},
                                      {0.02, 0.015, 0.02, 0.01});
    const uint32_t t2 = templates.add({Vec3(-0.02, 0, 0), Vec3(0.02, 0, 0)}, {0.02, 0.02});
    for (int trial = 0; trial < 200; ++trial) {
        BodyStore b;
        b.clumps = templates;
        b.add_clump(0, Vec3::Zero(), t4, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        const Vec3 x1(0.06 * u(rng), 0.06 * u(rng), 0.06 * u(rng));
        if (trial % 2)
            b.add_clump(1, x1, t2, 1000.0, 0, Vec3::Zero(), Vec3::Zero(), random_rotation(rng));
        else
            b.add_sphere(1, x1, 0.02, 1000.0, 0);
        for (int order = 0; order < 2; ++order) {
            const std::size_t a = order, c = 1 - order;
            std::vector<double> ra, rc;
            const std::vector<Vec3> ca = world_spheres(b, a, ra), cc = world_spheres(b, c, rc);
            std::vector<double> brute;
            for (std::size_t i = 0; i < ca.size(); ++i)
                for (std::size_t j = 0; j < cc.size(); ++j) {
                    const double gap = (cc[j] - ca[i]).norm() - ra[i] - rc[j];
                    if (gap <= env) brute.push_back(gap);
                }
            std::vector<ShapeContact> out;
            ASSERT_EQ(collide_pair(b, a, c, env, out), int(brute.size()));
            std::vector<double> got;
            std::set<uint32_t> features;
            for (const ShapeContact& k : out) {
                got.push_back(k.gap);
                features.insert(k.feature);
                EXPECT_NEAR(k.normal.norm(), 1.0, 1e-12);
            }
            EXPECT_EQ(features.size(), out.size()) << "features must tell the contacts apart";
            std::sort(got.begin(), got.end());
            std::sort(brute.begin(), brute.end());
            for (std::size_t k = 0; k < got.size(); ++k) EXPECT_NEAR(got[k], brute[k], 1e-15);
            checked += int(out.size());
        }
    }
    EXPECT_GT(checked, 200);
}

TEST(ClumpContacts, PlaneGivesOneContactPerSphereWithinTheEnvelope) {
    BodyStore b;
    const uint32_t t = b.clumps.add({Vec3(0, 0, 0), Vec3(0.03, 0, 0), Vec3(0.06, 0, 0)}, {0.02, 0.02, 0.02});
    // tilted: the spheres sit at heights 0.019, 0.019 + 0.03 s, 0.019 + 0.06 s above z = 0
    // (s = sin 0.05): gaps −1 mm, +0.50 mm and +2.0 mm
    const double s = std::sin(0.05);
    const Quat q(Eigen::AngleAxisd(-0.05, Vec3::UnitY()));
    const Vec3 first = Vec3(0, 0, 0.019);  // the first sphere penetrates by 1 mm
    b.add_clump(0, first + q * (b.clumps.user_centre[t]), t, 1000.0, 0, Vec3::Zero(), Vec3::Zero(),
                q * b.clumps.principal[t]);
    std::vector<ShapeContact> out;
    const WallFace floor{Vec3::Zero(), Vec3::UnitZ()};
    ASSERT_EQ(collide_face(b, 0, floor, 0, 0.0015, out), 2);  // envelope 1.5 mm
    std::vector<double> gaps = {out[0].gap, out[1].gap};
    std::sort(gaps.begin(), gaps.end());
    EXPECT_NEAR(gaps[0], -0.001, 1e-12);
    EXPECT_NEAR(gaps[1], -0.001 + 0.03 * s, 1e-12);
    EXPECT_NE(out[0].feature, out[1].feature);
    for (const ShapeContact& c : out) EXPECT_NEAR(c.point.z(), c.gap, 1e-12);  // on the sphere
}

}  // namespace
}  // namespace talus
