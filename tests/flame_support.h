#pragma once

// A hand-made flame tree whose shares are counted by hand in the flame tests.

#include "analysis/flame/flame_tree.h"

#include <initializer_list>
#include <memory>

namespace runlens::test {

// Frames of train.py, root first, with n samples (0.01 s each).
inline analysis::FlameTree::Stack flameStack(std::initializer_list<const char*> names, int64_t n)
{
    analysis::FlameTree::Stack st;
    for (const char* name : names) {
        store::FrameInfo f;
        f.name = name;
        f.file = "train.py";
        st.frames.push_back(f);
    }
    st.samples = n;
    st.weight = static_cast<double>(n) * 0.01;
    return st;
}

// 35 samples (+ extraA on main;a): b under a, under c, under a under c, and in itself; idle beside main.
inline std::shared_ptr<const analysis::FlameTree> knownFlameTree(int64_t extraA = 0)
{
    return analysis::FlameTree::fromStacks({flameStack({"main", "a", "b"}, 10), flameStack({"main", "a"}, 5 + extraA),
                                            flameStack({"main", "c", "b"}, 7), flameStack({"main", "c", "a", "b"}, 3),
                                            flameStack({"main", "b", "b"}, 4), flameStack({"idle"}, 6)});
}

} // namespace runlens::test
