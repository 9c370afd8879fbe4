#include "importers/nvsmi/nvsmi_dmon_importer.h"

namespace runlens::importers {

int NvsmiDmonImporter::sniff(const SniffInput&) const { return 0; }
std::optional<std::string> NvsmiDmonImporter::hostLabel(const SniffInput&) const { return std::nullopt; }
Status NvsmiDmonImporter::run(ImportContext&) const { return makeError(ErrorCode::Unsupported, "nvidia-smi-dmon: not available yet"); }

} // namespace runlens::importers
