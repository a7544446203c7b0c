#include "core/topology.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <regex>

#include "core/hostid.h"

namespace rnvme {

std::map<std::string, std::string> parse_address(std::string_view address) {
  std::map<std::string, std::string> out;
  std::string a = trim(address);
  std::string_view rest = a;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    auto tok = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    auto eq = tok.find('=');
    if (eq == std::string_view::npos) continue;
    out[std::string(tok.substr(0, eq))] = std::string(tok.substr(eq + 1));
  }
  return out;
}

std::optional<int> parse_int(std::string_view s) {
  std::string t = trim(s);
  int v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<int> controller_instance(std::string_view name) {
  if (name.substr(0, 4) != "nvme") return std::nullopt;
  return parse_int(name.substr(4));
}

bool is_namespace_name(std::string_view name) {
  static const std::regex re("nvme[0-9]+(c[0-9]+)?n[0-9]+");
  return std::regex_match(name.begin(), name.end(), re);
}

bool is_controller_name(std::string_view name) {
  static const std::regex re("nvme[0-9]{1,6}");
  return std::regex_match(name.begin(), name.end(), re);
}

const NvmeController* find_association(const Topology& t, const ConnectOptions& o) {
  if (o.hostnqn.empty()) return nullptr;
  const std::string_view port = o.trsvcid.empty() ? kDefaultRdmaPort : std::string_view(o.trsvcid);
  auto same_id = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) ==
                    std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (const auto& s : t.subsystems)
    for (const auto& c : s.controllers) {
      if (c.state == "deleting" || c.state == "deleting (no IO)" || c.state == "dead") continue;
      if (c.transport != o.transport || c.traddr != o.traddr || c.trsvcid != port) continue;
      const std::string& nqn = c.subsysnqn.empty() ? s.nqn : c.subsysnqn;
      if (nqn != o.nqn || c.hostnqn != o.hostnqn) continue;
      if (!c.hostid.empty() && !o.hostid.empty() && !same_id(c.hostid, o.hostid)) continue;
      if (!o.host_traddr.empty()) {
        // Only what the controller was created with: "host_traddr=" in the address (rdma), not
        // the "src_addr=" TCP reports for the source it happened to use.
        auto a = parse_address(c.address);
        auto it = a.find("host_traddr");
        if (it == a.end() || it->second != o.host_traddr) continue;
      }
      return &c;
    }
  return nullptr;
}

}  // namespace rnvme
