# ppsim_library(FOLDER SOURCES src... [DEPENDS folder...] [PUBLIC_LINK lib...] [PRIVATE_LINK lib...])
#
# One folder is one static library, ppsim_FOLDER, with an explicit source list (.proto files are
# compiled into it). DEPENDS names the ppsim folders it builds on; the folders they build on are
# allowed too. The layering is checked here, when CMake configures, and again by the Layering
# test (ppsim_layering_begin writes the folders to build/layering.cmake for it): every
# `#include "F/..."` (and proto import) in the folder's files must name the folder itself or a
# folder below it, so includes only point downward.
include(${CMAKE_CURRENT_LIST_DIR}/Layering.cmake)

function(ppsim_library folder)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPENDS;PUBLIC_LINK;PRIVATE_LINK" ${ARGN})
  set(target ppsim_${folder})
  add_library(${target} STATIC ${ARG_SOURCES})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR})
  set(protos ${ARG_SOURCES})
  list(FILTER protos INCLUDE REGEX "\\.proto$")
  if(protos)
    protobuf_generate(TARGET ${target} IMPORT_DIRS ${CMAKE_CURRENT_SOURCE_DIR}
                      ${Protobuf_INCLUDE_DIRS} PROTOC_OUT_DIR ${PROJECT_BINARY_DIR}/${folder})
  endif()
  set(allowed ${folder})
  set(links "")
  foreach(dependency ${ARG_DEPENDS})
    get_property(below GLOBAL PROPERTY PPSIM_ALLOWED_${dependency})
    if(NOT below)
      message(FATAL_ERROR "ppsim_library(${folder}): ${dependency} is not a folder added before it")
    endif()
    list(APPEND allowed ${dependency} ${below})
    list(APPEND links ppsim_${dependency})
  endforeach()
  list(REMOVE_DUPLICATES allowed)
  target_link_libraries(${target} PUBLIC ${links} ${ARG_PUBLIC_LINK} PRIVATE ${ARG_PRIVATE_LINK})
  set_property(GLOBAL PROPERTY PPSIM_ALLOWED_${folder} ${allowed})
  file(APPEND ${PROJECT_BINARY_DIR}/layering.cmake "set(PPSIM_ALLOWED_${folder} \"${allowed}\")\n")
  ppsim_check_layering(${folder} "${allowed}" "${PPSIM_ALL_FOLDERS}" error)
  if(error)
    message(FATAL_ERROR "${error}")
  endif()
endfunction()


# Before the first ppsim_library: every ppsim folder, bottom up (an include of one of them counts).
function(ppsim_layering_begin)
  set(PPSIM_ALL_FOLDERS ${ARGN} PARENT_SCOPE)
  file(WRITE ${PROJECT_BINARY_DIR}/layering.cmake "set(PPSIM_ALL_FOLDERS \"${ARGN}\")\n")
endfunction()
