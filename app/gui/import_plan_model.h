#pragma once

// The files an import will read, as planned (planImport): file, detected format, confidence, node and why,
// and what is wrong. The format and the node can be changed before importing; the model hands the edited plan
// back as values for the import worker.

#include "importers/import_session.h"

#include <QAbstractTableModel>
#include <QStyledItemDelegate>
#include <vector>

namespace runlens::app {

class ImportPlanModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column
    {
        FileColumn,
        FormatColumn,
        ConfidenceColumn,
        NodeColumn,
        NodeSourceColumn,
        ProblemColumn,
        ColumnCount
    };

    explicit ImportPlanModel(QObject* parent = nullptr);

    void setPlan(std::vector<importers::PlannedFile> plan);
    const std::vector<importers::PlannedFile>& plan() const { return m_plan; }
    int importableCount() const; // recognised and readable

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::vector<importers::PlannedFile> m_plan;
};

// The format column's editor: a combo box of every known format.
class FormatDelegate : public QStyledItemDelegate
{
    Q_OBJECT
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    QWidget* createEditor(QWidget* parent, const QStyleOptionViewItem& option, const QModelIndex& index) const override;
    void setEditorData(QWidget* editor, const QModelIndex& index) const override;
    void setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const override;
};

} // namespace runlens::app
