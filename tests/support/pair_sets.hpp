#pragma once
/// A pair list as a set, to compare two searches' pairs whatever their order: each pair
/// must be reported as a < b and once.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "core/contacts.hpp"

namespace talus::testing {

inline std::set<std::pair<int, int>> as_set(const PairList& p) {
    std::set<std::pair<int, int>> s;
    for (std::size_t k = 0; k < p.size(); ++k) {
        EXPECT_LT(p.a[k], p.b[k]);
        s.insert({p.a[k], p.b[k]});
    }
    EXPECT_EQ(s.size(), p.size()) << "a pair was reported twice";
    return s;
}

}  // namespace talus::testing
