#pragma once

// The ReportWriter implementations, one file each; make_report_writer picks.

#include <memory>
#include <string>

#include "report/report.hpp"

namespace hacoboot {

std::unique_ptr<ReportWriter> make_table_writer(TableDetail detail);
std::unique_ptr<ReportWriter> make_bpftrace_writer();
std::unique_ptr<ReportWriter> make_json_writer();
std::unique_ptr<ReportWriter> make_tsv_writer();

}  // namespace hacoboot
