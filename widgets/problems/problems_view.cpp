#include "widgets/problems/problems_view.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace runlens::widgets {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QString count(int64_t n)
{
    return QLocale().toString(static_cast<qlonglong>(n));
}

} // namespace

ProblemsView::ProblemsView(QWidget* parent)
    : QWidget(parent), m_summary(new QLabel(this)), m_tree(new QTreeWidget(this))
{
    m_tree->setColumnCount(ColumnCount);
    m_tree->setHeaderLabels(
        {tr("Import / problem"), tr("Kind"), tr("Format"), tr("Node"), tr("Points"), tr("Samples")});
    m_tree->setUniformRowHeights(true);
    m_tree->setAlternatingRowColors(true);
    m_tree->header()->setSectionResizeMode(WhatColumn, QHeaderView::Interactive);
    m_tree->header()->resizeSection(WhatColumn, 420);
    m_summary->setWordWrap(true);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_tree);
    setImports({});
}

void ProblemsView::setImports(const std::vector<timeline::ImportProblems>& imports)
{
    m_tree->clear();
    int64_t total = 0, dataLoss = 0;
    for (const timeline::ImportProblems& p : imports) {
        const store::ImportInfo& im = p.import;
        total += im.diagnostics;
        dataLoss += im.dataLoss;
        auto* top = new QTreeWidgetItem(m_tree);
        top->setText(WhatColumn, qs(im.path));
        top->setToolTip(WhatColumn, qs(im.summary));
        top->setText(KindColumn, im.diagnostics == 0   ? tr("no problems")
                                 : im.diagnostics == 1 ? tr("1 problem")
                                                       : tr("%1 problems").arg(count(im.diagnostics)));
        top->setText(FormatColumn, qs(im.format));
        top->setText(NodeColumn, qs(im.node));
        top->setText(PointsColumn, count(im.points));
        top->setText(SamplesColumn, count(im.samples));
        top->setTextAlignment(PointsColumn, Qt::AlignRight | Qt::AlignVCenter);
        top->setTextAlignment(SamplesColumn, Qt::AlignRight | Qt::AlignVCenter);
        for (const auto& [kind, n] : p.counts) {
            auto* k = new QTreeWidgetItem(top);
            k->setText(WhatColumn, tr("%1 × %2").arg(count(n), qs(kind)));
            k->setText(KindColumn, qs(kind));
            for (const store::DiagnosticInfo& d : p.first) {
                if (d.kind != kind) continue;
                auto* item = new QTreeWidgetItem(k);
                item->setText(WhatColumn, qs(d.where.toString()) + QStringLiteral(": ") + qs(d.message));
                item->setToolTip(WhatColumn, item->text(WhatColumn));
                item->setText(KindColumn, qs(d.kind));
            }
            const int64_t shown = k->childCount();
            if (n > shown) {
                auto* more = new QTreeWidgetItem(k);
                more->setText(WhatColumn,
                              tr("… %1 more not stored (the first of each kind are kept)").arg(count(n - shown)));
                more->setDisabled(true);
            }
        }
        if (im.diagnostics > 0) top->setExpanded(true);
    }
    m_summary->setText(imports.empty() ? tr("No imports.")
                                       : tr("%1 imports, %2 problems, %3 of them dropped input.")
                                             .arg(imports.size())
                                             .arg(count(total), count(dataLoss)));
}

} // namespace runlens::widgets
