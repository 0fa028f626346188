# Documentation references (tests/python/check_doc_references.py): no file may cite the
# design reference by its old out-of-repository name, and every docs/ path named in a file
# and every relative Markdown link must exist. Reads the source tree only; no build needed.
add_test(NAME docs.references_resolve
         COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/python/check_doc_references.py
                 ${PROJECT_SOURCE_DIR})

# tools/run's build: only the talus target, with its progress shown (tools/lib/build.sh).
add_test(NAME tools.build_progress
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/check_build_progress.sh)

# The folders' include graph points down the layers (tools/include_graph.py: core/ at the
# bottom, collision/ and solvers/ beside each other, then engine/, io/, tools/).
add_test(NAME layout.include_graph
         COMMAND /usr/bin/python3 ${PROJECT_SOURCE_DIR}/tools/include_graph.py --check ${PROJECT_SOURCE_DIR})
