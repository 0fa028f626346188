#pragma once
/// The talus command's exit codes (docs/command-line.md, "Exit codes"), for every
/// subcommand. A stop by a signal exits 128 + the signal.
namespace talus {

inline constexpr int kExitInvalid = 2;     ///< bad input: scene, option, table (named)
inline constexpr int kExitSimulation = 3;  ///< the simulation failed
inline constexpr int kExitIo = 4;          ///< I/O error or memory exhausted

}  // namespace talus
