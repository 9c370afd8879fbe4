// `runlens report` end to end: the zero3 demo's report headless (no platform named), PNG pages, a run without
// fonts, import problems by file:line. Reads the PDF back with pdftotext when it is installed.

#include "tests/cli_support.h"
#include "tests/test_support.h"

#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStandardPaths>
#include <QTemporaryDir>

using namespace runlens::test;
using namespace runlens::test::binary;

class TstCliReport : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void zero3Report()
    {
        // 2 h of the reference case on 4 nodes × 2 GPUs, analysed (findings kept in the run), then reported.
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("z3"));
        EXPECT_EXIT(zero3Demo(out), 0);
        const Run analyzed = cli({QStringLiteral("analyze"), out + QStringLiteral("/demo.runlens"),
                                  QStringLiteral("--json"), QStringLiteral("--store")});
        EXPECT_EXIT(analyzed, 0);
        const QJsonArray findings =
            QJsonDocument::fromJson(analyzed.out.toUtf8()).object().value(QStringLiteral("findings")).toArray();
        QVERIFY(!findings.isEmpty());

        // Its report, headless with no platform named: the offscreen one is chosen. The stored findings are used.
        QProcessEnvironment bare = QProcessEnvironment::systemEnvironment();
        for (const char* var : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            bare.remove(QString::fromLatin1(var));
        const QString pdf = dir.filePath(QStringLiteral("z3.pdf"));
        const Run report = cli({QStringLiteral("report"), out + QStringLiteral("/demo.runlens"), QStringLiteral("-o"),
                                pdf, QStringLiteral("--page"), QStringLiteral("letter")},
                               {}, bare);
        EXPECT_EXIT(report, 0);
        EXPECT_MATCH(report.err, QStringLiteral("^\\d+ pages, %1 findings").arg(findings.size()));
        QVERIFY(!report.err.contains(QStringLiteral("analysed for it")));
        QVERIFY(QFileInfo(pdf).size() > 20000);
        if (!QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty()) {
            QProcess text;
            text.start(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
            text.waitForFinished(kTimeoutMs);
            const QString t = QString::fromUtf8(text.readAllStandardOutput());
            for (const char* s : {"Finding 1 · critical · COMM_BOUND", "latency/sync-bound", "fetch_sub_module",
                                  "InfiniBand", "Where the time went", "CKPT_GAP", "stage3_prefetch_bucket_size"})
                QVERIFY2(t.contains(QString::fromUtf8(s)), s);
        }
        // PNG pages into a folder, only the checkpoint finding.
        const QString pages = dir.filePath(QStringLiteral("pages"));
        const Run png =
            cli({QStringLiteral("report"), out + QStringLiteral("/demo.runlens"), QStringLiteral("--format"),
                 QStringLiteral("png"), QStringLiteral("--dpi"), QStringLiteral("60"), QStringLiteral("--findings"),
                 QStringLiteral("CKPT_GAP"), QStringLiteral("-o"), pages},
                {}, bare);
        EXPECT_EXIT(png, 0);
        EXPECT_MATCH(png.err, QStringLiteral("1 finding \\(%1 of the run's\\)").arg(findings.size()));
        const QStringList files = QDir(pages).entryList({QStringLiteral("page-*.png")});
        QVERIFY(files.size() >= 3);
        QVERIFY(!QImage(QDir(pages).filePath(files.front())).isNull());
    }

    void reportWithoutFonts()
    {
        // No font file at all: a clear failure, not a report of empty boxes.
        QTemporaryDir dir;
        const QString run = dir.filePath(QStringLiteral("r.runlens"));
        EXPECT_EXIT(
            cli({QStringLiteral("import"), QStringLiteral("-o"), run,
                 qs(writeFile(dir, QStringLiteral("n.csv"), nvsmiCsv(1, 120) + "2026/01/01 00:10:00.000, 0, H200\n"))}),
            0);
        const QString conf =
            qs(writeFile(dir, QStringLiteral("fonts.conf"),
                         "<?xml version=\"1.0\"?>\n<fontconfig><cachedir>" +
                             dir.filePath(QStringLiteral("fc")).toStdString() + "</cachedir></fontconfig>\n"));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("FONTCONFIG_FILE"), conf);
        const QString pdf = dir.filePath(QStringLiteral("r.pdf"));
        const Run r = cli({QStringLiteral("report"), run, QStringLiteral("-o"), pdf}, {}, env);
        EXPECT_EXIT(r, 1);
        EXPECT_MATCH(r.err, QStringLiteral("no usable font .*install a font package"));
        QVERIFY(!QFileInfo::exists(pdf));
        // With the fonts: a report of a run without stacks or SM activity, its import problem by file:line.
        const Run ok = cli({QStringLiteral("report"), run, QStringLiteral("-o"), pdf});
        EXPECT_EXIT(ok, 0);
        QVERIFY(QFileInfo(pdf).size() > 5000);
        if (QStandardPaths::findExecutable(QStringLiteral("pdftotext")).isEmpty()) return;
        QProcess text;
        text.start(QStringLiteral("pdftotext"), {pdf, QStringLiteral("-")});
        text.waitForFinished(kTimeoutMs);
        const QString t = QString::fromUtf8(text.readAllStandardOutput());
        EXPECT_MATCH(t, QStringLiteral("n\\.csv:122"));
        for (const char* s : {"What the run lacks", "no SM activity", "no timed stack samples", "1 problems"})
            QVERIFY2(t.contains(QString::fromUtf8(s)), s);
    }
};

QTEST_GUILESS_MAIN(TstCliReport)
#include "tst_cli_report.moc"
