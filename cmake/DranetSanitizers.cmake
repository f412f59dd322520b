# DRANET_SANITIZE=address,undefined instruments every target of the build.
if(DRANET_SANITIZE)
  add_compile_options(-fsanitize=${DRANET_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${DRANET_SANITIZE})
endif()
