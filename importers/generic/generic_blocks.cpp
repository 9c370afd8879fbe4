#include "importers/generic/generic_blocks.h"

#include "analysis/store/bounded_queue.h"
#include "importers/common/text_fields.h"
#include "importers/common/text_map.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <thread>

namespace runlens::importers {

std::optional<int64_t> epochNs(std::string_view s)
{
    const size_t dot = s.find('.');
    const std::string_view whole = s.substr(0, dot);
    const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : s.substr(dot + 1);
    auto i = parseInteger(whole);
    if (!i || *i < 0 || whole.empty() || fraction.find('.') != std::string_view::npos) return std::nullopt;
    const int digits = *i < 100'000'000'000 ? 9 : *i < 100'000'000'000'000 ? 6 : *i < 100'000'000'000'000'000 ? 3 : 0;
    int64_t scale = 1;
    for (int k = 0; k < digits; ++k)
        scale *= 10;
    if (*i > std::numeric_limits<int64_t>::max() / scale - 1) return std::nullopt;
    int64_t part = 0;
    for (int k = 0; k < digits; ++k)
        part = part * 10 + (static_cast<size_t>(k) < fraction.size() ? fraction[static_cast<size_t>(k)] - '0' : 0);
    if (fraction.size() > static_cast<size_t>(digits) && fraction[static_cast<size_t>(digits)] >= '5') ++part;
    return *i * scale + part;
}

namespace {
constexpr size_t kLineMargin = 4096; // a block's text is reserved this much beyond its size: its last line
} // namespace

class CsvBlockReader::Worker
{
public:
    Worker(LineReader& lines, CsvLayout layout, size_t blockBytes)
        : m_lines(lines), m_layout(std::move(layout)), m_blockBytes(std::max<size_t>(blockBytes, 1))
    {
        m_thread = std::thread([this] { run(); });
    }
    ~Worker()
    {
        m_queue.close(); // wakes the thread if it waits to hand on a block; it then stops
        m_thread.join();
    }
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    std::unique_ptr<CsvBlock> next()
    {
        auto block = m_queue.pop();
        return block ? std::move(*block) : nullptr;
    }

private:
    void run();
    void parse(std::string_view text, BlockRow& row, CsvBlock& block);
    uint32_t keyIndex(CsvBlock& block, std::string_view unit);

    LineReader& m_lines;
    const CsvLayout m_layout;
    const size_t m_blockBytes;
    BoundedQueue<std::unique_ptr<CsvBlock>> m_queue{2}; // one block stored while the next is parsed
    std::vector<std::string_view> m_fields;
    std::string m_key;
    TextMap<uint32_t> m_keys;
    // A collector writes its series in the same order at every scrape: the key that followed each key last time is
    // tried first, compared byte for byte with the keys' bytes one after another, before the hash map.
    std::string m_keyBytes;
    std::vector<size_t> m_keyEnd;  // of key k in m_keyBytes
    std::vector<uint32_t> m_after; // the key that came after key k (kGeneral: none yet)
    uint32_t m_previous = BlockRow::kGeneral;
    std::thread m_thread; // last: started once every member it uses is made
};

void CsvBlockReader::Worker::run()
{
    // Each block's storage reserved at once, the rows as many as the block before had: no copies as it grows.
    size_t rowsBefore = 0;
    auto newBlock = [&] {
        auto b = std::make_unique<CsvBlock>();
        b->text.reserve(m_blockBytes + kLineMargin);
        b->rows.reserve(rowsBefore + rowsBefore / 8);
        return b;
    };
    auto block = newBlock();
    Line line;
    for (;;) {
        auto more = m_lines.next(line);
        if (!more || !*more) {
            if (!more) block->error = more.error();
            block->last = true;
            block->rawBytes = m_lines.input().rawBytesRead();
            m_queue.push(std::move(block));
            m_queue.close();
            return;
        }
        BlockRow row;
        row.line = line.number;
        row.byte = line.byteOffset;
        if (line.tooLong) {
            row.tooLong = true;
            row.size = static_cast<uint32_t>(line.text.size());
            block->rows.push_back(row);
            continue;
        }
        const std::string_view text = trim(line.text);
        if (text.empty() || text[0] == '#') continue;
        row.offset = static_cast<uint32_t>(block->text.size());
        row.size = static_cast<uint32_t>(text.size());
        block->text.append(text);
        parse(text, row, *block);
        block->rows.push_back(row);
        if (block->text.size() >= m_blockBytes) {
            block->rawBytes = m_lines.input().rawBytesRead();
            rowsBefore = block->rows.size();
            if (!m_queue.push(std::move(block))) return; // the importer stopped
            block = newBlock();
        }
    }
}

void CsvBlockReader::Worker::parse(std::string_view text, BlockRow& row, CsvBlock& block)
{
    if (text.find('"') != std::string_view::npos) return;
    splitFields(text, m_layout.separator, m_fields);
    if (m_fields.size() != m_layout.columns) return;
    const std::string_view ts = trim(m_fields[m_layout.ts]);
    if (ts.empty() || !std::all_of(ts.begin(), ts.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; }))
        return;
    const auto ns = epochNs(ts);
    const auto value = parseNumber(trim(m_fields[m_layout.value]));
    if (!ns || !value || !std::isfinite(*value) || trim(m_fields[m_layout.metric]).empty()) return;
    m_key.clear(); // each cell with its length first, so that no two rows of different cells share a key
    for (size_t c : m_layout.keyColumns) {
        const std::string_view cell = trim(m_fields[c]);
        const auto size = static_cast<uint32_t>(cell.size());
        m_key.append(reinterpret_cast<const char*>(&size), sizeof size);
        m_key.append(cell);
    }
    row.key = keyIndex(block, m_layout.unit == CsvLayout::kNone ? std::string_view() : trim(m_fields[m_layout.unit]));
    row.tsNs = *ns;
    row.value = *value;
}

uint32_t CsvBlockReader::Worker::keyIndex(CsvBlock& block, std::string_view unit)
{
    uint32_t key = m_previous == BlockRow::kGeneral ? BlockRow::kGeneral : m_after[m_previous];
    if (key != BlockRow::kGeneral) {
        const size_t start = key == 0 ? 0 : m_keyEnd[key - 1];
        if (std::string_view(m_keyBytes).substr(start, m_keyEnd[key] - start) != m_key) key = BlockRow::kGeneral;
    }
    if (key == BlockRow::kGeneral) {
        auto it = m_keys.find(std::string_view(m_key));
        if (it == m_keys.end()) {
            it = m_keys.emplace(m_key, static_cast<uint32_t>(m_keys.size())).first;
            m_keyBytes += m_key;
            m_keyEnd.push_back(m_keyBytes.size());
            m_after.push_back(BlockRow::kGeneral);
            block.newUnits.emplace_back(unit);
        }
        key = it->second;
    }
    if (m_previous != BlockRow::kGeneral) m_after[m_previous] = key;
    m_previous = key;
    return key;
}

CsvBlockReader::CsvBlockReader(LineReader& lines, CsvLayout layout, size_t blockBytes)
    : m_worker(std::make_unique<Worker>(lines, std::move(layout), blockBytes))
{
}

CsvBlockReader::~CsvBlockReader() = default;

std::unique_ptr<CsvBlock> CsvBlockReader::next()
{
    return m_worker->next();
}

} // namespace runlens::importers
