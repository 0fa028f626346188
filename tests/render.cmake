# tools/render: pictures of a run through ParaView (included from tests/CMakeLists.txt).
# check_render.py runs small scenes with the talus binary and renders them with tools/render
# (pvpython, on a private Xvfb when there is no display): every one of 6,084 beads drawn where
# it is (ParaView's default glyph mode draws at most 5,000), the default picture, a killed
# run, and the errors. About 25 s on one core. Not in the sanitizer builds: its time is
# ParaView's, which they do not instrument, and its talus runs are two small scenes that
# other tests run there (it took 33 s of the ASan stage).
if(NOT DEFINED TALUS_PYTHON)
  set(TALUS_PYTHON /usr/bin/python3)
endif()
if(NOT TALUS_SANITIZE AND NOT TALUS_TSAN)
  add_test(NAME render.picture
           COMMAND ${TALUS_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/python/check_render.py
                   $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes
                   ${CMAKE_BINARY_DIR}/test-output/render)
  set_tests_properties(render.picture PROPERTIES TIMEOUT 300)
endif()
