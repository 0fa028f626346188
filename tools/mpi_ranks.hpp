#pragma once
/// The talus command over MPI ranks (docs/mpi.md). Today every rank holds and steps the
/// whole scene; rank 0 alone writes the trajectory, its sidecar and the checkpoints, so
/// the file is the one a single process writes, byte for byte. What the ranks must agree
/// on is agreed here:
///  - between two steps, the stop (a signal that reached any rank stops every rank after
///    the same step) and a failure of any rank (the others stop too);
///  - at the end, one exit code for all and one message: rank 0 prints its own messages;
///    every other rank's stderr is held back, and shown by rank 0 only when that rank is
///    the one whose failure decides the exit code.
#include <memory>
#include <stdexcept>

#include "core/ranks.hpp"

namespace talus {

/// The ranks this process belongs to: an MPI job's when it was started by mpirun (or
/// another MPI launcher) and this talus was built with TALUS_MPI; otherwise a single
/// process. `launch_error` is set (and a single process returned) when a launcher started
/// several copies of a talus built without MPI.
std::unique_ptr<Ranks> start_ranks(int& argc, char**& argv, std::string& launch_error);

/// Ends MPI (a no-op for a single process). Call once, after agree_exit.
void stop_ranks(Ranks& ranks);

/// Whether every rank was started with the same arguments (a collective; the same answer on
/// every rank). Ranks given different scenes or options would step different worlds.
bool same_arguments(Ranks& ranks, int argc, char** argv);

/// Between two steps, on every rank: `signal` (0 or the signal this rank was asked to stop
/// with) becomes the largest any rank was given. Throws PeerFailed when a rank has left the
/// step loop with a failure.
int agree_between_steps(Ranks& ranks, int signal);

/// Every rank's exit code becomes the largest of them (after the ranks still stepping have
/// stopped); when it was not rank 0's own, rank 0 prints the failing rank's messages.
int agree_exit(Ranks& ranks, int code);

}  // namespace talus
