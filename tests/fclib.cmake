# The talus fclib command (tools/fclib_command.cpp) on the FCLIB problems of tests/data/fclib:
# the JSON reports a converged solve whose accuracy the test recomputes from r in Python;
# a bad file or option exits 2 naming it.
set(_fclib ${CMAKE_CURRENT_LIST_DIR}/data/fclib)
add_test(NAME fclib.json_solution_checked_in_python
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_LIST_DIR}/python/check_fclib_json.py
                 $<TARGET_FILE:talus> ${_fclib}/Capsules-i125-1213.hdf5 ${_fclib}/Spheres-i099-356-679.hdf5)
add_test(NAME fclib.rolling_problem_refused
         COMMAND $<TARGET_FILE:talus> fclib ${_fclib}/Chute-ndof-768-nc-4-3.hdf5)
set_tests_properties(fclib.rolling_problem_refused PROPERTIES WILL_FAIL TRUE)
add_test(NAME fclib.rolling_problem_message
         COMMAND sh -c "$0 fclib $1 2>&1; test $? -eq 2" $<TARGET_FILE:talus> ${_fclib}/Chute-ndof-768-nc-4-3.hdf5)
set_tests_properties(fclib.rolling_problem_message PROPERTIES
                     PASS_REGULAR_EXPRESSION "Chute-ndof-768-nc-4-3.hdf5: a problem with rolling friction")
add_test(NAME fclib.unknown_solver_is_exit_2
         COMMAND sh -c "$0 fclib $1 --solver gauss 2>&1; test $? -eq 2" $<TARGET_FILE:talus> ${_fclib}/CubeH8.hdf5)
set_tests_properties(fclib.unknown_solver_is_exit_2 PROPERTIES PASS_REGULAR_EXPRESSION "--solver")
