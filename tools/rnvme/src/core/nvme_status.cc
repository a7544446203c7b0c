#include "core/nvme_status.h"

#include <fmt/format.h>
#include <libnvme.h>

#include <charconv>
#include <climits>

namespace rnvme {
namespace {

// libnvme's description; empty where it has none.  A negative status would make libnvme
// describe errno instead, so only status fields reach it.
std::string description(uint32_t status) {
  if (status > INT_MAX) return {};
  const char* s = nvme_status_to_string(static_cast<int>(status), /*fabrics=*/true);
  return s ? std::string(s) : std::string();
}

std::string with_description(std::string shown, uint32_t status) {
  const std::string d = description(status);
  return d.empty() ? shown : fmt::format("{} ({})", shown, d);
}

}  // namespace

std::string nvme_status_text(uint32_t status) {
  return with_description(fmt::format("{:#x}", status), status);
}

std::string nvme_status_text(std::string_view status) {
  std::string_view digits = status;
  int base = 10;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    digits.remove_prefix(2);
    base = 16;
  }
  uint32_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return std::string(status);
  return with_description(std::string(status), v);
}

}  // namespace rnvme
