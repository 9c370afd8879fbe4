#pragma once

// Prometheus text exposition 0.0.4 and OpenMetrics 1.0 (docs/formats.md §4-6): one scrape or many concatenated (an
// exporter polled with curl in a loop), samples routed to canonical series by PromSeriesRouter.
// - Timestamps: the first one decides the file's unit: seconds (OpenMetrics) when it has a fraction or exponent,
//   follows `# UNIT`/`# EOF`, or is below 1e11; else milliseconds (0.0.4).
// - Samples without a timestamp: at option time= (ISO 8601 or Unix seconds), else at the file's modification time
//   (an estimate, reported). A snapshot ends where a metric seen in it starts again; later snapshots need option
//   interval=SECONDS (without time= the last one is placed at the modification time).
// - Text after `# EOF` is read as another exposition appended to the file (reported, not dropped).

#include "importers/importer.h"

namespace runlens::importers {

class PromTextImporter final : public Importer
{
public:
    std::string_view format() const override { return "prometheus-text"; }
    std::string_view description() const override
    {
        return "Prometheus text exposition 0.0.4 and OpenMetrics (one scrape or many concatenated; dcgm-exporter, "
               "node_exporter). docs/formats.md §4-6.";
    }
    int version() const override { return 1; }
    int sniff(const SniffInput& input) const override;
    std::optional<std::string> hostLabel(const SniffInput& input) const override;
    Status run(ImportContext& context) const override;
};

} // namespace runlens::importers
