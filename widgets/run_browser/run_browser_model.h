#pragma once

// The run browser: a tree over a RunCatalog, nodes → devices → series, every item checkable. Unchecking a
// series (or a node or device, which unchecks what is under it) hides it in the timeline: the model emits the
// list of hidden series. Built from the catalog value alone; it never reads the database.

#include "analysis/timeline/run_catalog.h"

#include <QAbstractItemModel>
#include <cstdint>
#include <memory>
#include <vector>

namespace runlens::widgets {

class RunBrowserModel : public QAbstractItemModel
{
    Q_OBJECT
public:
    enum class ItemKind
    {
        Node,
        Device,
        Series
    };
    enum Role
    {
        SeriesIdRole = Qt::UserRole + 1, // qint64, series only
        KindRole,                        // int(ItemKind)
    };
    enum Column
    {
        NameColumn,
        PointsColumn,
        ColumnCount
    };

    explicit RunBrowserModel(QObject* parent = nullptr);

    void setCatalog(std::shared_ptr<const timeline::RunCatalog> catalog); // everything checked
    std::shared_ptr<const timeline::RunCatalog> catalog() const { return m_catalog; }

    std::vector<int64_t> hiddenSeries() const;                   // ascending
    void setHiddenSeries(const std::vector<int64_t>& seriesIds); // unknown ids are ignored; emits no signal
    // The series of an item (null for nodes and devices) and the index of a series.
    const store::SeriesInfo* seriesAt(const QModelIndex& index) const;
    QModelIndex indexOfSeries(int64_t seriesId) const;

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    void hiddenSeriesChanged(const std::vector<int64_t>& hiddenSeries); // after a check box was toggled

private:
    struct Item
    {
        ItemKind kind = ItemKind::Node;
        QString label;
        QString toolTip;
        int parent = -1; // index in m_items; -1 = top level
        int row = 0;     // among its parent's children
        std::vector<int> children;
        const store::SeriesInfo* series = nullptr;
        bool checked = true; // series only; nodes and devices derive theirs
        int64_t points = 0;  // series: its points; others: over their series
    };
    int itemOf(const QModelIndex& index) const { return static_cast<int>(index.internalId()); }
    QModelIndex indexOfItem(int item, int column = 0) const;
    Qt::CheckState checkState(int item) const;
    void setChecked(int item, bool checked);
    void emitChangedUpwards(int item);
    int addItem(Item item);

    std::shared_ptr<const timeline::RunCatalog> m_catalog;
    std::vector<Item> m_items;
    std::vector<int> m_topLevel;
};

} // namespace runlens::widgets
