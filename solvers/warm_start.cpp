// Warm-start cache (docs/design.md §6): a sorted array of (key_b, key_a, feature) → impulse,
// rebuilt after every solve, with the range of each body B's entries indexed by its id, so
// lookups run in parallel and the matching does not depend on contact order or thread
// count. (Bisection over the 60,000 entries of a 24,000-grain pack took 5 % of a step:
// sixteen cache misses a contact, where the index takes two.) Friction is kept as a
// world-frame vector so it survives a change of tangent basis between steps.
#include "solvers/warm_start.hpp"

#include <algorithm>
#include <tuple>

#include "core/parallel.hpp"
#include "core/sort_ranges.hpp"
#include "solvers/assemble.hpp"
#include "solvers/contact_ops.hpp"

namespace talus {
namespace {
template <class E>
bool key_less(const E& x, const E& y) {
    return std::tie(x.key_b, x.key_a, x.feature) < std::tie(y.key_b, y.key_a, y.feature);
}

/// Ids beyond this many per entry (plus a margin) leave the cache without an index.
constexpr std::size_t kIndexSlotsPerEntry = 8;
bool indexable(uint64_t largest_b, std::size_t entries) {
    return largest_b <= kIndexSlotsPerEntry * entries + 4096;
}

/// Whether an impulse is not zero (only those are remembered).
bool nonzero(const Vec3& g) { return !(g[0] == 0.0 && g[1] == 0.0 && g[2] == 0.0); }
/// Whether contact i ends the step with an impulse.
bool carries(const AssembledBatch& batch, std::size_t i) { return nonzero(batch.gamma[i]); }

WarmStartCache::Entry entry_of(const ContactList& contacts, const AssembledBatch& batch, std::size_t i,
                               double h) {
    const Vec3& g = batch.gamma[i];
    const ContactFrame frame = contact_frame(batch, i);
    return {contacts.key_a[i], contacts.key_b[i], contacts.feature[i], g[0], g[1] * frame.u + g[2] * frame.w, h};
}

constexpr uint32_t kNotKept = ~uint32_t(0);
}  // namespace

void WarmStartCache::restore(std::vector<Entry> entries, std::vector<TorqueEntry> torques, double lipschitz) {
    entries_ = std::move(entries);
    torques_ = std::move(torques);
    lipschitz_ = lipschitz;
    std::sort(torques_.begin(), torques_.end(), key_less<TorqueEntry>);
    sort_and_index();
}

void WarmStartCache::sort_and_index() {
    first_.clear();
    if (entries_.empty()) return;
    uint64_t largest = 0;
    for (const Entry& e : entries_) largest = std::max(largest, e.key_b);
    if (!indexable(largest, entries_.size())) {
        parallel_sort(entries_.begin(), entries_.end(), key_less<Entry>);
        return;
    }
    // Dense ids: a counting sort by B's id, in place (each entry swapped into its B's range,
    // "American flag" style), builds the index on the way; then each B's few entries are
    // ordered by (A, feature). Keys are unique, so the result is the one order a comparison
    // sort gives, in linear time and no extra memory (the sort was 4 % of a random-pack step).
    first_.assign(std::size_t(largest) + 2, 0);
    for (const Entry& e : entries_) ++first_[std::size_t(e.key_b) + 1];
    for (std::size_t k = 1; k < first_.size(); ++k) first_[k] += first_[k - 1];
    {
        std::vector<uint32_t> next(first_.begin(), first_.end() - 1);
        for (std::size_t k = 0; k + 1 < first_.size(); ++k)
            while (next[k] < first_[k + 1]) {
                Entry& e = entries_[next[k]];
                const std::size_t home = std::size_t(e.key_b);
                if (home == k) ++next[k];
                else std::swap(e, entries_[next[home]++]);
            }
    }
    order_within_bodies();
}

void WarmStartCache::order_within_bodies() {
    // A B holds a few entries (a grain's contacts with lower ids)
    sort_within_ranges(entries_, first_, [](const Entry& x, const Entry& y) { return key_less(x, y); });
}

void WarmStartCache::store(const ContactList& contacts, const AssembledBatch& batch, double h, bool in_place) {
    lipschitz_ = batch.lipschitz;
    if (in_place) place_ = std::vector<uint32_t>{};  // a large run keeps no scratch
    if (in_place || !store_in_parallel(contacts, batch, h)) {
        entries_.clear();
        entries_.reserve(contacts.size());
        for (std::size_t i = 0; i < contacts.size(); ++i)
            if (carries(batch, i)) entries_.push_back(entry_of(contacts, batch, i, h));
        sort_and_index();
    }
    torques_.clear();
    const RollingBatch& rb = batch.rolling;
    for (std::size_t k = 0; k < rb.size(); ++k) {
        const Vec3& g = rb.gamma[k];
        if (!nonzero(g)) continue;
        const std::size_t i = rb.contact[k];
        torques_.push_back({contacts.key_a[i], contacts.key_b[i], contacts.feature[i],
                            contact_frame(batch, i).to_world(g), h});
    }
    if (!torques_.empty()) parallel_sort(torques_.begin(), torques_.end(), key_less<TorqueEntry>);
}

bool WarmStartCache::store_in_parallel(const ContactList& contacts, const AssembledBatch& batch, double h) {
    // The serial way (entries in contact order, then sorted in place by their B: the
    // entries swapped about the array one by one) was 4 % of a random-pack run. Here only a
    // counting pass over the contacts is serial: which contacts are kept and the largest B
    // (by chunks), each kept contact's place among its B's entries in contact order (serial:
    // a count per B), and then every entry is written to its range in parallel and each
    // range put in (A, feature) order. Keys are unique, so this is the one sorted order
    // sort_and_index gives.
    const std::size_t n = contacts.size();
    place_.resize(n);
    std::vector<uint64_t> largest_in(chunk_count(n, kReduceChunk), 0);
    std::vector<std::size_t> kept_in(largest_in.size(), 0);
    parallel_chunks(n, kReduceChunk, [&](std::size_t c, std::size_t lo, std::size_t hi) {
        for (std::size_t i = lo; i != hi; ++i) {
            if (!carries(batch, i)) {
                place_[i] = kNotKept;
                continue;
            }
            place_[i] = 0;
            largest_in[c] = std::max(largest_in[c], contacts.key_b[i]);
            ++kept_in[c];
        }
    });
    uint64_t largest = 0;
    std::size_t kept = 0;
    for (std::size_t c = 0; c < largest_in.size(); ++c) {
        largest = std::max(largest, largest_in[c]);
        kept += kept_in[c];
    }
    entries_.clear();
    first_.clear();
    if (kept == 0) return true;
    if (!indexable(largest, kept)) return false;
    first_.assign(std::size_t(largest) + 2, 0);
    for (std::size_t i = 0; i < n; ++i)
        if (place_[i] != kNotKept) place_[i] = first_[std::size_t(contacts.key_b[i]) + 1]++;
    for (std::size_t k = 1; k < first_.size(); ++k) first_[k] += first_[k - 1];
    entries_.resize(kept);
    parallel_each(n, [&](std::size_t i) {
        if (place_[i] == kNotKept) return;
        entries_[first_[std::size_t(contacts.key_b[i])] + place_[i]] = entry_of(contacts, batch, i, h);
    }, grain::kAssembly);
    order_within_bodies();
    return true;
}

const WarmStartCache::TorqueEntry* WarmStartCache::find_torque(uint64_t key_a, uint64_t key_b,
                                                               uint32_t feature) const {
    const TorqueEntry probe{key_a, key_b, feature, Vec3::Zero(), 0.0};
    auto it = std::lower_bound(torques_.begin(), torques_.end(), probe, key_less<TorqueEntry>);
    if (it == torques_.end() || it->key_a != key_a || it->key_b != key_b || it->feature != feature)
        return nullptr;
    return &*it;
}

const WarmStartCache::Entry* WarmStartCache::find(uint64_t key_a, uint64_t key_b,
                                                  uint32_t feature) const {
    if (!first_.empty()) {
        if (key_b + 1 >= first_.size()) return nullptr;
        for (uint32_t k = first_[key_b]; k < first_[key_b + 1]; ++k)
            if (entries_[k].key_a == key_a && entries_[k].feature == feature) return &entries_[k];
        return nullptr;
    }
    const Entry probe{key_a, key_b, feature, 0.0, Vec3::Zero(), 0.0};
    auto it = std::lower_bound(entries_.begin(), entries_.end(), probe, key_less<Entry>);
    if (it == entries_.end() || it->key_a != key_a || it->key_b != key_b || it->feature != feature)
        return nullptr;
    return &*it;
}

}  // namespace talus
