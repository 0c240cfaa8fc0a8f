# Copies ARCHIVE to OUT with every global symbol that OBJECTS define made
# weak, and writes REPORT: one line "<member> <symbol>" per weakened symbol.
# Run by the mlx_storage_pr_metal_twin target (metal-twin.cmake).

cmake_minimum_required(VERSION 3.25)

foreach(var NM OBJCOPY ARCHIVE OBJECTS OUT REPORT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "weaken.cmake: ${var} is not set")
  endif()
endforeach()

function(_defined_globals output files)
  execute_process(
    COMMAND "${NM}" -A -P --defined-only --extern-only ${files}
    OUTPUT_VARIABLE text
    RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "weaken.cmake: ${NM} failed on ${files}")
  endif()
  string(REPLACE "\n" ";" lines "${text}")
  set(found "")
  foreach(line IN LISTS lines)
    # "<file>[<member>]: <symbol> <type> ..."; strong definitions only.
    if(line MATCHES "^(.*): ([^ ]+) [TDBRG] ")
      list(APPEND found "${CMAKE_MATCH_1}|${CMAKE_MATCH_2}")
    endif()
  endforeach()
  set(${output}
      "${found}"
      PARENT_SCOPE)
endfunction()

_defined_globals(own "${OBJECTS}")
set(own_symbols "")
foreach(entry IN LISTS own)
  string(REGEX REPLACE "^.*\\|" "" symbol "${entry}")
  list(APPEND own_symbols "${symbol}")
endforeach()

_defined_globals(library "${ARCHIVE}")
set(weaken "")
set(report "")
foreach(entry IN LISTS library)
  string(REGEX REPLACE "^.*\\|" "" symbol "${entry}")
  string(REGEX REPLACE "\\|.*$" "" where "${entry}")
  string(REGEX REPLACE "^.*\\[(.*)\\]$" "\\1" member "${where}")
  if(symbol IN_LIST own_symbols)
    list(APPEND weaken "${symbol}")
    string(APPEND report "${member} ${symbol}\n")
  endif()
endforeach()

list(REMOVE_DUPLICATES weaken)
string(REPLACE ";" "\n" weaken_lines "${weaken}")
file(WRITE "${OUT}.symbols" "${weaken_lines}\n")
execute_process(COMMAND "${OBJCOPY}" "--weaken-symbols=${OUT}.symbols"
                        "${ARCHIVE}" "${OUT}" RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "weaken.cmake: ${OBJCOPY} failed on ${ARCHIVE}")
endif()
file(WRITE "${REPORT}" "${report}")
