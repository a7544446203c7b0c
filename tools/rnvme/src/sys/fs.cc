#include "sys/fs.h"

#include "core/hostid.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

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

// mkdir -p of `dir` (absolute, already below the root), 0755.
Status make_dirs(const std::string& dir) {
  for (size_t pos = 1; pos != std::string::npos;) {
    pos = dir.find('/', pos + 1);
    const std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return io_error("create directory", part, errno);
  }
  return Ok{};
}

// Writes `data` to a new file `tmp` and flushes it to disk.
Status write_new(const std::string& tmp, std::string_view data) {
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) return io_error("create", tmp, errno);
  for (size_t off = 0; off < data.size();) {
    ssize_t n = ::write(fd.get(), data.data() + off, data.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return io_error("write", tmp, errno);
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return io_error("flush", tmp, errno);
  return Ok{};
}

}  // namespace

Status RealFileSystem::replace_files(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> tmps;
  auto drop_tmps = [&] {
    for (const auto& t : tmps) ::unlink(t.c_str());
  };
  for (const auto& [path, data] : files) {
    const std::string p = root_ + path;
    if (auto st = make_dirs(p.substr(0, p.rfind('/'))); !st) {
      drop_tmps();
      return st;
    }
    tmps.push_back(fmt::format("{}.rnvme-new.{}", p, ::getpid()));
    ::unlink(tmps.back().c_str());  // left by a run that died here
    if (auto st = write_new(tmps.back(), data); !st) {
      drop_tmps();
      return st;
    }
  }
  for (size_t i = 0; i < files.size(); i++) {
    const std::string p = root_ + files[i].first;
    if (::rename(tmps[i].c_str(), p.c_str()) != 0) {
      Error e = io_error("replace", p, errno);
      if (i) e.cause = "the files before it were replaced already";
      for (size_t j = i; j < tmps.size(); j++) ::unlink(tmps[j].c_str());
      return e;
    }
  }
  return Ok{};
}

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

Status RealFileSystem::remove_file(const std::string& path) {
  const std::string p = root_ + path;
  if (::unlink(p.c_str()) != 0 && errno != ENOENT) return io_error("remove", p, errno);
  return Ok{};
}

Status RealFileSystem::make_dir(const std::string& path) {
  const std::string p = root_ + path;
  if (::mkdir(p.c_str(), 0755) != 0 && errno != EEXIST) return io_error("create directory", p, errno);
  return Ok{};
}

Status RealFileSystem::remove_dir(const std::string& path) {
  const std::string p = root_ + path;
  if (::rmdir(p.c_str()) != 0 && errno != ENOENT) return io_error("remove directory", p, errno);
  return Ok{};
}

Status FakeFileSystem::remove_file(const std::string& path) {
  if (auto it = write_errors.find(path); it != write_errors.end())
    return io_error("remove", path, it->second);
  writes.emplace_back(path, "<removed>");
  files_.erase(path);
  return Ok{};
}

Status FakeFileSystem::make_dir(const std::string& path) {
  if (auto it = write_errors.find(path); it != write_errors.end())
    return io_error("create directory", path, it->second);
  if (exists(path)) return Ok{};
  writes.emplace_back(path, "<mkdir>");
  dirs_.insert(path);
  if (on_mkdir) on_mkdir(*this, path);
  return Ok{};
}

Status FakeFileSystem::remove_dir(const std::string& path) {
  if (auto it = write_errors.find(path); it != write_errors.end())
    return io_error("remove directory", path, it->second);
  if (!exists(path)) return Ok{};
  writes.emplace_back(path, "<rmdir>");
  const std::string prefix = path + "/";
  std::erase_if(files_, [&](const auto& f) { return f.first.rfind(prefix, 0) == 0; });
  std::erase_if(dirs_, [&](const std::string& d) { return d == path || d.rfind(prefix, 0) == 0; });
  return Ok{};
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
  if (on_write) {
    auto it = files_.find(path);
    files_[path] = on_write(path, it == files_.end() ? std::string() : it->second, data);
  } else {
    files_[path] = std::string(data);
  }
  if (after_write) after_write(*this, path, data);
  return Ok{};
}

Status FakeFileSystem::replace_files(const std::vector<std::pair<std::string, std::string>>& files) {
  for (const auto& [path, data] : files)
    if (auto it = write_errors.find(path); it != write_errors.end())
      return io_error("create", path + ".rnvme-new", it->second);
  for (const auto& [path, data] : files) {
    writes.emplace_back(path, data);
    files_[path] = data;
  }
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

std::string read_trim(const FileSystem& fs, const std::string& path) {
  auto r = fs.read(path);
  return r ? trim(*r) : std::string();
}

std::vector<std::string> list_or_empty(const FileSystem& fs, const std::string& dir) {
  auto r = fs.list(dir);
  return r ? *r : std::vector<std::string>{};
}

}  // namespace rnvme
