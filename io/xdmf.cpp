// XDMF sidecar of a trajectory.
//
// Why this shape: ParaView 5.11 opens a time series of particles from HDF5 through its
// legacy "XDMF Reader" (XDMF 2); its Xdmf3 readers return no points for hyperslab data
// items (docs/design.md §9). So the sidecar is XDMF 2: a temporal collection holding one uniform
// grid per frame, each a Polyvertex of row_count points whose geometry and attributes are
// HyperSlab data items selecting rows [first_row, first_row + row_count) of the appended
// /bodies datasets. Nothing is copied: the sidecar is a few lines of XML per frame. A file
// with /contacts gets a second temporal collection of the same kind, each frame's contacts
// as two-node Polyline cells over /contacts/segment; a file with /walls/surface a third,
// the walls' fixed triangles over each frame's rows of /walls/surface/points; a file with
// /shapes two more, "ellipsoids" and "cylinders", the glyphs of the bodies other than
// spheres (clumps' spheres, capsules, ellipsoids) with their axes as a tensor.
//
// Invariants: the HDF5 file is referenced by its bare file name (the sidecar sits beside
// it, so the pair can be moved together); the sidecar is replaced atomically (temporary
// file + rename) so ParaView never reads half a document; times are printed with the
// shortest representation that round-trips, so ParaView's time values equal the file's.
#include "io/xdmf.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>

#include "io/trajectory_writer.hpp"

namespace talus {

namespace {

std::string xml_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&apos;"; break;
            default: out += c;
        }
    }
    return out;
}

/// How one /bodies dataset appears in XDMF.
struct BodyArray {
    const char* dataset;      ///< path inside the HDF5 file
    int columns;              ///< 1 for a per-body scalar, 3 for a vector
    const char* number_type;  ///< XDMF NumberType
    int precision;            ///< bytes; 0 = those of the file's reals (float32 or float64)
};

constexpr BodyArray kPosition{"/bodies/position", 3, "Float", 0};

/// Arrays attached to each point. ids are read as signed 64-bit: the legacy reader has no
/// unsigned 64-bit type; HDF5 converts on read, exact below 2^63.
struct PointAttribute {
    const char* name;
    const char* attribute_type;
    BodyArray array;
};
constexpr PointAttribute kAttributes[] = {
    {"radius", "Scalar", {"/bodies/radius", 1, "Float", 0}},
    {"velocity", "Vector", {"/bodies/velocity", 3, "Float", 0}},
    {"id", "Scalar", {"/bodies/id", 1, "Int", 8}},
    {"material", "Scalar", {"/bodies/material", 1, "UInt", 4}},
    {"shape", "Scalar", {"/bodies/shape", 1, "UChar", 1}},  // 0 sphere: what a Threshold keeps
};

/// Rows [first, first + count) of a dataset of `total_rows` rows.
struct Rows {
    uint64_t first_row, row_count;
};

/// A HyperSlab data item selecting a frame's rows of one appended dataset.
void append_hyperslab(std::string& out, const std::string& h5_ref, const BodyArray& a,
                      const Rows f, uint64_t total_rows, int real_bytes, const char* indent) {
    const int precision = a.precision == 0 ? real_bytes : a.precision;
    if (a.columns == 1) {
        // 1-D dataset: start / stride / count, one value each.
        fmt::format_to(std::back_inserter(out),
                       "{0}<DataItem ItemType=\"HyperSlab\" Dimensions=\"{1}\" Type=\"HyperSlab\">\n"
                       "{0}  <DataItem Dimensions=\"3 1\" Format=\"XML\">{2} 1 {1}</DataItem>\n"
                       "{0}  <DataItem Dimensions=\"{3}\" NumberType=\"{4}\" Precision=\"{5}\" "
                       "Format=\"HDF\">{6}:{7}</DataItem>\n"
                       "{0}</DataItem>\n",
                       indent, f.row_count, f.first_row, total_rows, a.number_type, precision,
                       h5_ref, a.dataset);
    } else {
        // 2-D dataset: rows (start, stride, count) by columns (0, 1, all).
        fmt::format_to(std::back_inserter(out),
                       "{0}<DataItem ItemType=\"HyperSlab\" Dimensions=\"{1} {8}\" Type=\"HyperSlab\">\n"
                       "{0}  <DataItem Dimensions=\"3 2\" Format=\"XML\">{2} 0 1 1 {1} {8}</DataItem>\n"
                       "{0}  <DataItem Dimensions=\"{3} {8}\" NumberType=\"{4}\" Precision=\"{5}\" "
                       "Format=\"HDF\">{6}:{7}</DataItem>\n"
                       "{0}</DataItem>\n",
                       indent, f.row_count, f.first_row, total_rows, a.number_type, precision,
                       h5_ref, a.dataset, a.columns);
    }
}

/// One Attribute element per array of `attributes`, each a hyperslab of the frame's rows;
/// centred on the grid's points ("Node") or cells ("Cell").
template <std::size_t N>
void append_attributes(std::string& out, const std::string& ref, const PointAttribute (&attributes)[N],
                       const Rows rows, uint64_t total, int real_bytes, const char* center) {
    for (const PointAttribute& a : attributes) {
        fmt::format_to(std::back_inserter(out),
                       "        <Attribute Name=\"{}\" AttributeType=\"{}\" Center=\"{}\">\n", a.name,
                       a.attribute_type, center);
        append_hyperslab(out, ref, a.array, rows, total, real_bytes, "          ");
        out += "        </Attribute>\n";
    }
}

/// The contacts' arrays: the segment (geometry) and the per-contact (cell) values.
constexpr BodyArray kSegment{"/contacts/segment", 6, "Float", 8};
constexpr PointAttribute kContactAttributes[] = {
    {"normal_impulse", "Scalar", {"/contacts/normal_impulse", 1, "Float", 8}},
    {"gap", "Scalar", {"/contacts/gap", 1, "Float", 8}},
    {"wall", "Scalar", {"/contacts/wall", 1, "Int", 4}},
    {"b", "Scalar", {"/contacts/b", 1, "Int", 8}},
};
/// Forces: the impulse over the frame's last step, scaled by 1/dt in the sidecar (an XDMF
/// function of the stored impulse, so nothing is stored twice).
constexpr PointAttribute kContactForces[] = {
    {"normal_force", "Scalar", {"/contacts/normal_impulse", 1, "Float", 8}},
    {"tangential_force", "Vector", {"/contacts/tangential_impulse", 3, "Float", 8}},
};

/// The "contacts" collection: per frame a Polyline grid of two-node segments (XDMF's
/// default connectivity 0 1, 2 3, …, so none is stored), whose points are the rows of
/// /contacts/segment read as 2 × count points.
void append_contacts(std::string& out, const std::string& ref, const std::vector<XdmfFrame>& frames,
                     uint64_t total) {
    out += "    <Grid Name=\"contacts\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const XdmfFrame& f = frames[i];
        const Rows rows{f.contact_first_row, f.contact_count};
        fmt::format_to(std::back_inserter(out),
                       "      <Grid Name=\"contacts {}\" GridType=\"Uniform\">\n"
                       "        <Time Value=\"{}\"/>\n"
                       "        <Topology TopologyType=\"Polyline\" NumberOfElements=\"{}\" "
                       "NodesPerElement=\"2\"/>\n"
                       "        <Geometry GeometryType=\"XYZ\">\n",
                       i, f.time, f.contact_count);
        append_hyperslab(out, ref, kSegment, rows, total, 8, "          ");
        out += "        </Geometry>\n";
        if (f.contact_count == 0) {
            out += "      </Grid>\n";
            continue;
        }
        append_attributes(out, ref, kContactAttributes, rows, total, 8, "Cell");
        if (f.contact_dt > 0.0) {
            for (const PointAttribute& a : kContactForces) {
                const std::string dims = a.array.columns == 1
                                             ? fmt::format("{}", f.contact_count)
                                             : fmt::format("{} {}", f.contact_count, a.array.columns);
                fmt::format_to(std::back_inserter(out),
                               "        <Attribute Name=\"{}\" AttributeType=\"{}\" Center=\"Cell\">\n"
                               "          <DataItem ItemType=\"Function\" Function=\"$0 * {}\" "
                               "Dimensions=\"{}\">\n",
                               a.name, a.attribute_type, 1.0 / f.contact_dt, dims);
                append_hyperslab(out, ref, a.array, rows, total, 8, "            ");
                out += "          </DataItem>\n        </Attribute>\n";
            }
        }
        out += "      </Grid>\n";
    }
    out += "    </Grid>\n";
}

/// The shapes' arrays: per glyph its centre, its axes (a tensor of 9: the three vectors
/// the glyph source's x, y and z are mapped to), the body's id and material.
constexpr BodyArray kShapePosition{"/shapes/position", 3, "Float", 8};
constexpr PointAttribute kShapeAttributes[] = {
    {"axes", "Tensor", {"/shapes/axes", 9, "Float", 8}},
    {"id", "Scalar", {"/shapes/body", 1, "Int", 8}},
    {"material", "Scalar", {"/shapes/material", 1, "UInt", 4}},
};

/// The "ellipsoids" and "cylinders" collections: per frame a Polyvertex grid over its rows
/// of /shapes, the ellipsoids first, the cylinders (capsules' middles) after them.
void append_shapes(std::string& out, const std::string& ref, const std::vector<XdmfFrame>& frames,
                   uint64_t total) {
    for (const bool cylinders : {false, true}) {
        const char* name = cylinders ? "cylinders" : "ellipsoids";
        fmt::format_to(std::back_inserter(out),
                       "    <Grid Name=\"{}\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", name);
        for (std::size_t i = 0; i < frames.size(); ++i) {
            const XdmfFrame& f = frames[i];
            const uint64_t ellipsoids = f.shape_count - f.shape_cylinders;
            const Rows rows = cylinders ? Rows{f.shape_first_row + ellipsoids, f.shape_cylinders}
                                        : Rows{f.shape_first_row, ellipsoids};
            fmt::format_to(std::back_inserter(out),
                           "      <Grid Name=\"{} {}\" GridType=\"Uniform\">\n"
                           "        <Time Value=\"{}\"/>\n"
                           "        <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"{}\" "
                           "NodesPerElement=\"1\"/>\n"
                           "        <Geometry GeometryType=\"XYZ\">\n",
                           name, i, f.time, rows.row_count);
            append_hyperslab(out, ref, kShapePosition, rows, total, 8, "          ");
            out += "        </Geometry>\n";
            if (rows.row_count > 0) append_attributes(out, ref, kShapeAttributes, rows, total, 8, "Node");
            out += "      </Grid>\n";
        }
        out += "    </Grid>\n";
    }
}

/// The "walls" collection: per frame the fixed triangles of /walls/surface over that
/// frame's rows of /walls/surface/points (frame i: rows [i V, (i + 1) V)).
void append_walls(std::string& out, const std::string& ref, const std::vector<XdmfFrame>& frames,
                  uint64_t points, uint64_t triangles, int real_bytes) {
    constexpr BodyArray kWallPoints{"/walls/surface/points", 3, "Float", 0};
    constexpr BodyArray kTriangles{"/walls/surface/triangles", 3, "UInt", 4};
    const uint64_t total = points * frames.size();
    out += "    <Grid Name=\"walls\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (std::size_t i = 0; i < frames.size(); ++i) {
        fmt::format_to(std::back_inserter(out),
                       "      <Grid Name=\"walls {0}\" GridType=\"Uniform\">\n"
                       "        <Time Value=\"{1}\"/>\n"
                       "        <Topology TopologyType=\"Triangle\" NumberOfElements=\"{2}\">\n",
                       i, frames[i].time, triangles);
        // all rows, but through a hyperslab: the legacy reader then does not try to cache the
        // grid by its data items' file names (and complain that the geometry has none)
        append_hyperslab(out, ref, kTriangles, {0, triangles}, triangles, 4, "          ");
        fmt::format_to(std::back_inserter(out),
                       "        </Topology>\n"
                       "        <Geometry GeometryType=\"XYZ\">\n");
        append_hyperslab(out, ref, kWallPoints, {i * points, points}, total, real_bytes, "          ");
        fmt::format_to(std::back_inserter(out),
                       "        </Geometry>\n"
                       "        <Attribute Name=\"wall\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
                       "          <DataItem Dimensions=\"{}\" NumberType=\"UInt\" Precision=\"4\" "
                       "Format=\"HDF\">{}:/walls/surface/wall</DataItem>\n"
                       "        </Attribute>\n"
                       "      </Grid>\n",
                       triangles, ref);
    }
    out += "    </Grid>\n";
}

}  // namespace

std::filesystem::path xdmf_sidecar_path(const std::filesystem::path& h5_path) {
    std::filesystem::path p = h5_path;
    p.replace_extension(".xmf");
    return p;
}

std::string xdmf_document(const std::string& h5_reference, const std::vector<XdmfFrame>& frames,
                          uint64_t total_rows, int real_bytes, const XdmfExtras& extras) {
    const std::string ref = xml_escape(h5_reference);
    std::string out;
    out.reserve(512 + frames.size() * 2400);
    out +=
        "<?xml version=\"1.0\" ?>\n"
        "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
        "<!-- Talus trajectory sidecar: one grid per frame, rows of the HDF5 file selected by\n"
        "     hyperslab. Open in ParaView with the \"XDMF Reader\"; glyph as spheres scaled by\n"
        "     radius. Rewritten after every frame; see docs/output-format.md. -->\n"
        "<Xdmf Version=\"2.0\">\n"
        "  <Domain>\n"
        "    <Grid Name=\"bodies\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
    for (std::size_t i = 0; i < frames.size(); ++i) {
        const XdmfFrame& f = frames[i];
        fmt::format_to(std::back_inserter(out),
                       "      <Grid Name=\"frame {}\" GridType=\"Uniform\">\n"
                       "        <Time Value=\"{}\"/>\n"
                       "        <Topology TopologyType=\"Polyvertex\" NumberOfElements=\"{}\" "
                       "NodesPerElement=\"1\"/>\n"
                       "        <Geometry GeometryType=\"XYZ\">\n",
                       i, f.time, f.row_count);
        append_hyperslab(out, ref, kPosition, {f.first_row, f.row_count}, total_rows, real_bytes, "          ");
        out += "        </Geometry>\n";
        // An empty frame (every body left) keeps its time step but carries no attributes:
        // the legacy reader complains once per zero-length array it allocates.
        if (f.row_count == 0) {
            out += "      </Grid>\n";
            continue;
        }
        append_attributes(out, ref, kAttributes, {f.first_row, f.row_count}, total_rows, real_bytes, "Node");
        out += "      </Grid>\n";
    }
    out += "    </Grid>\n";
    if (extras.contact_rows) append_contacts(out, ref, frames, *extras.contact_rows);
    if (extras.wall_triangles > 0) append_walls(out, ref, frames, extras.wall_points, extras.wall_triangles, extras.wall_real_bytes);
    if (extras.shape_rows) append_shapes(out, ref, frames, *extras.shape_rows);
    out +=
        "  </Domain>\n"
        "</Xdmf>\n";
    return out;
}

void write_xdmf_sidecar(const std::filesystem::path& h5_path, const std::vector<XdmfFrame>& frames,
                        uint64_t total_rows, int real_bytes, const XdmfExtras& extras) {
    const std::filesystem::path target = xdmf_sidecar_path(h5_path);
    std::filesystem::path temporary = target;
    temporary += ".tmp";
    const std::string text = xdmf_document(h5_path.filename().string(), frames, total_rows, real_bytes, extras);
    {
        std::ofstream os(temporary, std::ios::binary | std::ios::trunc);
        if (!os) {
            throw IoError(fmt::format("cannot write XDMF sidecar '{}': {}", temporary.string(),
                                      std::strerror(errno)));
        }
        os.write(text.data(), static_cast<std::streamsize>(text.size()));
        os.flush();
        if (!os) {
            throw IoError(fmt::format("cannot write XDMF sidecar '{}': write failed",
                                      temporary.string()));
        }
    }
    std::error_code ec;
    std::filesystem::rename(temporary, target, ec);
    if (ec) {
        throw IoError(fmt::format("cannot replace XDMF sidecar '{}': {}", target.string(),
                                  ec.message()));
    }
}

}  // namespace talus
