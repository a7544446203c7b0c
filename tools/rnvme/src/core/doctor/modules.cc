// Check family module.*: who serves the "rdma" transport, modprobe.d, DKMS.
#include "core/doctor.h"

#include <fmt/format.h>

#include "core/doctor/checks.h"

namespace rnvme {

using namespace doctor_detail;

// ------------------------------------------------------------------ modules

void check_modules(const DoctorSnapshot& s, std::vector<DoctorCheck>& out) {
  const ModuleFacts& m = s.modules;
  const bool rnvme_rdma = m.rnvme_loaded && m.rnvme_transport_name == "rdma";
  const KernelFacts* running = nullptr;
  for (const auto& k : m.kernels)
    if (k.running) running = &k;
  const bool rnvme_installed = running && !running->rnvme_module.empty();

  // Who serves "rdma".
  if (rnvme_rdma) {
    out.push_back(ok("module.transport", "rdma", "rnvme serves the \"rdma\" transport"));
  } else if (m.nvme_rdma_loaded) {
    out.push_back(bad(Severity::kWarn, "module.transport", "rdma",
                      fmt::format("the in-tree nvme_rdma serves \"rdma\"{}",
                                  m.rnvme_loaded ? fmt::format(" (rnvme is loaded as \"{}\")", m.rnvme_transport_name)
                                                 : ", rnvme is not loaded"),
                      "connects with -t rdma use the in-tree driver, not rnvme",
                      "modprobe -r nvme_rdma && modprobe rnvme   (disconnect its controllers first)"));
  } else if (m.rnvme_loaded) {
    out.push_back(ok("module.transport", "rdma",
                     fmt::format("rnvme is loaded as transport \"{}\"; nothing serves \"rdma\" yet",
                                 m.rnvme_transport_name)));
  } else if (!m.redirect_file.empty()) {
    out.push_back(ok("module.transport", "rdma",
                     fmt::format("nothing loaded yet; the first -t rdma connect loads rnvme through {}",
                                 m.redirect_file)));
  } else if (!m.block_file.empty()) {
    out.push_back(bad(Severity::kFail, "module.transport", "rdma",
                      fmt::format("nothing serves \"rdma\" and {} blocks the in-tree nvme_rdma", m.block_file),
                      "a -t rdma connect fails: nvme-fabrics finds no transport",
                      rnvme_installed ? "modprobe rnvme"
                                      : "insmod <path>/rnvme.ko, or install it for this kernel (make "
                                        "install, or the rnvme-dkms package) and modprobe rnvme"));
  } else {
    out.push_back(bad(Severity::kWarn, "module.transport", "rdma",
                      "nothing serves \"rdma\" and no modprobe.d redirect: the first connect loads the "
                      "in-tree nvme_rdma",
                      "nvme-fabrics calls request_module(\"nvme-rdma\"), which loads the in-tree driver "
                      "unless /etc/modprobe.d redirects it",
                      rnvme_installed ? "modprobe rnvme"
                                      : "install rnvme for this kernel (the rnvme-dkms package, or make "
                                        "install and install -m 0644 tools/packaging/modprobe.d/rnvme.conf "
                                        "/etc/modprobe.d/), then modprobe rnvme"));
  }

  if (m.rnvme_loaded && m.nvme_rdma_loaded) {
    const std::string who = rnvme_rdma ? "rnvme registered \"rdma\" first and serves it; nvme_rdma is unused"
                                       : "nvme_rdma serves \"rdma\"";
    out.push_back(bad(Severity::kFail, "module.conflict", "nvme_rdma",
                      fmt::format("nvme_rdma is loaded beside rnvme: {}", who),
                      "two drivers for one transport: which one a connect gets depends on load order, "
                      "and after a reload it silently changes",
                      "modprobe -r nvme_rdma   (then keep it out: install "
                      "tools/packaging/modprobe.d/rnvme.conf as /etc/modprobe.d/rnvme.conf)"));
  } else {
    out.push_back(ok("module.conflict", "nvme_rdma",
                     m.nvme_rdma_loaded ? "nvme_rdma loaded, rnvme not" : "nvme_rdma is not loaded"));
  }

  if (!m.redirect_file.empty()) {
    out.push_back(ok("module.redirect", "/etc/modprobe.d",
                     fmt::format("{} redirects nvme-rdma to rnvme", m.redirect_file)));
  } else if (!m.block_file.empty()) {
    out.push_back(ok("module.redirect", "/etc/modprobe.d",
                     fmt::format("{} keeps the in-tree nvme_rdma from loading (no redirect to rnvme)",
                                 m.block_file)));
  } else if (m.rnvme_loaded || rnvme_installed) {
    out.push_back(bad(Severity::kWarn, "module.redirect", "/etc/modprobe.d",
                      "no /etc/modprobe.d file redirects nvme-rdma to rnvme",
                      "nvme-fabrics' request_module(\"nvme-rdma\") (any connect while rnvme is not "
                      "loaded, e.g. after a reboot) loads the in-tree driver instead of rnvme",
                      "install -m 0644 tools/packaging/modprobe.d/rnvme.conf /etc/modprobe.d/rnvme.conf   "
                      "(the rnvme-dkms package installs it)"));
  } else {
    out.push_back(ok("module.redirect", "/etc/modprobe.d", "rnvme is not installed: nothing to redirect"));
  }

  if (!m.dkms_registered) {
    out.push_back(ok("module.dkms", "",
                     rnvme_installed ? fmt::format("rnvme is not managed by DKMS ({} installed by hand)",
                                                   running->rnvme_module)
                                     : std::string("rnvme is not managed by DKMS")));
    return;
  }
  for (const auto& k : m.kernels) {
    if (!k.rnvme_module.empty() || k.dkms_built) {
      out.push_back(ok("module.dkms", k.version,
                       fmt::format("rnvme built for {}{}", k.version, k.running ? " (running)" : "")));
      continue;
    }
    std::string fix = k.headers ? fmt::format("dkms autoinstall -k {}", k.version)
                                : fmt::format("apt-get install linux-headers-{} && dkms autoinstall -k {}",
                                              k.version, k.version);
    const bool hard = k.running && !m.rnvme_loaded;
    out.push_back(bad(hard ? Severity::kFail : Severity::kWarn, "module.dkms", k.version,
                      fmt::format("no rnvme.ko for {}{}{}", k.version, k.running ? " (the running kernel)" : "",
                                  k.headers ? "" : "; its headers are not installed"),
                      k.running ? "without a module for the running kernel the modprobe.d redirect falls "
                                  "back to the in-tree nvme_rdma"
                                : "booting this kernel falls back to the in-tree nvme_rdma",
                      fix));
  }
}

}  // namespace rnvme
