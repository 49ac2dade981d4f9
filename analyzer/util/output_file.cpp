// SPDX-License-Identifier: Apache-2.0
// Buffered output files for reports and conversions: temporary file + rename, inputs protected,
// final symbolic links not followed (output_file.h).
#include "util/output_file.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

#include <fcntl.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "util/cli.h"

namespace cuclimb::util {
namespace {

struct ProtectedInput {
  std::string path;
  dev_t dev;
  ino_t ino;
};

std::vector<ProtectedInput>& Inputs() {
  static std::vector<ProtectedInput> inputs;
  return inputs;
}

absl::Status Failure(const std::string& path, const std::string& what) {
  return OutputError(absl::UnavailableError(absl::StrCat(path, ": ", what)));
}

enum class Target {
  kStdout,
  kNew,      // no file yet: temporary file + rename
  kReplace,  // a regular file: temporary file + rename, keeping its mode
  kInPlace,  // a device, pipe or socket: written directly
};

struct Plan {
  Target target = Target::kNew;
  mode_t mode = 0;  // kReplace: the replaced file's permission bits
};

std::string LinkTarget(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t n = readlink(path.c_str(), buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("?");
}

absl::StatusOr<Plan> PlanFor(const std::string& path) {
  if (path == "-")
    return Plan{Target::kStdout};
  if (path.empty())
    return Failure(path, "empty output path");
  struct stat link {};
  if (lstat(path.c_str(), &link) != 0) {
    if (errno != ENOENT)
      return Failure(path, std::strerror(errno));
    return Plan{Target::kNew};
  }
  struct stat st = link;
  if (S_ISLNK(link.st_mode)) {
    const bool resolves = stat(path.c_str(), &st) == 0;
    if (!resolves || S_ISREG(st.st_mode)) {
      return Failure(path, absl::StrCat("is a symbolic link to ", LinkTarget(path),
                                        resolves ? "" : " (dangling)",
                                        ": not following it; name its target to write there"));
    }
  }
  if (S_ISDIR(st.st_mode))
    return Failure(path, "is a directory");
  for (const ProtectedInput& in : Inputs()) {
    if (in.dev == st.st_dev && in.ino == st.st_ino) {
      return UsageError(
          absl::StrCat("output ", path, " is the input ", in.path, ": refusing to overwrite it"));
    }
  }
  if (S_ISREG(st.st_mode))
    return Plan{Target::kReplace, static_cast<mode_t>(st.st_mode & 07777)};
  return Plan{Target::kInPlace};
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

mode_t NewFileMode(OutputKind kind) {
  if (kind == OutputKind::kTrace)
    return 0600;
  const mode_t mask = umask(0);  // the only way to read it; the CLI is single-threaded
  umask(mask);
  return 0666 & ~mask;
}

}  // namespace

void ProtectInputs(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    struct stat st {};
    if (p != "-" && stat(p.c_str(), &st) == 0)
      Inputs().push_back({p, st.st_dev, st.st_ino});
  }
}

absl::Status CheckOutputPath(const std::string& path) {
  auto plan = PlanFor(path);
  if (!plan.ok())
    return plan.status();
  if (plan->target == Target::kNew || plan->target == Target::kReplace) {
    const std::string dir = DirectoryOf(path);
    if (access(dir.c_str(), W_OK | X_OK) != 0)
      return Failure(path,
                     absl::StrCat("cannot create files in ", dir, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<OutputFile>> OutputFile::Open(const std::string& path,
                                                             OutputKind kind) {
  auto plan = PlanFor(path);
  if (!plan.ok())
    return plan.status();
  if (plan->target == Target::kStdout)
    return std::unique_ptr<OutputFile>(new OutputFile(stdout, path, ""));
  if (plan->target == Target::kInPlace) {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0 || S_ISREG(st.st_mode)) {
      const int err = fd < 0 ? errno : EEXIST;  // replaced by a regular file since PlanFor()
      if (fd >= 0)
        close(fd);
      return Failure(path, std::strerror(err));
    }
    std::FILE* f = fdopen(fd, "wb");
    if (f == nullptr) {
      close(fd);
      return Failure(path, std::strerror(errno));
    }
    return std::unique_ptr<OutputFile>(new OutputFile(f, path, ""));
  }
  // A hidden sibling, so rename() is atomic and never crosses a file system. NAME_MAX bounds
  // the name: a long output name is shortened in the temporary one only.
  const std::string dir = DirectoryOf(path);
  std::string base = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (base.size() > 200)
    base.resize(200);
  std::string temp = absl::StrCat(dir, "/.", base, ".cuclimb-XXXXXX");
  const int fd = mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0)
    return Failure(path, absl::StrCat("cannot create a file in ", dir, ": ", std::strerror(errno)));
  const mode_t mode = plan->target == Target::kReplace ? plan->mode : NewFileMode(kind);
  std::FILE* f = fchmod(fd, mode) == 0 ? fdopen(fd, "wb") : nullptr;
  if (f == nullptr) {
    const int err = errno;
    close(fd);
    unlink(temp.c_str());
    return Failure(path, std::strerror(err));
  }
  return std::unique_ptr<OutputFile>(new OutputFile(f, path, std::move(temp)));
}

OutputFile::~OutputFile() {
  if (file_ != nullptr && file_ != stdout)
    std::fclose(file_);
  if (!temp_path_.empty())
    unlink(temp_path_.c_str());
}

absl::Status OutputFile::Write(std::string_view bytes) {
  if (file_ == nullptr)
    return Failure(path_, "write after close");
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size())
    return Failure(path_, absl::StrCat("write failed: ", std::strerror(errno)));
  return absl::OkStatus();
}

absl::Status OutputFile::Close() {
  std::FILE* f = file_;
  file_ = nullptr;
  if (f == nullptr)
    return Failure(path_, "closed twice");
  const int rc = f == stdout ? std::fflush(f) : std::fclose(f);
  if (rc != 0)
    return Failure(path_, absl::StrCat("write failed: ", std::strerror(errno)));
  if (!temp_path_.empty()) {
    if (rename(temp_path_.c_str(), path_.c_str()) != 0)
      return Failure(
          path_, absl::StrCat("cannot rename the finished file over it: ", std::strerror(errno)));
    temp_path_.clear();
  }
  return absl::OkStatus();
}

}  // namespace cuclimb::util
