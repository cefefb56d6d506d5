# How the project's libraries and tools are defined and installed. `cmake --install` puts them, the public
# headers and the kernel library under a prefix with a CMake package (cmake/LAPackage.cmake), so a host
# program outside this tree writes find_package(LA CONFIG) and target_link_libraries(app LA::Runtime).
include(GNUInstallDirs)

# add_la_library(name [EXPORT_NAME export-name] <add_mlir_library arguments>)
#
# An add_mlir_library that is installed into this project's export set, LATargets, as LA::<export-name>
# (default: the name without its "LA" prefix, so LARuntime is LA::Runtime). add_mlir_library's own install
# rule is turned off: it puts the library into MLIR's export set, MLIRTargets, which belongs to the installed
# MLIR and is never exported from here, so LATargets could not name the libraries LA::Runtime links.
function(add_la_library name)
  cmake_parse_arguments(ARG "" "EXPORT_NAME" "" ${ARGN})
  add_mlir_library(${name} ${ARG_UNPARSED_ARGUMENTS} DISABLE_INSTALL)
  if(NOT ARG_EXPORT_NAME)
    string(REGEX REPLACE "^LA" "" ARG_EXPORT_NAME ${name})
  endif()
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${ARG_EXPORT_NAME})
  # The archives of an instrumented build (LA_SANITIZER, fuzzing) call into the sanitizer runtime: a program
  # linking the installed libraries needs the same runtime, whether or not it instruments its own code.
  if(LA_INSTRUMENTATION_LINK_OPTION)
    target_link_options(${name} INTERFACE $<INSTALL_INTERFACE:${LA_INSTRUMENTATION_LINK_OPTION}>)
  endif()
  install(TARGETS ${name}
    EXPORT LATargets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# la_install_tool(name): installs an add_llvm_executable into bin/, exported as LA::<name> (so a build can run
# the installed `lac compile --emit=obj`, for instance).
function(la_install_tool name)
  # add_llvm_executable's install RPATH is $ORIGIN/../lib only, but libMLIR.so (LA_LINK_MLIR_DYLIB) stays in
  # LLVM's own library directory, which is not on the loader's path on Debian: keep the directories of the
  # libraries the tool was linked with.
  set_target_properties(${name} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  install(TARGETS ${name} EXPORT LATargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()
