#pragma once

// The problems of a run's imports, from the catalog: per import its file, format, node, points and samples,
// then the counts per diagnostic kind and every stored occurrence as "file:line: message".

#include "analysis/timeline/run_catalog.h"

#include <QWidget>
#include <vector>

class QLabel;
class QTreeWidget;

namespace runlens::widgets {

class ProblemsView : public QWidget
{
    Q_OBJECT
public:
    enum Column
    {
        WhatColumn,
        KindColumn,
        FormatColumn,
        NodeColumn,
        PointsColumn,
        SamplesColumn,
        ColumnCount
    };

    explicit ProblemsView(QWidget* parent = nullptr);

    void setImports(const std::vector<timeline::ImportProblems>& imports);
    QTreeWidget* tree() const { return m_tree; }

private:
    QLabel* m_summary;
    QTreeWidget* m_tree;
};

} // namespace runlens::widgets
