#include "sys/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "sys/fd.h"

namespace rnvme {
namespace {

Error io_error(std::string_view what, const std::string& path, int err) {
  Error e = make_error(err == ENOENT ? ErrorCode::kNotFound
                       : (err == EACCES || err == EPERM) ? ErrorCode::kEnvironment
                                                         : ErrorCode::kFailure,
                       fmt::format("cannot {} {}: {}", what, path, std::strerror(err)));
  e.sys_errno = err;
  return e;
}

struct DirCloser {
  void operator()(DIR* d) const { closedir(d); }
};

}  // namespace

Result<std::string> RealFileSystem::read(const std::string& path) const {
  const std::string p = root_ + path;
  Fd fd(::open(p.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return io_error("read", p, errno);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("read", p, errno);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  return out;
}

Status RealFileSystem::write(const std::string& path, std::string_view data) {
  const std::string p = root_ + path;
  Fd fd(::open(p.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!fd.valid()) return io_error("write", p, errno);
  // sysfs attributes take one write; a short write is an error, not something to resume.
  ssize_t n = ::write(fd.get(), data.data(), data.size());
  if (n < 0) return io_error("write", p, errno);
  if (static_cast<size_t>(n) != data.size()) return io_error("write", p, EIO);
  return Ok{};
}

Result<std::vector<std::string>> RealFileSystem::list(const std::string& dir) const {
  const std::string p = root_ + dir;
  std::unique_ptr<DIR, DirCloser> d(::opendir(p.c_str()));
  if (!d) return io_error("list", p, errno);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d.get())) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(std::move(n));
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool RealFileSystem::exists(const std::string& path) const {
  struct stat st;
  return ::stat((root_ + path).c_str(), &st) == 0;
}

Result<std::string> FakeFileSystem::read(const std::string& path) const {
  auto it = files_.find(path);
  if (it == files_.end()) return io_error("read", path, ENOENT);
  return it->second;
}

Status FakeFileSystem::write(const std::string& path, std::string_view data) {
  if (auto it = write_errors.find(path); it != write_errors.end())
    return io_error("write", path, it->second);
  writes.emplace_back(path, std::string(data));
  files_[path] = std::string(data);
  return Ok{};
}

Result<std::vector<std::string>> FakeFileSystem::list(const std::string& dir) const {
  const std::string prefix = dir.back() == '/' ? dir : dir + "/";
  std::set<std::string> names;
  auto collect = [&](const std::string& p) {
    if (p.rfind(prefix, 0) != 0) return;
    auto rest = p.substr(prefix.size());
    names.insert(rest.substr(0, rest.find('/')));
  };
  for (const auto& [p, _] : files_) collect(p);
  for (const auto& p : dirs_) collect(p);
  names.erase("");
  if (names.empty() && !dirs_.count(dir)) return io_error("list", dir, ENOENT);
  return std::vector<std::string>(names.begin(), names.end());
}

bool FakeFileSystem::exists(const std::string& path) const {
  if (files_.count(path) || dirs_.count(path)) return true;
  const std::string prefix = path + "/";
  auto it = files_.lower_bound(prefix);
  if (it != files_.end() && it->first.rfind(prefix, 0) == 0) return true;
  auto dt = dirs_.lower_bound(prefix);
  return dt != dirs_.end() && dt->rfind(prefix, 0) == 0;
}

}  // namespace rnvme
