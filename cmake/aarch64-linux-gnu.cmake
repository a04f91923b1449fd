# Cross build for 64-bit ARM Linux with Debian's cross toolchain (g++-aarch64-linux-gnu); the
# tests run under qemu-user. qemu reads QEMU_CPU from the environment: cortex-a53 has plain
# NEON, max has the dot-product extension, so one build tests both kernel tables.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
# Header-only packages (xsimd) are installed for the host only and serve the target as well.
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# xsimd's CMake files sit in the host's multiarch directory (/usr/lib/x86_64-linux-gnu/cmake),
# which a search for aarch64 does not visit. Its headers are in /usr/include, which Debian's
# cross compiler searches after its own.
if(NOT xsimd_DIR)
    file(GLOB _lila_xsimd_dirs /usr/lib/*/cmake/xsimd /usr/lib/cmake/xsimd /usr/share/cmake/xsimd)
    if(_lila_xsimd_dirs)
        list(GET _lila_xsimd_dirs 0 _lila_xsimd_dir)
        set(xsimd_DIR ${_lila_xsimd_dir} CACHE PATH "xsimd's CMake package (header-only, host)")
    endif()
endif()

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64;-L;/usr/aarch64-linux-gnu)
