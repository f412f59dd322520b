# dranet_add_subdirectories(): add_subdirectory() for every direct subfolder
# of the current source folder that has a CMakeLists.txt, in name order, so
# a new test suite or fake is picked up by creating its folder.
function(dranet_add_subdirectories)
  file(GLOB children LIST_DIRECTORIES true ${CMAKE_CURRENT_SOURCE_DIR}/*)
  list(SORT children)
  foreach(dir IN LISTS children)
    if(IS_DIRECTORY ${dir} AND EXISTS ${dir}/CMakeLists.txt)
      add_subdirectory(${dir})
    endif()
  endforeach()
endfunction()
