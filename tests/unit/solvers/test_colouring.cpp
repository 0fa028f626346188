// The contact colouring (solvers/colouring.cpp): every colour but the overflow one holds no
// two contacts that share a dynamic body, the reordering is a stable sort by colour, and
// the two ways of reordering (in place for large runs, through spare arrays otherwise)
// leave every per-contact field with the same bits. Joint rows (colour_joint_rows) join the
// contacts' colours a joint at a time: a colour's contacts and joints share no dynamic
// body, the contacts keep their colours, the world never conflicts, a body in too many
// colours sends its joints to the serial overflow colour, and a sweep visits every contact
// and every row once, a joint's rows together and in row order.
#include <gtest/gtest.h>

#include <atomic>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/body_store.hpp"
#include "solvers/colour_sweep.hpp"
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
    // 3000 contacts over 600 bodies: about 10 per body, so many colours and long cycles;
    // then 30,000 over 6000, where the copying colouring finds its visit order by buckets
    // and the in-place one by a comparison sort: the same order, so the same colours.
    for (const int32_t n_bodies : {600, 6000}) {
        SCOPED_TRACE(n_bodies);
        const ContactList original = random_contacts(5 * std::size_t(n_bodies), n_bodies, 5);
        ContactList by_copy = original, in_place = original;
        ColouringScratch s1, s2;
        const std::size_t colours = colour_contacts(std::size_t(n_bodies), by_copy, s1, false);
        ASSERT_EQ(colours, colour_contacts(std::size_t(n_bodies), in_place, s2, true));
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
}

/// Each contact's colour as colour_contacts left `c` (its range of colour_start; the
/// overflow range as kOverflowColour).
std::vector<uint32_t> range_colours(const ContactList& c) {
    std::vector<uint32_t> colour(c.size());
    const std::size_t ranges = c.colour_start.empty() ? 0 : c.colour_start.size() - 1;
    for (std::size_t r = 0; r < ranges; ++r)
        for (uint32_t k = c.colour_start[r]; k < c.colour_start[r + 1]; ++k)
            colour[k] = c.overflow_colour && r + 1 == ranges ? kOverflowColour : uint32_t(r);
    return colour;
}

// Jones and Plassmann's rounds (what ranks will run) give the serial colouring's colours:
// on random graphs, with a hub past 63 colours (the overflow), and whatever the order the
// contacts come in.
TEST(Colouring, JonesPlassmannRoundsGiveTheSerialColours) {
    for (unsigned seed : {1u, 2u, 3u}) {
        ContactList c = random_contacts(3000, 600, seed);
        // a hub: body 0 in 100 more contacts, so some go to the overflow colour
        const std::size_t base = c.size();
        c.resize(base + 100);
        for (std::size_t k = 0; k < 100; ++k) {
            c.a[base + k] = 0;
            c.b[base + k] = int32_t(1 + k);
            c.key_a[base + k] = 7;
            c.key_b[base + k] = 1000 + k;
            c.feature[base + k] = uint32_t(base + k);
        }
        const JonesPlassmann jp = jones_plassmann(600, c);
        // the same contacts in another order give the same colour to each
        ContactList shuffled = c;
        std::vector<uint32_t> order(c.size());
        for (std::size_t k = 0; k < order.size(); ++k) order[k] = uint32_t(order.size() - 1 - k);
        shuffled.for_each_array([&](auto& v) { apply_order(order, v); });
        ColouringScratch scratch;
        colour_contacts(600, shuffled, scratch);
        EXPECT_TRUE(shuffled.overflow_colour);
        const std::vector<uint32_t> serial = range_colours(shuffled);
        std::size_t overflow = 0;
        for (std::size_t k = 0; k < shuffled.size(); ++k) {
            const uint32_t i = shuffled.feature[k];  // the original index
            ASSERT_EQ(serial[k], jp.colour[i]) << "seed " << seed << " contact " << i;
            overflow += serial[k] == kOverflowColour;
        }
        EXPECT_GE(overflow, 100u - 63u);
        EXPECT_GT(jp.rounds, 1u);
        EXPECT_LT(jp.rounds, c.size() / 10);
    }
}

/// A batch holding only what the colouring reads: the coloured contacts' bodies and colour
/// ranges, and joint rows between the given body pairs (`rows[k]` rows for joint k).
AssembledBatch batch_with_joints(const ContactList& c, const std::vector<std::pair<int32_t, int32_t>>& joints,
                                 const std::vector<int>& rows) {
    AssembledBatch batch;
    batch.a = c.a;
    batch.b = c.b;
    batch.colour_start = c.colour_start;
    batch.overflow_colour = c.overflow_colour;
    for (std::size_t k = 0; k < joints.size(); ++k)
        for (int r = 0; r < rows[k]; ++r) {
            batch.bilateral.a.push_back(joints[k].first);
            batch.bilateral.b.push_back(joints[k].second);
        }
    return batch;
}

/// Checks what any joint colouring must hold; returns the number of blocks in the overflow.
std::size_t check_joint_colouring(const AssembledBatch& batch) {
    const JointColouring& jc = batch.joint_colours;
    const BilateralBatch& rows = batch.bilateral;
    const std::size_t colours = jc.colours();
    EXPECT_EQ(jc.block_start.size(), colours + 1);
    // Blocks: maximal runs of rows on the same two bodies, covering every row.
    EXPECT_EQ(jc.block_rows.front(), 0u);
    EXPECT_EQ(jc.block_rows.back(), rows.size());
    for (std::size_t blk = 0; blk + 1 < jc.block_rows.size(); ++blk) {
        const uint32_t first = jc.block_rows[blk], end = jc.block_rows[blk + 1];
        EXPECT_LT(first, end);
        for (uint32_t j = first; j < end; ++j) {
            EXPECT_EQ(rows.a[j], rows.a[first]);
            EXPECT_EQ(rows.b[j], rows.b[first]);
        }
        if (end < rows.size()) {
            EXPECT_TRUE(rows.a[end] != rows.a[first] || rows.b[end] != rows.b[first]);
        }
    }
    // The contacts: the same ranges as their own colours, in order; colours that hold
    // only rows are empty of contacts.
    EXPECT_EQ(jc.contact_start.front(), 0u);
    EXPECT_EQ(jc.contact_start.back(), batch.size());
    std::vector<uint32_t> nonempty{0};
    for (std::size_t k = 0; k < colours; ++k) {
        EXPECT_LE(jc.contact_start[k], jc.contact_start[k + 1]);
        if (jc.contact_start[k + 1] > jc.contact_start[k]) nonempty.push_back(jc.contact_start[k + 1]);
    }
    if (batch.size() > 0) {
        EXPECT_EQ(nonempty, batch.colour_start);
    }
    if (batch.overflow_colour) {
        EXPECT_TRUE(jc.overflow);
    }
    // Every block once; row order within a colour; no dynamic body twice in a colour.
    std::vector<int> seen(jc.block_rows.size() - 1, 0);
    for (std::size_t k = 0; k < colours; ++k) {
        const bool overflow = jc.overflow && k + 1 == colours;
        std::set<int32_t> bodies;
        auto take = [&](int32_t body, const std::string& what) {
            if (body == kNoBody || overflow) return;
            EXPECT_TRUE(bodies.insert(body).second) << "colour " << k << ": body " << body << " twice (" << what << ")";
        };
        for (uint32_t i = jc.contact_start[k]; i < jc.contact_start[k + 1]; ++i) {
            take(batch.a[i], "contact");
            take(batch.b[i], "contact");
        }
        for (uint32_t p = jc.block_start[k]; p < jc.block_start[k + 1]; ++p) {
            const uint32_t blk = jc.order[p];
            ++seen[blk];
            if (p > jc.block_start[k]) {
                EXPECT_LT(jc.order[p - 1], blk);
            }
            take(rows.a[jc.block_rows[blk]], "joint");
            take(rows.b[jc.block_rows[blk]], "joint");
        }
    }
    for (int n : seen) EXPECT_EQ(n, 1);
    return jc.overflow ? jc.block_start[colours] - jc.block_start[colours - 1] : 0;
}

TEST(Colouring, JointRowsTakeTheContactsColoursWithoutSharingABody) {
    ContactList c = random_contacts(3000, 600, 7);
    ColouringScratch scratch;
    colour_contacts(600, c, scratch);
    const ContactList contacts = c;
    // 200 joints with 1 to 6 rows, between random bodies or a body and the world (either
    // side), and a few joints one after the other on the same pair.
    std::mt19937_64 rng(11);
    std::vector<std::pair<int32_t, int32_t>> joints;
    std::vector<int> rows;
    for (int k = 0; k < 200; ++k) {
        int32_t a = int32_t(rng() % 600), b = int32_t(rng() % 600);
        while (b == a) b = int32_t(rng() % 600);
        if (k % 7 == 2) a = kNoBody;
        if (k % 11 == 5) b = kNoBody;
        joints.emplace_back(a, b);
        rows.push_back(1 + int(rng() % 6));
        if (k % 25 == 0) {  // a second joint on the same pair: the same block
            joints.emplace_back(a, b);
            rows.push_back(3);
        }
    }
    joints.emplace_back(kNoBody, kNoBody);  // a row that moves nothing conflicts with nothing
    rows.push_back(2);
    AssembledBatch batch = batch_with_joints(c, joints, rows);
    colour_joint_rows(600, batch);
    EXPECT_EQ(check_joint_colouring(batch), 0u) << "no body is in 63 colours here";
    EXPECT_EQ(batch.colour_start, contacts.colour_start) << "the contacts keep their colours";
    EXPECT_EQ(batch.a, contacts.a) << "and their order";
    // Blocks are joints, merged only where consecutive joints join the same bodies.
    EXPECT_EQ(batch.joint_colours.block_rows.size() - 1, 200u + 1u);
    // The world-only block (the last) goes to the first colour.
    const JointColouring& jc = batch.joint_colours;
    bool last_in_first = false;
    for (uint32_t p = jc.block_start[0]; p < jc.block_start[1]; ++p) last_in_first |= jc.order[p] == 200u;
    EXPECT_TRUE(last_in_first);

    // Deterministic: colouring again gives the same tables.
    AssembledBatch again = batch_with_joints(c, joints, rows);
    colour_joint_rows(600, again);
    EXPECT_EQ(again.joint_colours.order, jc.order);
    EXPECT_EQ(again.joint_colours.block_start, jc.block_start);
    EXPECT_EQ(again.joint_colours.contact_start, jc.contact_start);
}

TEST(Colouring, AChainOfJointsAloneAlternatesTwoColours) {
    // No contacts: a pendulum chain hung from the world, 3 rows per joint.
    ContactList none;
    ColouringScratch scratch;
    colour_contacts(6, none, scratch);
    std::vector<std::pair<int32_t, int32_t>> joints{{kNoBody, 0}};
    for (int32_t k = 0; k + 1 < 6; ++k) joints.emplace_back(k, k + 1);
    AssembledBatch batch = batch_with_joints(none, joints, std::vector<int>(joints.size(), 3));
    colour_joint_rows(6, batch);
    check_joint_colouring(batch);
    const JointColouring& jc = batch.joint_colours;
    ASSERT_EQ(jc.colours(), 2u);
    EXPECT_FALSE(jc.overflow);
    EXPECT_EQ(jc.order, (std::vector<uint32_t>{0, 2, 4, 1, 3, 5}));
}

TEST(Colouring, AHubOfTooManyJointsSendsTheRestToTheOverflowColour) {
    // Body 0 joined to 80 others; a few contacts on the others. At most 63 colours hold
    // body 0, so 17 of its joints are swept serially, after the contacts, in row order.
    ContactList c;
    c.resize(40);
    for (std::size_t i = 0; i < 40; ++i) {
        c.a[i] = int32_t(1 + i);
        c.b[i] = int32_t(2 + i);
    }
    ColouringScratch scratch;
    colour_contacts(81, c, scratch);
    ASSERT_FALSE(c.overflow_colour);
    std::vector<std::pair<int32_t, int32_t>> joints;
    for (int32_t k = 1; k <= 80; ++k) joints.emplace_back(0, k);
    AssembledBatch batch = batch_with_joints(c, joints, std::vector<int>(joints.size(), 2));
    colour_joint_rows(81, batch);
    EXPECT_EQ(check_joint_colouring(batch), 17u);
    const JointColouring& jc = batch.joint_colours;
    ASSERT_TRUE(jc.overflow);
    EXPECT_EQ(jc.colours(), 64u);
    const std::size_t last = jc.colours() - 1;
    EXPECT_EQ(jc.contact_start[last], jc.contact_start[last + 1]) << "no contact overflows here";
    for (uint32_t p = jc.block_start[last]; p < jc.block_start[last + 1]; ++p)
        EXPECT_EQ(jc.order[p], 63u + (p - jc.block_start[last]));
}

TEST(Colouring, ASweepVisitsEveryContactAndRowOnceColourAfterColour) {
    ContactList c = random_contacts(3000, 600, 3);
    ColouringScratch scratch;
    colour_contacts(600, c, scratch);
    std::vector<std::pair<int32_t, int32_t>> joints;
    for (int32_t k = 0; k < 300; ++k) joints.emplace_back(2 * k, 2 * k + 1);
    AssembledBatch batch = batch_with_joints(c, joints, std::vector<int>(joints.size(), 4));
    colour_joint_rows(600, batch);
    const JointColouring& jc = batch.joint_colours;
    // A small grain, so that colours run as several parallel ranges, some of them mixing
    // contacts and rows. Every visit draws a ticket: a colour's tickets all come before the
    // next colour's, and a joint's rows draw theirs in row order.
    std::atomic<long> ticket{0};
    std::vector<long> contact_ticket(batch.size(), -1), row_ticket(batch.bilateral.size(), -1);
    std::vector<std::atomic<int>> contact_visits(batch.size()), row_visits(batch.bilateral.size());
    const double m = sweep_colours(batch, 16, -1.0,
        [&](std::size_t lo, std::size_t hi, bool) {
            for (std::size_t i = lo; i < hi; ++i) {
                ++contact_visits[i];
                contact_ticket[i] = ticket++;
            }
            return 1.0;
        },
        [&](std::size_t j) {
            ++row_visits[j];
            row_ticket[j] = ticket++;
            return 2.0;
        });
    EXPECT_EQ(m, 2.0);
    for (auto& v : contact_visits) EXPECT_EQ(v.load(), 1);
    for (auto& v : row_visits) EXPECT_EQ(v.load(), 1);
    for (std::size_t j = 0; j < batch.bilateral.size(); ++j)
        if (j % 4 != 0) {
            EXPECT_LT(row_ticket[j - 1], row_ticket[j]) << "row " << j;
        }
    long previous_max = -1;
    std::size_t colours_with_both = 0;
    for (std::size_t k = 0; k < jc.colours(); ++k) {
        long lo = std::numeric_limits<long>::max(), hi = -1;
        for (uint32_t i = jc.contact_start[k]; i < jc.contact_start[k + 1]; ++i) {
            lo = std::min(lo, contact_ticket[i]);
            hi = std::max(hi, contact_ticket[i]);
        }
        for (uint32_t p = jc.block_start[k]; p < jc.block_start[k + 1]; ++p)
            for (uint32_t j = jc.block_rows[jc.order[p]]; j < jc.block_rows[jc.order[p] + 1]; ++j) {
                lo = std::min(lo, row_ticket[j]);
                hi = std::max(hi, row_ticket[j]);
            }
        EXPECT_GT(lo, previous_max) << "colour " << k << " began before colour " << k - 1 << " ended";
        previous_max = hi;
        colours_with_both += jc.contact_start[k + 1] > jc.contact_start[k] && jc.block_start[k + 1] > jc.block_start[k];
    }
    EXPECT_GT(colours_with_both, 2u) << "the joints should share colours with contacts";
}

}  // namespace
}  // namespace talus
