#include "importers/prometheus/prom_json_importer.h"

namespace runlens::importers {

int PromJsonImporter::sniff(const SniffInput&) const { return 0; }
std::optional<std::string> PromJsonImporter::hostLabel(const SniffInput&) const { return std::nullopt; }
Status PromJsonImporter::run(ImportContext&) const { return makeError(ErrorCode::Unsupported, "prometheus-json: not available yet"); }

} // namespace runlens::importers
