// An NVMe completion status as rnvme shows it: the hex value with libnvme's description beside it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rnvme {

// `status` as the kernel and libnvme report it (SC, SCT, CRD, More, DNR), from a fabrics target:
// "0x4182 (Connect Invalid Parameters: ...)", the text being nvme_status_to_string(status, true).
std::string nvme_status_text(uint32_t status);
// The same for a status written as a number ("0x4182", "386", as rnvme.ko's attempt record has
// it); the text as given stays, and text that is not a number is returned unchanged.
std::string nvme_status_text(std::string_view status);

}  // namespace rnvme
