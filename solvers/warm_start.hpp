#pragma once
/// Warm start across steps (docs/design.md §6): impulses of persisting contacts, matched by
/// (stable key of A, stable key of B, feature), friction carried as a world-frame vector.
/// Entries are sorted by (key of B, key of A, feature): B is always a body, so its stable id
/// indexes the entries' ranges directly (a few per body) when the ids are not much sparser
/// than the entries; otherwise a lookup bisects.
#include <cstdint>
#include <vector>

#include "core/contacts.hpp"
#include "core/math.hpp"

namespace talus {

struct AssembledBatch;

class WarmStartCache {
public:
    struct Entry {
        uint64_t key_a, key_b;
        uint32_t feature;
        double normal;   ///< γ_n [N s]
        Vec3 friction;   ///< γ_u u + γ_w w, world frame [N s]
        double h;        ///< step size it was computed with [s]
    };

    /// A rolling/spinning torque impulse (solvers/rolling.hpp), kept apart so that scenes
    /// without rolling resistance store nothing more.
    struct TorqueEntry {
        uint64_t key_a, key_b;
        uint32_t feature;
        Vec3 torque;     ///< A γ_k, world frame [N m s]
        double h;        ///< step size it was computed with [s]
    };

    /// Remember the solved impulses of this step's contacts (and torque entries). In parallel,
    /// each contact written straight to its place, unless `in_place` (a large run, which
    /// keeps no scratch of 4 bytes a contact beside the entries: then serially, sorted in
    /// place) or the ids are too sparse for the index. The same entries either way.
    void store(const ContactList& contacts, const AssembledBatch& batch, double h, bool in_place = false);
    /// Entry for a contact, or nullptr.
    const Entry* find(uint64_t key_a, uint64_t key_b, uint32_t feature) const;
    /// Torque entry for a contact, or nullptr.
    const TorqueEntry* find_torque(uint64_t key_a, uint64_t key_b, uint32_t feature) const;
    void clear() { entries_.clear(); torques_.clear(); first_.clear(); lipschitz_ = 0.0; }
    /// The entries as stored (sorted by key), for checkpoints.
    const std::vector<Entry>& entries() const { return entries_; }
    const std::vector<TorqueEntry>& torque_entries() const { return torques_; }
    /// Puts back what entries(), torque_entries() and lipschitz() gave (a checkpoint's).
    /// (In any order: they are sorted and indexed again.)
    void restore(std::vector<Entry> entries, std::vector<TorqueEntry> torques, double lipschitz);
    /// Give back the entries' memory once assembly has read them (lipschitz() stays).
    void release_entries() {
        entries_ = std::vector<Entry>{};
        torques_ = std::vector<TorqueEntry>{};
        first_ = std::vector<uint32_t>{};
    }
    /// APGD's last accepted Lipschitz estimate (AssembledBatch::lipschitz) [1/kg]; 0: none.
    double lipschitz() const { return lipschitz_; }
    std::size_t size() const { return entries_.size(); }

private:
    /// Sorts the entries and builds first_.
    void sort_and_index();
    /// Puts each B's entries (first_[k] .. first_[k + 1]) in (A, feature) order.
    void order_within_bodies();
    /// store()'s parallel way; false, having stored nothing, when the ids are too sparse
    /// for the index.
    bool store_in_parallel(const ContactList& contacts, const AssembledBatch& batch, double h);

    std::vector<Entry> entries_;  // sorted by (key_b, key_a, feature)
    /// first_[k] .. first_[k + 1]: the entries whose B has id k; empty when the largest id
    /// is far beyond the number of entries (then find() bisects)
    std::vector<uint32_t> first_;
    std::vector<TorqueEntry> torques_;  // the same, for torque entries
    std::vector<uint32_t> place_;       // store_in_parallel's: each contact's place among its B's
    double lipschitz_ = 0.0;
};

}  // namespace talus
