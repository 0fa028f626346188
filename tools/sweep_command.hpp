#pragma once
/// `talus sweep SCENE TABLE [-j N] [-o DIR]` (tools/sweep_command.cpp): one run of SCENE per
/// row of TABLE, each with that row's --set overrides, N at a time, resumable.
#include <string>

namespace talus {

struct SweepOptions {
    std::string scene;
    std::string table;   ///< .csv (header: the keys) or .toml ([[run]] tables of "key" = value)
    std::string dir;     ///< outputs; default: TABLE's name without extension, beside it
    int jobs = 1;        ///< runs at a time
    std::string talus;   ///< the binary the runs use (this one)
};

/// 0 when every run finished; 2 for a bad table (file, line, key named); otherwise the exit
/// code of the first run that failed (3 or 4), or 130/143 when the sweep was stopped.
int cmd_sweep(const SweepOptions& o);

}  // namespace talus
