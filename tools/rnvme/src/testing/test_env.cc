#include "testing/test_env.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "core/discovery.h"
#include "core/rdma.h"

namespace rnvme::testing {

void add_rxe(TestEnv& env, const std::string& ip, const std::string& state) {
  RdmaDevice d;
  d.index = 0;
  d.name = "rxe0";
  RdmaPort p;
  p.index = 1;
  p.state = state;
  p.phys_state = state == "ACTIVE" ? "LINK_UP" : "DISABLED";
  p.netdev = "eth0";
  d.ports.push_back(p);
  env.netlink.devs.push_back(d);
  const std::string base = "/sys/class/infiniband/rxe0/ports/1";
  env.fs.add("/sys/class/infiniband/rxe0/node_type", "1: CA\n");
  env.fs.add(base + "/state", fmt::format("{}: {}\n", state == "ACTIVE" ? 4 : 1, state));
  env.fs.add(base + "/phys_state", "5: LinkUp\n");
  env.fs.add(base + "/link_layer", "Ethernet\n");
  env.ports.mtu["rxe0/1"] = 1024;
  env.fs.add("/sys/class/net/eth0/mtu", "1500\n");
  const std::string gid = *gid_for_address(ip);
  int idx = 0;
  for (const char* type : {"IB/RoCE v1", "RoCE v2"}) {
    env.fs.add(fmt::format("{}/gids/{}", base, idx), gid + "\n");
    env.fs.add(fmt::format("{}/gid_attrs/types/{}", base, idx), std::string(type) + "\n");
    env.fs.add(fmt::format("{}/gid_attrs/ndevs/{}", base, idx), "eth0\n");
    idx++;
  }
  env.fs.add(fmt::format("{}/gids/{}", base, idx), "0000:0000:0000:0000:0000:0000:0000:0000\n");
  env.net.local.insert(ip);
}

void add_modules(FakeFileSystem& fs) {
  fs.add_dir("/sys/module/nvme_fabrics");
  fs.add_dir("/sys/module/rnvme");
}

void add_controller(FakeFileSystem& fs, const std::string& name, const std::string& subsys,
                    const std::string& nqn, const std::string& transport, const std::string& traddr,
                    const std::string& trsvcid, const std::string& state) {
  const std::string d = "/sys/class/nvme/" + name;
  fs.add(d + "/transport", transport + "\n");
  fs.add(d + "/address", fmt::format("traddr={},trsvcid={},src_addr=192.168.50.1\n", traddr, trsvcid));
  fs.add(d + "/state", state + "\n");
  fs.add(d + "/subsysnqn", nqn + "\n");
  fs.add(d + "/cntlid", "1\n");
  fs.add(d + "/queue_count", "3\n");
  fs.add(d + "/sqsize", "127\n");
  fs.add(d + "/ctrl_loss_tmo", "600\n");
  fs.add(d + "/reconnect_delay", "10\n");
  fs.add(d + "/fast_io_fail_tmo", "off\n");
  fs.add(d + "/hostnqn", std::string(kHostnqn) + "\n");
  fs.add(d + "/hostid", std::string(kHostUuid) + "\n");
  const std::string s = "/sys/class/nvme-subsystem/" + subsys;
  fs.add(s + "/subsysnqn", nqn + "\n");
  fs.add_dir(s + "/" + name);
}

void add_sample_controllers(FakeFileSystem& fs) {
  add_controller(fs, "nvme0", "nvme-subsys0", kSubnqn, "rdma", "192.168.50.10", "4420");
  add_controller(fs, "nvme1", "nvme-subsys0", kSubnqn, "rdma", "192.168.51.10", "4420");
  add_controller(fs, "nvme2", "nvme-subsys2", "nqn.2024-01.io.rnvme:other", "rdma", "192.168.50.10",
                 "4420");
  add_controller(fs, "nvme3", "nvme-subsys3", "nqn.2014.08.org.nvmexpress:8086", "pcie", "", "");
}

std::vector<std::string> deleted_paths(const FakeFileSystem& fs) {
  std::vector<std::string> d;
  for (const auto& [p, v] : fs.writes) {
    EXPECT_EQ(v, "1") << p;
    d.push_back(p);
  }
  return d;
}

void expect_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(RNVME_TESTDATA_DIR) + "/golden/" + name;
  if (const char* u = std::getenv("RNVME_UPDATE_GOLDEN"); u && std::strcmp(u, "1") == 0) {
    std::ofstream(path) << actual;
    return;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "missing golden file " << path << " (RNVME_UPDATE_GOLDEN=1 creates it)";
  std::stringstream buf;
  buf << in.rdbuf();
  EXPECT_EQ(buf.str(), actual) << "rendering differs from " << path;
}

std::vector<uint8_t> make_discovery_log(const std::vector<LogEntry>& entries, uint64_t genctr) {
  std::vector<uint8_t> b(kDiscoveryHeaderSize + entries.size() * kDiscoveryEntrySize, 0);
  auto put = [&](size_t off, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; i++) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  auto put_str = [&](size_t off, const std::string& s, size_t n) {
    std::memset(&b[off], ' ', n);  // the spec pads address fields with spaces
    std::memcpy(&b[off], s.data(), std::min(n, s.size()));
  };
  put(0, genctr, 8);
  put(8, entries.size(), 8);
  for (size_t i = 0; i < entries.size(); i++) {
    size_t e = kDiscoveryHeaderSize + i * kDiscoveryEntrySize;
    b[e + 0] = entries[i].trtype;
    b[e + 1] = 1;  // ipv4
    b[e + 2] = entries[i].subtype;
    b[e + 3] = entries[i].treq;
    put(e + 4, i + 1, 2);
    put(e + 6, 0xffff, 2);
    put(e + 8, 32, 2);
    put(e + 10, entries[i].eflags, 2);
    put_str(e + 32, entries[i].trsvcid, 32);
    std::memcpy(&b[e + 256], entries[i].subnqn.data(), entries[i].subnqn.size());
    put_str(e + 512, entries[i].traddr, 256);
    b[e + 768] = 1;  // connected
    b[e + 769] = 1;  // not specified
    b[e + 770] = 1;  // rdma-cm
  }
  return b;
}

namespace {

const std::vector<std::string>& v1_scalars() {
  static const std::vector<std::string> n = {
      "qid", "flags", "submitted_read", "submitted_write", "submitted_other", "bytes_read",
      "bytes_write", "bytes_other", "data_none", "data_inline", "data_registered",
      "data_global_rkey", "requeued", "completed_read", "completed_write", "completed_other",
      "latency_sum_ns_read", "latency_sum_ns_write", "latency_sum_ns_other", "status_success",
      "status_generic", "status_command_specific", "status_media", "status_path",
      "status_vendor", "status_reserved", "status_dnr", "status_last", "host_aborted",
      "failovers", "rejected", "keep_alive_count", "keep_alive_sum_ns", "keep_alive_last_ns",
      "keep_alive_max_ns", "wr_posted", "sends", "sends_signaled", "wc_success",
      "wc_loc_len_err", "wc_loc_qp_op_err", "wc_loc_eec_op_err", "wc_loc_prot_err",
      "wc_wr_flush_err", "wc_mw_bind_err", "wc_bad_resp_err", "wc_loc_access_err",
      "wc_rem_inv_req_err", "wc_rem_access_err", "wc_rem_op_err", "wc_retry_exc_err",
      "wc_rnr_retry_exc_err", "wc_loc_rdd_viol_err", "wc_rem_inv_rd_req_err",
      "wc_rem_abort_err", "wc_inv_eecn_err", "wc_inv_eec_state_err", "wc_fatal_err",
      "wc_resp_timeout_err", "wc_general_err", "wc_unknown"};
  return n;
}

}  // namespace

std::string telemetry_layout_v1() {
  std::string s =
      "version 1\nheader magic version header_words nr_queues record_words scalars hist_classes "
      "hist_buckets hist_min_shift hist_sub_bits enabled ns_since_reset\nscalars";
  for (const auto& n : v1_scalars()) s += " " + n;
  s += "\ngauges qid flags status_last keep_alive_last_ns keep_alive_max_ns wr_posted sends "
       "sends_signaled\nhistograms read write other\n";
  return s;
}

std::string telemetry_blob_v1(const std::vector<TeleQueue>& queues, uint64_t ns_since_reset, bool enabled) {
  const uint64_t ns = v1_scalars().size(), nb = 210, rw = ns + 3 * nb;
  std::vector<uint64_t> w = {0x314c4554454d564eULL, 1, 12, queues.size(), rw, ns, 3, nb, 10, 3,
                             enabled ? 1u : 0u, ns_since_reset};
  for (const auto& q : queues) {
    for (const auto& n : v1_scalars()) {
      uint64_t v = 0;
      if (n == "qid") v = static_cast<uint64_t>(q.qid);
      else if (n == "flags") v = q.flags;
      else if (auto it = q.counters.find(n); it != q.counters.end()) v = it->second;
      w.push_back(v);
    }
    for (const char* cls : {"read", "write", "other"}) {
      std::vector<uint64_t> h(nb, 0);
      if (auto it = q.hist.find(cls); it != q.hist.end())
        for (const auto& [b, n] : it->second) h.at(static_cast<size_t>(b)) = n;
      w.insert(w.end(), h.begin(), h.end());
    }
  }
  return std::string(reinterpret_cast<const char*>(w.data()), w.size() * 8);
}

void add_telemetry(FakeFileSystem& fs, const std::string& ctrl, const std::vector<TeleQueue>& queues,
                   const std::string& rdma_device) {
  const std::string d = "/sys/class/nvme/" + ctrl + "/rnvme";
  fs.add(d + "/telemetry_layout", telemetry_layout_v1());
  fs.add(d + "/telemetry", telemetry_blob_v1(queues));
  fs.add(d + "/telemetry_reset", "");
  fs.add(d + "/rdma_device", rdma_device + "\n");
}

}  // namespace rnvme::testing
