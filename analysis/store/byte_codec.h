#pragma once

// Byte-level helpers shared by the chunk codecs: zigzag varints, a pre-sized byte writer, a bounds-checked
// reader, and per-thread zstd contexts.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <zstd.h>

namespace runlens::store::codec {

inline uint64_t zigzag(int64_t v)
{
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t unzigzag(uint64_t v)
{
    return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Appends varints and bytes to a buffer sized up front (one capacity check per write, no reallocation
// in the common case).
class ByteWriter
{
public:
    explicit ByteWriter(size_t capacity) : m_buf(capacity, '\0') {}
    void varint(uint64_t v)
    {
        ensure(10);
        char* p = m_buf.data() + m_pos;
        while (v >= 0x80) {
            *p++ = static_cast<char>((v & 0x7f) | 0x80);
            v >>= 7;
        }
        *p++ = static_cast<char>(v);
        m_pos = static_cast<size_t>(p - m_buf.data());
    }
    void byte(char c)
    {
        ensure(1);
        m_buf[m_pos++] = c;
    }
    void bytes(const char* data, size_t n)
    {
        ensure(n);
        std::memcpy(m_buf.data() + m_pos, data, n);
        m_pos += n;
    }
    const char* data() const { return m_buf.data(); }
    size_t size() const { return m_pos; }

private:
    void ensure(size_t n)
    {
        if (m_pos + n > m_buf.size()) m_buf.resize(std::max(m_buf.size() * 2, m_pos + n));
    }
    std::string m_buf;
    size_t m_pos = 0;
};

class Cursor
{
public:
    Cursor(const uint8_t* p, size_t n) : m_p(p), m_end(p + n) {}
    bool varint(uint64_t& v)
    {
        v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (m_p == m_end) return false;
            const uint8_t b = *m_p++;
            v |= static_cast<uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) return true;
        }
        return false;
    }
    bool bytes(void* dst, size_t n)
    {
        if (static_cast<size_t>(m_end - m_p) < n) return false;
        std::memcpy(dst, m_p, n);
        m_p += n;
        return true;
    }
    bool atEnd() const { return m_p == m_end; }
    size_t remaining() const { return static_cast<size_t>(m_end - m_p); }

private:
    const uint8_t* m_p;
    const uint8_t* m_end;
};

struct ZstdContexts
{
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_DCtx* d = ZSTD_createDCtx();
    ~ZstdContexts()
    {
        ZSTD_freeCCtx(c);
        ZSTD_freeDCtx(d);
    }
};
inline ZstdContexts& zstdContexts()
{
    thread_local ZstdContexts contexts;
    return contexts;
}

} // namespace runlens::store::codec
