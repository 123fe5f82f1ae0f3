# The backend registry (docs/backends.md): which backends a library variant has.
#
#   swin_backend(<library> <interface>)
#       In a backend's folder (kernels/<name>/CMakeLists.txt): <library> is a backend, and
#       <interface> is the name of its struct swin_backend_iface (kernels/backend.h).
#   swin_add_backend(<folder> <library>)
#       A backend's line in the registry: builds <folder> and, when that defined <library>
#       (a toolkit it needs may be missing), appends <library> to SWIN_BACKENDS, the backends
#       of the library (swin_runtime_variant, cmake/variants.cmake).
#   swin_backend_registry(<target> <library>...)
#       Links the backend libraries into <target> and compiles the registry's table into it
#       (runtime/backend_registry.c, given their interfaces as SWIN_BACKEND_LIST), in which
#       runtime/backend.c looks backends up by name.

function(swin_backend library interface)
  set_property(TARGET ${library} PROPERTY SWIN_BACKEND_INTERFACE ${interface})
endfunction()

macro(swin_add_backend folder library)
  add_subdirectory(${folder})
  if(TARGET ${library})
    list(APPEND SWIN_BACKENDS ${library})
  endif()
endmacro()

function(swin_backend_registry target)
  set(list "")
  foreach(library ${ARGN})
    get_target_property(interface ${library} SWIN_BACKEND_INTERFACE)
    if(NOT interface)
      message(FATAL_ERROR "${library} is not a backend: its CMakeLists.txt names its interface with swin_backend()")
    endif()
    string(APPEND list "X(${interface})")
  endforeach()
  target_sources(${target} PRIVATE ${CMAKE_SOURCE_DIR}/runtime/backend_registry.c)
  target_compile_definitions(${target} PRIVATE "SWIN_BACKEND_LIST=${list}")
  target_link_libraries(${target} PUBLIC ${ARGN})
endfunction()
