#include "core/doctor.h"

#include <gtest/gtest.h>

#include <sstream>

#include "core/doctor/test_support.h"
#include "core/printer.h"
#include "testing/test_env.h"

namespace rnvme {
namespace {

using namespace doctor_test;

// The whole rendering of one fixture, text and JSON, against reviewed golden files.
TEST(DoctorPrinter, GoldenE810) {
  DoctorReport r = run_doctor_checks(fixture("e810-irdma-dscp-partial.json"));
  std::ostringstream out, err, jout;
  Printer(Format::kText, out, err).print(r);
  testing::expect_golden("doctor-e810.txt", out.str());
  Printer(Format::kJson, jout, err).print(r);
  testing::expect_golden("doctor-e810.json", jout.str());
}

TEST(DoctorPrinter, TextAndJsonFromOneReport) {
  auto s = softroce();
  s.tos = 96;
  DoctorReport r = run_doctor_checks(s);
  std::ostringstream out, err;
  Printer p(Format::kText, out, err);
  p.print(r);
  const std::string text = out.str();
  EXPECT_TRUE(has(text, "\nwarn  lossless.tos ")) << text;
  EXPECT_TRUE(has(text, "      fix: configure DCB on the RoCE NIC")) << text;
  EXPECT_TRUE(text.ends_with(" ok, 1 warning, 0 failures\n")) << text;
  std::ostringstream jout;
  Printer pj(Format::kJson, jout, err);
  pj.print(r);
  auto j = nlohmann::json::parse(jout.str());
  EXPECT_EQ(j["status"], "warn");
  EXPECT_EQ(j["exit_status"], 1);
  EXPECT_EQ(j["summary"]["warn"], 1);
  EXPECT_EQ(j["checks"].size(), r.checks.size());
  bool found = false;
  for (const auto& c : j["checks"])
    if (c["id"] == "lossless.tos") {
      found = true;
      EXPECT_EQ(c["severity"], "warn");
      EXPECT_TRUE(c["fix"].is_string());
    } else if (c["severity"] == "ok") {
      EXPECT_TRUE(c["fix"].is_null());
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(j["version"], kJsonSchemaVersion);
}

}  // namespace
}  // namespace rnvme
