# Cross-compilation to AArch64 Linux with Debian's g++-aarch64-linux-gnu, libraries from Debian's
# arm64 multiarch packages (libssl-dev:arm64, libgtest-dev:arm64). Programs run under qemu-aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# Header-only dependencies (CLI11, nlohmann-json) and arm64 multiarch headers live under /usr/include.
set(CMAKE_CXX_FLAGS_INIT "-isystem /usr/include/aarch64-linux-gnu -idirafter /usr/include")
set(CMAKE_C_FLAGS_INIT "-isystem /usr/include/aarch64-linux-gnu -idirafter /usr/include")
# Make pkg-config (used by FindOpenSSL) see the arm64 .pc files, not the host's.
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
# Programs are linked statically: Debian's qemu-aarch64 (7.2) hangs on the first pthread_create of a
# dynamically linked program run through -L, while static programs run normally.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(OPENSSL_USE_STATIC_LIBS TRUE)
set(BITLEARN_STATIC_LINK ON)
set(ZLIB_USE_STATIC_LIBS ON)
