// version.h: the library version and the numerical contract profile it implements.
#pragma once

namespace bl {

// The release, as in CMake's project(VERSION) (the build checks that the two agree).
constexpr const char* kVersion = "0.1.0";
// The contract profile (docs/contract.md). Any change of any result bit changes this name.
constexpr const char* kContractProfile = "bitlearn.identical.v1";

}  // namespace bl
