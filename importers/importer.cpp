#include "importers/importer.h"

#include "importers/folded/folded_importer.h"
#include "importers/nvsmi/nvsmi_query_importer.h"

#include <QJsonDocument>
#include <QJsonObject>

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

Status ImportContext::checkpoint()
{
    if (!progress) return okStatus();
    if (progress->cancel && progress->cancel->load(std::memory_order_relaxed))
        return makeError(ErrorCode::Cancelled, "import cancelled", lines.location());
    if (progress->report) progress->report(lines.input().rawBytesRead(), lines.input().rawSize());
    return okStatus();
}

const std::vector<const Importer*>& allImporters()
{
    static const NvsmiQueryImporter nvsmiQuery;
    static const FoldedImporter folded;
    static const std::vector<const Importer*> all{&nvsmiQuery, &folded};
    return all;
}

const Importer* importerByFormat(std::string_view format)
{
    for (const Importer* i : allImporters())
        if (i->format() == format) return i;
    return nullptr;
}

} // namespace runlens::importers
