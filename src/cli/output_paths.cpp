#include "cli/output_paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>
#include <utility>

#include "util/atomic_file.hpp"
#include "util/errors.hpp"
#include "util/expected.hpp"

namespace hacoboot {
namespace {

namespace fs = std::filesystem;

using Inode = std::pair<dev_t, ino_t>;

struct CheckedOutput {
  const NamedOutput* named = nullptr;
  std::string normalised;      // absolute, without symbolic links, "." or ".." in the directory
  std::optional<Inode> inode;  // where something is at the path
  bool character_device = false;
  UniqueFd fifo;  // a streamed FIFO's write end, open
};

[[noreturn]] void refuse(const NamedOutput& output, const std::string& why) {
  throw UsageError(output.option + ": cannot write " + output.path + ": " + why);
}

std::string normalised_path(const fs::path& directory, const fs::path& name) {
  std::error_code error;
  auto resolved = fs::weakly_canonical(directory, error);
  if (error) resolved = fs::absolute(directory).lexically_normal();
  return (resolved / name).string();
}

// Whether `directory` can take a new file, or why not.
Expected<void> accepts_new_file(const fs::path& directory) {
  const auto failure = [](int error) { return Failure{std::strerror(error)}; };
  struct stat st {};
  if (::stat(directory.c_str(), &st) != 0) return failure(errno);
  if (!S_ISDIR(st.st_mode)) return failure(ENOTDIR);
  // EROFS on a read-only mount, even for root.
  if (::faccessat(AT_FDCWD, directory.c_str(), W_OK | X_OK, AT_EACCESS) != 0) return failure(errno);
  return {};
}

// An existing character device or FIFO, written in place (/dev/null, a
// pipe): nothing is created beside it, so its directory need not take files.
CheckedOutput check_node_written_in_place(const NamedOutput& output, const struct stat& st, CheckedOutput checked) {
  if (output.regular_file_only) {
    refuse(output, "it is " + file_type_name(st.st_mode) + " (" + output.option +
                       " replaces the file by renaming a new one over it: only a regular file can be there)");
  }
  if (::faccessat(AT_FDCWD, output.path.c_str(), W_OK, AT_EACCESS) != 0) refuse(output, std::strerror(errno));
  checked.character_device = S_ISCHR(st.st_mode);
  // Opened now, not when the run starts: another output could be truncated
  // by then. O_NONBLOCK: ENXIO, not a wait, when nothing reads it.
  if (output.streamed && S_ISFIFO(st.st_mode)) {
    UniqueFd fifo(::open(output.path.c_str(), O_WRONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC));
    if (!fifo.valid()) {
      const int error = errno;
      refuse(output, error == ENXIO ? "it is a FIFO no process reads (the tool does not wait for a reader)"
                                    : std::strerror(error));
    }
    checked.fifo = std::move(fifo);
  }
  return checked;
}

CheckedOutput check_output(const NamedOutput& output) {
  const fs::path path(output.path);
  const auto name = path.filename();
  if (name.empty() || name == "." || name == "..") refuse(output, "not a file name");
  const auto directory = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  CheckedOutput checked{
      .named = &output, .normalised = normalised_path(directory, name), .inode = std::nullopt, .fifo = {}};
  // Where a new file is made: the output itself, or the temporary file of
  // one replaced, whose name is the output's and kTemporaryNameExtra bytes.
  const auto check_directory = [&] {
    if (const auto accepted = accepts_new_file(directory); !accepted) {
      refuse(output, "directory " + directory.string() + ": " + accepted.error());
    }
    if (!output.streamed && name.string().size() + kTemporaryNameExtra > NAME_MAX) {
      refuse(output, fmt::format("its name is longer than {} bytes: the temporary file written beside it, then "
                                 "renamed over it, needs {} more, and a name holds {} at most",
                                 NAME_MAX - kTemporaryNameExtra, kTemporaryNameExtra, NAME_MAX));
    }
  };
  struct stat st {};
  if (::lstat(output.path.c_str(), &st) != 0) {
    const int error = errno;
    check_directory();
    if (error != ENOENT) refuse(output, std::strerror(error));
    return checked;
  }
  checked.inode = Inode(st.st_dev, st.st_ino);
  if (S_ISLNK(st.st_mode)) refuse(output, "it is a symbolic link (refused: it could point anywhere)");
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return check_node_written_in_place(output, st, std::move(checked));
  if (!S_ISREG(st.st_mode)) refuse(output, "it is " + file_type_name(st.st_mode));
  // EPERM for an immutable file, which no rename replaces either.
  if (::faccessat(AT_FDCWD, output.path.c_str(), W_OK, AT_EACCESS) != 0) refuse(output, std::strerror(errno));
  check_directory();
  return checked;
}

bool same_file(const CheckedOutput& a, const CheckedOutput& b) {
  // Two outputs on /dev/null do not overwrite each other.
  if (a.character_device && b.character_device) return false;
  if (a.inode && b.inode) return *a.inode == *b.inode;
  return a.normalised == b.normalised;
}

void refuse_inputs_among(const std::vector<CheckedOutput>& outputs, const std::vector<NamedInput>& inputs) {
  for (const auto& input : inputs) {
    struct stat st {};
    // Followed: the input was read through any link.
    if (input.path.empty() || ::stat(input.path.c_str(), &st) != 0) continue;
    for (const auto& output : outputs) {
      if (output.inode != Inode(st.st_dev, st.st_ino)) continue;
      throw UsageError(output.named->option + " " + output.named->path + " and " + input.option + " " + input.path +
                       " are the same file: an output never replaces an input");
    }
  }
}

}  // namespace

std::vector<UniqueFd> check_output_paths(const std::vector<NamedOutput>& outputs,
                                         const std::vector<NamedInput>& inputs) {
  std::vector<CheckedOutput> checked;
  for (const auto& output : outputs) {
    if (output.path == "-" && output.regular_file_only) {
      refuse(output, "it is written by renaming a new file over its path: standard output cannot take it");
    }
    if (output.path.empty() || output.path == "-") continue;  // standard output
    auto current = check_output(output);
    for (const auto& earlier : checked) {
      if (!same_file(earlier, current)) continue;
      throw UsageError(earlier.named->option + " " + earlier.named->path + " and " + output.option + " " + output.path +
                       " are the same file");
    }
    checked.push_back(std::move(current));
  }
  refuse_inputs_among(checked, inputs);
  std::vector<UniqueFd> fifos;
  for (auto& output : checked) {
    if (output.fifo.valid()) fifos.push_back(std::move(output.fifo));
  }
  return fifos;
}

}  // namespace hacoboot
