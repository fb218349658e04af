#include "capture/usdt_notes.hpp"

#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "util/errors.hpp"
#include "util/unique_fd.hpp"

namespace hacoboot {
namespace {

constexpr Elf64_Word kStapsdtNoteType = 3;

#ifdef __x86_64__
constexpr int kNativeMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kNativeMachine = EM_AARCH64;
#else
#error "hacoboot: add this architecture's ELF machine"
#endif

struct ElfCloser {
  void operator()(Elf* elf) const { elf_end(elf); }
};

Failure malformed(const std::string& path, const std::string& why) {
  return Failure{path + ": " + why};
}

struct LoadSegment {
  std::uint64_t address;
  std::uint64_t size;
  std::uint64_t file_offset;
};

// Offset in the file of a link-time address: through the loadable segment
// holding it, as the kernel maps the file. 0 when no segment does.
std::uint64_t file_offset_of(std::uint64_t address, const std::vector<LoadSegment>& segments) {
  for (const auto& segment : segments) {
    if (address >= segment.address && address - segment.address < segment.size) {
      return address - segment.address + segment.file_offset;
    }
  }
  return 0;
}

// A stapsdt note's payload: three addresses (site, .stapsdt.base when the
// note was written, semaphore), then three NUL-terminated strings.
UsdtProbe parse_note(const char* desc, std::size_t size, std::optional<std::uint64_t> base_section,
                     const std::vector<LoadSegment>& segments) {
  UsdtProbe probe;
  constexpr std::size_t kAddresses = 3 * sizeof(std::uint64_t);
  if (size <= kAddresses) return probe;
  std::uint64_t note_base = 0;
  std::memcpy(&probe.address, desc, sizeof(std::uint64_t));
  std::memcpy(&note_base, desc + sizeof(std::uint64_t), sizeof(std::uint64_t));
  std::memcpy(&probe.semaphore, desc + 2 * sizeof(std::uint64_t), sizeof(std::uint64_t));
  // A prelinked binary moved its code after the notes were written: the
  // .stapsdt.base section moved with it, and tells by how much.
  const std::uint64_t shift = base_section && note_base != 0 ? *base_section - note_base : 0;
  probe.file_offset = file_offset_of(probe.address + shift, segments);
  if (probe.semaphore != 0) probe.semaphore_file_offset = file_offset_of(probe.semaphore, segments);
  const char* cursor = desc + kAddresses;
  const char* end = desc + size;
  for (std::string* field : {&probe.provider, &probe.name, &probe.arguments}) {
    const auto* nul = static_cast<const char*>(std::memchr(cursor, '\0', static_cast<std::size_t>(end - cursor)));
    if (nul == nullptr) return UsdtProbe{};
    field->assign(cursor, nul);
    cursor = nul + 1;
    if (cursor >= end) break;
  }
  return probe;
}

using ElfHandle = std::unique_ptr<Elf, ElfCloser>;

// `path` opened as a native 64-bit ELF file, or why it is not one. A libelf
// that does not work is no fault of the file: it throws RuntimeError.
Expected<ElfHandle> open_native_elf(const std::string& path, int fd) {
  if (elf_version(EV_CURRENT) == EV_NONE) throw RuntimeError(std::string("libelf: ") + elf_errmsg(-1));
  ElfHandle elf(elf_begin(fd, ELF_C_READ, nullptr));
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF) return malformed(path, "not an ELF file");
  GElf_Ehdr header{};
  if (gelf_getehdr(elf.get(), &header) == nullptr) return malformed(path, "unreadable ELF header");
  if (header.e_ident[EI_CLASS] != ELFCLASS64) {
    return malformed(path, "is a 32-bit ELF; only 64-bit binaries can be traced");
  }
  if (header.e_machine != kNativeMachine) {
    return malformed(path, "is built for another architecture than this machine");
  }
  return elf;
}

std::vector<LoadSegment> load_segments(Elf* elf) {
  std::vector<LoadSegment> segments;
  std::size_t program_headers = 0;
  if (elf_getphdrnum(elf, &program_headers) != 0) return segments;
  for (std::size_t i = 0; i < program_headers; ++i) {
    GElf_Phdr phdr{};
    if (gelf_getphdr(elf, static_cast<int>(i), &phdr) != nullptr && phdr.p_type == PT_LOAD) {
      segments.push_back({phdr.p_vaddr, phdr.p_filesz, phdr.p_offset});
    }
  }
  return segments;
}

// The next section after `after` (nullptr: from the start) named `wanted`,
// its header in `header`; nullptr when there is none.
Elf_Scn* find_section(Elf* elf, Elf_Scn* after, std::size_t section_names, const char* wanted, GElf_Shdr& header) {
  for (Elf_Scn* section = elf_nextscn(elf, after); section != nullptr; section = elf_nextscn(elf, section)) {
    if (gelf_getshdr(section, &header) == nullptr) continue;
    const char* name = elf_strptr(elf, section_names, header.sh_name);
    if (name != nullptr && std::strcmp(name, wanted) == 0) return section;
  }
  return nullptr;
}

// Appends the probes of the .note.stapsdt section `data`, in note order.
void parse_notes(Elf_Data* data, std::optional<std::uint64_t> base_section, const std::vector<LoadSegment>& segments,
                 std::vector<UsdtProbe>& probes) {
  GElf_Nhdr note{};
  std::size_t name_offset = 0;
  std::size_t desc_offset = 0;
  for (std::size_t offset = 0; (offset = gelf_getnote(data, offset, &note, &name_offset, &desc_offset)) != 0;) {
    if (note.n_type != kStapsdtNoteType) continue;
    const auto* bytes = static_cast<const char*>(data->d_buf);
    if (auto probe = parse_note(bytes + desc_offset, note.n_descsz, base_section, segments); !probe.name.empty()) {
      probes.push_back(std::move(probe));
    }
  }
}

}  // namespace

std::vector<UsdtProbe> read_usdt_probes(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw UsageError(path + ": " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw UsageError(path + ": is a directory, not the haconiwa binary");
  if (!S_ISREG(st.st_mode)) throw UsageError(path + ": is not a regular file");
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw UsageError(path + ": " + std::strerror(errno));
  return value_or_throw<UsageError>(read_usdt_probes(fd.get(), path));
}

Expected<std::vector<UsdtProbe>> read_usdt_probes(int fd, const std::string& path) {
  const auto opened = open_native_elf(path, fd);
  if (!opened) return Failure{opened.error()};
  const auto& elf = *opened;
  std::size_t section_names = 0;
  if (elf_getshdrstrndx(elf.get(), &section_names) != 0) return malformed(path, "unreadable ELF section names");
  std::optional<std::uint64_t> base_section;
  GElf_Shdr header{};
  if (find_section(elf.get(), nullptr, section_names, ".stapsdt.base", header) != nullptr) {
    base_section = header.sh_addr;
  }
  const auto segments = load_segments(elf.get());
  std::vector<UsdtProbe> probes;
  for (Elf_Scn* notes = nullptr; (notes = find_section(elf.get(), notes, section_names, ".note.stapsdt", header));) {
    Elf_Data* data = header.sh_type == SHT_NOTE ? elf_getdata(notes, nullptr) : nullptr;
    if (data != nullptr) parse_notes(data, base_section, segments, probes);
  }
  return probes;
}

}  // namespace hacoboot
