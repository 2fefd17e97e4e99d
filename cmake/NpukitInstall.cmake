# Installation: headers, libraries, the CLI, a CMake package
# (find_package(npukit)) and a pkg-config file.
include(CMakePackageConfigHelpers)

install(DIRECTORY include/npukit DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/npukit/version.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/npukit)
install(TARGETS npukit npukit_static npukit_okk EXPORT npukitTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT npukitTargets NAMESPACE npukit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/npukit)

configure_package_config_file(cmake/npukitConfig.cmake.in ${PROJECT_BINARY_DIR}/npukitConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/npukit)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/npukitConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/npukitConfig.cmake ${PROJECT_BINARY_DIR}/npukitConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/npukit)

# The .pc file finds its prefix relative to itself, so the install is relocatable.
file(RELATIVE_PATH NPUKIT_PC_TO_PREFIX /root/${CMAKE_INSTALL_LIBDIR}/pkgconfig /root)
configure_file(cmake/npukit.pc.in ${PROJECT_BINARY_DIR}/npukit.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/npukit.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(FILES cmake/NpukitOkkernel.cmake DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/npukit)
configure_file(cmake/npukit-okk.pc.in ${PROJECT_BINARY_DIR}/npukit-okk.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/npukit-okk.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
