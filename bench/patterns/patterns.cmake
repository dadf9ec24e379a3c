# The `patterns` benchmark (bench/patterns.c): included from bench/CMakeLists.txt.
add_executable(patterns ${CMAKE_CURRENT_LIST_DIR}/../patterns.c ${CMAKE_CURRENT_LIST_DIR}/../common.c)
target_link_libraries(patterns PRIVATE narma m)
target_compile_options(patterns PRIVATE -Wall -Wextra)
install(TARGETS patterns RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
