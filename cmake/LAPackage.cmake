# The installed CMake package: <prefix>/lib/cmake/LA/{LAConfig,LAConfigVersion,LATargets}.cmake. Included
# after every library and tool is defined (add_la_library and la_install_tool fill the LATargets export set).
include(CMakePackageConfigHelpers)

set(LA_INSTALL_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/LA)
# The kernel library (SPEC.md's mechanisms), for host programs to load: LA_KERNELS_DIR in the package.
set(LA_KERNELS_INSTALL_DIR ${CMAKE_INSTALL_DATADIR}/la/kernels)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/ DESTINATION ${LA_KERNELS_INSTALL_DIR} FILES_MATCHING PATTERN "*.mlir")

install(EXPORT LATargets NAMESPACE LA:: DESTINATION ${LA_INSTALL_PACKAGE_DIR})

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/LAConfig.cmake.in ${PROJECT_BINARY_DIR}/LAConfig.cmake
  INSTALL_DESTINATION ${LA_INSTALL_PACKAGE_DIR}
  PATH_VARS LA_KERNELS_INSTALL_DIR)
# 0.x: the C++ API may change with every minor version.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/LAConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/LAConfig.cmake ${PROJECT_BINARY_DIR}/LAConfigVersion.cmake
  DESTINATION ${LA_INSTALL_PACKAGE_DIR})
