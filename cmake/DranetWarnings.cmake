# dranet_set_warnings(<target>): the project's warning set; -Werror when
# DRANET_WERROR is ON (CI turns it on).
function(dranet_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor> -Wcast-align -Wformat=2 -Wimplicit-fallthrough)
  if(DRANET_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
