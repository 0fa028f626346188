// `talus fclib FILE`: solve an FCLIB frictional contact problem with a Talus solver and
// report its accuracy (io/fclib.hpp, solvers/delassus.hpp).
#include "tools/fclib_command.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "io/fclib.hpp"
#include "io/text_format.hpp"
#include "solvers/delassus.hpp"
#include "tools/exit_codes.hpp"

namespace talus {

int cmd_fclib(const FclibOptions& o) {
    SolverSettings s;
    if (const std::optional<SolverType> t = solver_from_name(o.solver)) {
        s.type = *t;
    } else {
        std::string names;
        for (const SolverCapabilities& c : kSolverTable) names += (names.empty() ? "" : ", ") + std::string(c.name);
        std::fprintf(stderr, "talus fclib: --solver: '%s' is not one of %s\n", o.solver.c_str(), names.c_str());
        return kExitInvalid;
    }
    s.friction_directions = o.friction_directions;
    if (o.friction == "coulomb") s.friction = FrictionLaw::Coulomb;
    else if (o.friction == "ccp") s.friction = FrictionLaw::CCP;
    else {
        std::fprintf(stderr, "talus fclib: --friction: '%s' is not one of coulomb, ccp\n", o.friction.c_str());
        return kExitInvalid;
    }
    if (!capabilities(s.type).ccp && s.friction != FrictionLaw::Coulomb) {
        std::fprintf(stderr, "talus fclib: --solver %s solves the exact Coulomb law only (--friction coulomb)\n",
                     solver_name(s.type));
        return kExitInvalid;
    }
    s.tolerance = o.tolerance;
    s.max_iterations = o.max_iterations;
    s.relaxation = o.relaxation;

    const auto t0 = std::chrono::steady_clock::now();
    FclibProblem fp;
    try {
        fp = read_fclib(o.file);
    } catch (const FclibError& e) {
        std::fprintf(stderr, "talus fclib: %s\n", e.what());
        return kExitInvalid;
    }
    const double read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const DelassusProblem& p = fp.problem;
    Eigen::VectorXd r;
    const SolverResult res = solve_delassus(p, s, r);
    if (!res.refused.empty()) {
        std::fprintf(stderr, "talus fclib: %s\n", res.refused.c_str());
        return kExitInvalid;
    }
    const DelassusAccuracy acc = delassus_accuracy(p, r, s.friction);
    // nsgs, pgs, pj, apgd: the accuracy is their stopping test; maxdiss, lemke: their own
    // test (their friction models are not the law the accuracy measures)
    const bool converged = res.converged;
    const bool own_model = capabilities(s.type).own_model;
    if (o.json) {
        std::string out = fmt::format(
            "{{\"file\": {}, \"formulation\": \"{}\", \"title\": {}, \"contacts\": {}, \"dofs\": {}, "
            "\"solver\": \"{}\", \"friction\": \"{}\", \"tolerance\": {}, \"max_iterations\": {}, "
            "\"iterations\": {}, \"friction_updates\": {}, \"seconds\": {}, \"read_seconds\": {}, "
            "\"error\": {}, \"relative_error\": {}, \"sum_rn\": {}, \"converged\": {}",
            json_string(o.file), fp.formulation, json_string(fp.title), p.contacts(), fp.dofs, o.solver,
            o.friction, json_number(s.tolerance), s.max_iterations, res.iterations, res.friction_updates,
            json_number(res.wall_time), json_number(read_seconds), json_number(acc.error),
            json_number(acc.relative_error), json_number(acc.sum_rn), converged ? "true" : "false");
        if (o.print_reactions) {
            out += ", \"r\": [";
            for (Eigen::Index k = 0; k < r.size(); ++k) out += (k ? ", " : "") + json_number(r[k]);
            out += "]";
        }
        std::printf("%s}\n", out.c_str());
        return 0;
    }
    std::printf("%s: %s problem%s, %zu contacts%s\n", o.file.c_str(), fp.formulation.c_str(),
                fp.dofs > 0 ? fmt::format(" ({} dofs, condensed to W = Hᵀ M⁻¹ H)", fp.dofs).c_str() : "",
                p.contacts(), fp.title.empty() ? "" : fmt::format(", \"{}\"", fp.title).c_str());
    std::printf("solver %s (%s friction): %d iterations%s, %.4g s (reading %.3g s)\n", o.solver.c_str(),
                o.friction.c_str(), res.iterations,
                res.friction_updates > 0 ? fmt::format(" in {} friction updates", res.friction_updates).c_str() : "",
                res.wall_time, read_seconds);
    if (own_model)
        std::printf("%s: %s by its own test; against the %s law, ‖F‖₂ = %.3e, ‖F‖₂/(1+‖q‖₂) = %.3e\n",
                    s.type == SolverType::Lemke
                        ? fmt::format("polyhedral cone of {} directions", s.friction_directions).c_str()
                        : "maximum dissipation",
                    converged ? "solved" : "NOT solved", o.friction.c_str(), acc.error, acc.relative_error);
    else
        std::printf("‖F‖₂ = %.3e, ‖F‖₂/(1+‖q‖₂) = %.3e: %s (tolerance %.1e)\n", acc.error, acc.relative_error,
                    converged ? "converged" : "NOT converged", s.tolerance);
    std::printf("Σ r_N = %.6e\n", acc.sum_rn);
    if (o.print_reactions)
        for (std::size_t i = 0; i < p.contacts(); ++i)
            std::printf("r[%zu] = %.17g %.17g %.17g\n", i, r[3 * i], r[3 * i + 1], r[3 * i + 2]);
    return 0;
}

}  // namespace talus
