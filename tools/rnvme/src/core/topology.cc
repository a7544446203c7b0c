#include "core/topology.h"

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

}  // namespace rnvme
