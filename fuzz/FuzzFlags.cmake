# BITLEARN_FUZZ: every target of the build is compiled with coverage instrumentation for libFuzzer
# (fuzzer-no-link) and with AddressSanitizer + UndefinedBehaviorSanitizer, so the fuzz targets find
# memory errors and undefined behaviour in the library's readers, and the same build folder can run
# the test suite under the sanitizers (scripts/sanitize.sh). Only the fuzz targets link libFuzzer.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "BITLEARN_FUZZ needs clang (libFuzzer): configure with -DCMAKE_CXX_COMPILER=clang++")
endif()
if(BITLEARN_CUDA)
  message(FATAL_ERROR "BITLEARN_FUZZ builds the CPU library only: configure with -DBITLEARN_CUDA=OFF")
endif()
# Every report ends the process, except clang's float-cast-overflow (a float to integer conversion
# out of range, which GCC's -fsanitize=undefined does not check): it is recoverable so that the
# known sites can be listed in scripts/sanitize-ubsan.supp (suppressions only apply to recoverable
# checks); with UBSAN_OPTIONS=halt_on_error=1 any other site still ends the run.
set(BITLEARN_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=undefined
    -fsanitize-recover=float-cast-overflow -fno-omit-frame-pointer)
add_compile_options(-fsanitize=fuzzer-no-link ${BITLEARN_SANITIZE_FLAGS})
add_link_options(-fsanitize=address,undefined)
