#include "core/nvme_status.h"

#include <gtest/gtest.h>

namespace rnvme {
namespace {

// Fabrics Connect statuses (command specific, SCT 1) are named as such, DNR (0x4000) aside.
TEST(NvmeStatus, HexWithLibnvmeText) {
  EXPECT_EQ(nvme_status_text(0x4182u),
            "0x4182 (Connect Invalid Parameters: One or more of the command parameters)");
  EXPECT_EQ(nvme_status_text(0x181u), "0x181 (Controller Busy: The controller is already associated with a host)");
  EXPECT_EQ(nvme_status_text(0x4002u),
            "0x4002 (Invalid Field in Command: A reserved coded value or an unsupported value in a "
            "defined field)");
  EXPECT_EQ(nvme_status_text(0x109u), "0x109 (Invalid Log Page: The log page indicated is invalid)");
}

// As rnvme.ko's attempt record writes it (%#x), and anything else left as it is.
TEST(NvmeStatus, FromRecordText) {
  EXPECT_EQ(nvme_status_text("0x4184"),
            "0x4184 (Connect Invalid Host: The host is not allowed to establish an association to "
            "either any controller in the NVM subsystem or the specified controller)");
  EXPECT_EQ(nvme_status_text("385"), "385 (Controller Busy: The controller is already associated with a host)");
  EXPECT_EQ(nvme_status_text(""), "");
  EXPECT_EQ(nvme_status_text("0x"), "0x");
  EXPECT_EQ(nvme_status_text("-1"), "-1");
  EXPECT_EQ(nvme_status_text("0x41zz"), "0x41zz");
  EXPECT_EQ(nvme_status_text("0x1ffffffff"), "0x1ffffffff");
}

}  // namespace
}  // namespace rnvme
