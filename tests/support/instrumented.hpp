#pragma once
/// Whether this test binary runs under AddressSanitizer or ThreadSanitizer, and the step
/// count its longest tests take there.
///
/// The thread-count tests (same bits on 1, 2 and 3 threads) run a bed of some thousand
/// grains for tens of steps, three to nine times. Instrumented, that code runs 15–40 times
/// slower than in the Release build, and those few tests took most of the sanitizer
/// stages' time (seven minutes of ASan's test time, eighteen of TSan's). The sanitizers
/// look for memory errors and data races, which every step of the same bed exercises
/// alike: there, such a test takes a quarter of its steps (at least 10) on the same bed
/// (but for one that needs them all to make its contacts, as test_determinism's pairs),
/// with the same thread counts and the same comparison. The Release stage still runs every
/// step and holds the bit-for-bit claim over the whole run.
#include <algorithm>

namespace talus::testing {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kInstrumented = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kInstrumented = true;
#else
inline constexpr bool kInstrumented = false;
#endif
#else
inline constexpr bool kInstrumented = false;
#endif

/// `steps` in the Release build; a quarter of them, at least 10, under a sanitizer.
constexpr int steps_for_build(int steps) { return kInstrumented ? std::max(10, steps / 4) : steps; }

/// `cases` in the Release build; a quarter of them, at least 5, under a sanitizer: for the
/// brute-force comparisons whose cost is the test's own loops (a wall sampled on a grid of a
/// million points for each query point), which instrumented run 20 times slower, and
/// where every case exercises the code under test alike.
constexpr int cases_for_build(int cases) { return kInstrumented ? std::max(5, cases / 4) : cases; }

}  // namespace talus::testing
