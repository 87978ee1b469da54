# Compiler flags as INTERFACE targets, linked by project targets only (never global flags),
# so generated protobuf code and third-party headers are not held to our warning level.
add_library(occ_warnings INTERFACE)
target_compile_options(occ_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Wunused -Woverloaded-virtual -Wconversion -Wsign-conversion -Wnull-dereference
  -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)
# GCC 12 reports -Wrestrict false positives inside libstdc++'s std::string at -O3 (GCC bug
# 105329); they are not in our code.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(occ_warnings INTERFACE -Wno-restrict)
endif()
if(OCC_WERROR)
  target_compile_options(occ_warnings INTERFACE -Werror)
endif()

add_library(occ_sanitizers INTERFACE)
if(OCC_SANITIZE)
  # Applied globally so that every object (protobuf generated code too) agrees on the ABI.
  # C/C++ only: nvcc does not understand these flags (CUDA test programs are not sanitized).
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=address,undefined>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=undefined>)
  add_link_options($<$<LINK_LANGUAGE:C,CXX>:-fsanitize=address,undefined>)
endif()
