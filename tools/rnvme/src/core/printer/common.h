// JSON and text helpers the printer files share (core/printer/*.cc).  Internal to
// core/printer/; callers use core/printer.h.
#pragma once

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "core/printer.h"

namespace rnvme::printer_detail {

using nlohmann::json;

inline json opt(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }
inline json str_or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
inline std::string opt_text(const std::optional<int>& v, std::string_view none = "off") {
  return v ? std::to_string(*v) : std::string(none);
}

inline json ns_json(const NvmeNamespace& n) {
  return {{"name", n.name},
          {"device", str_or_null(n.dev_path)},
          {"nsid", n.nsid},
          {"size_bytes", n.size_bytes},
          {"block_size", n.block_size}};
}

inline void ns_text(std::ostream& o, const NvmeNamespace& n, std::string_view indent) {
  fmt::print(o, "{}{:<12} nsid {:<4} {:>10}  ({} blocks of {} B){}\n", indent, n.name, n.nsid,
             human_size(n.size_bytes), n.block_size ? n.size_bytes / n.block_size : 0,
             n.block_size, n.dev_path.empty() ? "" : "  " + n.dev_path);
}

}  // namespace rnvme::printer_detail
