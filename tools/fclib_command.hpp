#pragma once
/// `talus fclib FILE [--solver S] [--tolerance T] ...` (tools/fclib_command.cpp).
#include <string>

namespace talus {

struct FclibOptions {
    std::string file;
    std::string solver = "nsgs";        ///< nsgs, pgs, pj, apgd, maxdiss or lemke
    std::string friction = "coulomb";   ///< coulomb (FCLIB's law) or ccp (the relaxation)
    double tolerance = 1e-6;            ///< on ‖F‖₂ / (1 + ‖q‖₂)
    int max_iterations = 100000;        ///< sweeps or gradient steps, over all solves
    double relaxation = 0.0;            ///< ω; 0 = the method's default (1)
    int friction_directions = 8;        ///< lemke's polyhedral cone
    bool json = false;                  ///< one JSON object on stdout instead of text
    bool print_reactions = false;       ///< also print r
};

/// 0 when solved or not (the output says which), 2 for a bad file or option.
int cmd_fclib(const FclibOptions& o);

}  // namespace talus
