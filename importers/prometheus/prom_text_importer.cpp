#include "importers/prometheus/prom_text_importer.h"

namespace runlens::importers {

int PromTextImporter::sniff(const SniffInput&) const { return 0; }
std::optional<std::string> PromTextImporter::hostLabel(const SniffInput&) const { return std::nullopt; }
Status PromTextImporter::run(ImportContext&) const { return makeError(ErrorCode::Unsupported, "prometheus-text: not available yet"); }

} // namespace runlens::importers
