#include "importers/generic/generic_importer.h"

namespace runlens::importers {

int GenericMetricsImporter::sniff(const SniffInput&) const { return 0; }
std::optional<std::string> GenericMetricsImporter::hostLabel(const SniffInput&) const { return std::nullopt; }
Status GenericMetricsImporter::run(ImportContext&) const { return makeError(ErrorCode::Unsupported, "metrics-csv: not available yet"); }

} // namespace runlens::importers
