#include "importers/dcgm/dcgmi_dmon_importer.h"

namespace runlens::importers {

int DcgmiDmonImporter::sniff(const SniffInput&) const { return 0; }
std::optional<std::string> DcgmiDmonImporter::hostLabel(const SniffInput&) const { return std::nullopt; }
Status DcgmiDmonImporter::run(ImportContext&) const { return makeError(ErrorCode::Unsupported, "dcgmi-dmon: not available yet"); }

} // namespace runlens::importers
