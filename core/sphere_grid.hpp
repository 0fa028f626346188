#pragma once
/// SphereGrid: spheres binned by centre for "does anything overlap this candidate?" queries
/// while generating grains (io/particle_fill.cpp, engine/flow/emitter.cpp). Not the broad
/// phase: it is built incrementally, one insert per accepted sphere.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/math.hpp"

namespace talus {

/// Spheres binned by centre on a uniform grid; a query visits the 3×3×3 cells around a
/// point, which finds every sphere whose centre is within one cell width of it.
/// Cells live in an open-addressing table keyed by their coordinates modulo 2²¹ per axis;
/// far-apart cells that share a key only add candidates, which the caller's distance test
/// rejects, so no bounding box is needed. Each cell holds a singly linked list threaded
/// through `next_` (spheres must be inserted with indices 0, 1, 2, …).
class SphereGrid {
public:
    explicit SphereGrid(double cell) : inv_cell_(1.0 / cell) { rehash(1024); }

    void insert(uint32_t index, const Vec3& x) {
        if (2 * (used_ + 1) > keys_.size()) rehash(2 * keys_.size());
        const uint64_t key = key_of(cell_of(x), 0, 0, 0);
        const std::size_t slot = find_slot(key);
        if (keys_[slot] == kEmpty) {
            keys_[slot] = key;
            head_[slot] = kNone;
            ++used_;
        }
        next_.push_back(head_[slot]);
        head_[slot] = index;
    }

    /// Calls f(index) for each sphere binned near x; stops early if f returns true.
    template <class F>
    bool any_near(const Vec3& x, F&& f) const {
        const std::array<int64_t, 3> c = cell_of(x);
        for (int64_t dz = -1; dz <= 1; ++dz)
            for (int64_t dy = -1; dy <= 1; ++dy)
                for (int64_t dx = -1; dx <= 1; ++dx) {
                    const std::size_t slot = find_slot(key_of(c, dx, dy, dz));
                    if (keys_[slot] == kEmpty) continue;
                    for (uint32_t j = head_[slot]; j != kNone; j = next_[j])
                        if (f(j)) return true;
                }
        return false;
    }

private:
    static constexpr uint64_t kEmpty = ~uint64_t(0);
    static constexpr uint32_t kNone = ~uint32_t(0);
    static constexpr uint64_t kMask = (uint64_t(1) << 21) - 1;

    std::array<int64_t, 3> cell_of(const Vec3& x) const {
        std::array<int64_t, 3> c;
        for (int a = 0; a < 3; ++a)
            c[a] =
                static_cast<int64_t>(std::clamp(std::floor(x[a] * inv_cell_), -0x1.0p60, 0x1.0p60));
        return c;
    }
    static uint64_t key_of(const std::array<int64_t, 3>& c, int64_t dx, int64_t dy, int64_t dz) {
        return (uint64_t(c[0] + dx) & kMask) << 42 | (uint64_t(c[1] + dy) & kMask) << 21 |
               (uint64_t(c[2] + dz) & kMask);
    }
    /// The slot holding `key`, or the empty slot where it would go (linear probing).
    std::size_t find_slot(uint64_t key) const {
        uint64_t h = key;  // splitmix64 finaliser
        h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
        h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
        h ^= h >> 31;
        const std::size_t mask = keys_.size() - 1;
        for (std::size_t s = std::size_t(h) & mask;; s = (s + 1) & mask)
            if (keys_[s] == key || keys_[s] == kEmpty) return s;
    }
    void rehash(std::size_t capacity) {
        std::vector<uint64_t> old_keys(capacity, kEmpty);
        std::vector<uint32_t> old_head(capacity, kNone);
        old_keys.swap(keys_);
        old_head.swap(head_);
        for (std::size_t s = 0; s < old_keys.size(); ++s)
            if (old_keys[s] != kEmpty) {
                const std::size_t t = find_slot(old_keys[s]);
                keys_[t] = old_keys[s];
                head_[t] = old_head[s];
            }
    }

    double inv_cell_;
    std::size_t used_ = 0;
    std::vector<uint64_t> keys_;  ///< cell key per slot, kEmpty if free; size a power of 2
    std::vector<uint32_t> head_;  ///< first sphere of the cell per slot
    std::vector<uint32_t> next_;  ///< next sphere in the same cell, per sphere
};

}  // namespace talus
