# The Layering test: cmake -DSOURCE_DIR=... -DBINARY_DIR=... -P CheckLayering.cmake
# Checks every folder's includes against the layering CMake configured (build/layering.cmake),
# reporting each folder's first upward include.
include(${CMAKE_CURRENT_LIST_DIR}/Layering.cmake)
include(${BINARY_DIR}/layering.cmake)
set(PROJECT_SOURCE_DIR ${SOURCE_DIR})
set(failed 0)
foreach(folder ${PPSIM_ALL_FOLDERS})
  ppsim_check_layering(${folder} "${PPSIM_ALLOWED_${folder}}" "${PPSIM_ALL_FOLDERS}" error)
  if(error)
    message("layering: ${error}")
    set(failed 1)
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "layering: includes point upward")
endif()
list(LENGTH PPSIM_ALL_FOLDERS count)
message("layering: the ${count} folders include only downward")
