# NsrBuild.cmake - the project's build conventions in one place.
#
#   nsr_add_children(dir)          add_subdirectory for each dir/*/CMakeLists.txt
#   nsr_library(name SOURCES ... [LIBS ...])
#                                  static library nsr_<name>; recorded so that
#                                  nsr_all links every library
#   nsr_program(name SOURCES ... [LIBS ...] [DEST bin|sbin])
#   nsr_unit_test(name SOURCES ... [LIBS ...])
#                                  cmocka test, registered with ctest (label unit)
#   nsr_rpcgen(target XFILE file.x) generated XDR code + header for one .x

set(NSR_WARN_FLAGS
  -Wall -Wextra -Werror -Wstrict-prototypes -Wmissing-prototypes
  -Wold-style-definition -Wvla -Wwrite-strings -Wformat=2 -Wpointer-arith
  -fno-common -Wno-format-nonliteral)

if(NSR_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined -fno-sanitize-recover=all)
endif()

# NSR_FUZZ: the whole build tree is a fuzz build.  Every library (and the
# rpcgen XDR code) is compiled with libFuzzer's coverage instrumentation
# plus ASan and UBSan, so a fuzz target sees the code it drives, not only
# its own file.  The fuzz_<name>_lf binaries add libFuzzer's main at link
# time (tests/CMakeLists.txt); everything else links with fuzzer-no-link,
# which only needs the sanitizer runtimes.  Needs clang.
if(NSR_FUZZ)
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR
      "NSR_FUZZ=ON needs clang (libFuzzer), but the C compiler is "
      "${CMAKE_C_COMPILER_ID} ${CMAKE_C_COMPILER}.  Configure a fresh build "
      "directory with clang: CC=clang cmake -S . -B build-fuzz -DNSR_FUZZ=ON")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                      -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_link_options(-fsanitize=fuzzer-no-link,address,undefined
                   -fno-sanitize-recover=all)
endif()

# Our own sources: warnings and the force-included portability header.
function(nsr_own_flags target)
  target_compile_options(${target} PRIVATE ${NSR_WARN_FLAGS}
    "SHELL:-include ${CMAKE_SOURCE_DIR}/include/nsr/compat.h")
endfunction()

function(nsr_add_children dir)
  file(GLOB children LIST_DIRECTORIES true RELATIVE ${CMAKE_CURRENT_SOURCE_DIR}/${dir}
       ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/*)
  list(SORT children)
  foreach(c ${children})
    if(EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${dir}/${c}/CMakeLists.txt)
      add_subdirectory(${dir}/${c})
    endif()
  endforeach()
endfunction()

function(nsr_library name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS" ${ARGN})
  add_library(nsr_${name} STATIC ${A_SOURCES})
  nsr_own_flags(nsr_${name})
  target_link_libraries(nsr_${name} PUBLIC ${A_LIBS})
  set_property(GLOBAL APPEND PROPERTY NSR_LIBS nsr_${name})
endfunction()

# nsr_all: an interface target linking every project library (tests, fuzz).
macro(nsr_finish_libs)
  get_property(_libs GLOBAL PROPERTY NSR_LIBS)
  add_library(nsr_all INTERFACE)
  target_link_libraries(nsr_all INTERFACE ${_libs} ${_libs})
endmacro()

function(nsr_program name)
  cmake_parse_arguments(A "" "DEST" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  nsr_own_flags(${name})
  target_link_libraries(${name} PRIVATE ${A_LIBS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bin)
  if(NOT A_DEST)
    set(A_DEST bin)
  endif()
  install(TARGETS ${name} RUNTIME DESTINATION ${A_DEST})
endfunction()

function(nsr_unit_test name)
  cmake_parse_arguments(A "" "" "SOURCES;LIBS" ${ARGN})
  if(NOT NSR_TESTS)
    return()
  endif()
  add_executable(${name} ${A_SOURCES})
  nsr_own_flags(${name})
  target_link_libraries(${name} PRIVATE ${A_LIBS} nsr_testutil nsr_all PkgConfig::CMOCKA)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/unit)
  add_test(NAME unit/${name} COMMAND ${name})
  set_tests_properties(unit/${name} PROPERTIES LABELS unit TIMEOUT 600
    ENVIRONMENT "NSR_TEST_TMPDIR=${CMAKE_BINARY_DIR}/tmp")
endfunction()

# nsr_rpcgen: run rpcgen on a relative copy of the .x (an absolute path
# would leak into the generated #include) and build the XDR routines in
# their own object library with exactly the warnings rpcgen output trips
# relaxed (see the project notes on rpcgen).  -i 0: no inline fast paths.
# They load int32s straight from xdrrec's buffer (IXDR_GET_LONG on what
# XDR_INLINE returns), which is misaligned after a peer's record fragment
# of a length that is not a multiple of 4: undefined behaviour that UBSan
# stops on (found by fuzz_rpc_record).
function(nsr_rpcgen target)
  cmake_parse_arguments(A "" "" "XFILES" ${ARGN})
  set(gen_src)
  set(gen_hdr)
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/include/nsr/rpc)
  foreach(x ${A_XFILES})
    get_filename_component(base ${x} NAME_WE)
    set(bx ${CMAKE_BINARY_DIR}/include/nsr/rpc/${base}.x)
    configure_file(${CMAKE_CURRENT_SOURCE_DIR}/${x} ${bx} COPYONLY)
    add_custom_command(
      OUTPUT ${CMAKE_BINARY_DIR}/include/nsr/rpc/${base}.h
      COMMAND ${CMAKE_COMMAND} -E rm -f ${base}.h
      COMMAND ${RPCGEN} -M -h -o ${base}.h ${base}.x
      DEPENDS ${bx} WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/include/nsr/rpc)
    add_custom_command(
      OUTPUT ${CMAKE_BINARY_DIR}/include/nsr/rpc/${base}_xdr.c
      COMMAND ${CMAKE_COMMAND} -E rm -f ${base}_xdr.c
      COMMAND ${RPCGEN} -M -c -i 0 -o ${base}_xdr.c ${base}.x
      DEPENDS ${bx} WORKING_DIRECTORY ${CMAKE_BINARY_DIR}/include/nsr/rpc)
    list(APPEND gen_src ${CMAKE_BINARY_DIR}/include/nsr/rpc/${base}_xdr.c)
    list(APPEND gen_hdr ${CMAKE_BINARY_DIR}/include/nsr/rpc/${base}.h)
  endforeach()
  add_library(${target} STATIC ${gen_src} ${gen_hdr})
  set_source_files_properties(${gen_src} PROPERTIES COMPILE_OPTIONS
    "-Wno-unused-variable;-Wno-unused-parameter;-Wno-cast-function-type")
  target_include_directories(${target} PUBLIC ${CMAKE_BINARY_DIR}/include)
  target_link_libraries(${target} PUBLIC PkgConfig::TIRPC)
endfunction()
