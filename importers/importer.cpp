#include "importers/importer.h"

#include "importers/dcgm/dcgmi_dmon_importer.h"
#include "importers/diagnostic_kinds.h"
#include "importers/folded/folded_importer.h"
#include "importers/generic/generic_importer.h"
#include "importers/generic/wide_csv_importer.h"
#include "importers/nvsmi/nvsmi_dmon_importer.h"
#include "importers/nvsmi/nvsmi_query_importer.h"
#include "importers/perf/perf_script_importer.h"
#include "importers/prometheus/prom_json_importer.h"
#include "importers/prometheus/prom_text_importer.h"
#include "importers/speedscope/speedscope_importer.h"
#include "importers/sysstat/sadf_importer.h"
#include "importers/sysstat/sar_text_importer.h"
#include "importers/trace/chrome_trace_importer.h"
#include "importers/trainer/hf_trainer_state_importer.h"
#include "importers/trainer/llamafactory_log_importer.h"
#include "importers/trainer/megatron_deepspeed_log_importer.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <fmt/format.h>

namespace runlens::importers {

std::string ImportOptions::toJson() const
{
    QJsonObject o;
    auto put = [&](const char* key, const std::string& value) {
        if (!value.empty()) o.insert(QLatin1String(key), QString::fromStdString(value));
    };
    put("format", format);
    put("node", node);
    put("time_zone", timeZone);
    for (const auto& [k, v] : extra)
        o.insert(QString::fromStdString(k), QString::fromStdString(v));
    return QJsonDocument(o).toJson(QJsonDocument::Compact).toStdString();
}

Expected<bool> ImportContext::nextLine(Line& line, bool countSkipped)
{
    for (;;) {
        RUNLENS_ASSIGN_OR_RETURN(const bool more, lines.next(line));
        if (!more || !line.tooLong) return more;
        if (countSkipped) ++rowsRead;
        report(diag::kLineTooLong, 0, fmt::format("line of more than {} bytes dropped", line.text.size()));
    }
}

Status ImportContext::checkpoint()
{
    if (!progress) return okStatus();
    if (progress->cancel && progress->cancel->load(std::memory_order_relaxed))
        return makeError(ErrorCode::Cancelled, "import cancelled", lines.location());
    if (progress->report) progress->report(lines.input().rawBytesRead(), lines.input().rawSize());
    return okStatus();
}

std::string nodeNameFromLabel(std::string_view label)
{
    std::string_view s = label;
    if (!s.empty() && s.front() == '[') { // [IPv6]:port
        const size_t close = s.find(']');
        if (close != std::string_view::npos) return std::string(s.substr(1, close - 1));
    }
    const size_t colon = s.rfind(':');
    if (colon != std::string_view::npos && s.find(':') == colon && colon + 1 < s.size() &&
        s.find_first_not_of("0123456789", colon + 1) == std::string_view::npos)
        s = s.substr(0, colon);
    return std::string(s);
}

Expected<int64_t> ImportContext::nodeFor(std::string_view hostLabel)
{
    if (!options.node.empty() || hostLabel.empty()) return nodeId;
    const std::string name = nodeNameFromLabel(hostLabel);
    if (name == nodeName || (!keptHostLabel.empty() && name == nodeNameFromLabel(keptHostLabel))) return nodeId;
    return writer.node(name, "host label", options.timeZone);
}

const std::vector<const Importer*>& allImporters()
{
    static const NvsmiQueryImporter nvsmiQuery;
    static const NvsmiDmonImporter nvsmiDmon;
    static const DcgmiDmonImporter dcgmiDmon;
    static const PromTextImporter promText;
    static const PromJsonImporter promJson;
    static const SadfImporter sadf;
    static const SarTextImporter sarText;
    static const GenericMetricsImporter generic;
    static const SpeedscopeImporter speedscope;
    static const ChromeTraceImporter chromeTrace;
    static const PerfScriptImporter perfScript;
    static const FoldedImporter folded;
    static const WideCsvImporter wideCsv;
    static const LlamaFactoryLogImporter llamaFactoryLog;
    static const HfTrainerStateImporter hfTrainerState;
    static const MegatronDeepSpeedLogImporter megatronDeepSpeedLog;
    static const std::vector<const Importer*> all{
        &nvsmiQuery,     &nvsmiDmon,           &dcgmiDmon,   &promText,   &promJson, &sadf,    &sarText,
        &generic,        &speedscope,          &chromeTrace, &perfScript, &folded,   &wideCsv, &llamaFactoryLog,
        &hfTrainerState, &megatronDeepSpeedLog};
    return all;
}

const Importer* importerByFormat(std::string_view format)
{
    for (const Importer* i : allImporters())
        if (i->format() == format) return i;
    return nullptr;
}

} // namespace runlens::importers
