# Precompiled headers (BITLEARN_PCH, on by default). A few third-party headers cost seconds of
# parsing in every file that includes them: nlohmann/json (about 2.5 s, reached by some 200 files),
# GoogleTest (1.8 s, every test file) and CLI11 (8 s, every subcommand). Parsing them once per
# target instead takes a third off a full build. Headers only: no code or flag of a file changes.
# Files compiled with their own options (the ISA variants, the C++20 Parquet reader) are left out:
# a precompiled header must be used with the options it was built with.
option(BITLEARN_PCH "Precompile heavy third-party headers (faster builds; no effect on results)" ON)

# The C++ files of the library's precompiled header (a generator expression: CUDA files never get it).
set(BITLEARN_PCH_STD <algorithm> <cmath> <cstdint> <cstring> <functional> <map> <memory> <string>
                     <unordered_map> <vector>)

function(bitlearn_precompile target)
  if(NOT BITLEARN_PCH)
    return()
  endif()
  set(_headers)
  foreach(_h ${BITLEARN_PCH_STD} ${ARGN})
    string(REPLACE ">" "$<ANGLE-R>" _h "${_h}")
    list(APPEND _headers "$<$<COMPILE_LANGUAGE:CXX>:${_h}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${_headers})
endfunction()

# A source with its own compile options cannot take the target's precompiled header.
function(bitlearn_no_pch)
  set_source_files_properties(${ARGN} PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()
