#include "recording/recording.hpp"

#include <utility>

namespace hacoboot {

PipelineConfig recorded_pipeline_config(const RecordingHeader& header, BootSinksConfig sinks) {
  sinks.phase_names = header.phase_names;
  return {
      .start_phase = header.start_phase, .command = header.command, .warmup = header.warmup, .sinks = std::move(sinks)};
}

}  // namespace hacoboot
