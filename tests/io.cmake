# Trajectory output checks that need Python or ParaView (included from tests/CMakeLists.txt).
# The C++ side (writer -> tools/talus_h5.py readback, --force, killed runs, talus info) is in
# tests/unit/io/trajectory/test_writer.cpp. Here: one GoogleTest case writes a fixture trajectory
# (FIXTURES_SETUP); ParaView's pvpython and the Python loader then read it.
# Interpreters are named by absolute path: another python3 on PATH may lack h5py.

set(TALUS_PYTHON /usr/bin/python3)

# A test that runs tests/scenes/SCENE with the talus command into OUTPUT, as the fixture
# FIXTURE for the checks that read it; extra arguments (--set ...) go to `talus run`.
function(talus_run_fixture name scene output fixture)
  add_test(NAME ${name}
           COMMAND talus run ${CMAKE_CURRENT_SOURCE_DIR}/scenes/${scene} -o ${output} --force --quiet ${ARGN})
  set_tests_properties(${name} PROPERTIES FIXTURES_SETUP ${fixture})
endfunction()
set(TALUS_PVPYTHON /usr/bin/pvpython)  # Debian package python3-paraview (ParaView 5.11)
set(TALUS_XDMF_FIXTURE ${CMAKE_BINARY_DIR}/test-output/io/fixture/xdmf_fixture.h5)

if(NOT EXISTS ${TALUS_PVPYTHON})
  message(WARNING "${TALUS_PVPYTHON} not found: io.xdmf_paraview will fail. "
                  "Install the Debian package python3-paraview.")
endif()

add_test(NAME io.xdmf_fixture
         COMMAND talus_tests --gtest_filter=TrajectoryXdmf.WritesParaViewFixture)
set_tests_properties(io.xdmf_fixture PROPERTIES
    ENVIRONMENT "TALUS_XDMF_FIXTURE=${TALUS_XDMF_FIXTURE}"
    FIXTURES_SETUP talus_xdmf_fixture)

# ParaView's legacy XDMF Reader opens the sidecar; every frame must match the HDF5 rows.
# Reading needs no display; --force-offscreen-rendering keeps pvpython off X if one is set.
add_test(NAME io.xdmf_paraview
         COMMAND ${TALUS_PVPYTHON} --force-offscreen-rendering
                 ${CMAKE_CURRENT_SOURCE_DIR}/python/check_xdmf_pvpython.py ${TALUS_XDMF_FIXTURE})
set_tests_properties(io.xdmf_paraview PROPERTIES
    FIXTURES_REQUIRED talus_xdmf_fixture
    TIMEOUT 300)

# The Python loader's own behaviour (negative indices, incomplete entries, its command line).
add_test(NAME io.talus_h5
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_talus_h5.py
                 ${TALUS_XDMF_FIXTURE} ${CMAKE_BINARY_DIR}/test-output/io/talus_h5)
set_tests_properties(io.talus_h5 PROPERTIES FIXTURES_REQUIRED talus_xdmf_fixture)

# A clump scene run by the talus command, then read back through the Python loader
# (clump templates, shape codes, sphere positions in the world).
set(TALUS_CLUMP_RUN ${CMAKE_BINARY_DIR}/test-output/io/clumps/clumps.h5)
add_test(NAME io.clumps_run
         COMMAND sh -c "mkdir -p \"$1\" && exec \"$2\" run \"$3\" -o \"$1/clumps.h5\" --force --quiet"
                 sh ${CMAKE_BINARY_DIR}/test-output/io/clumps $<TARGET_FILE:talus>
                 ${CMAKE_CURRENT_SOURCE_DIR}/scenes/clumps.toml)
set_tests_properties(io.clumps_run PROPERTIES FIXTURES_SETUP talus_clump_run)
add_test(NAME io.clumps_h5
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_clumps_h5.py
                 ${TALUS_CLUMP_RUN})
set_tests_properties(io.clumps_h5 PROPERTIES FIXTURES_REQUIRED talus_clump_run)

# True shapes (/shapes and the sidecar's "ellipsoids" and "cylinders"): a capsule, an
# ellipsoid and clumps falling and turning; h5py recomputes every glyph from the body rows,
# ParaView draws them with docs/rendering.md's Tensor Glyph recipe onto their surfaces.
set(TALUS_SHAPES_OUTPUT ${CMAKE_BINARY_DIR}/test-output/io/shapes.h5)
talus_run_fixture(io.shapes_run shapes.toml ${TALUS_SHAPES_OUTPUT} talus_shapes)
add_test(NAME io.shapes_h5
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_shapes_h5.py ${TALUS_SHAPES_OUTPUT})
set_tests_properties(io.shapes_h5 PROPERTIES FIXTURES_REQUIRED talus_shapes)
add_test(NAME io.shapes_paraview
         COMMAND ${TALUS_PVPYTHON} --force-offscreen-rendering
                 ${CMAKE_CURRENT_SOURCE_DIR}/python/check_shapes_pvpython.py ${TALUS_SHAPES_OUTPUT})
set_tests_properties(io.shapes_paraview PROPERTIES FIXTURES_REQUIRED talus_shapes TIMEOUT 300)
add_test(NAME io.shapes_sidecar_blocks
         COMMAND ${TALUS_PVPYTHON} --force-offscreen-rendering
                 ${CMAKE_CURRENT_SOURCE_DIR}/python/check_sidecar_blocks_pvpython.py ${TALUS_SHAPES_OUTPUT})
set_tests_properties(io.shapes_sidecar_blocks PROPERTIES FIXTURES_REQUIRED talus_shapes TIMEOUT 300)

# A run with an emitter and an outlet through the talus command; the Python loader then
# checks its /flow rows and that no body id is reused.
set(TALUS_FLOW_FIXTURE ${CMAKE_BINARY_DIR}/test-output/io/flow_rain.h5)
talus_run_fixture(io.flow_fixture flow_rain.toml ${TALUS_FLOW_FIXTURE} talus_flow_fixture)
add_test(NAME io.talus_h5_flow
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_talus_h5.py
                 ${TALUS_XDMF_FIXTURE} ${CMAKE_BINARY_DIR}/test-output/io/talus_h5_flow
                 ${TALUS_FLOW_FIXTURE})
set_tests_properties(io.talus_h5_flow PROPERTIES
    FIXTURES_REQUIRED "talus_xdmf_fixture;talus_flow_fixture")

# Forces on walls: a bead dropped on a floor loads it with nothing, then with its weight.
set(TALUS_DROP_OUTPUT ${CMAKE_BINARY_DIR}/test-output/io/drop_walls.h5)
talus_run_fixture(io.wall_loads_run drop.toml ${TALUS_DROP_OUTPUT} talus_drop_walls)
add_test(NAME io.wall_loads
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_wall_loads.py
                 ${TALUS_DROP_OUTPUT})
set_tests_properties(io.wall_loads PROPERTIES FIXTURES_REQUIRED talus_drop_walls)
# The same run with each frame's wall contacts written (/walls/contacts).
set(TALUS_DROP_CONTACTS_OUTPUT ${CMAKE_BINARY_DIR}/test-output/io/drop_wall_contacts.h5)
talus_run_fixture(io.wall_contacts_run drop.toml ${TALUS_DROP_CONTACTS_OUTPUT} talus_drop_wall_contacts --set output.wall_contacts=true)
add_test(NAME io.wall_contacts
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_wall_loads.py
                 ${TALUS_DROP_CONTACTS_OUTPUT} --expect-contacts)
set_tests_properties(io.wall_contacts PROPERTIES FIXTURES_REQUIRED talus_drop_wall_contacts)
# When each stage began: /diagnostics/stage, the root stage_names and `talus info`, on the
# smallest two-stage scene (a gate that opens once the beads on it are still).
set(TALUS_STAGED_OUTPUT ${CMAKE_BINARY_DIR}/test-output/io/staged_gate.h5)
talus_run_fixture(io.stages_run staged_gate.toml ${TALUS_STAGED_OUTPUT} talus_staged_gate)
add_test(NAME io.stages
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_stages_output.py
                 ${TALUS_STAGED_OUTPUT} $<TARGET_FILE:talus>)
set_tests_properties(io.stages PROPERTIES FIXTURES_REQUIRED talus_staged_gate)
# Every contact of each frame's last step ([output] contacts, /contacts) on a simple cubic
# stack at rest: h5py checks the impulses against the stack's weights (k m g dt under the
# k-th bead from the top, 0 between columns) and the geometry; ParaView's XDMF Reader shows
# one line per contact, ends and forces as in the file.
set(TALUS_STACK_OUTPUT ${CMAKE_BINARY_DIR}/test-output/io/cubic_stack.h5)
talus_run_fixture(io.contacts_run cubic_stack.toml ${TALUS_STACK_OUTPUT} talus_cubic_stack)
add_test(NAME io.contacts_h5
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_contacts_output.py
                 ${TALUS_STACK_OUTPUT})
set_tests_properties(io.contacts_h5 PROPERTIES FIXTURES_REQUIRED talus_cubic_stack)
add_test(NAME io.contacts_paraview
         COMMAND ${TALUS_PVPYTHON} --force-offscreen-rendering
                 ${CMAKE_CURRENT_SOURCE_DIR}/python/check_sidecar_blocks_pvpython.py ${TALUS_STACK_OUTPUT})
set_tests_properties(io.contacts_paraview PROPERTIES
    FIXTURES_REQUIRED talus_cubic_stack
    TIMEOUT 300)
# The walls as the output draws them (/walls/surface and the sidecar's "walls" block): a drum
# that turns, planes that stay or are moved by a table (tests/scenes/drum.toml to 0.4 s), and a
# gate removed by a stage (the staged gate run above); h5py checks the poses, ParaView the
# triangles of every frame.
set(TALUS_DRUM_OUTPUT ${CMAKE_BINARY_DIR}/test-output/io/drum_surface.h5)
talus_run_fixture(io.walls_surface_run drum.toml ${TALUS_DRUM_OUTPUT} talus_drum_surface --set simulation.duration=0.4)
add_test(NAME io.walls_surface
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_wall_surface.py
                 ${TALUS_DRUM_OUTPUT} ${TALUS_STAGED_OUTPUT})
set_tests_properties(io.walls_surface PROPERTIES
                     FIXTURES_REQUIRED "talus_drum_surface;talus_staged_gate")
# A hopper (cone) over an orifice plate, with the defaults: a fill wider than the cone, an
# emitter and a discharge; h5py checks placement, overlaps against the scene's geometry, that
# every grain leaves, the walls' triangles, and the same bits on 1 and 3 threads; ParaView
# draws them below.
set(TALUS_HOPPER_OUTPUT ${CMAKE_BINARY_DIR}/test-output/io/hopper.h5)
talus_run_fixture(io.hopper_run hopper.toml ${TALUS_HOPPER_OUTPUT} talus_hopper)
add_test(NAME io.hopper
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_hopper.py ${TALUS_HOPPER_OUTPUT}
                 $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/hopper.toml)
set_tests_properties(io.hopper PROPERTIES FIXTURES_REQUIRED talus_hopper)
# The Python scene front end (tools/talus_scene.py): a scene built as a dict runs to the same
# bits as its file, takes numpy values and overrides, and a misspelt key is refused by name.
add_test(NAME io.scene_frontend
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_scene_frontend.py
                 ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml ${CMAKE_BINARY_DIR}/test-output/io/frontend)
set_tests_properties(io.scene_frontend PROPERTIES ENVIRONMENT "TALUS_BIN=$<TARGET_FILE:talus>")
# The step's series (/diagnostics/wall_force and the flow totals) of the same run: every step,
# equal to /flow at the frames' steps, and /walls/force their dt-weighted mean.
add_test(NAME io.step_series
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_step_series.py ${TALUS_HOPPER_OUTPUT})
set_tests_properties(io.step_series PROPERTIES FIXTURES_REQUIRED talus_hopper)
foreach(run drum_surface staged_gate hopper)
  add_test(NAME io.walls_paraview_${run}
           COMMAND ${TALUS_PVPYTHON} --force-offscreen-rendering
                   ${CMAKE_CURRENT_SOURCE_DIR}/python/check_sidecar_blocks_pvpython.py
                   ${CMAKE_BINARY_DIR}/test-output/io/${run}.h5)
  set_tests_properties(io.walls_paraview_${run} PROPERTIES
      FIXTURES_REQUIRED "talus_drum_surface;talus_staged_gate;talus_hopper"
      TIMEOUT 300)
endforeach()
# Branching: a scene that starts from a frame of the staged gate's run ([start] from, frame),
# under two friction values; its first frame is the source frame bit for bit.
add_test(NAME io.branch
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_branch.py
                 $<TARGET_FILE:talus> ${TALUS_STAGED_OUTPUT}
                 ${CMAKE_CURRENT_SOURCE_DIR}/scenes/branch_gate.toml
                 ${CMAKE_BINARY_DIR}/test-output/io/branch)
set_tests_properties(io.branch PROPERTIES FIXTURES_REQUIRED talus_staged_gate)
# talus sweep: a table of overrides (CSV and TOML), killed mid-way and called again: it finishes
# only what is left, resuming the run it interrupted; bad tables are refused before any run.
# Runs of 0.5 s of the drum; 0.2 s under the sanitizers, which run it 15 times slower (the
# same checks: it took 73 s there).
if(TALUS_SANITIZE)
  set(_talus_sweep_duration 0.2)
else()
  set(_talus_sweep_duration 0.5)
endif()
add_test(NAME io.sweep
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_sweep.py
                 $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/drum.toml
                 ${CMAKE_BINARY_DIR}/test-output/io/sweep ${_talus_sweep_duration})
set_tests_properties(io.sweep PROPERTIES TIMEOUT 300)
# Every dataset of those runs (bodies, frames, diagnostics, flow, walls, wall contacts, contacts) has its
# row in docs/output-format.md, with the unit and type the file holds.
add_test(NAME io.output_format_doc
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_output_format_doc.py
                 ${PROJECT_SOURCE_DIR}/docs/output-format.md ${TALUS_FLOW_FIXTURE} ${TALUS_DROP_CONTACTS_OUTPUT}
                 ${TALUS_STACK_OUTPUT})
set_tests_properties(io.output_format_doc PROPERTIES
                     FIXTURES_REQUIRED "talus_flow_fixture;talus_drop_wall_contacts;talus_cubic_stack")

# [output] precision and compression: the same short run written four ways, compared with
# h5py (tests/python/check_precision.py): float64 plain and gzip 6, float32 gzip 1 and plain.
set(TALUS_PRECISION_DIR ${CMAKE_BINARY_DIR}/test-output/io/precision)
set(TALUS_PRECISION_RUNS
    "f64:float64:0" "f64_gzip6:float64:6" "f32_gzip1:float32:1" "f32:float32:0")
set(TALUS_PRECISION_FILES)
foreach(run ${TALUS_PRECISION_RUNS})
  string(REPLACE ":" ";" parts ${run})
  list(GET parts 0 name)
  list(GET parts 1 precision)
  list(GET parts 2 level)
  add_test(NAME io.precision_run_${name}
           COMMAND sh -c "mkdir -p \"$1\" && exec \"$2\" run \"$3\" -o \"$1/$4.h5\" --force --quiet --set simulation.duration=0.1 --set output.precision=$5 --set output.compression=$6"
                   sh ${TALUS_PRECISION_DIR} $<TARGET_FILE:talus>
                   ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml ${name} ${precision} ${level})
  set_tests_properties(io.precision_run_${name} PROPERTIES FIXTURES_SETUP talus_precision_runs)
  list(APPEND TALUS_PRECISION_FILES ${TALUS_PRECISION_DIR}/${name}.h5)
endforeach()
add_test(NAME io.precision
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_precision.py
                 ${TALUS_PRECISION_FILES})
set_tests_properties(io.precision PROPERTIES FIXTURES_REQUIRED talus_precision_runs)
# ParaView reads the float32, gzip-compressed run through its sidecar (Precision="4").
add_test(NAME io.xdmf_paraview_float32
         COMMAND ${TALUS_PVPYTHON} --force-offscreen-rendering
                 ${CMAKE_CURRENT_SOURCE_DIR}/python/check_xdmf_pvpython.py
                 ${TALUS_PRECISION_DIR}/f32_gzip1.h5)
set_tests_properties(io.xdmf_paraview_float32 PROPERTIES
    FIXTURES_REQUIRED talus_precision_runs
    TIMEOUT 300)

# A talus run killed with SIGKILL at five random moments: each time the file reads, talus
# info and the loader agree on the complete frames, and the frames are consistent.
add_test(NAME io.killed_runs
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_killed_runs.py
                 $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml
                 ${CMAKE_BINARY_DIR}/test-output/io/killed)

# A killed run's file with a metadata block that fails its checksum (a byte flipped in one
# object header): talus info exits 4 naming the dataset, and the loader raises, both at once
# (HDF5's default retries in SWMR read mode waited for ever)
add_test(NAME io.damaged_trajectory
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_damaged_trajectory.py
                 $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml
                 ${CMAKE_BINARY_DIR}/test-output/io/damaged)
set_tests_properties(io.damaged_trajectory PROPERTIES TIMEOUT 120)

# A full disk mid-run: exit 4 naming the path, the flushed frames kept (needs root to mount
# a small tmpfs; skipped otherwise)
add_test(NAME io.disk_full
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_disk_full.py
                 $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml
                 ${CMAKE_BINARY_DIR}/test-output/io/disk_full)
set_tests_properties(io.disk_full PROPERTIES SKIP_RETURN_CODE 77)

# How a run fails: beyond max_speed mid-run (exit 3, bodies named, the last good state the
# last frame), an absurd force (exit 3, not an abort), an uncreatable output path (exit 4
# before any step).
add_test(NAME io.run_failures
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_failures.py
                 $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml
                 ${CMAKE_BINARY_DIR}/test-output/io/failures)

# Checkpoints through the talus command (tests/python/check_resume.py on
# tests/scenes/resume.toml): a run stopped (--stop-after-steps, as SIGTERM; a real SIGINT;
# SIGKILL after a periodic checkpoint) and continued with --resume gives the uninterrupted
# run's frames, rows and diagnostics bit for bit, for PGS and APGD, resumed on 1 and 2
# threads; [output] checkpoint_interval leaves the checkpoint of the run's end state;
# SIGHUP stops a run like SIGTERM; a finished run is not resumed again (its checkpoint is
# marked finished), and its original command on a stopped output says how to continue;
# a file from before two /diagnostics columns were added is resumed and gains them.
# damaged: a killed run's file whose chunk-index blocks no longer pass their checksum: the
# resume ends at once, warns which frames are lost, and keeps every other frame.
# adaptive: the scene without its dt (the adaptive step): frames exactly on their time
# cadence, the same bits on 1 and 3 threads, and stopped and resumed on 2 threads.
foreach(mode stop signals damaged periodic finished adaptive)
  add_test(NAME io.resume_${mode}
           COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_resume.py
                   $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/resume.toml
                   ${CMAKE_BINARY_DIR}/test-output/io/resume_${mode} ${mode})
endforeach()

# What the talus command says to a first-time user: --threads, an HDF5 file given as a
# scene, counts in words, and the end-of-run summary (converged share, penetration as a
# share of the smallest grain's diameter, not a fixed obstacle's, energy, the files written).
add_test(NAME io.cli_messages
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_cli_messages.py
                 $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml
                 ${CMAKE_BINARY_DIR}/test-output/io/cli_messages)

# Memory: a scene beyond the process's address-space limit is refused with the estimate
# (exit 2); one that fits the estimate but not the limit runs out with exit 4, not an abort.
# Not under AddressSanitizer, whose shadow memory needs more address space than any limit.
if(NOT TALUS_SANITIZE)
  add_test(NAME io.memory_limits
           COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_memory_limits.py
                   $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/memory_512k.toml
                   ${CMAKE_BINARY_DIR}/test-output/io/memory_limits)
endif()

# talus_h5.summary() and tools/talus_h5.py print the summary of `talus info`: the tests that
# use them run this build's talus (not build/bin/talus of the source tree).
set_property(TEST io.talus_h5 io.talus_h5_flow io.clumps_h5 io.precision APPEND PROPERTY
             ENVIRONMENT "TALUS_BIN=$<TARGET_FILE:talus>")

# docs/scene-format.md is `talus keys`'s output (the schema rows of io/scene/schema.cpp): a
# key added, renamed or given another default, unit or range without regenerating it fails
# here. Regenerate with: build/bin/talus keys > docs/scene-format.md
add_test(NAME io.scene_format_doc
         COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_scene_format_doc.py
                 $<TARGET_FILE:talus> ${PROJECT_SOURCE_DIR}/docs/scene-format.md)

# `cmake --install` and a project that finds the installed Talus with find_package (issue 24,
# part 3). Not in the sanitizer builds, whose static libraries a plain consumer cannot link.
if(NOT TALUS_SANITIZE AND NOT TALUS_TSAN AND NOT TALUS_FUZZ)
  add_test(NAME io.install_consumer
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install/check_install.sh ${CMAKE_BINARY_DIR}
                   ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-output/install)
  set_tests_properties(io.install_consumer PROPERTIES TIMEOUT 600 FIXTURES_REQUIRED talus_staged_gate)
  # The Debian package (`cpack -G DEB`): its name, Depends and files, and a scene run by the
  # unpacked talus and summarised by its talus_h5.py.
  add_test(NAME io.deb_package
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install/check_deb.sh ${CMAKE_BINARY_DIR}
                   ${PROJECT_SOURCE_DIR} ${CMAKE_BINARY_DIR}/test-output/deb)
  set_tests_properties(io.deb_package PROPERTIES TIMEOUT 600)
endif()
