#pragma once
/// The scene reader's tests share one way to get a scene's problems: the message of the
/// SceneError that parsing it throws, or "" when it parses.
#include <string>
#include <vector>

#include "io/scene.hpp"

namespace talus::testing {

inline std::string scene_error(const std::string& text, const std::string& name = "mem/scene.toml",
                               const std::vector<std::string>& overrides = {}) {
    try {
        parse_scene(text, name, overrides);
    } catch (const SceneError& e) {
        return e.what();
    }
    return {};
}

}  // namespace talus::testing
