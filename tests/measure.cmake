# The measurement tools (tools/talus_measure.py) on synthetic trajectories with known
# answers: geometry against closed forms, each tool against a constructed heap, collapse,
# shear flow, drum surface and discharge, and every command line's figure and PNG.
add_test(NAME tools.measure
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/python/test_measure.py
                 ${CMAKE_BINARY_DIR}/test-output/measure)
set_tests_properties(tools.measure PROPERTIES TIMEOUT 300)
# tools/talus_h5.py and tools/talus_measure.py say how to get h5py and numpy when run by an
# interpreter without them (instead of a bare ModuleNotFoundError).
add_test(NAME tools.missing_h5py_message
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/python/check_missing_modules.py)
