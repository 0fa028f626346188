// The capability table (core/solver_table.hpp): what the docs print, what the dispatcher
// refuses and what the names parse to all come from it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/solver_table.hpp"

namespace talus {
namespace {

std::string yes_no(bool b) { return b ? "yes" : "no"; }

// docs/scenes.md shows one row per solver, "| `name` | ccp | coulomb | joints | rolling | own |".
TEST(SolverTable, DocsShowTheTable) {
    std::ifstream in(std::string(TALUS_SOURCE_DIR) + "/docs/scenes.md");
    ASSERT_TRUE(in) << "docs/scenes.md";
    std::stringstream all;
    all << in.rdbuf();
    const std::string text = all.str();
    for (const SolverCapabilities& c : kSolverTable) {
        const std::string row = std::string("| `") + c.name + "` | " + yes_no(c.ccp) + " | " + yes_no(c.coulomb) +
                                " | " + yes_no(c.joints) + " | " + yes_no(c.rolling) + " | " +
                                yes_no(c.own_model) + " |";
        EXPECT_NE(text.find(row), std::string::npos) << "docs/scenes.md lacks the row " << row;
    }
}

TEST(SolverTable, EveryTypeHasOneRowAndItsNameParses) {
    for (const SolverCapabilities& c : kSolverTable) {
        EXPECT_EQ(&capabilities(c.type), &c);
        ASSERT_TRUE(solver_from_name(c.name).has_value());
        EXPECT_EQ(*solver_from_name(c.name), c.type);
        EXPECT_TRUE(c.ccp || c.coulomb) << c.name << " solves no law";
    }
    EXPECT_FALSE(solver_from_name("gauss").has_value());
}

TEST(SolverTable, ListsReadNaturally) {
    EXPECT_EQ(solvers_where([](const SolverCapabilities& c) { return c.rolling; }),
              "\"pgs\", \"pj\" or \"bgs\"");
    EXPECT_EQ(solvers_where([](const SolverCapabilities& c) { return c.joints; }),
              "\"pgs\", \"pj\", \"apgd\", \"lemke\" or \"bgs\"");
    EXPECT_FALSE(supports_joints(SolverType::PGS, FrictionLaw::Coulomb));
    EXPECT_TRUE(supports_joints(SolverType::BGS, FrictionLaw::Coulomb));
    EXPECT_TRUE(supports_rolling(SolverType::BGS, FrictionLaw::Coulomb));
    EXPECT_FALSE(supports_rolling(SolverType::NSGS, FrictionLaw::Coulomb));
    EXPECT_TRUE(supports_rolling(SolverType::PJ, FrictionLaw::CCP));
    EXPECT_FALSE(supports_law(SolverType::NSGS, FrictionLaw::CCP));
}

}  // namespace
}  // namespace talus
