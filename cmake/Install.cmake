# Install rules: `cmake --install build --prefix DIR` puts the library, its public headers, the
# `bitlearn` program, a CMake package (find_package(bitlearn) gives bitlearn::bitlearn) and a
# pkg-config file (bitlearn.pc) under DIR.
#
# The library is static, so a consumer links what it uses: Threads, OpenSSL's libcrypto, zlib,
# nlohmann_json (its headers), PCRE2 (the tokenizer's regexes) and, in a CUDA build, the CUDA
# runtime. The package finds them again on the consumer's machine. A build whose PCRE2 came from the
# fallback of a header folder (hosts without libpcre2-dev) or a static-program build has no install
# rules: an installed package could not name its PCRE2.
add_library(bitlearn::bitlearn ALIAS bitlearn)
if(TARGET bl_pcre2 OR BITLEARN_STATIC_LINK)
  message(STATUS "bitlearn: no install rules (PCRE2 not from pkg-config, or a static-program build)")
  return()
endif()

include(CMakePackageConfigHelpers)
set(BITLEARN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/bitlearn)

install(TARGETS bitlearn EXPORT bitlearnTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/bitlearn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(TARGETS bitlearn_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET bitlearn_parquet)  # the Parquet reader module (CMakeLists.txt, BITLEARN_PARQUET)
  install(TARGETS bitlearn_parquet LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(EXPORT bitlearnTargets NAMESPACE bitlearn:: DESTINATION ${BITLEARN_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/bitlearnConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/bitlearnConfig.cmake
                              INSTALL_DESTINATION ${BITLEARN_INSTALL_CMAKEDIR})
# Same major version: a 0.x release is compatible with its own minor version only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/bitlearnConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/bitlearnConfig.cmake ${PROJECT_BINARY_DIR}/bitlearnConfigVersion.cmake
        DESTINATION ${BITLEARN_INSTALL_CMAKEDIR})

# bitlearn.pc finds its prefix from its own folder (${pcfiledir}), so an installed tree can move.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(BITLEARN_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  string(REGEX REPLACE "[^/]+" ".." _bl_up "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  set(BITLEARN_PC_PREFIX "\${pcfiledir}/${_bl_up}")
endif()
set(BITLEARN_PC_CFLAGS "")
set(BITLEARN_PC_LIBS "")
if(BITLEARN_CUDA)
  set(BITLEARN_PC_CFLAGS "-DBITLEARN_HAS_CUDA=1 -I${CUDAToolkit_INCLUDE_DIRS}")
  set(BITLEARN_PC_LIBS "-L${CUDAToolkit_LIBRARY_DIR} -lcudart")
endif()
if(TARGET bitlearn_parquet AND CMAKE_DL_LIBS)  # the library opens the Parquet module with dlopen
  string(APPEND BITLEARN_PC_LIBS " -l${CMAKE_DL_LIBS}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/bitlearn.pc.in ${PROJECT_BINARY_DIR}/bitlearn.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/bitlearn.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
