# `mpirun -np P talus run` on this machine (loopback, --oversubscribe; docs/mpi.md):
# tests/python/check_mpi_runs.py. bytes: np 1-4 write the one-process run's file, bit for
# bit; pour: a 3,000-grain pour with an emitter and an outlet, np 4 in parts and np 2
# stepping the whole world against one process (bytes and h5diff); stop: stopped at np 2 (--stop-after-steps, and a real SIGTERM to the
# ranks and to mpirun), resumed at np 3, equal to the uninterrupted run; errors: one exit
# code and one message for an invalid scene, a missing output directory, a subcommand
# other than run, ranks given different arguments, and a rank failing alone; killed_runs:
# every rank killed at five moments; solve: one step's contacts solved over np 1-4 ranks
# (talus solve-ranks), the one-process bits with pgs, bgs, pj and apgd; parallel: the pour
# with --parallel-output (every rank writing its rows of one file) at np 2 and 3, the
# one-process frames compared by id; graded: the 1:5 bed's first 0.1 s in parts at np 2,
# its capped solves mostly not taken again on the whole world, against one process. Only in a build
# with TALUS_MPI, and not under the sanitizers (Open MPI's own allocations are not ours to
# account for).
if(TALUS_MPI AND NOT TALUS_SANITIZE)
  foreach(mode bytes pour stop errors solve parallel graded)
    add_test(NAME mpi.${mode}
             COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_mpi_runs.py
                     $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/resume.toml
                     ${CMAKE_BINARY_DIR}/test-output/mpi/${mode} ${mode})
    set_tests_properties(mpi.${mode} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
  endforeach()
  # the pour's 4 ranks share the two cores: with another test beside them each of the
  # step's exchanges waits for the scheduler (29 s alone, 227 s beside a busy test)
  set_tests_properties(mpi.pour mpi.parallel PROPERTIES PROCESSORS 2)
  # Every rank killed with SIGKILL at five random moments (tests/python/check_killed_runs.py
  # --mpirun): rank 0's trajectory reads to its last complete frame, and mpirun ends.
  add_test(NAME mpi.killed_runs
           COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_killed_runs.py
                   $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml
                   ${CMAKE_BINARY_DIR}/test-output/mpi/killed 20261129 --mpirun 2)
  # The same with --parallel-output (every rank writes its rows of the file; no SWMR, a
  # committed frame count instead): the file reads to its last committed frame.
  add_test(NAME mpi.killed_parallel
           COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_killed_runs.py
                   $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml
                   ${CMAKE_BINARY_DIR}/test-output/mpi/killed_parallel 20261130 --mpirun 2 --parallel-output)
endif()
