# LA_SANITIZER: build every project target with gcc/clang sanitizers, e.g. -DLA_SANITIZER="address;undefined"
# or -DLA_SANITIZER=thread (scripts/test --sanitize / --tsan). Applied through directory-wide compile and link
# options, so it must be included before the subdirectories that define targets. Only our code is
# instrumented: the LLVM/MLIR libraries come prebuilt from Debian, and JIT-compiled kernels are not either.
set(LA_SANITIZER "" CACHE STRING "Sanitizers for every project target: 'address;undefined', 'thread' or empty")

if(LA_SANITIZER)
  list(JOIN LA_SANITIZER "," la_sanitizers)
  # Frame pointers give whole stack traces from the fast unwinder, -g1 their file:line. -O1 whatever the
  # build type (it comes after the build type's -O3 on the command line): the instrumented build and its
  # tests stay quick on 2 cores. The build type's NDEBUG is kept, so the checks run on the code that ships.
  add_compile_options(-fsanitize=${la_sanitizers} -fno-omit-frame-pointer -O1 -g1)
  add_link_options(-fsanitize=${la_sanitizers})
  # What a program linking the installed libraries needs too (add_la_library, cmake/AddLA.cmake).
  set(LA_INSTRUMENTATION_LINK_OPTION -fsanitize=${la_sanitizers})
  if("undefined" IN_LIST LA_SANITIZER)
    # A UBSan report aborts the test instead of printing and carrying on, so ctest sees it.
    add_compile_options(-fno-sanitize-recover=undefined)
  endif()
  message(STATUS "Sanitizers: ${la_sanitizers}")
endif()
