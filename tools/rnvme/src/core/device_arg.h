// A device named on the command line, spelled as nvme-cli takes it: the kernel name (nvme3) or
// its node (/dev/nvme3). The one place the tool strips "/dev/".
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"

namespace rnvme {

// `arg` without one leading "/dev/"; nothing else is checked ("/dev/nvme3" -> "nvme3",
// "nvme3" -> "nvme3").
std::string_view strip_dev_prefix(std::string_view arg);

// The controller `arg` names: "nvme3" for "nvme3" or "/dev/nvme3". A usage error when what is
// left is not a controller's name (nvme0 .. nvme999999): a namespace (nvme3n1), another path
// ("../x", "/dev/nvme3/"), an empty name.
Result<std::string> controller_arg(std::string_view arg);

}  // namespace rnvme
