#include "widgets/findings/findings_panel.h"

#include "widgets/common/value_format.h"
#include "widgets/timeline/lane_plot_data.h"

#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QPushButton>
#include <QScrollBar>
#include <QSplitter>
#include <QTextBrowser>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <cmath>

namespace runlens::widgets {

QString clockTime(int64_t ns)
{
    const int64_t s = ns / 1'000'000'000;
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600 % 24, 2, 10, QLatin1Char('0'))
        .arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}

namespace {

constexpr int kListRowsKept = 5; // findings rows the list always shows

// An evidence key's unit, from its name's ending: "median_step_s" seconds, "link_capacity_bytes_per_s" bytes per
// second, "illusion_share" a fraction shown as a percentage. The label is the key without that ending.
struct EvidenceKey
{
    QString label;
    std::string unit; // for formatValue; "share": a fraction shown in percent
};

EvidenceKey evidenceKey(const QString& key)
{
    static const std::pair<QLatin1String, const char*> kSuffixes[] = {
        {QLatin1String("_bytes_per_s"), "B/s"}, {QLatin1String("_bytes"), "bytes"}, {QLatin1String("_pct"), "%"},
        {QLatin1String("_hz"), "Hz"},           {QLatin1String("_w"), "W"},         {QLatin1String("_s"), "s"}};
    EvidenceKey k{key, {}};
    for (const auto& [suffix, unit] : kSuffixes)
        if (key.endsWith(suffix) && key.size() > suffix.size()) {
            k.label = key.left(key.size() - suffix.size());
            k.unit = unit;
            break;
        }
    if (k.unit.empty() && (key.contains(QLatin1String("share")) || key.endsWith(QLatin1String("_fraction"))))
        k.unit = "share";
    k.label.replace(QLatin1Char('_'), QLatin1Char(' '));
    if (!k.label.isEmpty()) k.label[0] = k.label[0].toUpper();
    return k;
}

// An evidence value as text: numbers, yes/no, and lists of frames or kernels with their shares.
QString evidenceText(const QString& key, const QJsonValue& v)
{
    if (v.isNull() || (v.isDouble() && !std::isfinite(v.toDouble()))) return {}; // not known: the row is left out
    if (v.isBool()) return v.toBool() ? QObject::tr("yes") : QObject::tr("no");
    if (v.isDouble() && key.endsWith(QLatin1String("_ns"))) return clockTime(v.toInteger()) + QStringLiteral(" UTC");
    if (v.isDouble()) {
        const EvidenceKey k = evidenceKey(key);
        if (k.unit == "share") return QStringLiteral("%1 %").arg(100 * v.toDouble(), 0, 'f', 1);
        if (k.unit == "s" && std::abs(v.toDouble()) >= 120) // seconds as stored, and readable
            return QStringLiteral("%1 s (%2)")
                .arg(v.toDouble(), 0, 'f', 0)
                .arg(formatDuration(static_cast<int64_t>(v.toDouble() * 1e9)));
        return formatValue(v.toDouble(), k.unit);
    }
    if (v.isString()) return v.toString().toHtmlEscaped();
    if (v.isObject()) { // shares
        QStringList items;
        const QJsonObject o = v.toObject();
        for (auto it = o.begin(); it != o.end(); ++it)
            if (it.value().isDouble())
                items << QStringLiteral("%1 %2 %").arg(it.key()).arg(100 * it.value().toDouble(), 0, 'f', 0);
        return items.join(QStringLiteral(", ")).toHtmlEscaped();
    }
    if (v.isArray()) {
        QStringList items;
        for (const auto& x : v.toArray()) {
            const QJsonObject o = x.toObject();
            QString name = o.value(QStringLiteral("frame")).toString();
            if (name.isEmpty()) name = o.value(QStringLiteral("name")).toString();
            if (name.isEmpty()) name = o.value(QStringLiteral("node")).toString();
            if (name.isEmpty()) name = o.value(QStringLiteral("gpu")).toString();
            QString value;
            if (o.contains(QStringLiteral("share")))
                value = QStringLiteral("%1 %").arg(100 * o.value(QStringLiteral("share")).toDouble(), 0, 'f', 0);
            else if (o.contains(QStringLiteral("self_share")))
                value = QObject::tr("%1 % self").arg(100 * o.value(QStringLiteral("self_share")).toDouble(), 0, 'f', 0);
            else if (o.contains(QStringLiteral("total_s")))
                value = QStringLiteral("%1 s").arg(o.value(QStringLiteral("total_s")).toDouble(), 0, 'f', 2);
            else if (o.contains(QStringLiteral("median_sm_active")))
                value = QObject::tr("utilization %1 %, SM activity %2")
                            .arg(o.value(QStringLiteral("median_util_pct")).toDouble(), 0, 'f', 0)
                            .arg(o.value(QStringLiteral("median_sm_active")).toDouble(), 0, 'f', 2);
            else if (o.contains(QStringLiteral("impact")))
                value =
                    QObject::tr("%1 % of the time").arg(100 * o.value(QStringLiteral("impact")).toDouble(), 0, 'f', 1);
            if (!name.isEmpty()) items << QStringLiteral("<tt>%1</tt> %2").arg(name.toHtmlEscaped(), value);
        }
        return items.join(QStringLiteral("<br>"));
    }
    return {};
}

} // namespace

QColor severityColor(const std::string& severity)
{
    if (severity == "critical") return QColor(0xd6, 0x27, 0x28);
    if (severity == "warn") return QColor(0xf2, 0x8e, 0x2b);
    return QColor(0x4e, 0x79, 0xa7);
}

FindingsPanel::FindingsPanel(QWidget* parent) : QWidget(parent)
{
    m_list = new QTreeWidget;
    m_list->setRootIsDecorated(false);
    m_list->setUniformRowHeights(true);
    m_list->setAlternatingRowColors(true);
    m_list->setHeaderLabels({tr("Severity"), tr("Rule"), tr("Impact"), tr("Saving"), tr("Conf."), tr("Finding")});
    m_list->header()->setStretchLastSection(true);
    m_list->setToolTip(tr("Findings, primary first. Select one to show its episode on the timeline, its nodes and "
                          "evidence frames in the flame graph (Enter or double-click: zoom to it)."));
    m_details = new QTextBrowser;
    m_details->setOpenExternalLinks(false);
    m_status = new QLabel;
    m_status->setWordWrap(true);
    auto* analyze = new QPushButton(tr("Analyze again"));
    analyze->setToolTip(tr("Run every rule over the run again (the run is not changed until you keep the findings)"));
    connect(analyze, &QPushButton::clicked, this, &FindingsPanel::analyzeRequested);
    m_keep = new QPushButton(tr("Keep in run"));
    m_keep->setToolTip(
        tr("Write these findings into the run file, replacing the ones it keeps, so reports and the next "
           "opening show them (viewing never changes the file)"));
    m_keep->hide();
    connect(m_keep, &QPushButton::clicked, this, &FindingsPanel::keepRequested);
    // The status on its own row (it can be long), the buttons under it on the right: a narrow dock wraps the
    // status instead of squeezing the list.
    auto* buttons = new QHBoxLayout;
    buttons->addStretch(1);
    buttons->addWidget(m_keep);
    buttons->addWidget(analyze);
    auto* top = new QVBoxLayout;
    top->addWidget(m_status);
    top->addLayout(buttons);
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(m_list);
    split->addWidget(m_details);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    layout->addLayout(top);
    layout->addWidget(split, 1);
    connect(m_list, &QTreeWidget::currentItemChanged, this, [this] {
        const int i = current();
        showDetails(i);
        if (i >= 0) Q_EMIT findingSelected(i);
    });
    connect(m_list, &QTreeWidget::itemActivated, this, [this] {
        if (current() >= 0) Q_EMIT findingSelected(current());
    });
}

void FindingsPanel::setKeepable(bool keepable)
{
    m_keep->setVisible(keepable);
}

bool FindingsPanel::keepable() const
{
    return !m_keep->isHidden();
}

void FindingsPanel::setStatus(const QString& status)
{
    m_status->setText(status);
}

void FindingsPanel::setFindings(std::vector<analysis::Finding> findings, const QString& status)
{
    m_findings = std::move(findings);
    m_status->setText(status);
    const QSignalBlocker block(m_list);
    m_list->clear();
    for (size_t i = 0; i < m_findings.size(); ++i) {
        const analysis::Finding& f = m_findings[i];
        auto* item = new QTreeWidgetItem(m_list);
        item->setText(0, QString::fromStdString(f.severity));
        item->setForeground(0, severityColor(f.severity));
        QFont bold = item->font(0);
        bold.setBold(f.primary);
        item->setFont(0, bold);
        item->setText(1, QString::fromStdString(f.rule));
        item->setText(2, QStringLiteral("%1 %").arg(100 * f.impact, 0, 'f', 1));
        item->setTextAlignment(2, Qt::AlignRight | Qt::AlignVCenter);
        item->setText(3, QStringLiteral("%1 s").arg(f.savingS, 0, 'f', 0));
        item->setTextAlignment(3, Qt::AlignRight | Qt::AlignVCenter);
        item->setText(4, QString::number(f.confidence, 'f', 2));
        item->setText(5, QString::fromStdString(analysis::rolePrefix(f) + f.title));
        item->setToolTip(5, QString::fromStdString(f.title));
        item->setData(0, Qt::UserRole, static_cast<int>(i));
    }
    for (int c = 0; c < 5; ++c)
        m_list->resizeColumnToContents(c);
    // The list keeps room for its first rows (up to kListRowsKept) however short the dock; the details scroll.
    const int rows = std::min(m_list->topLevelItemCount(), kListRowsKept);
    const int rowHeight = m_list->topLevelItemCount() > 0 ? m_list->sizeHintForRow(0) : 0;
    m_list->setMinimumHeight(
        m_list->header()->sizeHint().height() + rows * rowHeight + 2 * m_list->frameWidth() +
        (m_list->horizontalScrollBar()->isVisible() ? m_list->horizontalScrollBar()->height() : 0) + 2);
    showDetails(-1);
    if (m_findings.empty()) m_details->setHtml(tr("<p>No findings: no rule saw a problem in this run.</p>"));
}

int FindingsPanel::current() const
{
    const QTreeWidgetItem* item = m_list->currentItem();
    return item ? item->data(0, Qt::UserRole).toInt() : -1;
}

void FindingsPanel::select(int index)
{
    if (index >= 0 && index < m_list->topLevelItemCount()) m_list->setCurrentItem(m_list->topLevelItem(index));
}

QString FindingsPanel::detailsText() const
{
    return m_details->toPlainText();
}

QString findingFactsHtml(const analysis::Finding& f)
{
    QStringList nodes;
    for (const std::string& n : f.nodes)
        nodes << QString::fromStdString(n);
    QStringList when;
    double seconds = 0;
    for (const analysis::FindingEpisode& e : f.episodes)
        seconds += static_cast<double>(e.endNs - e.startNs) / 1e9;
    for (size_t i = 0; i < f.episodes.size() && i < 6; ++i)
        when << QStringLiteral("%1–%2").arg(clockTime(f.episodes[i].startNs), clockTime(f.episodes[i].endNs));
    if (f.episodes.size() > 6) when << QObject::tr("… %1 episodes in all").arg(f.episodes.size());
    // Where: the nodes, then the GPUs it concerns or, for a rank, the rank.
    QString where = nodes.join(QStringLiteral(", "));
    if (f.evidence.value(QStringLiteral("unit_kind")).toString() == QLatin1String("rank"))
        where += QStringLiteral(", ") + f.evidence.value(QStringLiteral("unit")).toString();
    else if (f.gpus.size() == 1)
        where += QObject::tr(" (1 GPU)");
    else if (!f.gpus.empty())
        where += QObject::tr(" (%1 GPUs)").arg(f.gpus.size());
    return QObject::tr("<p><b>Where:</b> %1<br><b>When:</b> %2 UTC (%3 s)<br><b>Impact:</b> %4 % of the wall "
                       "time; removing it would save up to %5<br><b>Confidence:</b> %6%7</p>")
        .arg(where.toHtmlEscaped())
        .arg(when.join(QStringLiteral("; ")))
        .arg(seconds, 0, 'f', 0)
        .arg(100 * f.impact, 0, 'f', 1)
        .arg(f.savingS >= 120 ? QStringLiteral("%1 s (%2)")
                                    .arg(f.savingS, 0, 'f', 0)
                                    .arg(formatDuration(static_cast<int64_t>(f.savingS * 1e9)))
                              : QStringLiteral("%1 s").arg(f.savingS, 0, 'f', 0))
        .arg(f.confidence, 0, 'f', 2)
        .arg(analysis::roleOf(f) == "contributing" ? QObject::tr(" — contributing: another finding explains this time")
             : analysis::roleOf(f) == "symptom"    ? QObject::tr(" — a symptom of %1: fix that first")
                                                      .arg(QString::fromStdString(f.causedBy))
                                                      .toHtmlEscaped()
             : analysis::roleOf(f) == "mixed"
                 ? (analysis::stacksShowOtherCause(f)
                        ? QObject::tr(" — mixed: the stack samples in its episodes show another cause more than "
                                      "this one (see cause shares)")
                        : QObject::tr(" — mixed: the cause covers less than 80 % of the episodes (see cause shares)"))
                 : QString());
}

QString findingEvidenceHtml(const analysis::Finding& f)
{
    QString html = QStringLiteral("<table cellspacing='2'>");
    for (auto it = f.evidence.begin(); it != f.evidence.end(); ++it) {
        const QString text = evidenceText(it.key(), it.value());
        if (text.isEmpty()) continue;
        const QString key = it.key().endsWith(QLatin1String("_ns")) ? evidenceKey(it.key().chopped(3)).label
                                                                    : evidenceKey(it.key()).label;
        html += QStringLiteral("<tr><td valign='top' title='%1'>%2&nbsp;&nbsp;</td><td>%3</td></tr>")
                    .arg(it.key().toHtmlEscaped(), key.toHtmlEscaped(), text);
    }
    return html + QStringLiteral("</table>");
}

QString findingRecommendationHtml(const analysis::Finding& f)
{
    return QString::fromStdString(f.recommendation).toHtmlEscaped();
}

void FindingsPanel::showDetails(int index)
{
    if (index < 0 || index >= static_cast<int>(m_findings.size())) {
        m_details->clear();
        return;
    }
    const analysis::Finding& f = m_findings[static_cast<size_t>(index)];
    QString html = QStringLiteral("<h3 style='color:%1'>%2 · %3</h3><p><b>%4</b></p>")
                       .arg(severityColor(f.severity).name(), QString::fromStdString(f.severity),
                            QString::fromStdString(f.rule), QString::fromStdString(f.title).toHtmlEscaped());
    html += findingFactsHtml(f);
    html += tr("<p><b>Evidence</b></p>") + findingEvidenceHtml(f);
    html += tr("<p><b>What to change</b><br>%1</p>").arg(findingRecommendationHtml(f));
    m_details->setHtml(html);
}

} // namespace runlens::widgets
