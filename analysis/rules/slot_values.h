#pragma once

// A metric's values on the rules' grid (one per slot, NaN where the slot has no sample), held compactly and without
// loss. The slots are cut into blocks of kSlotBlock; each block keeps the narrowest exact form of its values:
// nothing when every slot is NaN; else, when every value is a short decimal (what collectors print: 87, 0.213,
// 612.35, 1980000000), codes of 1, 2 or 4 bytes with value = (base + code) / 10^d for d up to kMaxDecimals (or
// times 10^-d for whole thousands, millions …), each code checked at once to give back the very same double; else
// the doubles themselves. A day of one GPU's utilization at 1 s is 86 kB instead of 691 kB. Reading a slot is a
// block lookup and one multiplication or division.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <vector>

namespace runlens::analysis {

inline constexpr size_t kSlotBlockShift = 12;
inline constexpr size_t kSlotBlock = size_t{1} << kSlotBlockShift; // slots per block
inline constexpr int kMaxDecimals = 6;

class SlotValues
{
public:
    class const_iterator
    {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = double;
        using difference_type = std::ptrdiff_t;
        using pointer = void;
        using reference = double;

        const_iterator() = default;
        const_iterator(const SlotValues* values, size_t i) : m_values(values), m_i(i) {}
        double operator*() const { return (*m_values)[m_i]; }
        double operator[](difference_type n) const { return (*m_values)[static_cast<size_t>(offset(n))]; }
        const_iterator& operator++() { return *this += 1; }
        const_iterator operator++(int)
        {
            const_iterator before = *this;
            ++*this;
            return before;
        }
        const_iterator& operator--() { return *this -= 1; }
        const_iterator& operator+=(difference_type n)
        {
            m_i = static_cast<size_t>(offset(n));
            return *this;
        }
        const_iterator& operator-=(difference_type n) { return *this += -n; }
        friend const_iterator operator+(const_iterator it, difference_type n) { return it += n; }
        friend const_iterator operator-(const_iterator it, difference_type n) { return it -= n; }
        friend difference_type operator-(const const_iterator& a, const const_iterator& b)
        {
            return static_cast<difference_type>(a.m_i) - static_cast<difference_type>(b.m_i);
        }
        friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.m_i == b.m_i; }
        friend auto operator<=>(const const_iterator& a, const const_iterator& b) { return a.m_i <=> b.m_i; }

    private:
        difference_type offset(difference_type n) const { return static_cast<difference_type>(m_i) + n; }
        const SlotValues* m_values = nullptr;
        size_t m_i = 0;
    };

    SlotValues() = default;
    SlotValues(const std::vector<double>& values); // implicit: a grid series is its values
    SlotValues(std::initializer_list<double> values) : SlotValues(std::vector<double>(values)) {}

    size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    double operator[](size_t i) const;
    const_iterator begin() const { return {this, 0}; }
    const_iterator end() const { return {this, m_size}; }
    std::vector<double> toVector() const;
    // The bytes the values take (for the benchmark's accounting and tests).
    size_t bytes() const;

private:
    struct Block
    {
        uint8_t width = 0;   // bytes per code: 0 (every slot NaN), 1, 2, 4, or 8 (the doubles themselves)
        int8_t decimals = 0; // d: value = (base + code) / 10^d (d < 0: times 10^-d)
        int64_t base = 0;    // the smallest code's integer
        std::vector<uint8_t> codes;
    };
    static Block encode(const double* values, size_t n);
    size_t m_size = 0;
    std::vector<Block> m_blocks;
};

} // namespace runlens::analysis
