# swin_runtime_variant(<suffix> <backend library>...) defines one build of the library and the CLI:
#   swinrun_lib<suffix>    the runtime's public API (runtime/api.h) over forward(), the loader and
#                          the backends given (its registry, cmake/backends.cmake), with fileio/;
#   swin_pipeline<suffix>  the CT pipeline (pipeline/) and its formats (formats/) on top of it;
#   swinrun<suffix>        the CLI (apps/cli/), in the build root (not with SWIN_LIBRARY_ONLY).
# Variants never share a link: each executable links exactly one of them. The top-level
# CMakeLists.txt defines the default variant (empty suffix, the backends of SWIN_BACKENDS) and
# swinrun_emu (the CUDA backend emulated on the CPU).
function(swin_runtime_variant suffix)
  swin_runtime_library("${suffix}" ${ARGN})

  add_library(swin_pipeline${suffix} STATIC $<TARGET_OBJECTS:swin_pipeline_objs> $<TARGET_OBJECTS:swin_formats_objs>
              $<TARGET_OBJECTS:swin_nifti_objs> $<TARGET_OBJECTS:swin_dicom_objs> $<TARGET_OBJECTS:swin_rawvol_objs>
              $<TARGET_OBJECTS:swin_metaimage_objs> $<TARGET_OBJECTS:swin_nrrd_objs>)
  target_include_directories(swin_pipeline${suffix} PUBLIC ${NIFTI_INCLUDE_DIR})
  target_link_libraries(swin_pipeline${suffix} PUBLIC swinrun_lib${suffix} ${NIFTI2_LIBRARY} ${ZNZ_LIBRARY} ${LIBDEFLATE_LIBRARY} z m
                        Threads::Threads ${SWIN_DICOM_LIBS})

  if(SWIN_LIBRARY_ONLY)
    return()
  endif()
  add_executable(swinrun${suffix} ${SWIN_CLI_SOURCES})
  target_link_libraries(swinrun${suffix} PRIVATE swinrun_lib${suffix} swin_pipeline${suffix} ${SWIN_CLI_LIBS})
  target_compile_definitions(swinrun${suffix} PRIVATE ${SWIN_CLI_DEFINES})
  set_target_properties(swinrun${suffix} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endfunction()

# swin_runtime_library(<suffix> <backend library>...): swinrun_lib<suffix> alone (a test's
# library with a backend of its own, tests/planted_backend).
function(swin_runtime_library suffix)
  add_library(swinrun_lib${suffix} STATIC $<TARGET_OBJECTS:swinrun_lib_objs> $<TARGET_OBJECTS:swin_fileio_objs>)
  swin_backend_registry(swinrun_lib${suffix} ${ARGN})
  target_link_libraries(swinrun_lib${suffix} PUBLIC swin_forward swin_weights swin_core)
endfunction()
