// libFuzzer target: arbitrary bytes as a scene file, through the parser and validator
// (parse_scene, as `talus check` and `talus run` use it). Every input must either give a
// scene or be refused with a SceneError whose message names the file; anything else is a
// finding: a crash, a sanitizer report, another exception, a message without the file, a
// timeout or too much memory (libFuzzer's -timeout and -rss_limit_mb). Run by tools/fuzz.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/scene.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    try {
        // a directory that does not exist: mesh files named by the input are not found
        // at most 500 bodies: generating and overlap-checking many (scenes/million.toml
        // is legitimate) is slow under the fuzzer's instrumentation and tells it nothing
        // new: a random fill of 1800 that could not fit spent its 190,000 attempts in 19-27 s
        // there (0.3 s in a Release build; kept as tests/data/bad_scenes/
        // fuzz_random_fill_cannot_place.toml). The limit's own error path is fuzzed instead.
        talus::SceneLimits limits;
        limits.max_bodies = 500;
        const talus::Scene scene =
            talus::parse_scene(text, "/nonexistent-talus-fuzz/fuzz.toml", {}, limits);
        (void)scene;
    } catch (const talus::SceneError& e) {
        if (std::string(e.what()).find("fuzz.toml") == std::string::npos) {
            std::fprintf(stderr, "finding: a scene error that does not name the file:\n%s\n", e.what());
            std::abort();
        }
    }
    return 0;
}
