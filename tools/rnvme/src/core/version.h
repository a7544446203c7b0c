// `rnvme --version` / `rnvme version`: the tool's version (CMake's project version) and libnvme's,
// the one it was built against and the one loaded.
#pragma once

#include <string>

namespace rnvme {

struct VersionInfo {
  std::string tool;             // CMake's PROJECT_VERSION, through the generated rnvme_version.h
  std::string libnvme_built;    // pkg-config's libnvme version at build time
  std::string libnvme_runtime;  // the loaded library's (nvme_get_version); empty: unknown
};

// This build's versions, with `libnvme_runtime` as the caller found it (sys/ asks libnvme).
VersionInfo build_version_info(std::string libnvme_runtime);

}  // namespace rnvme
