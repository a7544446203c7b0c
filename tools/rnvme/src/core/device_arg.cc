#include "core/device_arg.h"

#include <fmt/format.h>

#include "core/topology.h"

namespace rnvme {

std::string_view strip_dev_prefix(std::string_view arg) {
  constexpr std::string_view kDev = "/dev/";
  if (arg.starts_with(kDev)) arg.remove_prefix(kDev.size());
  return arg;
}

Result<std::string> controller_arg(std::string_view arg) {
  const std::string_view name = strip_dev_prefix(arg);
  if (is_controller_name(name)) return std::string(name);
  return make_error(ErrorCode::kUsage, fmt::format("'{}' is not a controller name", arg),
                    is_namespace_name(name)
                        ? fmt::format("{} is a namespace (a block device), not a controller", name)
                        : std::string(),
                    "pass a controller such as nvme0 or /dev/nvme0 ('rnvme list' shows them)");
}

}  // namespace rnvme
