// STL reader: both encodings of one mesh agree, vertices are welded so edges are shared,
// and broken files are refused with the file (and line) named.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "io/stl.hpp"
#include "tests/support/mesh_builder.hpp"

namespace talus {
namespace {

using namespace talus::testing;

std::string error_of(std::string_view bytes, const std::string& name) {
    try {
        parse_stl(bytes, name);
    } catch (const StlError& e) {
        return e.what();
    }
    return "";
}

TEST(Stl, AsciiAndBinaryGiveTheSameWeldedTriangles) {
    // Non-dyadic coordinates (0.1 spacing, offset 0.3): both encodings round to floats.
    const TriangleSoup soup = flat_grid(3, 0.1, 0.3, -0.7, 0.05);
    const StlMesh a = parse_stl(ascii_stl(soup), "grid.stl");
    const StlMesh b = parse_stl(binary_stl(soup), "grid.stl");
    EXPECT_FALSE(a.binary);
    EXPECT_TRUE(b.binary);
    ASSERT_EQ(a.triangles.size(), soup.triangles.size());
    ASSERT_EQ(a.vertices.size(), soup.vertices.size()) << "shared corners must be welded";
    EXPECT_EQ(a.triangles, b.triangles);
    ASSERT_EQ(a.vertices.size(), b.vertices.size());
    for (std::size_t v = 0; v < a.vertices.size(); ++v) EXPECT_EQ(a.vertices[v], b.vertices[v]);
    // Welding renumbers the vertices (first appearance) but every triangle keeps its three
    // corners, in order, as floats.
    for (std::size_t t = 0; t < soup.triangles.size(); ++t)
        for (int k = 0; k < 3; ++k)
            EXPECT_EQ(a.vertices[a.triangles[t][k]], soup.vertices[soup.triangles[t][k]].cast<float>().cast<double>());
}

TEST(Stl, ReadsFilesFromDisk) {
    const TriangleSoup soup = box_mesh(Vec3(-1, -2, -3), Vec3(1, 2, 3));
    const auto dir = std::filesystem::path(TALUS_BINARY_DIR) / "test_stl";
    std::filesystem::create_directories(dir);
    for (const auto& [name, bytes] : {std::pair{"box_ascii.stl", ascii_stl(soup)},
                                       std::pair{"box_binary.stl", binary_stl(soup)}}) {
        std::ofstream(dir / name, std::ios::binary) << bytes;
        const StlMesh m = read_stl(dir / name);
        EXPECT_EQ(m.vertices.size(), 8u) << name;
        EXPECT_EQ(m.triangles.size(), 12u) << name;
    }
    try {
        read_stl(dir / "missing.stl");
        ADD_FAILURE() << "a missing file must be an error";
    } catch (const StlError& e) {
        EXPECT_NE(std::string(e.what()).find("missing.stl"), std::string::npos) << e.what();
    }
}

TEST(Stl, TruncatedBinaryNamesTheFile) {
    const std::string bytes = binary_stl(flat_grid(2, 1.0, 0.0, 0.0));
    const std::string msg = error_of(std::string_view(bytes).substr(0, bytes.size() - 7), "floor.stl");
    EXPECT_EQ(msg.rfind("floor.stl: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("8 triangles"), std::string::npos) << msg;
    EXPECT_NE(msg.find("truncated"), std::string::npos) << msg;
}

TEST(Stl, TruncatedOrGarbledAsciiNamesFileAndLine) {
    const std::string text = ascii_stl(flat_grid(1, 1.0, 0.0, 0.0));
    // Cut right after the second facet's "outer loop" (line 10).
    std::size_t cut = 0;
    for (int line = 0; line < 9; ++line) cut = text.find('\n', cut) + 1;
    const std::string truncated = text.substr(0, cut + 14);
    const std::string msg = error_of(truncated, "floor.stl");
    EXPECT_EQ(msg.rfind("floor.stl:10: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("unexpected end of file"), std::string::npos) << msg;

    std::string garbled = text;
    garbled.replace(garbled.find("vertex 1"), 8, "vertex x");
    const std::string msg2 = error_of(garbled, "floor.stl");
    EXPECT_EQ(msg2.rfind("floor.stl:", 0), 0u) << msg2;
    EXPECT_NE(msg2.find("'x'"), std::string::npos) << msg2;

    EXPECT_NE(error_of("hello", "x.stl").find("x.stl: not an STL file"), std::string::npos);
}

}  // namespace
}  // namespace talus
