# hacoboot_stage(<name> [DEPENDS <stage>...] SOURCES <file>... [LINKS <item>...] [EXCLUDE_FROM_ALL])
#
# Makes hacoboot_<name>, the static library of the pipeline stage in
# src/<name>/, linked to the libraries of the stages it DEPENDS on and to
# LINKS (which may carry PRIVATE items). Sources include headers as
# "<stage>/<file>.hpp" from the one include root src/.
#
# Two checks keep the arrows between stages pointing one way:
# - at link time, hacoboot_layering_<name> links every object of the library
#   (--whole-archive, so nothing unused is skipped) against exactly what it
#   declares: a call into a stage it does not DEPEND on is an undefined
#   reference and the build fails;
# - at test time, build.layering_includes (tests/layering_test.sh) refuses
#   an include of an undeclared stage's header, which catches what the linker
#   cannot see (a type or an inline function).
# The DEPENDS lists are the one table both read.
function(hacoboot_stage name)
  cmake_parse_arguments(ARG "EXCLUDE_FROM_ALL" "" "DEPENDS;SOURCES;LINKS" ${ARGN})
  set(exclude "")
  if(ARG_EXCLUDE_FROM_ALL)
    set(exclude EXCLUDE_FROM_ALL)
  endif()
  list(TRANSFORM ARG_DEPENDS PREPEND hacoboot_ OUTPUT_VARIABLE stage_libraries)

  add_library(hacoboot_${name} STATIC ${exclude} ${ARG_SOURCES})
  target_include_directories(hacoboot_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(hacoboot_${name} PRIVATE ${HACOBOOT_WARNINGS})
  target_link_libraries(hacoboot_${name} PUBLIC ${stage_libraries} ${ARG_LINKS})

  add_executable(hacoboot_layering_${name} ${exclude} ${PROJECT_SOURCE_DIR}/cmake/layering_main.cpp)
  target_link_libraries(hacoboot_layering_${name} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,hacoboot_${name}>")

  if(NOT ARG_EXCLUDE_FROM_ALL)
    list(JOIN ARG_DEPENDS "," depends)
    set_property(GLOBAL APPEND PROPERTY HACOBOOT_STAGE_TABLE "${name}=${depends}")
  endif()
endfunction()
