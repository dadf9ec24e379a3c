# Every public call of the core (an `int NARMA_...(...)` definition in src/core/*.c) must open
# with NARMAI_API_LOCK(); (src/core/narmai.h): under MPI_THREAD_MULTIPLE a call without it would
# touch narma's state unguarded. Calls that touch no state are listed as exempt.
#   cmake -DSRC=<src/core> -P check_api_lock.cmake
cmake_minimum_required(VERSION 3.20)
set(exempt NARMA_Init NARMA_Init_thread NARMA_Get_mpi_error NARMA_Error_string)
file(GLOB sources ${SRC}/*.c)
set(missing "")
set(count 0)
foreach(f IN LISTS sources)
  file(READ ${f} text)
  string(REPLACE ";" "<semicolon>" text "${text}") # a CMake list splits on semicolons
  # A definition: "int NARMA_x(" at the start of a line, its arguments, then "{" on its own line.
  string(REGEX MATCHALL "\nint NARMA_[A-Za-z0-9_]+\\([^{<]*\\)\n{\n[^\n]*" defs "${text}")
  foreach(d IN LISTS defs)
    string(REGEX MATCH "NARMA_[A-Za-z0-9_]+" name "${d}")
    math(EXPR count "${count} + 1")
    if(name IN_LIST exempt)
      continue()
    endif()
    if(NOT d MATCHES "\n{\n    NARMAI_API_LOCK\\(\\)<semicolon>")
      list(APPEND missing "${name} (${f})")
    endif()
  endforeach()
endforeach()
if(count LESS 100)
  message(FATAL_ERROR "found only ${count} public call definitions in ${SRC}: the pattern is stale")
endif()
if(missing)
  list(JOIN missing "\n  " text)
  message(FATAL_ERROR "public calls without NARMAI_API_LOCK():\n  ${text}")
endif()
message(STATUS "${count} public calls, every one takes the process lock (exempt: ${exempt})")
