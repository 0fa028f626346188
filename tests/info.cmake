# talus info (io/trajectory_info.cpp, the info subcommand of tools/talus_main.cpp) on the
# files a run leaves: the trajectory (text and --json, against h5py), its checkpoint (exit 2,
# how to continue it), a file that is not HDF5 (exit 4); and tools/talus_h5.py as a command
# printing the same summary. The C++ side is also in tests/unit/io/trajectory/test_writer.cpp.
add_test(NAME info.summary_checkpoint_and_talus_h5
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/python/check_talus_info.py
                 $<TARGET_FILE:talus> ${CMAKE_CURRENT_SOURCE_DIR}/scenes/small_box.toml
                 ${CMAKE_BINARY_DIR}/test-output/info)
set_tests_properties(info.summary_checkpoint_and_talus_h5 PROPERTIES TIMEOUT 300)
