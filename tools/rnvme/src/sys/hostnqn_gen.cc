#include "sys/hostnqn_gen.h"

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string_view>

extern "C" {
#include <libnvme.h>
}

namespace rnvme {
namespace {

struct FreeChars {
  void operator()(char* p) const { std::free(p); }
};

}  // namespace

Result<GeneratedHostnqn> libnvme_generate_hostnqn() {
  errno = 0;
  std::unique_ptr<char, FreeChars> nqn(nvmf_hostnqn_generate());
  std::unique_ptr<char, FreeChars> again(nqn ? nvmf_hostnqn_generate() : nullptr);
  if (!nqn || !again) {
    // libnvme 1.3 returns NULL only when asprintf() fails
    Error e = make_error(ErrorCode::kFailure,
                         "libnvme could not generate a host NQN (nvmf_hostnqn_generate)",
                         "out of memory");
    e.sys_errno = errno ? errno : ENOMEM;
    return e;
  }
  return GeneratedHostnqn{nqn.get(), std::string_view(nqn.get()) == again.get()};
}

}  // namespace rnvme
