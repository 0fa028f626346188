#pragma once
/// Sums whose bits do not depend on the order of their terms (docs/design.md §8). A
/// floating-point sum rounds after every addition, so its bits depend on the order: the
/// same terms held in another order (bodies shuffled in memory, or split among MPI ranks)
/// would sum to another number. ExactSum instead adds
/// every term exactly into a fixed-point accumulator that spans the whole double range (a
/// "long accumulator", Kulisch's idea): integer additions are associative, so the
/// accumulated value is the exact sum whatever the order or the grouping, and value()
/// rounds that one number to a double (to nearest, ties broken by the bits below). Two
/// accumulators merge exactly (operator+=), so partial sums over chunks, threads or ranks
/// combine to the same bits in any grouping.
///
/// A double is m 2^E with a 53-bit integer m and E in [−1074, 971]. The accumulator holds
/// 67 signed 64-bit words, word k worth 2^(32k − 1074): a term's m 2^b (b = (E + 1074) mod
/// 32) spans three 32-bit digits, added to three words. A word takes up to 2^31 such
/// additions before it could overflow; add() propagates the carries every 2^30 terms.
/// Cost: a few nanoseconds a term, against a third of one for a plain sum.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/ranks.hpp"

namespace talus {

class ExactSum {
public:
    static constexpr int kWords = 67;

    void add(double x) {
        int64_t m;
        int offset;
        if (decompose(x, m, offset)) add_integer(m, offset);
        else add_special(x);
    }

    /// x = m 2^(offset − 1074) with a signed 53-bit m and offset in [0, 2045] (a double's
    /// E + 1074; subnormals at offset 0); false for ±∞ and NaN.
    static bool decompose(double x, int64_t& m, int& offset) {
        uint64_t bits;
        std::memcpy(&bits, &x, sizeof bits);
        const int biased = int((bits >> 52) & 0x7ff);
        if (biased == 0x7ff) return false;
        uint64_t mag = bits & ((uint64_t(1) << 52) - 1);
        if (biased != 0) mag |= uint64_t(1) << 52;  // normal: hidden bit; subnormal: m 2^−1074
        m = (bits >> 63) ? -int64_t(mag) : int64_t(mag);
        offset = biased == 0 ? 0 : biased - 1;
        return true;
    }

    /// Adds m 2^(offset − 1074) exactly, offset in [0, 2045] (a double's E + 1074).
    void add_integer(int64_t m, int offset) {
        if (m == 0) return;
        const bool negative = m < 0;
        const uint64_t mag = negative ? uint64_t(0) - uint64_t(m) : uint64_t(m);
        const int word = offset >> 5, shift = offset & 31;
        const unsigned __int128 t = static_cast<unsigned __int128>(mag) << shift;  // < 2⁹⁵
        const int64_t d0 = int64_t(uint64_t(t) & 0xffffffffu);
        const int64_t d1 = int64_t(uint64_t(t >> 32) & 0xffffffffu);
        const int64_t d2 = int64_t(uint64_t(t >> 64));
        if (negative) {
            words_[word] -= d0;
            words_[word + 1] -= d1;
            words_[word + 2] -= d2;
        } else {
            words_[word] += d0;
            words_[word + 1] += d1;
            words_[word + 2] += d2;
        }
        if (++pending_ >= (uint64_t(1) << 30)) normalise();
    }

    /// ±∞ or NaN.
    void add_special(double x) {
        if (std::isnan(x)) nan_ = true;
        else if (x < 0) neg_inf_ = true;
        else pos_inf_ = true;
    }

    ExactSum& operator+=(const ExactSum& o) {
        normalise();
        ExactSum other = o;
        other.normalise();
        for (int k = 0; k < kWords; ++k) words_[k] += other.words_[k];
        nan_ |= o.nan_;
        pos_inf_ |= o.pos_inf_;
        neg_inf_ |= o.neg_inf_;
        pending_ = 1;
        return *this;
    }

    /// The exact sum rounded to a double (NaN if a term was NaN or both infinities came,
    /// ±∞ if one did or the sum passes the largest double).
    double value() const {
        if (nan_ || (pos_inf_ && neg_inf_)) return std::numeric_limits<double>::quiet_NaN();
        if (pos_inf_) return std::numeric_limits<double>::infinity();
        if (neg_inf_) return -std::numeric_limits<double>::infinity();
        ExactSum c = *this;
        c.normalise();  // digits 0 … 2³² − 1 below the top word, which holds the sign
        bool negative = c.words_[kWords - 1] < 0;
        if (negative) {  // |sum|: negate the digit string
            int64_t borrow = 0;
            for (int k = 0; k < kWords; ++k) {
                int64_t v = -c.words_[k] - borrow;
                borrow = 0;
                if (k < kWords - 1 && v < 0) {
                    v += int64_t(1) << 32;
                    borrow = 1;
                }
                c.words_[k] = v;
            }
        }
        int top = kWords - 1;
        while (top >= 0 && c.words_[top] == 0) --top;
        if (top < 0) return 0.0;
        // The top three digits (at least 65 significant bits when top ≥ 2), with a sticky
        // bit for any digit below, convert with one correct rounding.
        const int lo = std::max(top - 2, 0);
        unsigned __int128 u = 0;
        for (int k = top; k >= lo; --k) u = (u << 32) | uint64_t(c.words_[k]);
        bool sticky = false;
        for (int k = 0; k < lo; ++k) sticky |= c.words_[k] != 0;
        if (sticky) u |= 1;
        const double mag = std::ldexp(static_cast<double>(u), 32 * lo - 1074);
        return negative ? -mag : mag;
    }

private:
    // Carries up so that every word below the top holds a digit 0 … 2³² − 1.
    void normalise() {
        for (int k = 0; k < kWords - 1; ++k) {
            const int64_t carry = words_[k] >> 32;  // floor division by 2³²
            words_[k] -= carry * (int64_t(1) << 32);
            words_[k + 1] += carry;
        }
        pending_ = 0;
    }

    std::array<int64_t, kWords> words_{};
    uint64_t pending_ = 0;
    bool nan_ = false, pos_inf_ = false, neg_inf_ = false;
};

/// A front end for many terms of ExactSum: one 64-bit bin per binary exponent takes each
/// term's signed 53-bit significand (one integer addition a term, where ExactSum makes
/// three), and flush() moves the bins into an ExactSum. A bin holds 2¹⁰ significands
/// without overflow, so add() flushes itself every 1024 terms. 16 kB: one per task, on
/// the stack, not per chunk in an array. Exact like ExactSum: the same value for any order.
class ExactSumBins {
public:
    explicit ExactSumBins(ExactSum& into) : into_(into) {}
    ExactSumBins(const ExactSumBins&) = delete;
    ExactSumBins& operator=(const ExactSumBins&) = delete;
    ~ExactSumBins() { flush(); }

    void add(double x) {
        int64_t m;
        int offset;
        if (!ExactSum::decompose(x, m, offset)) {
            into_.add_special(x);
            return;
        }
        bin_[offset] += m;
        lo_ = std::min(lo_, offset);
        hi_ = std::max(hi_, offset);
        if (++count_ == 1024) flush();
    }

    void flush() {
        for (int k = lo_; k <= hi_; ++k)
            if (bin_[k] != 0) {
                into_.add_integer(bin_[k], k);
                bin_[k] = 0;
            }
        lo_ = kBins;
        hi_ = -1;
        count_ = 0;
    }

private:
    static constexpr int kBins = 2046;
    ExactSum& into_;
    std::array<int64_t, kBins> bin_{};
    int lo_ = kBins, hi_ = -1, count_ = 0;
};

/// Every rank's `sums` merged exactly (a collective: every rank calls it with the same
/// count): on return sums[k] holds the sum of every rank's sums[k], the same accumulator on
/// every rank, so value() rounds the whole run's sum once, as one process summing every term
/// would (the merge is exact in any grouping).
inline void merge_over_ranks(std::span<ExactSum> sums, Ranks& ranks) {
    if (ranks.size() == 1 || sums.empty()) return;
    static_assert(std::is_trivially_copyable_v<ExactSum>);
    std::string mine(sums.size() * sizeof(ExactSum), '\0');
    std::memcpy(mine.data(), sums.data(), mine.size());
    std::vector<std::string> all;
    ranks.all_gather(mine, all);
    for (std::size_t k = 0; k < sums.size(); ++k) sums[k] = ExactSum{};
    for (const std::string& theirs : all)
        for (std::size_t k = 0; k < sums.size(); ++k) {
            ExactSum s;
            std::memcpy(static_cast<void*>(&s), theirs.data() + k * sizeof(ExactSum), sizeof(ExactSum));
            sums[k] += s;
        }
}

}  // namespace talus
