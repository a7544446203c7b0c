// Which local address the kernel would use to reach a target, and whether an address is local.
#pragma once

#include <map>
#include <set>
#include <string>

#include "core/result.h"

namespace rnvme {

class NetProbe {
 public:
  virtual ~NetProbe() = default;
  // The source address of the route to `dst`; an Error with sys_errno (ENETUNREACH) if none.
  virtual Result<std::string> source_for(const std::string& dst) = 0;
  virtual bool is_local(const std::string& ip) = 0;
};

class RealNetProbe final : public NetProbe {
 public:
  Result<std::string> source_for(const std::string& dst) override;
  bool is_local(const std::string& ip) override;
};

class FakeNetProbe final : public NetProbe {
 public:
  Result<std::string> source_for(const std::string& dst) override {
    auto it = routes.find(dst);
    if (it != routes.end()) return it->second;
    Error e = make_error(ErrorCode::kFailure, "no route to " + dst);
    e.sys_errno = 101;  // ENETUNREACH
    return e;
  }
  bool is_local(const std::string& ip) override { return local.count(ip) > 0; }
  std::map<std::string, std::string> routes;  // dst -> source address
  std::set<std::string> local;
};

}  // namespace rnvme
