#pragma once

// The `runlens` binary run end to end: QProcess (no shell) with its exit code, stdout and stderr, the checks on
// them, and inputs the tests write (nvidia-smi CSV). Shared by tst_cli and tst_cli_report.

#include "tests/test_support.h"

#include <QProcess>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QString>
#include <QStringList>
#include <QTest>
#include <string>

namespace runlens::test::binary {

inline constexpr int kTimeoutMs = 120'000;

struct Run
{
    int exitCode = -1; // -2: timed out, -3: crashed
    QString out;
    QString err;
    QString describe() const
    {
        return QStringLiteral("exit %1\n--- stdout:\n%2\n--- stderr:\n%3").arg(exitCode).arg(out, err);
    }
};

inline Run cli(const QStringList& args, const QString& workingDir = {},
               const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment())
{
    QProcess p;
    p.setProcessEnvironment(env);
    p.setProgram(QStringLiteral(RUNLENS_BINARY));
    p.setArguments(args);
    if (!workingDir.isEmpty()) p.setWorkingDirectory(workingDir);
    p.start();
    Run r;
    if (!p.waitForStarted(kTimeoutMs)) {
        r.err = QStringLiteral("cannot start ") + QStringLiteral(RUNLENS_BINARY);
        return r;
    }
    if (!p.waitForFinished(kTimeoutMs)) {
        p.kill();
        p.waitForFinished(kTimeoutMs);
        r.exitCode = -2;
    } else {
        r.exitCode = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -3;
    }
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err += QString::fromUtf8(p.readAllStandardError());
    return r;
}

#define EXPECT_EXIT(run, code)                                                                                         \
    do {                                                                                                               \
        const bool exitOk_ = (run).exitCode == (code);                                                                 \
        QVERIFY2(exitOk_, qPrintable(QStringLiteral("expected exit %1, got ").arg(code) + (run).describe()));          \
    } while (false)
#define EXPECT_MATCH(text, pattern)                                                                                    \
    do {                                                                                                               \
        const bool matched_ = QRegularExpression(pattern, QRegularExpression::MultilineOption).match(text).hasMatch(); \
        QVERIFY2(matched_, qPrintable(QStringLiteral("/%1/ not found in:\n%2").arg(pattern, text)));                   \
    } while (false)

// The reference case (DESIGN §1) written by `runlens demo` into the folder out: 2 h of the zero3 scenario on
// 4 nodes × 2 GPUs, the run in out/demo.runlens.
inline Run zero3Demo(const QString& out)
{
    return cli({QStringLiteral("demo"), QStringLiteral("--scenario"), QStringLiteral("zero3"), QStringLiteral("--gpus"),
                QStringLiteral("2"), QStringLiteral("--hours"), QStringLiteral("2"), QStringLiteral("--no-gui"),
                QStringLiteral("-o"), out});
}

using runlens::test::nvsmiCsv; // (test_support.h)

inline QString qs(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace runlens::test::binary
