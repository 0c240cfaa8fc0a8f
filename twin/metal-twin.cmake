# Adds the Metal twin test executable to a CPU build of MLX. mlx-storage-pr
# loads this file with -DCMAKE_PROJECT_INCLUDE=<this file>; it only defines
# targets that nothing builds unless asked (EXCLUDE_FROM_ALL), so the rest of
# the build is the same as without it.
#
# Inputs (cache variables set by mlx-storage-pr):
#   MLX_STORAGE_PR_TWIN_LIBRARY       the library target (mlx)
#   MLX_STORAGE_PR_TWIN_TESTS         the test executable target (tests)
#   MLX_STORAGE_PR_TWIN_MAIN          the doctest main (tests/tests.cpp)
#   MLX_STORAGE_PR_TWIN_SOURCES       the PR's Metal sources
#   MLX_STORAGE_PR_TWIN_TEST_SOURCES  the PR's Metal-only test files
#   MLX_STORAGE_PR_TWIN_INCLUDE       the folder holding the twin Metal/Metal.hpp
#
# Target mlx_storage_pr_metal_twin builds
# mlx-storage-pr-twin/metal-twin-tests from the doctest main, the Metal-only
# tests and the PR's Metal sources, with the twin header first on the include
# path, linked against a copy of the static library in which the symbols that
# the PR's Metal sources define are weak (weaken.cmake). On a CPU build those
# symbols come from the non-Metal stub; on a Metal build the stub is not
# compiled. So the PR's Metal definitions replace the stub's, as they do on a
# Mac, and nothing depends on link order.

if(NOT CMAKE_CURRENT_SOURCE_DIR STREQUAL CMAKE_SOURCE_DIR
   OR COMMAND _mlx_storage_pr_metal_twin)
  return()
endif()

function(_mlx_storage_pr_metal_twin)
  set(lib "${MLX_STORAGE_PR_TWIN_LIBRARY}")
  set(tests "${MLX_STORAGE_PR_TWIN_TESTS}")
  set(out "${CMAKE_BINARY_DIR}/mlx-storage-pr-twin")
  if(NOT TARGET "${lib}" OR NOT TARGET "${tests}")
    return()
  endif()
  set(sources "")
  set(test_sources "")
  foreach(file IN LISTS MLX_STORAGE_PR_TWIN_SOURCES)
    list(APPEND sources "${CMAKE_SOURCE_DIR}/${file}")
  endforeach()
  foreach(file IN LISTS MLX_STORAGE_PR_TWIN_MAIN
                        MLX_STORAGE_PR_TWIN_TEST_SOURCES)
    list(APPEND test_sources "${CMAKE_SOURCE_DIR}/${file}")
  endforeach()
  # A tree without the PR (the unpatched baseline) has nothing to twin.
  foreach(file IN LISTS sources test_sources)
    if(NOT EXISTS "${file}")
      return()
    endif()
  endforeach()

  get_target_property(type "${lib}" TYPE)
  if(NOT type STREQUAL "STATIC_LIBRARY")
    add_custom_target(
      mlx_storage_pr_metal_twin
      COMMAND
        "${CMAKE_COMMAND}" -E echo
        "error: the Metal twin needs a static ${lib} library, this build makes a ${type}"
      COMMAND "${CMAKE_COMMAND}" -E false)
    return()
  endif()

  # The PR's Metal sources, compiled like the library's own sources.
  add_library(mlx_storage_pr_twin_sources OBJECT EXCLUDE_FROM_ALL ${sources})
  target_include_directories(mlx_storage_pr_twin_sources BEFORE
                             PRIVATE "${MLX_STORAGE_PR_TWIN_INCLUDE}")
  target_include_directories(
    mlx_storage_pr_twin_sources
    PRIVATE "$<TARGET_PROPERTY:${lib},INCLUDE_DIRECTORIES>")
  target_compile_definitions(
    mlx_storage_pr_twin_sources
    PRIVATE "$<TARGET_PROPERTY:${lib},COMPILE_DEFINITIONS>")
  target_compile_options(mlx_storage_pr_twin_sources
                         PRIVATE "$<TARGET_PROPERTY:${lib},COMPILE_OPTIONS>")
  get_target_property(lib_links "${lib}" LINK_LIBRARIES)
  if(lib_links)
    target_link_libraries(mlx_storage_pr_twin_sources PRIVATE ${lib_links})
  endif()

  # A copy of the library whose definitions of those symbols are weak.
  set(archive "${out}/${CMAKE_STATIC_LIBRARY_PREFIX}${lib}-twin${CMAKE_STATIC_LIBRARY_SUFFIX}")
  add_custom_command(
    OUTPUT "${archive}" "${out}/weakened.txt"
    COMMAND
      "${CMAKE_COMMAND}" "-DNM=${CMAKE_NM}" "-DOBJCOPY=${CMAKE_OBJCOPY}"
      "-DARCHIVE=$<TARGET_FILE:${lib}>"
      "-DOBJECTS=$<TARGET_OBJECTS:mlx_storage_pr_twin_sources>"
      "-DOUT=${archive}" "-DREPORT=${out}/weakened.txt" -P
      "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/weaken.cmake"
    DEPENDS "${lib}" "$<TARGET_OBJECTS:mlx_storage_pr_twin_sources>"
            "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/weaken.cmake"
    COMMENT "Weakening the PR's Metal symbols in a copy of ${lib}"
    VERBATIM)
  add_custom_target(mlx_storage_pr_twin_archive DEPENDS "${archive}")

  # The test executable: the library's usage requirements and what the test
  # target links, with the copy in place of the library.
  add_executable(
    mlx_storage_pr_metal_twin EXCLUDE_FROM_ALL
    ${test_sources} "$<TARGET_OBJECTS:mlx_storage_pr_twin_sources>")
  set_target_properties(
    mlx_storage_pr_metal_twin PROPERTIES OUTPUT_NAME metal-twin-tests
                                         RUNTIME_OUTPUT_DIRECTORY "${out}")
  target_include_directories(mlx_storage_pr_metal_twin BEFORE
                             PRIVATE "${MLX_STORAGE_PR_TWIN_INCLUDE}")
  foreach(property INCLUDE_DIRECTORIES COMPILE_DEFINITIONS COMPILE_OPTIONS
                   LINK_OPTIONS)
    set_property(
      TARGET mlx_storage_pr_metal_twin
      APPEND
      PROPERTY ${property} "$<TARGET_PROPERTY:${lib},INTERFACE_${property}>")
  endforeach()
  get_target_property(lib_interface "${lib}" INTERFACE_LINK_LIBRARIES)
  get_target_property(test_links "${tests}" LINK_LIBRARIES)
  list(REMOVE_ITEM test_links "${lib}")
  foreach(links lib_interface test_links)
    if(NOT ${links})
      set(${links} "")
    endif()
  endforeach()
  target_link_libraries(mlx_storage_pr_metal_twin PRIVATE "${archive}"
                                                          ${lib_interface} ${test_links})
  add_dependencies(mlx_storage_pr_metal_twin mlx_storage_pr_twin_archive)
  set_property(
    TARGET mlx_storage_pr_metal_twin
    APPEND
    PROPERTY LINK_DEPENDS "${archive}")
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL
               _mlx_storage_pr_metal_twin)
