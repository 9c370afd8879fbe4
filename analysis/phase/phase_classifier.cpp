#include "analysis/phase/phase_classifier.h"

#include "analysis/phase/embedded_packs.h"

#include <QRegularExpression>
#include <QString>
#include <algorithm>
#include <array>

namespace runlens::analysis {

namespace {

constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {"other", "compute", "idle",      "gpu_wait",
                                                                   "comm",  "input",   "checkpoint"};

// Literal strings one of which is part of every text the pattern matches (one per top-level alternative), or
// nothing when that cannot be told simply. A cheap find() on them skips the regular expression for most rules.
// Conservative: a construct it does not understand yields no literals rather than a wrong one.
class LiteralScan
{
public:
    explicit LiteralScan(std::string_view re) : m_re(re) {}

    std::vector<std::string> run()
    {
        std::vector<std::string> out;
        while (m_i <= m_re.size()) {
            if (m_i == m_re.size() || m_re[m_i] == '|') {
                endRun();
                if (m_best.empty()) return {};
                out.push_back(std::move(m_best));
                m_best.clear();
                if (m_i == m_re.size()) break;
                ++m_i;
                continue;
            }
            if (!step()) return {};
        }
        return out;
    }

private:
    // One atom at m_i; false when the pattern is beyond this scan.
    bool step()
    {
        const char c = m_re[m_i];
        switch (c) {
        case '\\': {
            if (m_i + 1 >= m_re.size()) return false;
            const char d = m_re[m_i + 1];
            m_i += 2;
            if (isAsciiAlnum(d)) {
                // Single-character classes and anchors end a run; anything else (\x, \p, \Q, backreferences) is
                // left to the regular expression.
                if (std::string_view("dDwWsShHvVRNbBAzZGX").find(d) == std::string_view::npos) return false;
                endRun();
                skipQuantifier();
            } else {
                m_cur.push_back(d);
                afterLiteral();
            }
            return true;
        }
        case '(': {
            if (m_i + 1 < m_re.size() && m_re[m_i + 1] == '?') {
                // Groups, lookarounds and named groups are skipped; inline options such as (?i) change what
                // the rest means.
                const char k = m_i + 2 < m_re.size() ? m_re[m_i + 2] : '\0';
                if (std::string_view(":=!><|P'").find(k) == std::string_view::npos || k == '\0') return false;
            }
            endRun();
            if (!skipGroup()) return false;
            skipQuantifier();
            return true;
        }
        case '[':
            endRun();
            if (!skipClass()) return false;
            skipQuantifier();
            return true;
        case ')':
            return false;
        case '.':
        case '^':
        case '$':
            endRun();
            ++m_i;
            skipQuantifier();
            return true;
        case '*':
        case '+':
        case '?':
            return false; // a quantifier with nothing before it
        case '{':
            if (isQuantifierAt(m_i)) return false;
            m_cur.push_back(c);
            ++m_i;
            afterLiteral();
            return true;
        default:
            m_cur.push_back(c);
            ++m_i;
            afterLiteral();
            return true;
        }
    }

    static bool isAsciiAlnum(char c)
    {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    }

    bool isQuantifierAt(size_t i) const
    {
        if (i >= m_re.size()) return false;
        const char c = m_re[i];
        if (c == '*' || c == '+' || c == '?') return true;
        if (c != '{') return false;
        size_t j = i + 1, digits = 0;
        while (j < m_re.size() && m_re[j] >= '0' && m_re[j] <= '9')
            ++j, ++digits;
        if (j < m_re.size() && m_re[j] == ',') {
            ++j;
            while (j < m_re.size() && m_re[j] >= '0' && m_re[j] <= '9')
                ++j, ++digits;
        }
        return digits > 0 && j < m_re.size() && m_re[j] == '}';
    }

    // Skips a quantifier (with its lazy/possessive mark) at m_i, if there is one.
    bool skipQuantifier()
    {
        if (!isQuantifierAt(m_i)) return false;
        if (m_re[m_i] == '{')
            m_i = m_re.find('}', m_i) + 1;
        else
            ++m_i;
        if (m_i < m_re.size() && (m_re[m_i] == '?' || m_re[m_i] == '+')) ++m_i;
        return true;
    }

    // A literal character was appended: when a quantifier follows, it is optional or repeated, so the run ends
    // before it (the whole UTF-8 character is dropped).
    void afterLiteral()
    {
        if (!isQuantifierAt(m_i)) return;
        while (!m_cur.empty() && (static_cast<unsigned char>(m_cur.back()) & 0xC0) == 0x80)
            m_cur.pop_back();
        if (!m_cur.empty()) m_cur.pop_back();
        endRun();
        skipQuantifier();
    }

    bool skipGroup()
    {
        int depth = 0;
        while (m_i < m_re.size()) {
            const char c = m_re[m_i];
            if (c == '\\') {
                m_i += 2;
                continue;
            }
            if (c == '[') {
                if (!skipClass()) return false;
                continue;
            }
            ++m_i;
            if (c == '(') ++depth;
            if (c == ')' && --depth == 0) return true;
        }
        return false;
    }

    bool skipClass()
    {
        size_t j = m_i + 1;
        if (j < m_re.size() && m_re[j] == '^') ++j;
        if (j < m_re.size() && m_re[j] == ']') ++j; // a leading ] is literal
        while (j < m_re.size()) {
            if (m_re[j] == '\\') {
                j += 2;
                continue;
            }
            if (m_re[j] == '[' && j + 1 < m_re.size() && m_re[j + 1] == ':') { // [:alpha:]
                const size_t end = m_re.find(":]", j + 2);
                if (end == std::string_view::npos) return false;
                j = end + 2;
                continue;
            }
            if (m_re[j] == ']') {
                m_i = j + 1;
                return true;
            }
            ++j;
        }
        return false;
    }

    void endRun()
    {
        if (m_cur.size() > m_best.size()) m_best = m_cur;
        m_cur.clear();
    }

    std::string_view m_re;
    size_t m_i = 0;
    std::string m_cur, m_best;
};

bool containsAny(std::string_view subject, const std::vector<std::string>& literals)
{
    return literals.empty() || std::any_of(literals.begin(), literals.end(), [&](const std::string& l) {
               return subject.find(l) != std::string_view::npos;
           });
}

struct Token
{
    std::string_view text;
    int column; // 1-based byte column
};

// Whitespace-separated words up to a word starting with '#'.
std::vector<Token> tokenize(std::string_view line)
{
    std::vector<Token> out;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
            ++i;
        if (i >= line.size() || line[i] == '#') break;
        const size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t')
            ++i;
        out.push_back({line.substr(start, i - start), static_cast<int>(start) + 1});
    }
    return out;
}

} // namespace

struct PhaseClassifier::Rule
{
    struct Pattern
    {
        QRegularExpression re;
        std::vector<std::string> literals; // prefilter; empty = none
        bool present = false;
    };

    Phase phase = Phase::Other;
    std::string pack;
    int line = 0;
    std::string text;
    Pattern name, file, module;
};

namespace {

// The frame's texts, converted for QRegularExpression only when a rule gets past its literals.
class Subject
{
public:
    explicit Subject(const FrameText& f) : m_frame(f), m_file(f.file)
    {
        if (m_file.find('\\') != std::string_view::npos) { // Windows paths
            m_fileStore.assign(m_file);
            std::replace(m_fileStore.begin(), m_fileStore.end(), '\\', '/');
            m_file = m_fileStore;
        }
    }

    std::string_view name() const { return m_frame.name; }
    std::string_view file() const { return m_file; }
    std::string_view module() const { return m_frame.module; }
    const QString& qName() { return lazy(m_qName, m_frame.name); }
    const QString& qFile() { return lazy(m_qFile, m_file); }
    const QString& qModule() { return lazy(m_qModule, m_frame.module); }

private:
    static const QString& lazy(std::optional<QString>& slot, std::string_view text)
    {
        if (!slot) slot = QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
        return *slot;
    }

    const FrameText& m_frame;
    std::string_view m_file;
    std::string m_fileStore;
    std::optional<QString> m_qName, m_qFile, m_qModule;
};

bool ruleMatches(const PhaseClassifier::Rule& r, Subject& s)
{
    // Cheap checks first: fields present, then literals (file and module literals are the most selective).
    if (r.file.present && s.file().empty()) return false;
    if (r.module.present && s.module().empty()) return false;
    if (r.file.present && !containsAny(s.file(), r.file.literals)) return false;
    if (r.module.present && !containsAny(s.module(), r.module.literals)) return false;
    if (!containsAny(s.name(), r.name.literals)) return false;
    if (r.file.present && !r.file.re.match(s.qFile()).hasMatch()) return false;
    if (r.module.present && !r.module.re.match(s.qModule()).hasMatch()) return false;
    return r.name.re.match(s.qName()).hasMatch();
}

Error packError(const std::string& pack, int line, int column, std::string message)
{
    return makeError(ErrorCode::Format, std::move(message), {pack, line, column});
}

// Compiles one pattern of a rule; errors point at the offending character.
Expected<PhaseClassifier::Rule::Pattern> compile(std::string_view pattern, const QString& wrapBefore,
                                                 const QString& wrapAfter, const std::string& pack, int line,
                                                 int column)
{
    const QString raw = QString::fromUtf8(pattern.data(), static_cast<qsizetype>(pattern.size()));
    const QRegularExpression check(raw);
    if (!check.isValid()) {
        const auto offset = static_cast<int>(raw.left(check.patternErrorOffset()).toUtf8().size());
        return packError(pack, line, column + offset,
                         "invalid regular expression: " + check.errorString().toStdString());
    }
    PhaseClassifier::Rule::Pattern p;
    p.re = QRegularExpression(wrapBefore + raw + wrapAfter);
    if (!p.re.isValid()) // a pattern that escapes its group, e.g. "a)(b"
        return packError(pack, line, column, "invalid regular expression: " + p.re.errorString().toStdString());
    p.re.optimize(); // compile now: matching never mutates shared state afterwards
    p.literals = LiteralScan(pattern).run();
    p.present = true;
    return p;
}

} // namespace

std::string_view phaseName(Phase phase)
{
    const auto i = static_cast<size_t>(phase);
    return i < kPhaseNames.size() ? kPhaseNames[i] : std::string_view("other");
}

std::optional<Phase> phaseFromName(std::string_view name)
{
    for (size_t i = 0; i < kPhaseNames.size(); ++i)
        if (kPhaseNames[i] == name) return static_cast<Phase>(i);
    return std::nullopt;
}

Expected<PhaseClassifier> PhaseClassifier::fromText(std::string_view text, const std::string& packName)
{
    // Name: the whole function name, allowing a qualifying prefix (Class. or ns::), a symbol version
    // (@@GLIBC_2.3.2), a C++ parameter list and a folded-stack annotation (_[k] kernel, _[j] JIT, ...). File and
    // module: from the start of a path component.
    static const QString kNameBefore = QStringLiteral("\\A(?:.*(?:\\.|::))?(?:");
    static const QString kNameAfter = QStringLiteral(")(?:@@?[\\w.]+)?(?:\\(.*|_\\[[a-z]\\])?\\z");
    static const QString kPathBefore = QStringLiteral("(?:\\A|/)(?:");
    static const QString kPathAfter = QStringLiteral(")");

    PhaseClassifier out;
    out.m_packs.push_back(packName);
    int lineNo = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string_view::npos) end = text.size();
        std::string_view line = text.substr(pos, end - pos);
        pos = end + 1;
        ++lineNo;
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        const std::vector<Token> tokens = tokenize(line);
        if (tokens.empty()) continue;

        auto rule = std::make_shared<Rule>();
        rule->pack = packName;
        rule->line = lineNo;
        const Token& last = tokens.back();
        rule->text = std::string(line.substr(
            tokens.front().column - 1, static_cast<size_t>(last.column - tokens.front().column) + last.text.size()));
        const auto phase = phaseFromName(tokens[0].text);
        if (!phase || *phase == Phase::Other)
            return packError(packName, lineNo, tokens[0].column,
                             "unknown phase \"" + std::string(tokens[0].text) +
                                 "\" (expected checkpoint, input, comm, gpu_wait, idle or compute)");
        rule->phase = *phase;
        if (tokens.size() < 2)
            return packError(packName, lineNo, tokens[0].column + static_cast<int>(tokens[0].text.size()) + 1,
                             "expected a function name pattern after the phase");
        auto name = compile(tokens[1].text, kNameBefore, kNameAfter, packName, lineNo, tokens[1].column);
        if (!name) return name.error();
        rule->name = std::move(*name);
        for (size_t t = 2; t < tokens.size(); ++t) {
            const Token& tok = tokens[t];
            const size_t eq = tok.text.find('=');
            const std::string_view key = eq == std::string_view::npos ? std::string_view() : tok.text.substr(0, eq);
            Rule::Pattern* slot = key == "file" ? &rule->file : key == "module" ? &rule->module : nullptr;
            if (!slot)
                return packError(packName, lineNo, tok.column,
                                 "unexpected \"" + std::string(tok.text) +
                                     "\": a rule is <phase> <name-pattern> [file=<pattern>] [module=<pattern>], and "
                                     "a pattern has no spaces (write \\s)");
            if (slot->present) return packError(packName, lineNo, tok.column, std::string(key) + "= given twice");
            const std::string_view value = tok.text.substr(eq + 1);
            if (value.empty()) return packError(packName, lineNo, tok.column, std::string(key) + "= needs a pattern");
            RUNLENS_ASSIGN_OR_RETURN(auto p, compile(value, kPathBefore, kPathAfter, packName, lineNo,
                                                     tok.column + static_cast<int>(eq) + 1));
            *slot = std::move(p);
        }
        out.m_rules.push_back(std::move(rule));
    }
    std::stable_sort(out.m_rules.begin(), out.m_rules.end(), [](const auto& a, const auto& b) {
        return static_cast<uint8_t>(a->phase) > static_cast<uint8_t>(b->phase);
    });
    return out;
}

Expected<PhaseClassifier> PhaseClassifier::builtIn()
{
    static const Expected<PhaseClassifier> cached = []() -> Expected<PhaseClassifier> {
        PhaseClassifier all;
        for (const detail::EmbeddedPack& pack : detail::embeddedPhasePacks()) {
            RUNLENS_ASSIGN_OR_RETURN(auto one, fromText(pack.text, std::string(pack.name)));
            RUNLENS_TRY(all.add(one));
        }
        return all;
    }();
    return cached;
}

Status PhaseClassifier::add(const PhaseClassifier& other)
{
    for (const std::string& p : other.m_packs)
        if (std::find(m_packs.begin(), m_packs.end(), p) != m_packs.end())
            return makeError(ErrorCode::Usage, "phase pack \"" + p + "\" is already loaded");
    m_packs.insert(m_packs.end(), other.m_packs.begin(), other.m_packs.end());
    m_rules.insert(m_rules.end(), other.m_rules.begin(), other.m_rules.end());
    std::stable_sort(m_rules.begin(), m_rules.end(), [](const auto& a, const auto& b) {
        return static_cast<uint8_t>(a->phase) > static_cast<uint8_t>(b->phase);
    });
    return okStatus();
}

const PhaseClassifier::Rule* PhaseClassifier::decidingRule(const FrameText& frame) const
{
    Subject subject(frame);
    for (const auto& rule : m_rules)
        if (ruleMatches(*rule, subject)) return rule.get();
    return nullptr;
}

Phase PhaseClassifier::classify(const FrameText& frame) const
{
    const Rule* r = decidingRule(frame);
    return r ? r->phase : Phase::Other;
}

Phase PhaseClassifier::classifyStack(std::span<const FrameText> frames) const
{
    Phase best = Phase::Other;
    for (const FrameText& f : frames) {
        best = strongerPhase(best, classify(f));
        if (best == Phase::Checkpoint) break;
    }
    return best;
}

std::optional<PhaseMatch> PhaseClassifier::explain(const FrameText& frame) const
{
    const Rule* r = decidingRule(frame);
    if (!r) return std::nullopt;
    return PhaseMatch{r->phase, r->pack, r->line, r->text};
}

std::vector<std::string> PhaseClassifier::packNames() const
{
    return m_packs;
}

size_t PhaseClassifier::ruleCount() const
{
    return m_rules.size();
}

} // namespace runlens::analysis
