// The contact colouring (solvers/colouring.cpp): every colour but the overflow one holds no
// two contacts that share a dynamic body, the reordering is a stable sort by colour, and
// the two ways of reordering (in place for large runs, through spare arrays otherwise)
// leave every per-contact field with the same bits.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "solvers/colouring.hpp"

namespace talus {
namespace {

/// `n` random contacts over `bodies` bodies, 1 in 8 against a wall; every field is random
/// and the original index is written into `feature` so the permutation can be read back.
ContactList random_contacts(std::size_t n, int32_t bodies, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> body(0, bodies - 1);
    std::uniform_real_distribution<double> U(-1.0, 1.0);
    ContactList c;
    c.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        int32_t a = body(rng), b = body(rng);
        while (b == a) b = body(rng);
        if (i % 8 == 3) a = kNoBody;
        c.a[i] = a;
        c.b[i] = b;
        c.key_a[i] = rng();
        c.key_b[i] = rng();
        c.feature[i] = uint32_t(i);
        c.point[i] = Vec3(U(rng), U(rng), U(rng));
        c.normal[i] = Vec3(U(rng), U(rng), U(rng)).normalized();
        c.gap[i] = 1e-3 * U(rng);
        c.velocity_a[i] = Vec3(U(rng), U(rng), U(rng));
        c.material_a[i] = uint32_t(rng() % 5);
        c.shift_b[i] = Vec3(U(rng), U(rng), U(rng));
    }
    return c;
}

/// The bytes of every per-contact field, in ContactList::for_each_array's order.
std::vector<std::string> field_bytes(ContactList& c) {
    std::vector<std::string> out;
    c.for_each_array([&](auto& v) {
        out.emplace_back(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(v[0]));
    });
    return out;
}

TEST(Colouring, ColoursAreIndependentAndBothReorderingsAgreeBitForBit) {
    // 3000 contacts over 600 bodies: about 10 per body, so many colours and long cycles.
    const ContactList original = random_contacts(3000, 600, 5);
    ContactList by_copy = original, in_place = original;
    ColouringScratch s1, s2;
    const std::size_t colours = colour_contacts(600, by_copy, s1, false);
    ASSERT_EQ(colours, colour_contacts(600, in_place, s2, true));
    EXPECT_GT(colours, 8u);
    EXPECT_EQ(by_copy.colour_start, in_place.colour_start);
    EXPECT_EQ(by_copy.overflow_colour, in_place.overflow_colour);
    EXPECT_EQ(field_bytes(by_copy), field_bytes(in_place));

    // Each contact moved whole: feature holds its original index, and every field matches.
    const ContactList& c = by_copy;
    ASSERT_EQ(c.size(), original.size());
    std::set<uint32_t> seen;
    for (std::size_t k = 0; k < c.size(); ++k) {
        const uint32_t i = c.feature[k];
        seen.insert(i);
        EXPECT_EQ(c.a[k], original.a[i]);
        EXPECT_EQ(c.key_b[k], original.key_b[i]);
        EXPECT_EQ(c.normal[k], original.normal[i]);
        EXPECT_EQ(c.shift_b[k], original.shift_b[i]);
        EXPECT_EQ(c.material_a[k], original.material_a[i]);
    }
    EXPECT_EQ(seen.size(), c.size());

    // Within a colour: original order kept, and no dynamic body twice (but the overflow).
    const std::size_t ranges = c.colour_start.size() - 1;
    for (std::size_t r = 0; r < ranges; ++r) {
        std::set<int32_t> bodies;
        for (uint32_t k = c.colour_start[r]; k < c.colour_start[r + 1]; ++k) {
            if (k > c.colour_start[r]) {
                EXPECT_LT(c.feature[k - 1], c.feature[k]);
            }
            if (c.overflow_colour && r + 1 == ranges) continue;
            for (int32_t body : {c.a[k], c.b[k]}) {
                if (body == kNoBody) continue;
                EXPECT_TRUE(bodies.insert(body).second) << "colour " << r << " body " << body;
            }
        }
    }
}

}  // namespace
}  // namespace talus
