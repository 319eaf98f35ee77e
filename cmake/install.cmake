# What `cmake --install` puts where (GNUInstallDirs), for the library: the
# header, its man page memhist.3, libmemhist.so* and libmemhist.a, a
# pkg-config file and a CMake package. The CLI, its man page and its bash completion are installed by
# tools/CMakeLists.txt. Both package files are relocatable, so the tree may
# be installed with `cmake --install BUILD --prefix DIR` anywhere and moved.
include(CMakePackageConfigHelpers)

set(MH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/memhist)

install(FILES ${PROJECT_SOURCE_DIR}/src/memhist.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
mh_man_page(${PROJECT_SOURCE_DIR}/src/memhist.3.md 3)
install(TARGETS memhist_shared EXPORT memhistTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
# Two export sets: memhist::memhist needs nothing at find_package time;
# memhist::memhist_static needs its dependencies found, which the config
# file does only for it (cmake/memhistConfig.cmake.in).
install(TARGETS memhist EXPORT memhistStaticTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(EXPORT memhistTargets NAMESPACE memhist:: DESTINATION ${MH_CMAKE_DIR})
install(EXPORT memhistStaticTargets NAMESPACE memhist:: DESTINATION ${MH_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/memhistConfig.cmake.in
  ${PROJECT_BINARY_DIR}/memhistConfig.cmake
  INSTALL_DESTINATION ${MH_CMAKE_DIR})
# 1.x.y satisfies a request for 1.0 .. 1.x: the major number is the ABI's.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/memhistConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/memhistConfig.cmake
              ${PROJECT_BINARY_DIR}/memhistConfigVersion.cmake
        DESTINATION ${MH_CMAKE_DIR})

# pkg-config: paths relative to the .pc file's own directory (${pcfiledir})
# when the install directories are relative, as they are by default.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(MH_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(MH_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(MH_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH mh_up "/mh_root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/mh_root")
  string(REGEX REPLACE "/$" "" mh_up "${mh_up}")
  set(MH_PC_PREFIX "\${pcfiledir}/${mh_up}")
  set(MH_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(MH_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/memhist.pc.in
               ${PROJECT_BINARY_DIR}/memhist.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/memhist.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
