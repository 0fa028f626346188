#pragma once
/// `talus info OUT.h5`: a short, human-readable summary of a trajectory file.
#include <filesystem>
#include <string>

namespace talus {

/// Format and version, the engine version that wrote it, the number of complete frames,
/// their time range, the bodies in the last frame, the steps recorded in the diagnostics and
/// the last step's residual and iterations. Works on a file still being written or left by
/// a killed run (opens read-only in SWMR read mode). Throws IoError (trajectory_writer.hpp)
/// if the file cannot be opened or is not a Talus trajectory.
std::string describe_trajectory(const std::filesystem::path& path);

}  // namespace talus
