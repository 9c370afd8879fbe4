-- A node clock offset at the int64 limit: every time read would overflow if added unchecked.
UPDATE node SET clock_offset_ns = -9223372036854775808;
