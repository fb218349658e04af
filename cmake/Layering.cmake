# hacoboot_stage(<name> [DEPENDS <stage>...] SOURCES <file>... [LINKS <item>...])
#
# Makes hacoboot_<name>, the static library of the pipeline stage in
# src/<name>/, linked to the libraries of the stages it DEPENDS on and to
# LINKS (which may carry PRIVATE items). Sources include headers as
# "<stage>/<file>.hpp" from the one include root src/.
#
# The DEPENDS lists are the stage table: scripts/check-layering.sh (run by
# scripts/lint.sh and the build.layering_includes test) reads them from the
# calls in CMakeLists.txt and refuses an include of an undeclared stage's
# header, so keep each call's DEPENDS on its first line.
function(hacoboot_stage name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;SOURCES;LINKS" ${ARGN})
  list(TRANSFORM ARG_DEPENDS PREPEND hacoboot_ OUTPUT_VARIABLE stage_libraries)

  add_library(hacoboot_${name} STATIC ${ARG_SOURCES})
  target_include_directories(hacoboot_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(hacoboot_${name} PRIVATE ${HACOBOOT_WARNINGS})
  target_link_libraries(hacoboot_${name} PUBLIC ${stage_libraries} ${ARG_LINKS})
endfunction()
