# Cross build for arm64 (aarch64) on a Debian x86_64 machine: Debian's crossbuild-essential-arm64
# and the :arm64 -dev packages (tests/cross/build_arm64.sh installs them). The programs the build
# runs (kern-seccomp-gen, which must make the target's seccomp programs, and the built kern, which
# writes the shell completions) run under qemu-user.
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=tests/cross/aarch64.cmake
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Debian's multiarch layout: the :arm64 libraries and their CMake and pkg-config files live under
# /usr/lib/aarch64-linux-gnu, the architecture-independent ones under /usr/share and /usr/include.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
# The programs find their libraries where Debian's :arm64 packages put them (libc6:arm64,
# libstdc++6:arm64, libseccomp2:arm64), as on a board. Not qemu's -L /usr/aarch64-linux-gnu: with
# it, a fork()ed child of the program never ran (qemu 7.2, Debian 12), and the unit tests fork.
find_program(KERN_QEMU_AARCH64 qemu-aarch64-static REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${KERN_QEMU_AARCH64})
