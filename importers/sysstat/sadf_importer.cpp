#include "importers/sysstat/sadf_importer.h"

namespace runlens::importers {

int SadfImporter::sniff(const SniffInput&) const { return 0; }
std::optional<std::string> SadfImporter::hostLabel(const SniffInput&) const { return std::nullopt; }
Status SadfImporter::run(ImportContext&) const { return makeError(ErrorCode::Unsupported, "sadf-csv: not available yet"); }

} // namespace runlens::importers
