# ppsim_embed(TARGET FUNCTION name FILES file...)
#
# Compiles data files of the current folder into TARGET: at build time a generated .cc defines
# `ppsim::EmbeddedFiles ppsim::NAME()` (base/embedded.h), the files' names (as given, relative to
# the folder: "presets/dgx-h100.textproto") and exact bytes, in the order given. The owning
# folder's header declares NAME. The .cc is made again whenever a file, the list (the calling
# CMakeLists.txt) or the generator changes.
#
# Why this way: C++20 has no #embed, so a generator writes the bytes out as source. It is a CMake
# script run with `cmake -P` (cmake/EmbedFiles.cmake), so the build needs nothing CMake does not
# have already (no Python, no xxd, no assembler .incbin, which ties the build to one toolchain); the
# bytes become \x escapes in string literals, which
# hold any byte and are constexpr, so the table is constant-initialized (no static-order problem);
# and add_custom_command with DEPENDS on the files makes the dependency exact, where file(READ) at
# configure time would leave an edited preset out of the program until CMake ran again.
function(ppsim_embed target)
  cmake_parse_arguments(ARG "" "FUNCTION" "FILES" ${ARGN})
  if(NOT ARG_FUNCTION OR NOT ARG_FILES)
    message(FATAL_ERROR "ppsim_embed(${target}): give FUNCTION name and FILES file...")
  endif()
  set(output ${CMAKE_CURRENT_BINARY_DIR}/${ARG_FUNCTION}.cc)
  set(inputs "")
  foreach(file ${ARG_FILES})
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${file})
      message(FATAL_ERROR "ppsim_embed(${target}): no file ${CMAKE_CURRENT_SOURCE_DIR}/${file}")
    endif()
    list(APPEND inputs ${CMAKE_CURRENT_SOURCE_DIR}/${file})
  endforeach()
  # A list cannot cross the command line intact (generators split it at ';'): '|' joins it.
  string(JOIN "|" files ${ARG_FILES})
  list(LENGTH ARG_FILES count)
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR} -DFILES=${files}
            -DFUNCTION=${ARG_FUNCTION} -DOUTPUT=${output}
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    # The list's own file too: Makefile generators do not rerun a command whose arguments alone
    # changed (a file dropped or moved in the list).
    DEPENDS ${inputs} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake ${CMAKE_CURRENT_LIST_FILE}
    COMMENT "Embedding ${count} files as ${ARG_FUNCTION}()"
    VERBATIM)
  target_sources(${target} PRIVATE ${output})
endfunction()
