// A number in kernel or nvme-cli text: decimal, or hex after "0x"/"0X" (the kernel's log lines,
// rnvme.ko's attempt record, NVMe statuses). Kernel text is input: parsing it never throws.
#pragma once

#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace rnvme {

// The whole of `s` as a T; nullopt when it is not one (empty, a bare "0x", anything around the
// digits) or does not fit T. A sign is read as std::from_chars reads it for T.
template <typename T>
std::optional<T> parse_number(std::string_view s) {
  int base = 10;
  if (s.starts_with("0x") || s.starts_with("0X")) {
    s.remove_prefix(2);
    base = 16;
  }
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace rnvme
