#pragma once

// Trace import throughput: one large PyTorch profiler (Kineto) trace, written by the demo's trace writer
// (at least 200 MB, a few MB in quick mode), imported by `runlens import` as a separate process.

#include <string>

namespace runlens::bench {

// Generates the trace under dir, imports it (the median of a few runs), prints a table row and returns the
// import throughput in MB/s of trace text; 0 when the import failed or stored less than it read.
double benchTraceImport(const std::string& dir, bool quick);

} // namespace runlens::bench
