// The report: its sections and figures read back from the PDF (pdftotext / pdfinfo / pdffonts when installed,
// else the writer's own page count and headings), PNG pages, the restrictions, and runs that lack stacks or SM
// activity saying so instead of failing.

#include "analysis/report/report_model.h"
#include "rules_support.h"
#include "test_support.h"
#include "widgets/report/report_renderer.h"

#include <QApplication>
#include <QImage>
#include <QProcess>
#include <QStandardPaths>
#include <QTest>

using namespace runlens;
using namespace runlens::test::rules;

namespace {

QString pdfText(const QString& pdf)
{
    QProcess p;
    p.start(QStringLiteral("pdftotext"), {QStringLiteral("-layout"), pdf, QStringLiteral("-")});
    p.waitForFinished(60000);
    return QString::fromUtf8(p.readAllStandardOutput());
}

QString tool(const QString& name, const QStringList& args)
{
    QProcess p;
    p.start(name, args);
    p.waitForFinished(60000);
    return QString::fromUtf8(p.readAllStandardOutput());
}

bool have(const char* tool)
{
    return !QStandardPaths::findExecutable(QString::fromLatin1(tool)).isEmpty();
}

} // namespace

class TestReport : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void pdfHasTheSectionsAndFigures();
    void runWithoutStacksOrSmSaysWhatIsMissing();
    void restrictions();
    void pngPagesAtTheChosenDpi();
    void letterPages();
    void realRunFlameFigures();
};

void TestReport::pdfHasTheSectionsAndFigures()
{
    QTemporaryDir dir;
    const auto db = writeRun(dir, checkpointRun(true, true));
    QVERIFY(db);
    const std::string run = dir.filePath(QStringLiteral("r.runlens")).toStdString();
    auto model = analysis::buildReportModel(run, {});
    QVERIFY2(model, model ? "" : model.error().toString().c_str());
    QVERIFY(model->analysisFresh); // nothing was stored: analysed for the report …
    QCOMPARE(model->findings.size(), model->findingsInRun);
    QVERIFY(!model->findings.empty());
    const auto ckpt = std::find_if(model->findings.begin(), model->findings.end(),
                                   [](const analysis::ReportFinding& f) { return f.finding.rule == "CKPT_GAP"; });
    QVERIFY(ckpt != model->findings.end());
    // Its flame graph is of the first stall, focused on the checkpoint frame the finding names.
    QVERIFY(ckpt->flame.tree);
    QVERIFY(ckpt->flame.focus > 0);
    QVERIFY2(ckpt->flame.focusPath.find("save") != std::string::npos, ckpt->flame.focusPath.c_str());
    QVERIFY(ckpt->timeline.frame);
    QVERIFY(!ckpt->timeline.spans.empty());
    QCOMPARE(ckpt->timeline.lanes.front().id, std::string("gpu_util"));
    QVERIFY(std::any_of(ckpt->timeline.lanes.begin(), ckpt->timeline.lanes.end(),
                        [](const auto& l) { return l.id == "storage"; }));
    QCOMPARE(model->keyMetrics.size(), size_t(1));
    QVERIFY(std::abs(model->keyMetrics[0].smActive - 0.7) < 0.01);
    QVERIFY(model->keyMetrics[0].utilPct > 90);
    // … and not kept: a report never changes the run unless asked (storeAnalysis, report --store) …
    auto again = analysis::buildReportModel(run, {});
    QVERIFY(again);
    QVERIFY(again->analysisFresh);
    analysis::ReportOptions keep;
    keep.storeAnalysis = true;
    auto kept = analysis::buildReportModel(run, keep);
    QVERIFY(kept && kept->analysisFresh);
    // … then the next report uses the stored findings.
    auto fourth = analysis::buildReportModel(run, {});
    QVERIFY(fourth && !fourth->analysisFresh);
    QCOMPARE(fourth->findings.size(), model->findings.size());
    analysis::ReportOptions rerun;
    rerun.reanalyze = true; // the rules run again all the same
    auto third = analysis::buildReportModel(run, rerun);
    QVERIFY(third);
    QVERIFY(third->analysisFresh);
    QCOMPARE(third->findings.size(), model->findings.size());

    const QString pdf = dir.filePath(QStringLiteral("report.pdf"));
    auto result = widgets::renderReport(*model, pdf, false, {});
    QVERIFY2(result, result ? "" : result.error().toString().c_str());
    QVERIFY(QFileInfo(pdf).size() > 10000);
    QVERIFY(result->pages >= 4);
    for (const char* h : {"Summary", "The run", "Where the time went", "Key metrics per node", "The run at a glance",
                          "Findings", "Appendix A · Rule parameters", "Appendix B · Sources and import diagnostics"})
        QVERIFY2(result->headings.contains(QString::fromUtf8(h)), h);
    QVERIFY(std::any_of(result->headings.begin(), result->headings.end(),
                        [](const QString& h) { return h.contains(QStringLiteral("CKPT_GAP")); }));
    if (!have("pdftotext") || !have("pdfinfo"))
        QSKIP("pdftotext / pdfinfo (poppler-utils) not installed: checked the writer only");
    const QString text = pdfText(pdf);
    for (const char* s :
         {"Performance report: r.runlens", "Summary", "Where the time went", "goodput", "Key metrics per node",
          "The run at a glance", "Findings", "CKPT_GAP", "What to change", "Evidence", "Appendix A · Rule parameters",
          "ckpt_gap.overlap", "Appendix B · Sources and import diagnostics", "GPU utilization vs SM activity",
          "Storage", "focused on"})
        QVERIFY2(text.contains(QString::fromUtf8(s)), s);
    // The flame figure's blocks are text too: the checkpoint frames are in it.
    QVERIFY(text.contains(QStringLiteral("save_checkpoint")));
    const QString info = tool(QStringLiteral("pdfinfo"), {pdf});
    QVERIFY2(info.contains(QRegularExpression(QStringLiteral("Pages:\\s+%1\\b").arg(result->pages))), qPrintable(info));
    // A4 or Letter by the locale.
    QVERIFY2(info.contains(QRegularExpression(QStringLiteral("595(\\.\\d+)? x 842(\\.\\d+)? pts"))) ||
                 info.contains(QStringLiteral("612 x 792 pts")),
             qPrintable(info));
    if (have("pdffonts")) {
        const QString fonts = tool(QStringLiteral("pdffonts"), {pdf});
        const QStringList lines = fonts.split(QLatin1Char('\n'), Qt::SkipEmptyParts).mid(2);
        QVERIFY(!lines.isEmpty());
        for (const QString& line : lines) // name type encoding emb sub uni …: every font embedded
            QVERIFY2(line.contains(QRegularExpression(QStringLiteral("\\byes\\s+(yes|no)\\s+(yes|no)\\s+\\d+"))),
                     qPrintable(line));
    }
}

void TestReport::runWithoutStacksOrSmSaysWhatIsMissing()
{
    QTemporaryDir dir;
    const auto db = writeRun(dir, checkpointRun(false, false));
    QVERIFY(db);
    auto model = analysis::buildReportModel(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {});
    QVERIFY(model);
    QCOMPARE(model->stackSamples, int64_t(0));
    QVERIFY(!std::isfinite(model->keyMetrics.at(0).smActive));
    for (const analysis::ReportFinding& f : model->findings)
        QVERIFY(!f.flame.tree);
    const QString pdf = dir.filePath(QStringLiteral("bare.pdf"));
    auto result = widgets::renderReport(*model, pdf, false, {});
    QVERIFY(result);
    QVERIFY(result->headings.contains(QStringLiteral("Where the time went")));
    if (!have("pdftotext")) QSKIP("pdftotext not installed");
    const QString text = pdfText(pdf);
    QVERIFY(text.contains(QStringLiteral("What the run lacks")));
    QVERIFY(text.contains(QStringLiteral("no SM activity")));
    QVERIFY(text.contains(QStringLiteral("no stack samples")));
    QVERIFY(text.contains(QStringLiteral("not recorded"))); // SM and tensor activity in the key metrics
}

void TestReport::restrictions()
{
    QTemporaryDir dir;
    const auto db = writeRun(dir, checkpointRun(true, true));
    QVERIFY(db);
    const std::string run = dir.filePath(QStringLiteral("r.runlens")).toStdString();
    auto all = analysis::buildReportModel(run, {});
    QVERIFY(all);
    const size_t total = all->findings.size();
    QVERIFY(total >= 1);
    // By rule.
    analysis::ReportOptions byRule;
    byRule.findings = {"CKPT_GAP"};
    auto ckpt = analysis::buildReportModel(run, byRule);
    QVERIFY(ckpt);
    QCOMPARE(ckpt->findings.size(), size_t(1));
    QCOMPARE(ckpt->findings[0].finding.rule, std::string("CKPT_GAP"));
    QCOMPARE(ckpt->findingsInRun, total);
    // By number: the same numbering as analyze's.
    analysis::ReportOptions byNumber;
    byNumber.findings = {std::to_string(ckpt->findings[0].number)};
    auto one = analysis::buildReportModel(run, byNumber);
    QVERIFY(one);
    QCOMPARE(one->findings.size(), size_t(1));
    QCOMPARE(one->findings[0].finding.rule, std::string("CKPT_GAP"));
    // A window holding the first two stalls only (at 280–300 s and 580–600 s): only those episodes.
    analysis::ReportOptions window = byRule;
    window.fromNs = kStart + 200 * kSecond;
    window.toNs = kStart + 650 * kSecond;
    auto windowed = analysis::buildReportModel(run, window);
    QVERIFY(windowed);
    QCOMPARE(windowed->findings.size(), size_t(1));
    QCOMPARE(windowed->findings[0].finding.episodes.size(), size_t(2));
    QVERIFY(windowed->windowed);
    QCOMPARE(windowed->overview.fromNs, *window.fromNs);
    // A window before any stall: no finding, and the report says so.
    window.toNs = kStart + 250 * kSecond;
    auto none = analysis::buildReportModel(run, window);
    QVERIFY(none);
    QVERIFY(none->findings.empty());
    const QString pdf = dir.filePath(QStringLiteral("none.pdf"));
    auto result = widgets::renderReport(*none, pdf, false, {});
    QVERIFY(result);
    if (have("pdftotext")) QVERIFY(pdfText(pdf).contains(QStringLiteral("No findings in what this report covers")));
    // An unknown node is a usage error naming it.
    analysis::ReportOptions nodes;
    nodes.nodes = {"node7"};
    auto bad = analysis::buildReportModel(run, nodes);
    QVERIFY(!bad);
    QCOMPARE(bad.error().code, ErrorCode::Usage);
    QVERIFY(bad.error().message.find("node7") != std::string::npos);
}

void TestReport::pngPagesAtTheChosenDpi()
{
    QTemporaryDir dir;
    const auto db = writeRun(dir, checkpointRun(true, true));
    QVERIFY(db);
    auto model = analysis::buildReportModel(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {});
    QVERIFY(model);
    widgets::ReportPageSetup setup;
    setup.pageSize = QPageSize(QPageSize::A4);
    setup.dpi = 72;
    const QString folder = dir.filePath(QStringLiteral("pages"));
    setup.figureFolder = dir.filePath(QStringLiteral("figures"));
    auto result = widgets::renderReport(*model, folder, true, setup);
    QVERIFY(result);
    QCOMPARE(QDir(folder).entryList({QStringLiteral("page-*.png")}).size(), result->pages);
    // Each figure on its own too: the waterfall, the overview, and per finding its timeline (and flame graph).
    const QStringList figures = QDir(setup.figureFolder).entryList({QStringLiteral("figure-*.png")});
    QVERIFY2(figures.size() >= 3, qPrintable(figures.join(QLatin1Char(' '))));
    QVERIFY(figures.contains(QStringLiteral("figure-01-waterfall.png")));
    QVERIFY(std::any_of(figures.begin(), figures.end(),
                        [](const QString& f) { return f.endsWith(QStringLiteral("-flame.png")); }));
    const QImage waterfall(QDir(setup.figureFolder).filePath(QStringLiteral("figure-01-waterfall.png")));
    QVERIFY(waterfall.width() > 450 &&
            waterfall.width() < 560); // the content width (about 673 units of 1/96 in) at 72 dpi
    QCOMPARE(result->files.size(), result->pages + figures.size());
    const QImage first(QDir(folder).filePath(QStringLiteral("page-001.png")));
    QVERIFY(!first.isNull());
    QVERIFY(std::abs(first.width() - 595) <= 1); // A4 at 72 dpi: 595 × 842
    QVERIFY(std::abs(first.height() - 842) <= 1);
    // Not blank: ink on the title page.
    int dark = 0;
    for (int y = 0; y < first.height(); y += 2)
        for (int x = 0; x < first.width(); x += 2)
            dark += qGray(first.pixel(x, y)) < 128 ? 1 : 0;
    QVERIFY(dark > 500);
}

void TestReport::letterPages()
{
    if (!have("pdfinfo")) QSKIP("pdfinfo not installed");
    QTemporaryDir dir;
    const auto db = writeRun(dir, checkpointRun(false, true));
    QVERIFY(db);
    auto model = analysis::buildReportModel(dir.filePath(QStringLiteral("r.runlens")).toStdString(), {});
    QVERIFY(model);
    widgets::ReportPageSetup setup;
    setup.pageSize = QPageSize(QPageSize::Letter);
    const QString pdf = dir.filePath(QStringLiteral("letter.pdf"));
    QVERIFY(widgets::renderReport(*model, pdf, false, setup));
    QVERIFY(tool(QStringLiteral("pdfinfo"), {pdf}).contains(QStringLiteral("612 x 792 pts")));
}

void TestReport::realRunFlameFigures()
{
    // The H200 run's metrics and stacks: the input stall's own work (heavy_input_prep, a leaf) highlighted in the
    // episode's whole graph, the checkpoint's flame focused on the torch.save call path.
    const QString fixtures = test::fixturesDir();
    if (fixtures.isEmpty()) QSKIP("../shared/fixtures is absent");
    QTemporaryDir dir;
    auto db = importFixture(dir, fixtures + QStringLiteral("/h200-gloo-small/"),
                            {"stacks-rank0.speedscope.json", "stacks-rank1.speedscope.json"});
    QVERIFY(db);
    db.reset();
    auto model = analysis::buildReportModel(dir.filePath(QStringLiteral("f.runlens")).toStdString(), {});
    QVERIFY2(model, model ? "" : model.error().toString().c_str());
    bool input = false, checkpoint = false;
    for (const analysis::ReportFinding& rf : model->findings) {
        if (rf.finding.rule == "INPUT_STALL") {
            input = true;
            QVERIFY(rf.flame.tree);
            QCOMPARE(rf.flame.evidenceFrame, std::string("heavy_input_prep"));
            QVERIFY(rf.flame.highlight);
            QVERIFY(rf.flame.highlight->share > 0.2);
        }
        if (rf.finding.rule == "CKPT_GAP") {
            checkpoint = true;
            QVERIFY(rf.flame.tree);
            QVERIFY(rf.flame.focus > 0 || rf.flame.highlight);
            QVERIFY2(rf.flame.evidenceFrame.find("save") != std::string::npos, rf.flame.evidenceFrame.c_str());
        }
    }
    QVERIFY(input && checkpoint);
    QVERIFY(widgets::renderReport(*model, dir.filePath(QStringLiteral("h200.pdf")), false, {}));
}

int main(int argc, char** argv)
{
    QApplication app(argc, argv);
    TestReport t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_report.moc"
