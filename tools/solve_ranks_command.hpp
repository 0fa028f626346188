#pragma once
/// `mpirun -np P talus solve-ranks SCENE [--steps N] [--solver S]...` (tools/solve_ranks_command.cpp):
/// one step's contact problem solved over the job's ranks, each holding only its part, and
/// compared with the one-process solve, bit for bit; with the messages and times of both.
/// Each solver runs under each friction law it takes over ranks (bgs: "ccp" and "coulomb";
/// the others "ccp"), whatever the scene's.
#include <string>
#include <vector>

#include "core/ranks.hpp"
#include "io/scene.hpp"

namespace talus {

struct SolveRanksOptions {
    std::string scene;
    std::vector<std::string> sets;     ///< --set overrides
    int threads = 0;                   ///< oneTBB threads a rank; 0 = all cores
    int steps = 200;                   ///< steps of the scene before the problem is taken
    std::vector<std::string> solvers;  ///< empty: pgs, bgs, pj and apgd (bgs under both laws)
};

/// 0 when every solver's ranks gave the one-process bits; 3 (kExitSimulation) when one did
/// not, naming it. Every rank calls it (the scene loaded and stepped on each: the whole
/// scene, as `talus run` over ranks does today); rank 0 prints.
int cmd_solve_ranks(Scene& scene, const SolveRanksOptions& o, Ranks& ranks);

}  // namespace talus
