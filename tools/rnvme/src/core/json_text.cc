#include "core/json_text.h"

namespace rnvme {

std::string dump_json(const nlohmann::json& j, int indent) {
  // ensure_ascii false: valid UTF-8 stays as it is (names, NQNs as the target spelled them).
  return j.dump(indent, ' ', /*ensure_ascii=*/false, nlohmann::json::error_handler_t::replace);
}

}  // namespace rnvme
