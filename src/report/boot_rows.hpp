#pragma once

#include <cstdint>
#include <iosfwd>

#include "model/boot.hpp"
#include "model/boot_analysis.hpp"
#include "model/phases.hpp"

namespace hacoboot {

// Streams one row per boot milestone (each phase, execve, listen), a boot at
// a time, flushed so that an interrupted run keeps every boot it saw. TSV
// with a header line, or JSON lines with the same fields (and, on execve and
// listen rows, the pieces of the boot's critical path to them).
class BootRowWriter {
 public:
  enum class Format : std::uint8_t { Tsv, Jsonl };

  BootRowWriter(std::ostream& out, Format format, PhaseNames names);

  void write(const BootRecord& boot);
  // `analysis` is analyse_boot(boot): its lanes, states and paths fill the
  // columns after `end`.
  void write(const BootRecord& boot, const BootAnalysis& analysis);

 private:
  std::ostream& out_;
  Format format_;
  PhaseNames names_;
};

}  // namespace hacoboot
