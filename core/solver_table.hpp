#pragma once
/// The one table of what each solver supports: read by the scene reader (io/scene.cpp, to
/// refuse a scene with the key at fault), by the dispatcher (solvers/solver.cpp, to refuse a
/// step) and by `talus fclib`; docs/scenes.md prints the same table and a test
/// (SolverTable.DocsShowTheTable) keeps the two equal. Adding a solver adds a row here.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace talus {

/// The CCP solvers (docs/design.md §6), the maximum-dissipation model's Gauss–Seidel (not a CCP) and
/// the Stewart–Trinkle polyhedral-cone LCP solved by Lemke's method (not a CCP either), and the
/// non-linear Gauss–Seidel with exact single-contact Coulomb solves (friction = "coulomb" only).
/// Scene names: "pgs", "pj", "apgd", "maxdiss", "lemke", "nsgs".
enum class SolverType : uint8_t { PGS, PJ, APGD, MaxDiss, Lemke, NSGS };

/// The friction law the contact solvers enforce (issue 8). "ccp": the cone complementarity
/// relaxation of docs/design.md §4 (default: convex, fast; a sliding contact separates at μ‖c_t‖).
/// "coulomb": the exact law in De Saxcé's form, c_n + μ‖c_t‖ in place of c_n
/// (solvers/coulomb_local.hpp): "nsgs" solves it directly; "pgs", "pj" and "apgd" by a fixed
/// point over CCP solves whose normal term is shifted by μ‖c_t‖ between solves.
enum class FrictionLaw : uint8_t { CCP, Coulomb };

inline const char* friction_law_name(FrictionLaw f) { return f == FrictionLaw::CCP ? "ccp" : "coulomb"; }

struct SolverCapabilities {
    SolverType type;
    const char* name;    ///< scene name ([solver] type)
    bool ccp;            ///< solves friction = "ccp" (the cone complementarity problem)
    bool coulomb;        ///< solves friction = "coulomb" (exact Coulomb friction)
    bool joints;         ///< joint rows (bilateral constraints), under "ccp"
    bool rolling;        ///< rolling/spinning resistance rows, under "ccp"
    bool own_model;      ///< solves a friction model of its own instead (maxdiss, lemke)
};

// Joints and rolling resistance are not yet supported under friction = "coulomb" by any
// solver: those columns hold for "ccp" only.
inline constexpr std::array<SolverCapabilities, 6> kSolverTable = {{
    // type               name       ccp    coulomb joints rolling own_model
    {SolverType::PGS,     "pgs",     true,  true,   true,  true,   false},
    {SolverType::PJ,      "pj",      true,  true,   true,  true,   false},
    {SolverType::APGD,    "apgd",    true,  true,   true,  false,  false},
    {SolverType::MaxDiss, "maxdiss", true,  false,  false, false,  true},
    {SolverType::Lemke,   "lemke",   true,  false,  true,  false,  true},
    {SolverType::NSGS,    "nsgs",    false, true,   false, false,  false},
}};

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
inline bool supports_joints(SolverType t, FrictionLaw law) {
    return capabilities(t).joints && law == FrictionLaw::CCP;
}
inline bool supports_rolling(SolverType t, FrictionLaw law) {
    return capabilities(t).rolling && law == FrictionLaw::CCP;
}

}  // namespace talus
