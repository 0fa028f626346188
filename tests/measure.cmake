# The measurement tools (tools/talus_measure.py) on synthetic trajectories with known
# answers: geometry against closed forms, each tool against a constructed heap, collapse,
# shear flow, drum surface and discharge, and every command line's figure and PNG.
add_test(NAME tools.measure
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/python/test_measure.py
                 ${CMAKE_BINARY_DIR}/test-output/measure)
set_tests_properties(tools.measure PROPERTIES TIMEOUT 300)
