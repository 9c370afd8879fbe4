#include "widgets/details/details_panel.h"

#include "widgets/common/value_format.h"

#include <QDateTime>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLocale>
#include <QTimeZone>
#include <QVBoxLayout>
#include <cmath>
#include <cstdlib>

namespace runlens::widgets {

namespace {

constexpr int64_t kNsPerMs = 1'000'000;
const QString kNone = QStringLiteral("—");

} // namespace

DetailsPanel::DetailsPanel(QWidget* parent) : QWidget(parent)
{
    QGroupBox* view = addGroup(tr("Timeline"), {{&m_range, tr("Visible")},
                                                {&m_rangeSpan, tr("Span")},
                                                {&m_selection, tr("Selection")},
                                                {&m_selectionSpan, tr("Duration")},
                                                {&m_cursor, tr("Cursor")}});
    QGroupBox* series = addGroup(tr("Series"), {{&m_seriesName, tr("Metric")},
                                                {&m_seriesUnit, tr("Unit")},
                                                {&m_seriesSource, tr("Source")},
                                                {&m_seriesPoints, tr("Points")},
                                                {&m_seriesMissing, tr("Missing")},
                                                {&m_seriesMinMax, tr("Min / max")},
                                                {&m_seriesFirst, tr("First")},
                                                {&m_seriesLast, tr("Last")}});

    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(view);
    layout->addWidget(series);
    layout->addStretch();
    clear();
}

QGroupBox* DetailsPanel::addGroup(const QString& title, std::initializer_list<Row> rows)
{
    auto* group = new QGroupBox(title, this);
    auto* form = new QFormLayout(group);
    for (const Row& row : rows) {
        auto* label = new QLabel(kNone);
        label->setTextInteractionFlags(Qt::TextSelectableByMouse);
        label->setWordWrap(true);
        form->addRow(row.name, label);
        *row.label = label;
    }
    return group;
}

void DetailsPanel::clear()
{
    for (QLabel* l : {m_range, m_rangeSpan, m_selection, m_selectionSpan, m_cursor})
        l->setText(kNone);
    setSeries(nullptr, {}, {});
}

void DetailsPanel::setRunStart(int64_t startNs)
{
    m_startNs = startNs;
}

QString DetailsPanel::formatTime(int64_t ns, int64_t startNs)
{
    const int64_t ms = ns / kNsPerMs;
    const QString absolute =
        QDateTime::fromMSecsSinceEpoch(ms, QTimeZone::utc()).toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz"));
    const QString offset = formatOffset(ns - startNs);
    return absolute + QStringLiteral(" UTC (") + offset + QLatin1Char(')');
}

QString DetailsPanel::formatDuration(int64_t ns)
{
    const double s = static_cast<double>(ns) / 1e9;
    if (s < 1) return QStringLiteral("%1 ms").arg(static_cast<double>(ns) / 1e6, 0, 'f', 1);
    if (s < 60) return QStringLiteral("%1 s").arg(s, 0, 'f', 3);
    const auto minutes = static_cast<int64_t>(s / 60);
    if (minutes < 60) return QStringLiteral("%1 min %2 s").arg(minutes).arg(s - 60.0 * minutes, 0, 'f', 1);
    return QStringLiteral("%1 h %2 min").arg(minutes / 60).arg(minutes % 60);
}

void DetailsPanel::setRange(TimeRange range)
{
    m_range->setText(formatTime(range.fromNs, m_startNs) + QStringLiteral("\n→ ") + formatTime(range.toNs, m_startNs));
    m_rangeSpan->setText(formatDuration(range.span()));
}

void DetailsPanel::setSelection(std::optional<TimeRange> selection)
{
    if (!selection) {
        m_selection->setText(tr("none (Shift-drag on the timeline)"));
        m_selectionSpan->setText(kNone);
        return;
    }
    m_selection->setText(formatTime(selection->fromNs, m_startNs) + QStringLiteral("\n→ ") +
                         formatTime(selection->toNs, m_startNs));
    m_selectionSpan->setText(formatDuration(selection->span()));
}

void DetailsPanel::setCursor(std::optional<int64_t> ns)
{
    m_cursor->setText(ns ? formatTime(*ns, m_startNs) : kNone);
}

QString DetailsPanel::rangeText() const
{
    return m_range->text();
}

QString DetailsPanel::selectionText() const
{
    return m_selection->text() + QLatin1Char('\n') + m_selectionSpan->text();
}

void DetailsPanel::setSeries(const store::SeriesInfo* s, const QString& node, const QString& device)
{
    if (!s) {
        m_seriesName->setText(tr("pick a series in the run browser"));
        for (QLabel* l : {m_seriesUnit, m_seriesSource, m_seriesPoints, m_seriesMissing, m_seriesMinMax, m_seriesFirst,
                          m_seriesLast})
            l->setText(kNone);
        return;
    }
    const auto qs = [](const std::string& x) { return QString::fromStdString(x); };
    QString name = qs(s->metric) + QStringLiteral("  ·  ") + node;
    if (!device.isEmpty()) name += QLatin1Char(' ') + device;
    if (!s->labels.empty()) name += QStringLiteral("\n{") + qs(s->labels) + QLatin1Char('}');
    m_seriesName->setText(name);
    m_seriesUnit->setText(s->unit.empty() ? kNone : qs(s->unit));
    m_seriesSource->setText(qs(s->source) + QStringLiteral(" (") + qs(s->rawName) + QLatin1Char(')'));
    m_seriesPoints->setText(QLocale().toString(static_cast<qlonglong>(s->points)));
    const double missingPct = s->points > 0 ? 100.0 * static_cast<double>(s->missingPoints) / s->points : 0.0;
    m_seriesMissing->setText(QStringLiteral("%1 (%2 %)")
                                 .arg(QLocale().toString(static_cast<qlonglong>(s->missingPoints)))
                                 .arg(missingPct, 0, 'f', 1));
    m_seriesMinMax->setText(
        s->minValue && s->maxValue
            ? QStringLiteral("%1 / %2").arg(formatValue(*s->minValue, s->unit), formatValue(*s->maxValue, s->unit))
            : kNone);
    m_seriesFirst->setText(s->firstNs ? formatTime(*s->firstNs, m_startNs) : kNone);
    m_seriesLast->setText(s->lastNs ? formatTime(*s->lastNs, m_startNs) : kNone);
}

} // namespace runlens::widgets
