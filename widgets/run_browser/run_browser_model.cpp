#include "widgets/run_browser/run_browser_model.h"

#include <QLocale>
#include <algorithm>
#include <map>

namespace runlens::widgets {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

QString seriesLabel(const store::SeriesInfo& s)
{
    QString label = qs(s.metric);
    if (!s.labels.empty()) label += QStringLiteral(" {") + qs(s.labels) + QLatin1Char('}');
    return label;
}

} // namespace

RunBrowserModel::RunBrowserModel(QObject* parent) : QAbstractItemModel(parent) {}

int RunBrowserModel::addItem(Item item)
{
    const int id = static_cast<int>(m_items.size());
    std::vector<int>& siblings = item.parent < 0 ? m_topLevel : m_items[item.parent].children;
    item.row = static_cast<int>(siblings.size());
    siblings.push_back(id);
    m_items.push_back(std::move(item));
    return id;
}

void RunBrowserModel::setCatalog(std::shared_ptr<const timeline::RunCatalog> catalog)
{
    beginResetModel();
    m_catalog = std::move(catalog);
    m_items.clear();
    m_topLevel.clear();
    if (m_catalog) {
        // Built with maps rather than the catalog's lookups, so the tree is one pass over each vector.
        std::map<int64_t, int> nodeItem, deviceItem;
        for (const store::NodeInfo& n : m_catalog->nodes) {
            Item item;
            item.kind = ItemKind::Node;
            item.label = qs(n.name);
            item.toolTip = QStringLiteral("%1 (named by %2)").arg(qs(n.name), qs(n.nameSource));
            nodeItem[n.id] = addItem(std::move(item));
        }
        for (const store::DeviceInfo& d : m_catalog->devices) {
            auto node = nodeItem.find(d.nodeId);
            if (node == nodeItem.end()) continue;
            Item item;
            item.kind = ItemKind::Device;
            item.parent = node->second;
            item.label = d.name.empty() ? qs(d.kind) : qs(d.kind) + QLatin1Char(':') + qs(d.name);
            for (const auto& [key, value] : d.attributes)
                item.toolTip += (item.toolTip.isEmpty() ? QString() : QStringLiteral("\n")) + qs(key) +
                                QStringLiteral(": ") + qs(value);
            deviceItem[d.id] = addItem(std::move(item));
        }
        for (const store::SeriesInfo& s : m_catalog->series) {
            // A series of no known device hangs under its node.
            int parentItem = -1;
            if (auto d = deviceItem.find(s.deviceId); d != deviceItem.end())
                parentItem = d->second;
            else if (auto n = nodeItem.find(s.nodeId); n != nodeItem.end())
                parentItem = n->second;
            if (parentItem < 0) continue;
            Item item;
            item.kind = ItemKind::Series;
            item.parent = parentItem;
            item.label = seriesLabel(s);
            item.toolTip = QStringLiteral("%1 [%2] from %3\nraw name: %4")
                               .arg(qs(s.metric), qs(s.unit), qs(s.source), qs(s.rawName));
            item.series = &s;
            item.points = s.points;
            const int id = addItem(std::move(item));
            for (int p = parentItem; p >= 0; p = m_items[p].parent)
                m_items[p].points += m_items[id].points;
        }
    }
    endResetModel();
}

std::vector<int64_t> RunBrowserModel::hiddenSeries() const
{
    std::vector<int64_t> out;
    for (const Item& item : m_items)
        if (item.series && !item.checked) out.push_back(item.series->id);
    std::sort(out.begin(), out.end());
    return out;
}

void RunBrowserModel::setHiddenSeries(const std::vector<int64_t>& seriesIds)
{
    for (size_t i = 0; i < m_items.size(); ++i) {
        Item& item = m_items[i];
        if (!item.series) continue;
        const bool checked = std::find(seriesIds.begin(), seriesIds.end(), item.series->id) == seriesIds.end();
        if (checked == item.checked) continue;
        item.checked = checked;
        emitChangedUpwards(static_cast<int>(i));
    }
}

const store::SeriesInfo* RunBrowserModel::seriesAt(const QModelIndex& index) const
{
    return index.isValid() && index.model() == this ? m_items[itemOf(index)].series : nullptr;
}

QModelIndex RunBrowserModel::indexOfSeries(int64_t seriesId) const
{
    for (size_t i = 0; i < m_items.size(); ++i)
        if (m_items[i].series && m_items[i].series->id == seriesId) return indexOfItem(static_cast<int>(i));
    return {};
}

QModelIndex RunBrowserModel::indexOfItem(int item, int column) const
{
    return createIndex(m_items[item].row, column, static_cast<quintptr>(item));
}

QModelIndex RunBrowserModel::index(int row, int column, const QModelIndex& parent) const
{
    if (row < 0 || column < 0 || column >= ColumnCount) return {};
    if (parent.isValid() && parent.column() != 0) return {};
    const std::vector<int>& children = parent.isValid() ? m_items[itemOf(parent)].children : m_topLevel;
    if (row >= static_cast<int>(children.size())) return {};
    return indexOfItem(children[row], column);
}

QModelIndex RunBrowserModel::parent(const QModelIndex& child) const
{
    if (!child.isValid()) return {};
    const int p = m_items[itemOf(child)].parent;
    return p < 0 ? QModelIndex() : indexOfItem(p);
}

int RunBrowserModel::rowCount(const QModelIndex& parent) const
{
    if (!parent.isValid()) return static_cast<int>(m_topLevel.size());
    if (parent.column() != 0) return 0;
    return static_cast<int>(m_items[itemOf(parent)].children.size());
}

int RunBrowserModel::columnCount(const QModelIndex&) const
{
    return ColumnCount;
}

Qt::CheckState RunBrowserModel::checkState(int item) const
{
    const Item& it = m_items[item];
    if (it.series) return it.checked ? Qt::Checked : Qt::Unchecked;
    if (it.children.empty()) return Qt::Checked;
    bool any = false, all = true;
    for (int c : it.children) {
        const Qt::CheckState s = checkState(c);
        any = any || s != Qt::Unchecked;
        all = all && s == Qt::Checked;
    }
    return all ? Qt::Checked : any ? Qt::PartiallyChecked : Qt::Unchecked;
}

QVariant RunBrowserModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid()) return {};
    const Item& item = m_items[itemOf(index)];
    if (index.column() == NameColumn) {
        switch (role) {
        case Qt::DisplayRole:
            return item.label;
        case Qt::ToolTipRole:
            if (item.points == 0) return item.toolTip;
            return (item.toolTip.isEmpty() ? QString() : item.toolTip + QLatin1Char('\n')) +
                   tr("%1 points").arg(QLocale().toString(static_cast<qlonglong>(item.points)));
        case Qt::CheckStateRole:
            return checkState(itemOf(index));
        default:
            break;
        }
    } else if (index.column() == PointsColumn) {
        if (role == Qt::DisplayRole) return QLocale().toString(static_cast<qlonglong>(item.points));
        if (role == Qt::TextAlignmentRole) return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role == SeriesIdRole && item.series) return QVariant::fromValue<qint64>(item.series->id);
    if (role == KindRole) return static_cast<int>(item.kind);
    return {};
}

void RunBrowserModel::setChecked(int item, bool checked)
{
    Item& it = m_items[item];
    if (it.series) it.checked = checked;
    for (int c : it.children)
        setChecked(c, checked);
    if (!it.children.empty()) {
        const QModelIndex first = indexOfItem(it.children.front()), last = indexOfItem(it.children.back());
        Q_EMIT dataChanged(first, last, {Qt::CheckStateRole});
    }
}

void RunBrowserModel::emitChangedUpwards(int item)
{
    for (int i = item; i >= 0; i = m_items[i].parent) {
        const QModelIndex idx = indexOfItem(i);
        Q_EMIT dataChanged(idx, idx, {Qt::CheckStateRole});
    }
}

bool RunBrowserModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || index.column() != NameColumn || role != Qt::CheckStateRole) return false;
    const bool checked = value.value<Qt::CheckState>() != Qt::Unchecked;
    const std::vector<int64_t> before = hiddenSeries();
    setChecked(itemOf(index), checked);
    emitChangedUpwards(itemOf(index));
    const std::vector<int64_t> after = hiddenSeries();
    if (after != before) Q_EMIT hiddenSeriesChanged(after);
    return true;
}

Qt::ItemFlags RunBrowserModel::flags(const QModelIndex& index) const
{
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    if (index.column() == NameColumn) f |= Qt::ItemIsUserCheckable;
    if (m_items[itemOf(index)].children.empty()) f |= Qt::ItemNeverHasChildren;
    return f;
}

QVariant RunBrowserModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case NameColumn:
        return tr("Node / device / series");
    case PointsColumn:
        return tr("Points");
    default:
        return {};
    }
}

} // namespace runlens::widgets
