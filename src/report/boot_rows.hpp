#pragma once

#include <cstdint>
#include <iosfwd>

#include "model/boot.hpp"
#include "model/phases.hpp"

namespace hacoboot {

// Streams one row per boot milestone (each phase, execve, listen), a boot at
// a time, flushed so that an interrupted run keeps every boot it saw. TSV
// with a header line, or JSON lines with the same fields.
class BootRowWriter {
 public:
  enum class Format : std::uint8_t { Tsv, Jsonl };

  BootRowWriter(std::ostream& out, Format format, PhaseNames names);

  void write(const BootRecord& boot);

 private:
  std::ostream& out_;
  Format format_;
  PhaseNames names_;
};

}  // namespace hacoboot
