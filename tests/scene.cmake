# Scene files through the talus command (included from tests/CMakeLists.txt).
# Each bad scene must make `talus check` exit with code 2 and name its file and line on
# stderr (tests/data/bad_scenes/run_check.sh reads the expectation from the file's
# header); each shipped test scene must pass `talus check`.
file(GLOB TALUS_BAD_SCENES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/data/bad_scenes/*.toml)
foreach(scene ${TALUS_BAD_SCENES})
  get_filename_component(name ${scene} NAME_WE)
  add_test(NAME scene_check_rejects_${name}
           COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/data/bad_scenes/run_check.sh
                   $<TARGET_FILE:talus> ${scene})
endforeach()

file(GLOB TALUS_TEST_SCENES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/scenes/*.toml)
foreach(scene ${TALUS_TEST_SCENES})
  get_filename_component(name ${scene} NAME_WE)
  if(name STREQUAL "branch_gate")
    # it starts from the staged gate's run (tests/io.cmake), which must exist to be checked
    add_test(NAME scene_check_accepts_${name}
             COMMAND $<TARGET_FILE:talus> check ${scene}
                     --set start.from=${CMAKE_BINARY_DIR}/test-output/io/staged_gate.h5)
    set_tests_properties(scene_check_accepts_${name} PROPERTIES FIXTURES_REQUIRED talus_staged_gate)
  else()
    add_test(NAME scene_check_accepts_${name} COMMAND $<TARGET_FILE:talus> check ${scene})
  endif()
endforeach()

# The example scenes users start from (scenes/) must stay valid too.
file(GLOB TALUS_EXAMPLE_SCENES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/scenes/*.toml)
foreach(scene ${TALUS_EXAMPLE_SCENES})
  get_filename_component(name ${scene} NAME_WE)
  add_test(NAME scene_check_example_${name} COMMAND $<TARGET_FILE:talus> check ${scene})
endforeach()
