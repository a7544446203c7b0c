#include "sys/host_identity.h"

#include <fmt/format.h>

namespace rnvme {

HostIdentityInput read_host_identity(const FileSystem& fs, std::string_view given_hostnqn,
                                     std::string_view given_hostid) {
  HostIdentityInput in;
  auto take = [&](std::string_view given, std::optional<std::string>& slot, std::string& source,
                  std::string_view path, std::string_view option) {
    if (!given.empty()) {
      slot = std::string(given);
      source = fmt::format("--{}", option);
      return;
    }
    if (auto r = fs.read(std::string(path))) slot = *r;
  };
  take(given_hostnqn, in.hostnqn, in.hostnqn_source, kHostnqnPath, "hostnqn");
  take(given_hostid, in.hostid, in.hostid_source, kHostidPath, "hostid");
  return in;
}

}  // namespace rnvme
