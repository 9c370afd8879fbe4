// The bad-input corpus (tests/bad_inputs/, described in its README.md): truncated, corrupt, enormous and crafted
// inputs of every format RunLens reads, and crafted run files, one per row of cases.tsv with the command that opens
// it and what it must say. Each case runs the real `runlens` binary on a copy of its input and must end with the
// expected exit status and message, leave the input's bytes as they were and no file beside it, end before the hang
// timeout and, in a build without sanitizers, peak under 200 MB. Wall time and peak memory are printed per case
// (never asserted: the machine may be loaded) and the largest of each at the end.
//
// The children run two or more at a time from initTestCase, spawned from this small process (posix_spawn, so each
// one's rusage is its own); each data row then checks one case's outcome.

#include "tests/test_support.h"

#include <QByteArray>
#include <QCryptographicHash>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QHash>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <functional>
#include <map>
#include <poll.h>
#include <spawn.h>
#include <sqlite3.h>
#include <string>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include <zlib.h>

extern char** environ;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// A case still running after this hangs (sanitizers slow RunLens down about threefold).
constexpr qint64 kHangTimeoutMs = kSanitized ? 60'000 : 20'000;
// Peak resident memory of one case (the requirement: under 200 MB).
constexpr long kMaxPeakKiB = 200'000'000 / 1024;

const QString kCorpus = QStringLiteral(RUNLENS_BAD_INPUTS_DIR);

struct Outcome
{
    QString setupError; // the case could not be prepared or started
    int exit = -1;
    int signal = 0; // killed by this signal (not the hang timeout)
    bool timedOut = false;
    double seconds = 0;
    long peakKiB = 0;
    QByteArray output; // stdout then stderr
    QByteArray hashBefore, hashAfter;
    QStringList leftovers; // files beside the input that were not there before (a journal, a half-made run)
};

struct Case
{
    QString file;
    QStringList args; // {input}, {run}, {good} stand for the copied input, a new run, a copy of base-run/gpu.csv
    int exit = 0;
    QString expected;
    int line = 0; // of cases.tsv
    QString name; // the data row's
    Outcome outcome;
};

QByteArray readAll(const QString& path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeAll(const QString& path, const QByteArray& bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

QByteArray sha256(const QString& path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    QCryptographicHash h(QCryptographicHash::Sha256);
    h.addData(&f);
    return h.result().toHex();
}

// Words separated by blanks; "double quotes" keep blanks inside one word (a query's SQL).
QStringList splitCommand(const QString& text)
{
    QStringList out;
    QString word;
    bool quoted = false, any = false;
    for (const QChar c : text) {
        if (c == QLatin1Char('"')) {
            quoted = !quoted;
            any = true;
        } else if (c == QLatin1Char(' ') && !quoted) {
            if (any) out << word;
            word.clear();
            any = false;
        } else {
            word += c;
            any = true;
        }
    }
    if (any) out << word;
    return out;
}

// --- Inputs made at test time: too large to keep in the repository, or binary SQLite content ------------------

std::string varint(uint64_t v)
{
    return runlens::test::varintBytes(v);
}

// SQL functions for the .sql recipes of crafted runs: varint(N) and zstd_rle_frame(HEAD, FILL) as blobs.
void sqlVarint(sqlite3_context* ctx, int, sqlite3_value** argv)
{
    const std::string b = varint(static_cast<uint64_t>(sqlite3_value_int64(argv[0])));
    sqlite3_result_blob(ctx, b.data(), static_cast<int>(b.size()), SQLITE_TRANSIENT);
}

void sqlZstdRleFrame(sqlite3_context* ctx, int, sqlite3_value** argv)
{
    const auto* head = static_cast<const char*>(sqlite3_value_blob(argv[0]));
    const std::string frame =
        runlens::test::zstdFrame(std::string(head ? head : "", static_cast<size_t>(sqlite3_value_bytes(argv[0]))),
                                 static_cast<uint64_t>(sqlite3_value_int64(argv[1])));
    sqlite3_result_blob(ctx, frame.data(), static_cast<int>(frame.size()), SQLITE_TRANSIENT);
}

// A copy of the base run with the recipe's SQL applied, as someone crafting a file would (no RunLens in between).
QString runFromRecipe(const QString& baseRun, const QString& recipe, const QString& target)
{
    QFile::remove(target);
    if (!QFile::copy(baseRun, target)) return QStringLiteral("cannot copy the base run");
    sqlite3* db = nullptr;
    QString error;
    if (sqlite3_open(target.toUtf8().constData(), &db) != SQLITE_OK) error = QStringLiteral("cannot open the copy");
    sqlite3_create_function_v2(db, "varint", 1, SQLITE_UTF8, nullptr, sqlVarint, nullptr, nullptr, nullptr);
    sqlite3_create_function_v2(db, "zstd_rle_frame", 2, SQLITE_UTF8, nullptr, sqlZstdRleFrame, nullptr, nullptr,
                               nullptr);
    char* message = nullptr;
    if (error.isEmpty() && sqlite3_exec(db, readAll(recipe).constData(), nullptr, nullptr, &message) != SQLITE_OK)
        error = QStringLiteral("%1: %2").arg(recipe, QString::fromUtf8(message ? message : "error"));
    sqlite3_free(message);
    if (sqlite3_close(db) != SQLITE_OK && error.isEmpty()) error = QStringLiteral("cannot close the copy");
    return error;
}

// A gzip file of head, `fill` bytes of `c`, then tail, written a MiB at a time: this process stays small, since a
// child started from it counts this process's peak memory as its own (Linux carries the peak across exec).
bool writeGzip(const QString& path, const std::string& head, size_t fill, char c, const std::string& tail)
{
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
    z_stream zs{};
    if (deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
    std::vector<char> out(1 << 16);
    bool ok = true;
    const auto feed = [&](const char* data, size_t size, int flush) {
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
        zs.avail_in = static_cast<uInt>(size);
        do {
            zs.next_out = reinterpret_cast<Bytef*>(out.data());
            zs.avail_out = static_cast<uInt>(out.size());
            deflate(&zs, flush);
            const auto n = static_cast<qint64>(out.size() - zs.avail_out);
            ok = ok && f.write(out.data(), n) == n;
        } while (zs.avail_out == 0);
    };
    feed(head.data(), head.size(), Z_NO_FLUSH);
    const std::string piece(std::size_t{1} << 20, c);
    for (size_t left = fill; left > 0;) {
        const size_t n = std::min(left, piece.size());
        feed(piece.data(), n, Z_NO_FLUSH);
        left -= n;
    }
    feed(tail.data(), tail.size(), Z_FINISH);
    deflateEnd(&zs);
    return ok;
}

// Inputs the runner writes, by case file name, into the given path. Each says what it is; the corpus keeps only
// their names in cases.tsv.
const std::map<QString, std::function<bool(const QString& path, const QString& baseRun)>>& generated()
{
    static const std::map<QString, std::function<bool(const QString&, const QString&)>> all = {
        // A 100 MiB line in a gzip stream (100 KB): more than the 16 MiB a line may have.
        {QStringLiteral("metrics-csv-100mib-line.csv.gz"),
         [](const QString& path, const QString&) {
             return writeGzip(path, "ts,node,device,metric,value,unit\n", std::size_t{100} << 20, 'a',
                              "\n2026-01-02T03:00:00Z,node7,gpu:0,gpu.util,50,%\n");
         }},
        // A speedscope document padded with 48 MiB of blanks, gzip-compressed about a thousandfold.
        {QStringLiteral("speedscope-gzip-bomb.json.gz"),
         [](const QString& path, const QString&) {
             return writeGzip(path,
                              "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"shared\":"
                              "{\"frames\":[{\"name\":\"main\"}]},\"profiles\":[",
                              std::size_t{48} << 20, ' ',
                              "{\"type\":\"sampled\",\"name\":\"t\",\"unit\":\"seconds\",\"startValue\":0,"
                              "\"endValue\":1,\"samples\":[[0]],\"weights\":[1]}]}\n");
         }},
        // One stack 200,000 frames deep (1.5 MB on one line).
        {QStringLiteral("folded-200k-frame-stack.folded"),
         [](const QString& path, const QString&) {
             QByteArray text;
             for (int i = 0; i < 200'000; ++i)
                 text += (i ? ";f" : "f") + QByteArray::number(i);
             return writeAll(path, text + " 5\nmain;run 1\n");
         }},
        // A hand-made CSV log 10,000 columns wide.
        {QStringLiteral("wide-csv-10k-columns.csv"),
         [](const QString& path, const QString&) {
             QByteArray header = "timestamp", row1 = "2026-01-02 03:00:00", row2 = "2026-01-02 03:00:01";
             for (int i = 0; i < 10'000; ++i) {
                 header += ",c" + QByteArray::number(i);
                 row1 += ",1";
                 row2 += ",2";
             }
             return writeAll(path, header + '\n' + row1 + '\n' + row2 + '\n');
         }},
        // A run cut in half (a copy that stopped, a full disk).
        {QStringLiteral("runlens-cut-in-half.runlens"),
         [](const QString& path, const QString& baseRun) {
             const QByteArray bytes = readAll(baseRun);
             return writeAll(path, bytes.left(bytes.size() / 2));
         }},
    };
    return all;
}

// --- Running children ---------------------------------------------------------------------------------------

struct Child
{
    Case* c = nullptr;
    pid_t pid = -1;
    int pidfd = -1;
    QElapsedTimer timer;
    QString outPath, errPath;
};

bool spawnChild(Child& child, const QStringList& args, const QString& outPath, const QString& errPath)
{
    std::vector<std::string> words{RUNLENS_BINARY};
    for (const QString& a : args)
        words.push_back(a.toStdString());
    std::vector<char*> argv;
    for (std::string& w : words)
        argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = outPath.toStdString(), err = errPath.toStdString();
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    child.outPath = outPath;
    child.errPath = errPath;
    child.timer.start();
    const int rc = posix_spawn(&child.pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) return false;
#ifdef SYS_pidfd_open
    child.pidfd = static_cast<int>(syscall(SYS_pidfd_open, child.pid, 0));
#endif
    return true;
}

// Reaps the child if it has ended (block: waits for it to end) and records its outcome; false while it runs.
bool reap(Child& child, bool block)
{
    int status = 0;
    rusage usage{};
    const pid_t r = wait4(child.pid, &status, block ? 0 : WNOHANG, &usage);
    if (r != child.pid) return false;
    Outcome& o = child.c->outcome;
    o.seconds = static_cast<double>(child.timer.nsecsElapsed()) / 1e9;
    o.peakKiB = usage.ru_maxrss; // KiB on Linux
    if (WIFEXITED(status)) o.exit = WEXITSTATUS(status);
    if (WIFSIGNALED(status) && !o.timedOut) o.signal = WTERMSIG(status);
    o.output = readAll(child.outPath) + readAll(child.errPath);
    if (child.pidfd >= 0) ::close(child.pidfd);
    return true;
}

// Runs every started child to its end, at most `parallel` at a time, killing one that outlives the timeout.
void runAll(std::vector<std::pair<Case*, std::function<bool(Child&)>>> jobs, int parallel)
{
    std::vector<Child> running;
    size_t next = 0;
    while (next < jobs.size() || !running.empty()) {
        while (next < jobs.size() && static_cast<int>(running.size()) < parallel) {
            Child child;
            child.c = jobs[next].first;
            if (jobs[next].second(child))
                running.push_back(std::move(child));
            else if (child.c->outcome.setupError.isEmpty())
                child.c->outcome.setupError = QStringLiteral("cannot start %1").arg(QStringLiteral(RUNLENS_BINARY));
            ++next;
        }
        if (running.empty()) continue;
        // Wait for one to end (its pidfd turns readable) or the nearest timeout.
        qint64 wait = kHangTimeoutMs;
        for (const Child& c : running)
            wait = std::min(wait, std::max<qint64>(0, kHangTimeoutMs - c.timer.elapsed()));
        std::vector<pollfd> fds;
        for (const Child& c : running)
            if (c.pidfd >= 0) fds.push_back({c.pidfd, POLLIN, 0});
        if (fds.size() == running.size()) {
            ::poll(fds.data(), fds.size(), static_cast<int>(std::min<qint64>(wait, 1000)));
        } else { // no pidfd (an old kernel): look again shortly
            const timespec pause{0, 2'000'000};
            nanosleep(&pause, nullptr);
        }
        for (auto it = running.begin(); it != running.end();) {
            if (reap(*it, false)) {
                it = running.erase(it);
            } else if (it->timer.elapsed() >= kHangTimeoutMs) {
                it->c->outcome.timedOut = true;
                ::kill(it->pid, SIGKILL);
                reap(*it, true);
                it = running.erase(it);
            } else {
                ++it;
            }
        }
    }
}

QStringList filesIn(const QString& dir)
{
    return QDir(dir).entryList(QDir::Files | QDir::Hidden, QDir::Name);
}

} // namespace

class TstBadInputs : public QObject
{
    Q_OBJECT

    QTemporaryDir m_tmp;
    QString m_baseRun;
    std::vector<Case> m_cases;
    QString m_manifestError;
    std::map<int, QStringList> m_filesBefore; // in each case's folder, before its run

    // Reads cases.tsv: FILE <tab> COMMAND <tab> EXIT <tab> EXPECTED; '#' starts a comment line.
    void readManifest()
    {
        const QString text = QString::fromUtf8(readAll(kCorpus + QStringLiteral("/cases.tsv")));
        if (text.isEmpty()) {
            m_manifestError = QStringLiteral("cannot read %1/cases.tsv").arg(kCorpus);
            return;
        }
        QHash<QString, int> uses;
        const QStringList lines = text.split(QLatin1Char('\n'));
        for (int i = 0; i < lines.size(); ++i) {
            const QString& line = lines[i];
            if (line.trimmed().isEmpty() || line.startsWith(QLatin1Char('#'))) continue;
            const QStringList f = line.split(QLatin1Char('\t'));
            bool ok = false;
            Case c;
            c.line = i + 1;
            if (f.size() == 4) {
                c.file = f[0];
                c.args = splitCommand(f[1]);
                c.exit = f[2].toInt(&ok);
                c.expected = f[3];
            }
            if (!ok || c.file.isEmpty() || c.args.isEmpty() || c.expected.isEmpty()) {
                m_manifestError = QStringLiteral("cases.tsv:%1: expected FILE, COMMAND, EXIT, EXPECTED separated by "
                                                 "tabs")
                                      .arg(i + 1);
                return;
            }
            ++uses[c.file];
            m_cases.push_back(std::move(c));
        }
        QSet<QString> names;
        for (Case& c : m_cases) {
            c.name = uses[c.file] > 1 ? QStringLiteral("%1 [%2]").arg(c.file, c.args.first()) : c.file;
            if (names.contains(c.name))
                m_manifestError = QStringLiteral("cases.tsv:%1: a second case named %2").arg(c.line).arg(c.name);
            names << c.name;
        }
    }

    // The case's input in its folder: a copy of the corpus file, a run made from FILE.sql, or a generated input.
    QString prepareInput(const Case& c, const QString& dir)
    {
        const QString target = dir + QLatin1Char('/') + c.file;
        const QString committed = kCorpus + QLatin1Char('/') + c.file;
        if (QFileInfo::exists(committed))
            return QFile::copy(committed, target) ? QString() : QStringLiteral("copy failed");
        if (QFileInfo::exists(committed + QStringLiteral(".sql")))
            return runFromRecipe(m_baseRun, committed + QStringLiteral(".sql"), target);
        const auto& made = generated();
        if (auto it = made.find(c.file); it != made.end())
            return it->second(target, m_baseRun) ? QString() : QStringLiteral("cannot write the input");
        return QStringLiteral("no such input: %1 (nor %1.sql, nor a generated one)").arg(c.file);
    }

    std::function<bool(Child&)> starter(Case& c, int index)
    {
        return [this, &c, index](Child& child) {
            const QString dir = m_tmp.filePath(QStringLiteral("case%1").arg(index));
            const QString logs = m_tmp.filePath(QStringLiteral("logs%1").arg(index));
            if (!QDir().mkpath(dir) || !QDir().mkpath(logs)) {
                c.outcome.setupError = QStringLiteral("cannot make the case folder");
                return false;
            }
            c.outcome.setupError = prepareInput(c, dir);
            if (!c.outcome.setupError.isEmpty()) return false;
            const QString input = dir + QLatin1Char('/') + c.file;
            QStringList args;
            for (QString a : c.args) {
                if (a.contains(QLatin1String("{good}")) &&
                    !QFile::copy(kCorpus + QStringLiteral("/base-run/gpu.csv"), dir + QStringLiteral("/good.csv")))
                    c.outcome.setupError = QStringLiteral("cannot copy base-run/gpu.csv");
                a.replace(QLatin1String("{input}"), input)
                    .replace(QLatin1String("{run}"), dir + QStringLiteral("/out.runlens"))
                    .replace(QLatin1String("{good}"), dir + QStringLiteral("/good.csv"));
                args << a;
            }
            c.outcome.hashBefore = sha256(input);
            m_filesBefore[index] = filesIn(dir);
            return c.outcome.setupError.isEmpty() &&
                   spawnChild(child, args, logs + QStringLiteral("/out"), logs + QStringLiteral("/err"));
        };
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_tmp.isValid());
        readManifest();
        QVERIFY2(m_manifestError.isEmpty(), qPrintable(m_manifestError));
        QVERIFY2(m_cases.size() >= 100, "the corpus holds at least 100 cases");

        // The run the crafted run files start from: a GPU CSV and timed stacks, imported by the binary.
        m_baseRun = m_tmp.filePath(QStringLiteral("base.runlens"));
        Case base;
        base.args = QStringList{QStringLiteral("import"),
                                QStringLiteral("-o"),
                                m_baseRun,
                                QStringLiteral("--tz"),
                                QStringLiteral("UTC"),
                                QStringLiteral("--node"),
                                QStringLiteral("node7"),
                                kCorpus + QStringLiteral("/base-run/gpu.csv"),
                                kCorpus + QStringLiteral("/base-run/stacks.speedscope.json")};
        runAll({{&base,
                 [&](Child& child) {
                     return spawnChild(child, base.args, m_tmp.filePath(QStringLiteral("base.out")),
                                       m_tmp.filePath(QStringLiteral("base.err")));
                 }}},
               1);
        QVERIFY2(base.outcome.exit == 0, base.outcome.output.constData());

        std::vector<std::pair<Case*, std::function<bool(Child&)>>> jobs;
        for (size_t i = 0; i < m_cases.size(); ++i)
            jobs.emplace_back(&m_cases[i], starter(m_cases[i], static_cast<int>(i)));
        runAll(std::move(jobs), std::clamp(QThread::idealThreadCount(), 2, 4));
        for (size_t i = 0; i < m_cases.size(); ++i) {
            Case& c = m_cases[i];
            const QString dir = m_tmp.filePath(QStringLiteral("case%1").arg(i));
            c.outcome.hashAfter = sha256(dir + QLatin1Char('/') + c.file);
            const QStringList before = m_filesBefore[static_cast<int>(i)];
            for (const QString& f : filesIn(dir))
                if (!before.contains(f) && !f.startsWith(QLatin1String("out.runlens"))) c.outcome.leftovers << f;
        }
    }

    // Every file of the corpus is a case (or the recipe of one), so none lies there unchecked.
    void everyFileIsACase()
    {
        QSet<QString> named;
        for (const Case& c : m_cases)
            named << c.file << c.file + QStringLiteral(".sql");
        for (const QString& f : QDir(kCorpus).entryList(QDir::Files, QDir::Name))
            if (f != QLatin1String("cases.tsv") && f != QLatin1String("README.md"))
                QVERIFY2(named.contains(f),
                         qPrintable(QStringLiteral("%1 is in the corpus but not in cases.tsv").arg(f)));
        for (const auto& [name, make] : generated())
            QVERIFY2(named.contains(name), qPrintable(QStringLiteral("generated %1 is in no case").arg(name)));
    }

    void cases_data()
    {
        QTest::addColumn<int>("index");
        for (size_t i = 0; i < m_cases.size(); ++i)
            QTest::newRow(qPrintable(m_cases[i].name)) << static_cast<int>(i);
    }
    void cases()
    {
        QFETCH(int, index);
        const Case& c = m_cases[static_cast<size_t>(index)];
        const Outcome& o = c.outcome;
        const QString where = QStringLiteral("cases.tsv:%1: runlens %2").arg(c.line).arg(c.args.join(QLatin1Char(' ')));
        QVERIFY2(o.setupError.isEmpty(), qPrintable(where + QStringLiteral(": ") + o.setupError));
        const QString output = QString::fromUtf8(o.output);
        qInfo("%-58s exit %d %7.2f s %7.1f MB", qPrintable(c.name), o.exit, o.seconds,
              static_cast<double>(o.peakKiB) * 1024 / 1e6);
        QVERIFY2(!o.timedOut, qPrintable(QStringLiteral("%1: still running after %2 s (a hang?); output so far:\n%3")
                                             .arg(where)
                                             .arg(kHangTimeoutMs / 1000)
                                             .arg(output)));
        QVERIFY2(o.signal == 0, qPrintable(QStringLiteral("%1: killed by signal %2 (%3); output:\n%4")
                                               .arg(where)
                                               .arg(o.signal)
                                               .arg(QString::fromUtf8(strsignal(o.signal)), output)));
        // A sanitizer report can end a run with the very status a case expects: its text fails the case.
        for (const char* report : {"ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"})
            QVERIFY2(!o.output.contains(report),
                     qPrintable(QStringLiteral("%1: a sanitizer report:\n%2").arg(where, output)));
        QVERIFY2(o.exit == c.exit, qPrintable(QStringLiteral("%1: exit %2, expected %3; output:\n%4")
                                                  .arg(where)
                                                  .arg(o.exit)
                                                  .arg(c.exit)
                                                  .arg(output)));
        QVERIFY2(o.output.contains(c.expected.toUtf8()),
                 qPrintable(QStringLiteral("%1: \"%2\" not in the output:\n%3").arg(where, c.expected, output)));
        QVERIFY2(!o.hashBefore.isEmpty() && o.hashBefore == o.hashAfter,
                 qPrintable(where + QStringLiteral(": the input's bytes changed")));
        QVERIFY2(o.leftovers.isEmpty(), qPrintable(where + QStringLiteral(": left beside the input: ") +
                                                   o.leftovers.join(QStringLiteral(", "))));
        if (kSanitized)
            qInfo("    (sanitizer build: peak memory not checked)");
        else
            QVERIFY2(o.peakKiB < kMaxPeakKiB,
                     qPrintable(QStringLiteral("%1: peak memory %2 MB, the bound is 200 MB")
                                    .arg(where)
                                    .arg(static_cast<double>(o.peakKiB) * 1024 / 1e6, 0, 'f', 1)));
    }

    void cleanupTestCase()
    {
        if (m_cases.empty()) return;
        const auto slowest = std::max_element(m_cases.begin(), m_cases.end(), [](const Case& a, const Case& b) {
            return a.outcome.seconds < b.outcome.seconds;
        });
        const auto largest = std::max_element(m_cases.begin(), m_cases.end(), [](const Case& a, const Case& b) {
            return a.outcome.peakKiB < b.outcome.peakKiB;
        });
        double total = 0;
        for (const Case& c : m_cases)
            total += c.outcome.seconds;
        qInfo("bad-input corpus: %zu cases, %.1f s of runs in all", m_cases.size(), total);
        qInfo("  max time %6.2f s   %s", slowest->outcome.seconds, qPrintable(slowest->name));
        qInfo("  max peak %6.1f MB  %s%s", static_cast<double>(largest->outcome.peakKiB) * 1024 / 1e6,
              qPrintable(largest->name), kSanitized ? " (sanitizer build)" : "");
        rusage self{};
        getrusage(RUSAGE_SELF, &self);
        qInfo("  (this runner peaked at %.1f MB: no child's peak can read lower)",
              static_cast<double>(self.ru_maxrss) * 1024 / 1e6);
    }
};

QTEST_GUILESS_MAIN(TstBadInputs)
#include "tst_bad_inputs.moc"
