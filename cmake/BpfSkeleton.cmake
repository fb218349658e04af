# add_bpf_skeleton(<target> <source.bpf.c> [INCLUDES dir...])
#
# Compiles a CO-RE BPF program with clang and turns it into a libbpf skeleton
# header (<name>.skel.h, name = source without .bpf.c) that embeds the object:
# the tool needs no .o file and no compiler at run time. <target> is an
# INTERFACE library carrying the generated include directory.
find_program(BPF_CLANG NAMES clang clang-14 REQUIRED)
find_program(BPFTOOL bpftool REQUIRED)

# The build reads no kernel BTF: the program declares the few kernel types it
# reads (bpf/kernel_types.h), CO-RE resolves them at load time.
set(HACOBOOT_VMLINUX_H "" CACHE FILEPATH
    "vmlinux.h to compile the BPF side against (default: the vendored bpf/kernel_types.h)")

if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64")
  set(_bpf_arch x86)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64")
  set(_bpf_arch arm64)
else()
  message(FATAL_ERROR "BPF: unsupported architecture ${CMAKE_SYSTEM_PROCESSOR}")
endif()

# clang -target bpf does not search the host's multiarch include directories
# (asm/errno.h and friends); hand them over the way the host compiler sees them.
execute_process(
  COMMAND ${BPF_CLANG} -v -E -
  INPUT_FILE /dev/null
  OUTPUT_QUIET
  ERROR_VARIABLE _clang_search
)
string(REGEX MATCH "#include <...> search starts here:\n(.*)End of search list" _ "${_clang_search}")
string(REGEX REPLACE "[ \n]+" ";" _dirs "${CMAKE_MATCH_1}")
set(BPF_SYSTEM_INCLUDES "")
foreach(_dir IN LISTS _dirs)
  if(_dir)
    list(APPEND BPF_SYSTEM_INCLUDES -idirafter ${_dir})
  endif()
endforeach()

function(add_bpf_skeleton target source)
  cmake_parse_arguments(ARG "" "" "INCLUDES" ${ARGN})
  get_filename_component(_name ${source} NAME)
  string(REPLACE ".bpf.c" "" _name ${_name})
  set(_gen ${CMAKE_CURRENT_BINARY_DIR}/bpf-gen)
  file(MAKE_DIRECTORY ${_gen})

  set(_cflags "")
  foreach(_inc IN LISTS ARG_INCLUDES)
    list(APPEND _cflags -I${_inc})
  endforeach()
  if(HACOBOOT_VMLINUX_H)
    list(APPEND _cflags "-DHACOBOOT_VMLINUX_H=\"${HACOBOOT_VMLINUX_H}\"")
  endif()

  # clang's depfile lists every header the program includes (the contract
  # header shared with the C++ decoder, the kernel types): Ninja, unlike the
  # Makefiles, ignores IMPLICIT_DEPENDS and would leave a stale object.
  # The prefix maps keep the checkout's and the build's paths out of the
  # object's BTF (which the skeleton embeds): every clone then generates the
  # same skeleton, and what includes it hits the caches keyed by its
  # preprocessed source (clang-tidy's).
  add_custom_command(
    OUTPUT ${_gen}/${_name}.bpf.o
    COMMAND ${BPF_CLANG} -g -O2 -Wall -target bpf -mcpu=v3 -D__TARGET_ARCH_${_bpf_arch}
            -fdebug-prefix-map=${PROJECT_SOURCE_DIR}=. -fdebug-prefix-map=${PROJECT_BINARY_DIR}=.
            ${_cflags} ${BPF_SYSTEM_INCLUDES}
            -MD -MF ${_gen}/${_name}.bpf.d
            -c ${source} -o ${_gen}/${_name}.bpf.o
    DEPENDS ${source}
    DEPFILE ${_gen}/${_name}.bpf.d
    COMMENT "Compiling BPF object ${_name}.bpf.o"
    VERBATIM
  )
  # "gen object" drops the DWARF (kept: BTF), most of the object's size: the binary embeds it.
  add_custom_command(
    OUTPUT ${_gen}/${_name}.skel.h
    COMMAND ${BPFTOOL} gen object ${_gen}/${_name}.linked.o ${_gen}/${_name}.bpf.o
    COMMAND ${BPFTOOL} gen skeleton ${_gen}/${_name}.linked.o name ${_name}_bpf > ${_gen}/${_name}.skel.h.tmp
    COMMAND ${CMAKE_COMMAND} -E rename ${_gen}/${_name}.skel.h.tmp ${_gen}/${_name}.skel.h
    DEPENDS ${_gen}/${_name}.bpf.o
    COMMENT "Generating BPF skeleton ${_name}.skel.h"
    VERBATIM
  )
  add_custom_target(${target}_gen DEPENDS ${_gen}/${_name}.skel.h)
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_gen)
  target_include_directories(${target} SYSTEM INTERFACE ${_gen})
endfunction()
