// Kernel name forms stored in StringIds, as nsys exports them:
//   mangled    "_ZN2at6native29vectorized_elementwise_kernelILi4EZ...EEvi..."
//   demangled  "void at::native::vectorized_elementwise_kernel<4, ...>(int, ...)"
//   short      "vectorized_elementwise_kernel" (no namespace, template arguments, parameters
//              or return type)
#pragma once

#include <string>
#include <string_view>

namespace occ::inj {

struct KernelNames {
  std::string mangled;
  std::string demangled;  // = mangled when it is not an Itanium-mangled name (extern "C")
  std::string short_name;
};

KernelNames MakeKernelNames(std::string_view mangled);

// The base name of a demangled function signature.
std::string ShortKernelName(std::string_view demangled);

}  // namespace occ::inj
