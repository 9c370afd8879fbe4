#include "app/gui/import_plan_model.h"

#include <QBrush>
#include <QComboBox>
#include <QPalette>

namespace runlens::app {

namespace {

QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

const QString kNodeSetHere = QStringLiteral("set in the import dialog");

} // namespace

ImportPlanModel::ImportPlanModel(QObject* parent) : QAbstractTableModel(parent) {}

void ImportPlanModel::setPlan(std::vector<importers::PlannedFile> plan)
{
    beginResetModel();
    m_plan = std::move(plan);
    endResetModel();
}

int ImportPlanModel::importableCount() const
{
    int n = 0;
    for (const importers::PlannedFile& f : m_plan)
        if (f.importer && !f.readError) ++n;
    return n;
}

int ImportPlanModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(m_plan.size());
}

int ImportPlanModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant ImportPlanModel::data(const QModelIndex& index, int role) const
{
    if (!index.isValid() || index.row() >= rowCount()) return {};
    const importers::PlannedFile& f = m_plan[index.row()];
    const QString problem = f.readError          ? qs(f.readError->toString())
                            : !f.problem.empty() ? qs(f.problem)
                                                 : qs(f.nodeProblem);
    if (role == Qt::DisplayRole || role == Qt::EditRole) {
        switch (index.column()) {
        case FileColumn:
            return qs(f.displayPath);
        case FormatColumn:
            return f.importer ? qs(std::string(f.importer->format())) : (role == Qt::EditRole ? QString() : tr("?"));
        case ConfidenceColumn:
            return f.importer ? QVariant(f.confidence) : QVariant();
        case NodeColumn:
            return qs(f.node);
        case NodeSourceColumn:
            return qs(f.nodeSource);
        case ProblemColumn:
            return problem;
        default:
            return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        if (index.column() == FileColumn) return qs(f.path);
        if (index.column() == FormatColumn && f.importer) return qs(std::string(f.importer->description()));
        if (index.column() == ProblemColumn) return problem;
    }
    if (role == Qt::ForegroundRole && (!f.importer || f.readError))
        return QPalette().brush(QPalette::Disabled, QPalette::Text);
    if (role == Qt::TextAlignmentRole && index.column() == ConfidenceColumn)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

bool ImportPlanModel::setData(const QModelIndex& index, const QVariant& value, int role)
{
    if (!index.isValid() || role != Qt::EditRole) return false;
    importers::PlannedFile& f = m_plan[index.row()];
    if (index.column() == FormatColumn) {
        const std::string format = value.toString().toStdString();
        const importers::Importer* importer = format.empty() ? nullptr : importers::importerByFormat(format);
        if (!format.empty() && !importer) return false;
        f.importer = importer;
        f.confidence = importer ? 100 : 0;
        f.problem = importer ? std::string() : std::string("no format chosen");
    } else if (index.column() == NodeColumn) {
        const std::string node = value.toString().trimmed().toStdString();
        if (node.empty() || node == f.node) return false;
        f.node = node;
        f.nodeSource = kNodeSetHere.toStdString();
        f.nodeProblem.clear(); // the user decided
    } else {
        return false;
    }
    Q_EMIT dataChanged(this->index(index.row(), 0), this->index(index.row(), ColumnCount - 1));
    return true;
}

Qt::ItemFlags ImportPlanModel::flags(const QModelIndex& index) const
{
    if (!index.isValid()) return Qt::NoItemFlags;
    Qt::ItemFlags f = Qt::ItemIsEnabled | Qt::ItemIsSelectable;
    const bool readable = !m_plan[index.row()].readError;
    if (readable && (index.column() == FormatColumn || index.column() == NodeColumn)) f |= Qt::ItemIsEditable;
    return f;
}

QVariant ImportPlanModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
    case FileColumn:
        return tr("File");
    case FormatColumn:
        return tr("Format");
    case ConfidenceColumn:
        return tr("Confidence");
    case NodeColumn:
        return tr("Node");
    case NodeSourceColumn:
        return tr("Node from");
    case ProblemColumn:
        return tr("Problem");
    default:
        return {};
    }
}

QWidget* FormatDelegate::createEditor(QWidget* parent, const QStyleOptionViewItem&, const QModelIndex&) const
{
    auto* combo = new QComboBox(parent);
    combo->addItem(tr("(do not import)"), QString());
    for (const importers::Importer* i : importers::allImporters()) {
        const QString format = QString::fromStdString(std::string(i->format()));
        combo->addItem(format, format);
        combo->setItemData(combo->count() - 1, QString::fromStdString(std::string(i->description())), Qt::ToolTipRole);
    }
    return combo;
}

void FormatDelegate::setEditorData(QWidget* editor, const QModelIndex& index) const
{
    auto* combo = static_cast<QComboBox*>(editor);
    const int i = combo->findData(index.data(Qt::EditRole).toString());
    combo->setCurrentIndex(i < 0 ? 0 : i);
}

void FormatDelegate::setModelData(QWidget* editor, QAbstractItemModel* model, const QModelIndex& index) const
{
    auto* combo = static_cast<QComboBox*>(editor);
    model->setData(index, combo->currentData(), Qt::EditRole);
}

} // namespace runlens::app
