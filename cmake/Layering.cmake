# The layering rule, shared by ppsim_library (at configure time) and the Layering test
# (CheckLayering.cmake, at test time).

# Sets `out` to the first include in FOLDER's files that points at a ppsim folder not in
# `allowed`, as "FILE:LINE: includes X; FOLDER may include A, B, ...", or to "" when there is none.
# Only folders in `known` (the ppsim folders) count: system and third-party headers do not.
function(ppsim_check_layering folder allowed known out)
  # The check reads every file of the folder, listed or not (a header is never listed).
  file(GLOB_RECURSE files RELATIVE ${PROJECT_SOURCE_DIR}
       ${PROJECT_SOURCE_DIR}/${folder}/*.h ${PROJECT_SOURCE_DIR}/${folder}/*.cc
       ${PROJECT_SOURCE_DIR}/${folder}/*.proto)
  list(SORT files)
  foreach(file ${files})
    file(STRINGS ${PROJECT_SOURCE_DIR}/${file} lines REGEX "^(#include|import) \"")
    foreach(line ${lines})
      if(line MATCHES "^(#include|import) \"([a-z_]+)/")
        set(target ${CMAKE_MATCH_2})
        list(FIND known ${target} is_known)
        list(FIND allowed ${target} is_allowed)
        if(NOT is_known EQUAL -1 AND is_allowed EQUAL -1)
          string(REPLACE ";" ", " valid "${allowed}")
          set(${out} "${file}: ${line}: ${folder}/ may include only ${valid}" PARENT_SCOPE)
          return()
        endif()
      endif()
    endforeach()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()
