# The installable library (`cmake --install build --prefix P`):
#   lib/libswinrun.so.X.Y.Z  every layer, exporting only the swin_ API (visibility hidden +
#                            runtime/swinrun.map; the generated ONNX parser and the CUDA code hidden)
#   lib/libswinrun.a         every layer's archive merged into one
#   include/swinrun/         swinrun.h and the headers it includes
#   lib/cmake/swinrun/       swinrunConfig.cmake: find_package(swinrun), swinrun::swinrun(_static)
#   lib/pkgconfig/swinrun.pc pkg-config --cflags --libs swinrun
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# The layers, top first (the static archive and the link order both follow it).
set(SWIN_INSTALL_ARCHIVES swin_pipeline swinrun_lib swin_forward swin_weights swin_cpu swin_ops swin_core)
set(SWIN_STATIC_DEPS ${NIFTI2_LIBRARY} ${ZNZ_LIBRARY} ${LIBDEFLATE_LIBRARY} ${SWIN_PROTOBUF_C_LIB} ${SWIN_OPENBLAS_LIB} z m
    Threads::Threads)
set(SWIN_STATIC_PC "-lnifti2 -lznz -ldeflate -lprotobuf-c -lopenblas -lz -lm -lpthread")
if(TARGET swin_cuda)
  list(INSERT SWIN_INSTALL_ARCHIVES 2 swin_cuda)
  find_package(CUDAToolkit REQUIRED)  # its imported targets are per directory
  list(APPEND SWIN_STATIC_DEPS ${CUDAToolkit_LIBRARY_DIR}/libcudart.so stdc++)
  string(APPEND SWIN_STATIC_PC " -L${CUDAToolkit_LIBRARY_DIR} -lcudart -lstdc++")
endif()
if(SWIN_DICOM)
  # DICOM (formats/dicom/) links DCMTK's and OpenJPEG's shared libraries and the C++ runtime
  list(APPEND SWIN_STATIC_DEPS dcmdata dcmjpeg dcmjpls oflog ofstd openjp2 stdc++)
  string(APPEND SWIN_STATIC_PC " -ldcmdata -ldcmjpeg -ldcmjpls -loflog -lofstd -lopenjp2 -lstdc++")
endif()
# The headers a user's #include <swinrun.h> reaches, relative to the source root, installed in
# the same folders under include/swinrun/ (swinrun.h at its top). Past swinrun.h they include
# each other relative to themselves ("../core/status.h"), so that <swinrun/swinrun.h> with the
# include directory above finds them as well as <swinrun.h> does.
set(SWIN_PUBLIC_HEADERS pipeline/swinrun.h runtime/api.h pipeline/segment_params.h pipeline/segment_api.h
    core/status.h core/settings.h core/version.h core/plan_info.h core/segment_params.h core/segment_report.h)

set(_whole)
foreach(a ${SWIN_INSTALL_ARCHIVES})
  list(APPEND _whole $<TARGET_FILE:${a}>)
endforeach()

file(WRITE ${CMAKE_BINARY_DIR}/swinrun_shared.c "/* libswinrun.so is linked from the layers' archives. */\n")
add_library(swinrun_shared SHARED ${CMAKE_BINARY_DIR}/swinrun_shared.c)
add_dependencies(swinrun_shared ${SWIN_INSTALL_ARCHIVES})
target_link_libraries(swinrun_shared PRIVATE -Wl,--whole-archive ${_whole} -Wl,--no-whole-archive ${SWIN_STATIC_DEPS})
target_link_options(swinrun_shared PRIVATE -Wl,--version-script=${CMAKE_SOURCE_DIR}/runtime/swinrun.map
                    -Wl,--no-undefined)
set_target_properties(swinrun_shared PROPERTIES OUTPUT_NAME swinrun VERSION ${PROJECT_VERSION}
                      SOVERSION ${PROJECT_VERSION_MAJOR} LINK_DEPENDS ${CMAKE_SOURCE_DIR}/runtime/swinrun.map)

# libswinrun.a: the archives merged with ar's MRI script.
set(_mri ${CMAKE_BINARY_DIR}/swinrun_static.mri)
list(JOIN _whole "\naddlib " _addlibs)
file(GENERATE OUTPUT ${_mri} CONTENT "create ${CMAKE_BINARY_DIR}/libswinrun.a\naddlib ${_addlibs}\nsave\nend\n")
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/libswinrun.a
                   COMMAND ${CMAKE_COMMAND} -E rm -f ${CMAKE_BINARY_DIR}/libswinrun.a
                   COMMAND ${CMAKE_AR} -M < ${_mri}
                   DEPENDS ${SWIN_INSTALL_ARCHIVES} ${_mri}
                   COMMENT "merging the layers into libswinrun.a")
add_custom_target(swinrun_static ALL DEPENDS ${CMAKE_BINARY_DIR}/libswinrun.a)

install(TARGETS swinrun_shared LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${CMAKE_BINARY_DIR}/libswinrun.a DESTINATION ${CMAKE_INSTALL_LIBDIR})
foreach(h ${SWIN_PUBLIC_HEADERS})
  get_filename_component(_dir ${h} DIRECTORY)
  get_filename_component(_name ${h} NAME)
  if(_name STREQUAL "swinrun.h")
    install(FILES ${CMAKE_SOURCE_DIR}/${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/swinrun)
  else()
    install(FILES ${CMAKE_SOURCE_DIR}/${h} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/swinrun/${_dir})
  endif()
endforeach()

list(JOIN SWIN_STATIC_DEPS ";" SWIN_STATIC_DEPS)
string(REPLACE "Threads::Threads" "-pthread" SWIN_STATIC_DEPS "${SWIN_STATIC_DEPS}")
configure_file(${CMAKE_SOURCE_DIR}/cmake/swinrunConfig.cmake.in ${CMAKE_BINARY_DIR}/swinrunConfig.cmake @ONLY)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/swinrunConfigVersion.cmake VERSION ${PROJECT_VERSION}
                                 COMPATIBILITY SameMajorVersion)
configure_file(${CMAKE_SOURCE_DIR}/cmake/swinrun.pc.in ${CMAKE_BINARY_DIR}/swinrun.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/swinrunConfig.cmake ${CMAKE_BINARY_DIR}/swinrunConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/swinrun)
install(FILES ${CMAKE_BINARY_DIR}/swinrun.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
