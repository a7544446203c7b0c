#include "core/nvme_status.h"

#include <fmt/format.h>
#include <libnvme.h>

#include <climits>

#include "core/number.h"

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
  const auto v = parse_number<uint32_t>(status);
  return v ? with_description(std::string(status), *v) : std::string(status);
}

}  // namespace rnvme
