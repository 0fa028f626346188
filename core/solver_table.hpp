#pragma once
/// The one table of what each solver supports: read by the scene reader (io/scene/, to
/// refuse a scene with the key at fault), by the dispatcher (solvers/solver.cpp, to refuse a
/// step) and by `talus fclib`; docs/scenes.md prints the same table and a test
/// (SolverTable.DocsShowTheTable) keeps the two equal. Adding a solver adds a row here
/// (TALUS_SOLVER_TABLE) and nothing elsewhere outside its own file and tests.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/enum_names.hpp"

namespace talus {

/// The CCP solvers (docs/design.md §6), the maximum-dissipation model's Gauss–Seidel (not a CCP) and
/// the Stewart–Trinkle polyhedral-cone LCP solved by Lemke's method (not a CCP either), and the
/// non-linear Gauss–Seidel with exact single-contact Coulomb solves (friction = "coulomb" only).
/// Scene names: "pgs", "pj", "apgd", "maxdiss", "lemke", "nsgs".
/// The table itself, one row per solver: X(Type, "scene name", method, ccp, coulomb, joints,
/// rolling, own_model, relaxation). It is a list macro so that the enum, kSolverTable and the
/// dispatch of solvers/methods.hpp (the method's declaration and its case) all come from this
/// one line: adding a solver adds a row here and writes `method` in its own file. `method`
/// is the function template of solvers/<name>.cpp; `direct_method` marks a method that is
/// not iterative over an operator (lemke: the callers send it elsewhere). `relaxation` is the
/// ω the solver uses when [solver] relaxation is not given (ignored by the solvers that make
/// exact block solves). The joints and rolling columns hold for "ccp"; under friction =
/// "coulomb" only bgs takes them (rows_under_coulomb).
// clang-format off
#define TALUS_SOLVER_TABLE(X) \
    /* type     name       method          ccp    coulomb joints rolling own    ω   */ \
    X(PGS,     "pgs",     pgs_method,     true,  true,   true,  true,   false, 1.0)   \
    X(PJ,      "pj",      pj_method,      true,  true,   true,  true,   false, 0.5)   \
    X(APGD,    "apgd",    apgd_method,    true,  true,   true,  false,  false, 1.0)   \
    X(MaxDiss, "maxdiss", maxdiss_method, true,  false,  false, false,  true,  1.0)   \
    X(Lemke,   "lemke",   direct_method,  true,  false,  true,  false,  true,  1.0)   \
    X(NSGS,    "nsgs",    nsgs_method,    false, true,   false, false,  false, 1.0)   \
    X(BGS,     "bgs",     bgs_method,     true,  true,   true,  true,   false, 1.0)
// clang-format on

#define TALUS_SOLVER_ENUM(type, ...) type,
enum class SolverType : uint8_t { TALUS_SOLVER_TABLE(TALUS_SOLVER_ENUM) };
#undef TALUS_SOLVER_ENUM

/// The friction law the contact solvers enforce (issue 8). "ccp": the cone complementarity
/// relaxation of docs/design.md §4 (default: convex, fast; a sliding contact separates at μ‖c_t‖).
/// "coulomb": the exact law in De Saxcé's form, c_n + μ‖c_t‖ in place of c_n
/// (solvers/coulomb_local.hpp): "nsgs" and "bgs" solve it directly (bgs by its own block
/// step, coulomb_block_step); "pgs", "pj" and "apgd" by a fixed point over CCP solves whose
/// normal term is shifted by μ‖c_t‖ between solves.
enum class FrictionLaw : uint8_t { CCP, Coulomb };

template <>
struct EnumNames<FrictionLaw> {
    static constexpr NamedValue<FrictionLaw> table[] = {{FrictionLaw::CCP, "ccp"}, {FrictionLaw::Coulomb, "coulomb"}};
};
inline const char* friction_law_name(FrictionLaw f) { return name_of(f).data(); }

struct SolverCapabilities {
    SolverType type;
    const char* name;    ///< scene name ([solver] type)
    bool ccp;            ///< solves friction = "ccp" (the cone complementarity problem)
    bool coulomb;        ///< solves friction = "coulomb" (exact Coulomb friction)
    bool joints;         ///< joint rows (bilateral constraints), under "ccp"
    bool rolling;        ///< rolling/spinning resistance rows, under "ccp"
    bool own_model;      ///< solves a friction model of its own instead (maxdiss, lemke)
    double relaxation;   ///< default ω [-] ([solver] relaxation = 0)
};

#define TALUS_SOLVER_ROW(type, name, method, ccp, coulomb, joints, rolling, own, omega) \
    SolverCapabilities{SolverType::type, name, ccp, coulomb, joints, rolling, own, omega},
inline constexpr auto kSolverTable = std::to_array<SolverCapabilities>({TALUS_SOLVER_TABLE(TALUS_SOLVER_ROW)});
#undef TALUS_SOLVER_ROW

inline const SolverCapabilities& capabilities(SolverType t) {
    for (const SolverCapabilities& c : kSolverTable)
        if (c.type == t) return c;
    return kSolverTable[0];  // unreachable: every type has a row
}

inline std::optional<SolverType> solver_from_name(std::string_view name) {
    for (const SolverCapabilities& c : kSolverTable)
        if (name == c.name) return c.type;
    return std::nullopt;
}

/// "\"a\", \"b\" or \"c\"": the solvers of the table for which `has` holds.
template <class Has>
std::string solvers_where(Has&& has) {
    std::string out;
    std::size_t count = 0, total = 0;
    for (const SolverCapabilities& c : kSolverTable) total += has(c) ? 1 : 0;
    for (const SolverCapabilities& c : kSolverTable) {
        if (!has(c)) continue;
        ++count;
        if (count > 1) out += count == total ? " or " : ", ";
        out += std::string("\"") + c.name + "\"";
    }
    return out;
}

inline const char* solver_name(SolverType t) { return capabilities(t).name; }

inline bool supports_law(SolverType t, FrictionLaw law) {
    const SolverCapabilities& c = capabilities(t);
    return law == FrictionLaw::CCP ? c.ccp : c.coulomb;
}
/// Joint rows and rolling/spinning rows under friction = "coulomb": bgs only, whose sweep
/// gives those rows PGS's step whatever law its contacts follow (the fixed point over CCP
/// solves and nsgs do not take them).
inline bool rows_under_coulomb(SolverType t) { return t == SolverType::BGS; }
inline bool supports_joints(SolverType t, FrictionLaw law) {
    return capabilities(t).joints && (law == FrictionLaw::CCP || rows_under_coulomb(t));
}
inline bool supports_rolling(SolverType t, FrictionLaw law) {
    return capabilities(t).rolling && (law == FrictionLaw::CCP || rows_under_coulomb(t));
}

}  // namespace talus
