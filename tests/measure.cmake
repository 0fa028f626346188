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
# The contact measurements (coordination, Love-Weber stress, force distribution, force
# chains) on the simple cubic stack run by io.contacts_run, on two-sphere contacts and on an
# exponential sample; a run without [output] contacts is refused by name.
add_test(NAME tools.contact_measures
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/python/check_contact_measures.py
                 ${PROJECT_SOURCE_DIR}/tools/talus_measure.py
                 ${CMAKE_BINARY_DIR}/test-output/io/cubic_stack.h5
                 ${CMAKE_BINARY_DIR}/test-output/io/staged_gate.h5
                 ${CMAKE_BINARY_DIR}/test-output/measure/contacts)
set_tests_properties(tools.contact_measures PROPERTIES
                     FIXTURES_REQUIRED "talus_cubic_stack;talus_staged_gate")
