// Creating a trajectory file: the groups, attributes and every dataset, before SWMR mode
// starts (nothing can be created afterwards), and opening the columns to append to.
#include "io/trajectory/writer_impl.hpp"

namespace talus {

using namespace trajectory;

void TrajectoryWriter::Impl::string_attribute(hid_t loc, const char* name, const std::string& value) {
    Hid type(check(H5Tcopy(H5T_C_S1), "string type"), H5Tclose);
    check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
    check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
    Hid space(check(H5Screate(H5S_SCALAR), "dataspace"), H5Sclose);
    Hid attr(check(H5Acreate2(loc, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                   fmt::format("create attribute '{}'", name)),
             H5Aclose);
    const char* data = value.c_str();
    check(H5Awrite(attr.get(), type.get(), &data), fmt::format("write attribute '{}'", name));
}

void TrajectoryWriter::Impl::string_array_attribute(hid_t loc, const char* name, const std::vector<std::string>& values) {
    Hid type(check(H5Tcopy(H5T_C_S1), "string type"), H5Tclose);
    check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
    check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
    const hsize_t n = values.size();
    Hid space(check(H5Screate_simple(1, &n, nullptr), "dataspace"), H5Sclose);
    Hid attr(check(H5Acreate2(loc, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                   fmt::format("create attribute '{}'", name)),
             H5Aclose);
    std::vector<const char*> data;
    for (const std::string& v : values) data.push_back(v.c_str());
    if (n > 0)
        check(H5Awrite(attr.get(), type.get(), data.data()), fmt::format("write attribute '{}'", name));
}

void TrajectoryWriter::Impl::number_attribute(hid_t loc, const char* name, hid_t file_type, hid_t mem_type,
                                              const void* data, hsize_t n, bool scalar) {
    Hid space(check(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), "dataspace"),
              H5Sclose);
    Hid attr(check(H5Acreate2(loc, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT),
                   fmt::format("create attribute '{}'", name)),
             H5Aclose);
    if (scalar || n > 0)
        check(H5Awrite(attr.get(), mem_type, data), fmt::format("write attribute '{}'", name));
}

// The columns of fixed width, in the order they are created. docs/output-format.md
// describes each; io.output_format_doc checks that every dataset a run writes has its row
// there, with the same unit and type.
const std::vector<TrajectoryWriter::Impl::ColumnSpec> TrajectoryWriter::Impl::kBodyColumns = {
    {&Impl::id, "/bodies/id", Stored::U64, 1, true, "1", "stable body id"},
    {&Impl::position, "/bodies/position", Stored::Real, 3, true, "m", "centre of mass, world frame (x, y, z)"},
    {&Impl::orientation, "/bodies/orientation", Stored::Real, 4, true, "1",
     "unit quaternion, Hamilton, body to world, scalar first (w, x, y, z)"},
    {&Impl::velocity, "/bodies/velocity", Stored::Real, 3, true, "m/s", "linear velocity of the centre of mass, world frame"},
    {&Impl::angular_velocity, "/bodies/angular_velocity", Stored::Real, 3, true, "rad/s",
     "angular velocity in the BODY frame; world frame = R(q) * this"},
    {&Impl::radius, "/bodies/radius", Stored::Real, 1, true, "m",
     "sphere radius; other shapes: bounding radius about the centre of mass"},
    {&Impl::material, "/bodies/material", Stored::U32, 1, true, "1", "index into the root attribute material_names"},
    {&Impl::shape, "/bodies/shape", Stored::U8, 1, true, "1", "0 sphere, 1 capsule, 2 ellipsoid, 3 clump"},
    {&Impl::clump, "/bodies/clump", Stored::I32, 1, true, "1",
     "clump template (index into /clumps/first), -1 for other shapes"},
};

const std::vector<TrajectoryWriter::Impl::ColumnSpec> TrajectoryWriter::Impl::kFrameColumns = {
    {&Impl::frame_time, "/frames/time", Stored::F64, 1, false, "s", "simulated time of the frame"},
    {&Impl::frame_step, "/frames/step", Stored::U64, 1, false, "1", "step count at the frame"},
    {&Impl::frame_first_row, "/frames/first_row", Stored::U64, 1, false, "1", "first row of the frame in /bodies/*"},
    {&Impl::frame_row_count, "/frames/row_count", Stored::U64, 1, false, "1",
     "bodies in the frame; 2^64-1 = entry not yet written", true},
};

const std::vector<TrajectoryWriter::Impl::ColumnSpec> TrajectoryWriter::Impl::kWallContactColumns = {
    {&Impl::wc_wall, "/walls/contacts/wall", Stored::U32, 1, true, "1",
     "wall of the contact (index into the names attribute of /walls)"},
    {&Impl::wc_body, "/walls/contacts/body", Stored::U64, 1, true, "1", "stable id of the body in contact"},
    {&Impl::wc_point, "/walls/contacts/point", Stored::F64, 3, true, "m",
     "contact point at the start of the step, world frame"},
    {&Impl::wc_impulse, "/walls/contacts/impulse", Stored::F64, 3, true, "N s",
     "impulse the body gave the wall over the frame's last step (world frame); divide by the "
     "step (attribute dt of /walls/contacts) for a force"},
    {&Impl::wc_angular, "/walls/contacts/angular_impulse", Stored::F64, 3, true, "N m s",
     "torque impulse on the wall from rolling and spinning resistance over the same step (a "
     "couple; 0 without them)"},
    {&Impl::wc_first_row, "/walls/contacts/first_row", Stored::U64, 1, false, "1",
     "per frame: first row of the frame's contacts in /walls/contacts/*"},
    {&Impl::wc_row_count, "/walls/contacts/row_count", Stored::U64, 1, false, "1",
     "per frame: number of the frame's contacts"},
    {&Impl::wc_dt, "/walls/contacts/dt", Stored::F64, 1, false, "s",
     "per frame: the step the frame's impulses cover (its last step)"},
};

const std::vector<TrajectoryWriter::Impl::ColumnSpec> TrajectoryWriter::Impl::kContactColumns = {
    {&Impl::c_wall, "/contacts/wall", Stored::I32, 1, true, "1",
     "wall the body touches (index into the names attribute of /walls); -1 between two bodies"},
    {&Impl::c_a, "/contacts/a", Stored::U64, 1, true, "1",
     "stable id of body A; 2^64-1 when A is a wall"},
    {&Impl::c_b, "/contacts/b", Stored::U64, 1, true, "1", "stable id of body B"},
    {&Impl::c_point, "/contacts/point", Stored::F64, 3, true, "m",
     "contact point at the start of the step, world frame"},
    {&Impl::c_normal, "/contacts/normal", Stored::F64, 3, true, "1",
     "unit contact normal from A to B, world frame"},
    {&Impl::c_gap, "/contacts/gap", Stored::F64, 1, true, "m",
     "signed distance between the surfaces at the start of the step; < 0 = overlap. A contact "
     "with a positive gap and no impulse was a candidate that did not close"},
    {&Impl::c_normal_impulse, "/contacts/normal_impulse", Stored::F64, 1, true, "N s",
     "impulse of A on B along the normal over the frame's last step (>= 0); divide by the "
     "step (/contacts/dt) for a force"},
    {&Impl::c_tangential_impulse, "/contacts/tangential_impulse", Stored::F64, 3, true, "N s",
     "friction impulse of A on B over the same step, in the tangent plane, world frame"},
    {&Impl::c_segment, "/contacts/segment", Stored::F64, 6, true, "m",
     "the line drawn for the contact (x, y, z of A's centre, then of B's), at the start of the "
     "step; for a wall or a body that does not move, A's end is the contact point"},
    {&Impl::c_first_row, "/contacts/first_row", Stored::U64, 1, false, "1",
     "per frame: first row of the frame's contacts in /contacts/*"},
    {&Impl::c_row_count, "/contacts/row_count", Stored::U64, 1, false, "1",
     "per frame: number of the frame's contacts"},
    {&Impl::c_dt, "/contacts/dt", Stored::F64, 1, false, "s",
     "per frame: the step the frame's impulses cover (its last step)"},
};

const std::vector<TrajectoryWriter::Impl::ColumnSpec> TrajectoryWriter::Impl::kShapeColumns = {
    {&Impl::s_body, "/shapes/body", Stored::U64, 1, true, "1", "stable id of the body the glyph draws"},
    {&Impl::s_material, "/shapes/material", Stored::U32, 1, true, "1",
     "its material (index into the root attribute material_names)"},
    {&Impl::s_position, "/shapes/position", Stored::F64, 3, true, "m", "centre of the glyph, world frame"},
    {&Impl::s_axes, "/shapes/axes", Stored::F64, 9, true, "m",
     "three world vectors (x y z each): an ellipsoid's semi-axes, or a capsule middle's radius "
     "across, half length along its axis and radius across; the vectors a glyph source of "
     "half size 1/2 (ParaView's sphere, cylinder) has its x, y and z mapped to, halved"},
    {&Impl::s_first_row, "/shapes/first_row", Stored::U64, 1, false, "1",
     "per frame: first row of the frame's glyphs in /shapes/*"},
    {&Impl::s_row_count, "/shapes/row_count", Stored::U64, 1, false, "1",
     "per frame: number of the frame's glyphs"},
    {&Impl::s_cylinders, "/shapes/cylinders", Stored::U64, 1, false, "1",
     "per frame: how many of its glyphs, the last ones, are capsules' middles (cylinders); "
     "the others are ellipsoids (a sphere is one with three equal semi-axes)"},
};

const std::vector<TrajectoryWriter::Impl::ColumnSpec> TrajectoryWriter::Impl::kDiagnosticColumns = {
    {&Impl::d_step, "/diagnostics/step", Stored::U64, 1, false, "1",
     "step number after the step; 2^64-1 = entry not yet written", true},
    {&Impl::d_time, "/diagnostics/time", Stored::F64, 1, false, "s", "simulated time after the step"},
    {&Impl::d_contacts, "/diagnostics/contacts", Stored::U32, 1, false, "1", "contacts in the solve"},
    {&Impl::d_iterations, "/diagnostics/iterations", Stored::U32, 1, false, "1", "solver iterations"},
    {&Impl::d_residual, "/diagnostics/residual", Stored::F64, 1, false, "m/s",
     "solver residual at exit (docs/design.md section 6)"},
    {&Impl::d_kinetic, "/diagnostics/kinetic_energy", Stored::F64, 1, false, "J",
     "translational plus rotational kinetic energy after the step"},
    {&Impl::d_potential, "/diagnostics/potential_energy", Stored::F64, 1, false, "J",
     "gravitational potential energy -m g.x after the step"},
    {&Impl::d_wall, "/diagnostics/solver_wall_time", Stored::F64, 1, false, "s", "wall-clock time spent in the solve stage"},
    {&Impl::d_envelope, "/diagnostics/envelope", Stored::F64, 1, false, "m", "collision envelope used this step"},
    {&Impl::d_converged, "/diagnostics/converged", Stored::U8, 1, false, "1",
     "1 if the residual reached the tolerance before the iteration cap"},
    {&Impl::d_joint_infeasibility, "/diagnostics/joint_infeasibility", Stored::F64, 1, false, "m or rad",
     "joint infeasibility max |g_j| after the step (Anitescu 2003 eq. 3.15); 0 without joints"},
    {&Impl::d_contact_infeasibility, "/diagnostics/contact_infeasibility", Stored::F64, 1, false, "m",
     "largest penetration among the step's contacts, at the start of the step (Anitescu 2003 "
     "eq. 3.15, contact part); 0 without penetration"},
    {&Impl::d_dt, "/diagnostics/dt", Stored::F64, 1, false, "s", "the step just taken (fixed, or chosen by the adaptive step)"},
    {&Impl::d_stage, "/diagnostics/stage", Stored::U32, 1, false, "1",
     "index of the stage the step belongs to, into the root attribute stage_names"},
    {&Impl::d_set_aside, "/diagnostics/set_aside", Stored::U32, 1, false, "1",
     "candidate pairs set aside as unable to close within the step and still apart at its end "
     "(docs/design.md section 3, speculative contacts)"},
    {&Impl::d_resolves, "/diagnostics/resolves", Stored::U32, 1, false, "1",
     "extra solves the step took for set-aside pairs that its solved velocities would close"},
};

std::size_t TrajectoryWriter::Impl::body_row_bytes(OutputPrecision precision) {
    std::size_t bytes = 0;
    for (const ColumnSpec& c : kBodyColumns) {
        const std::size_t size = c.type == Stored::U8     ? 1
                                 : c.type == Stored::U32 || c.type == Stored::I32 ? 4
                                 : c.type == Stored::Real ? (precision == OutputPrecision::Float32 ? 4 : 8)
                                                     : 8;
        bytes += c.width * size;
    }
    return bytes;
}

void TrajectoryWriter::Impl::create_columns(const std::vector<ColumnSpec>& specs, int deflate) {
    for (const ColumnSpec& c : specs) {
        hid_t file_type = H5T_IEEE_F64LE, mem_type = H5T_NATIVE_DOUBLE;
        switch (c.type) {
            case Stored::U8: file_type = H5T_STD_U8LE, mem_type = H5T_NATIVE_UINT8; break;
            case Stored::U32: file_type = H5T_STD_U32LE, mem_type = H5T_NATIVE_UINT32; break;
            case Stored::U64: file_type = H5T_STD_U64LE, mem_type = H5T_NATIVE_UINT64; break;
            case Stored::I32: file_type = H5T_STD_I32LE, mem_type = H5T_NATIVE_INT32; break;
            case Stored::F64: break;
            case Stored::Real:
                if (float32) file_type = H5T_IEEE_F32LE, mem_type = H5T_NATIVE_FLOAT;
                break;
        }
        create_column(this->*c.column, c.path, file_type, mem_type, c.width,
                      c.per_row ? body_chunk_rows : kIndexChunkRows, c.unit, c.description,
                      c.marker ? &kUnwritten : nullptr, false, false, c.per_row ? deflate : 0);
    }
}

void TrajectoryWriter::Impl::create_column(Column& c, const std::string& name, hid_t file_type, hid_t mem_type,
                                           hsize_t width, hsize_t chunk_rows, const char* unit,
                                           const char* description, const uint64_t* fill,
                                           bool matrix, bool triple, int deflate) {
    c.name = name;
    c.width = width;
    c.matrix = matrix;
    c.triple = triple;
    c.mem_type = mem_type;
    if (!creating) return;  // an appended file: the dataset is there
    const int rank = triple ? 3 : width == 1 && !matrix ? 1 : 2;
    const hsize_t dims[3] = {0, width, 3};
    const hsize_t max_dims[3] = {H5S_UNLIMITED, width, 3};
    const hsize_t chunk[3] = {chunk_rows, width, 3};
    Hid space(check(H5Screate_simple(rank, dims, max_dims), "dataspace"), H5Sclose);
    Hid dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "property list"), H5Pclose);
    check(H5Pset_chunk(dcpl.get(), rank, chunk), "chunking of " + name);
    if (fill != nullptr) check(H5Pset_fill_value(dcpl.get(), H5T_NATIVE_UINT64, fill), "fill value");
    if (deflate > 0) {
        // Shuffle groups the bytes of equal significance of neighbouring values (signs
        // and exponents of nearby positions agree), which is what lets deflate find runs.
        check(H5Pset_shuffle(dcpl.get()), "shuffle filter of " + name);
        check(H5Pset_deflate(dcpl.get(), unsigned(deflate)), "deflate filter of " + name);
    }
    Hid ds(check(H5Dcreate2(file.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                            dcpl.get(), H5P_DEFAULT),
                 "create dataset " + name),
           H5Dclose);
    string_attribute(ds.get(), "unit", unit);
    string_attribute(ds.get(), "description", description);
}

void TrajectoryWriter::Impl::write_fixed(const std::string& name, hid_t file_type, hid_t mem_type, hsize_t rows,
                                         hsize_t width, const void* data, const char* unit, const char* description) {
    const int rank = width == 1 ? 1 : 2;
    const hsize_t dims[2] = {rows, width};
    Hid space(check(H5Screate_simple(rank, dims, nullptr), "dataspace"), H5Sclose);
    Hid ds(check(H5Dcreate2(file.get(), name.c_str(), file_type, space.get(), H5P_DEFAULT,
                            H5P_DEFAULT, H5P_DEFAULT),
                 "create dataset " + name),
           H5Dclose);
    if (rows > 0)
        check(H5Dwrite(ds.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "write " + name);
    string_attribute(ds.get(), "unit", unit);
    string_attribute(ds.get(), "description", description);
}

void TrajectoryWriter::Impl::write_clumps(const ClumpTable* clumps) {
    Hid group(check(H5Gcreate2(file.get(), "/clumps", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                    "create group /clumps"),
              H5Gclose);
    const ClumpTable empty;
    const ClumpTable& t = clumps ? *clumps : empty;
    clump_templates = t.size();
    std::vector<double> spheres(4 * t.centre.size());
    for (std::size_t k = 0; k < t.centre.size(); ++k) {
        for (int a = 0; a < 3; ++a) spheres[4 * k + a] = t.centre[k][a];
        spheres[4 * k + 3] = t.radius[k];
    }
    write_fixed("/clumps/first", H5T_STD_U32LE, H5T_NATIVE_UINT32, t.first.size(), 1,
                t.first.data(), "1",
                "template t has the rows [first[t], first[t+1]) of /clumps/spheres");
    write_fixed("/clumps/spheres", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, t.centre.size(), 4,
                spheres.data(), "m",
                "sphere centre in the body frame (x, y, z) and radius r; world centre = "
                "position + R(orientation) * (x, y, z)");
}

void TrajectoryWriter::Impl::create_layout(const RunMetadata& meta, const MaterialTable& materials) {
    if (creating) create_root(meta, materials);
    define_columns(meta);
}

void TrajectoryWriter::Impl::create_root(const RunMetadata& meta, const MaterialTable& materials) {
    const hid_t root = file.get();
    string_attribute(root, "format", "talus-trajectory");
    const int32_t version = 1;
    number_attribute(root, "format_version", H5T_STD_I32LE, H5T_NATIVE_INT32, &version, 1, true);
    string_attribute(root, "talus_version", meta.talus_version);
    string_attribute(root, "units", "SI");
    string_attribute(root, "quaternion_convention",
                     "Hamilton, scalar first (w, x, y, z), body to world");
    string_attribute(root, "scene", meta.scene_text);
    string_attribute(root, "scene_path", meta.scene_path);
    string_array_attribute(root, "overrides", meta.overrides);
    std::vector<std::string> names;
    std::vector<double> density, friction;
    for (const Material& m : materials.materials) {
        names.push_back(m.name);
        density.push_back(m.density);
        friction.push_back(m.friction);
    }
    string_array_attribute(root, "material_names", names);
    string_array_attribute(root, "stage_names", meta.stage_names);
    number_attribute(root, "material_density", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                     density.data(), density.size(), false);
    number_attribute(root, "material_friction", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                     friction.data(), friction.size(), false);

    for (const char* g : {"/bodies", "/frames", "/diagnostics", "/flow", "/walls"}) {
        Hid group(check(H5Gcreate2(root, g, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        fmt::format("create group {}", g)),
                  H5Gclose);
    }
}

void TrajectoryWriter::Impl::define_columns(const RunMetadata& meta) {
    const hid_t root = file.get();
    const hid_t f64 = H5T_IEEE_F64LE, u64 = H5T_STD_U64LE;
    const hid_t nf64 = H5T_NATIVE_DOUBLE, nu64 = H5T_NATIVE_UINT64;
    const hsize_t k = kIndexChunkRows;
    // Row datasets (one row per body or contact per frame) are the bulk of the file:
    // they take the compression; per-body reals take the chosen precision.
    const int z = meta.compression;
    float32 = meta.precision == OutputPrecision::Float32;
    body_chunk_rows = trajectory::body_chunk_rows(meta.rows_per_frame);
    create_columns(kBodyColumns, z);
    create_columns(kFrameColumns, z);

    n_emitters = meta.emitters;
    n_outlets = meta.outlets;
    last_emitted.assign(n_emitters, FlowTally{});
    last_removed.assign(n_outlets, FlowTally{});
    const auto flow_set = [&](const char* what, hsize_t n, Column& count, Column& mass,
                              Column& total_count, Column& total_mass) {
        if (n == 0) return;
        const std::string base = fmt::format("/flow/{}_", what);
        const std::string since = fmt::format("bodies {} since the previous frame, per {}", what,
                                              what[0] == 'e' ? "emitter" : "outlet");
        const std::string since_mass = fmt::format("mass {} since the previous frame, per {}", what,
                                                   what[0] == 'e' ? "emitter" : "outlet");
        const std::string total = fmt::format("bodies {} since the start of the run, per {}",
                                              what, what[0] == 'e' ? "emitter" : "outlet");
        const std::string total_mass_text = fmt::format(
            "mass {} since the start of the run, per {}", what, what[0] == 'e' ? "emitter" : "outlet");
        create_column(count, base + "count", u64, nu64, n, k, "1", since.c_str(), nullptr, true);
        create_column(mass, base + "mass", f64, nf64, n, k, "kg", since_mass.c_str(), nullptr, true);
        create_column(total_count, base + "total_count", u64, nu64, n, k, "1", total.c_str(),
                      nullptr, true);
        create_column(total_mass, base + "total_mass", f64, nf64, n, k, "kg",
                      total_mass_text.c_str(), nullptr, true);
    };
    n_walls = meta.wall_names.size();
    if (n_walls > 0) {
        if (creating) {
            Hid group(check(H5Gopen2(root, "/walls", H5P_DEFAULT), "open group /walls"), H5Gclose);
            string_array_attribute(group.get(), "names", meta.wall_names);
            std::vector<double> ref;
            for (const Vec3& p : meta.wall_reference_points)
                ref.insert(ref.end(), {p.x(), p.y(), p.z()});
            number_attribute(group.get(), "torque_reference_points", H5T_IEEE_F64LE,
                             H5T_NATIVE_DOUBLE, ref.data(), ref.size(), false);
        }
        create_column(w_force, "/walls/force", f64, nf64, n_walls, k, "N",
                      "mean force the bodies exert on each wall over the interval since the "
                      "previous frame (world frame; 0 in the first frame)",
                      nullptr, true, true);
        create_column(w_torque, "/walls/torque", f64, nf64, n_walls, k, "N m",
                      "mean torque on each wall about its torque reference point (attribute "
                      "torque_reference_points of /walls) over the same interval",
                      nullptr, true, true);
        wall_contacts = meta.wall_contacts;
    }
    if (creating) surface = meta.wall_surface;  // appending: examine() read the file's
    if (!surface.empty()) {
        const hsize_t points = surface.points.size(), triangles = surface.triangles.size();
        if (creating) {
            Hid group(check(H5Gcreate2(root, "/walls/surface", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                            "create group /walls/surface"),
                      H5Gclose);
            write_fixed("/walls/surface/triangles", H5T_STD_U32LE, H5T_NATIVE_UINT32, triangles, 3,
                        surface.triangles.data(), "1",
                        "the walls' triangles: three rows of the frame's points each (fixed)");
            write_fixed("/walls/surface/wall", H5T_STD_U32LE, H5T_NATIVE_UINT32, triangles, 1,
                        surface.triangle_wall.data(), "1",
                        "wall of each triangle (index into the names attribute of /walls)");
            write_fixed("/walls/surface/first_point", H5T_STD_U32LE, H5T_NATIVE_UINT32,
                        surface.first_point.size(), 1, surface.first_point.data(), "1",
                        "per wall, its first point; one more entry: the points per frame");
            write_fixed("/walls/surface/reference_points", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, points, 3,
                        surface.points.data(), "m", "the points at the walls' reference pose (t = 0)");
        }
        // the run's precision, like the bodies' reals, and the row datasets' compression
        create_column(ws_points, "/walls/surface/points", float32 ? H5T_IEEE_F32LE : f64,
                      float32 ? H5T_NATIVE_FLOAT : nf64, 3,
                      std::clamp<hsize_t>(points, trajectory::kMinChunkRows, trajectory::kBodyChunkRows), "m",
                      "the walls' points at each frame's pose: frame k's are rows k V ... (k + 1) V - 1, "
                      "V = the last entry of first_point",
                      nullptr, false, false, z);
    }
    if (wall_contacts && creating) {
        Hid group(check(H5Gcreate2(root, "/walls/contacts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        "create group /walls/contacts"),
                  H5Gclose);
        number_attribute(group.get(), "dt", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &meta.dt, 1, true);
    }
    if (wall_contacts) create_columns(kWallContactColumns, z);
    all_contacts = meta.contacts;
    if (all_contacts && creating) {
        Hid group(check(H5Gcreate2(root, "/contacts", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        "create group /contacts"),
                  H5Gclose);
        number_attribute(group.get(), "dt", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &meta.dt, 1, true);
    }
    if (all_contacts) create_columns(kContactColumns, z);
    shapes = meta.shapes;
    if (shapes && creating) {
        Hid group(check(H5Gcreate2(root, "/shapes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                        "create group /shapes"),
                  H5Gclose);
    }
    if (shapes) create_columns(kShapeColumns, z);
    flow_set("emitted", n_emitters, f_emitted_count, f_emitted_mass, f_emitted_total_count,
             f_emitted_total_mass);
    flow_set("removed", n_outlets, f_removed_count, f_removed_mass, f_removed_total_count,
             f_removed_total_mass);

    create_columns(kDiagnosticColumns, z);
    // the step's series, apart from the body frames' cadence
    if (n_walls > 0)
        create_column(d_wall_force, "/diagnostics/wall_force", f64, nf64, n_walls, k, "N",
                      "mean force the bodies exert on each wall over the step (world frame)", nullptr,
                      true, true);
    const auto totals = [&](const char* what, hsize_t n, Column& count, Column& mass) {
        if (n == 0) return;
        const char* per = what[0] == 'e' ? "emitter" : "outlet";
        const std::string count_text = fmt::format("bodies {} since the start of the run, per {}, after the step", what, per);
        const std::string mass_text = fmt::format("mass {} since the start of the run, per {}, after the step", what, per);
        create_column(count, fmt::format("/diagnostics/{}_total_count", what), u64, nu64, n, k, "1",
                      count_text.c_str(), nullptr, true);
        create_column(mass, fmt::format("/diagnostics/{}_total_mass", what), f64, nf64, n, k, "kg",
                      mass_text.c_str(), nullptr, true);
    };
    totals("emitted", n_emitters, d_emitted_total_count, d_emitted_total_mass);
    totals("removed", n_outlets, d_removed_total_count, d_removed_total_mass);
}

void TrajectoryWriter::Impl::open_columns() {
    // Each column is appended to, never read back, so its chunk cache needs the chunk
    // being filled and little more. HDF5's default (1 MiB per dataset) kept up to that
    // much of already written chunks per column: a 400-bead soak grew by 11 MiB over
    // 10^5 steps as the caches of the smaller columns slowly filled
    // (benchmarks/soak.py). Two chunks per column bound it from the first frames on.
    auto open = [&](Column& c) {
        std::size_t chunk_bytes = 0;
        {
            Hid ds(check(H5Dopen2(file.get(), c.name.c_str(), H5P_DEFAULT), "open " + c.name),
                   H5Dclose);
            Hid dcpl(check(H5Dget_create_plist(ds.get()), "properties of " + c.name), H5Pclose);
            Hid type(check(H5Dget_type(ds.get()), "type of " + c.name), H5Tclose);
            hsize_t dims[3] = {1, 1, 1};
            const int rank = check(H5Pget_chunk(dcpl.get(), 3, dims), "chunking of " + c.name);
            chunk_bytes = H5Tget_size(type.get());
            for (int k = 0; k < rank; ++k) chunk_bytes *= std::size_t(dims[k]);
        }
        Hid dapl(check(H5Pcreate(H5P_DATASET_ACCESS), "property list"), H5Pclose);
        check(H5Pset_chunk_cache(dapl.get(), 13, 2 * chunk_bytes, 1.0), "chunk cache of " + c.name);
        c.id = Hid(check(H5Dopen2(file.get(), c.name.c_str(), dapl.get()), "open " + c.name),
                   H5Dclose);
    };
    for (Column* c : body_columns()) open(*c);
    for (Column* c : frame_columns()) open(*c);
    for (Column* c : diagnostic_columns()) open(*c);
    for (Column* c : flow_columns()) open(*c);
}

void TrajectoryWriter::Impl::create_file(const std::filesystem::path& at, bool truncate) {
    // In parallel, HDF5's earliest format, whose superblock has no "being written" mark:
    // a killed run's file then opens for any reader (parallel_io.cpp)
    Hid fapl = parallel ? parallel_access() : Hid(check(H5Pcreate(H5P_FILE_ACCESS), "property list"), H5Pclose);
    if (!parallel)
        check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_LATEST, H5F_LIBVER_LATEST),
              "library version bounds");
    // One process: file space in pages of 1 KiB, which divide the operating system's 4 KiB,
    // so that no metadata block smaller than a page straddles two of its pages. A SIGKILL
    // can stop a write between two of those (Linux checks for it after each page it copies),
    // and a block half rewritten fails its checksum for good (docs/output-format.md, "Reading
    // a file that is being written, or was killed").
    Hid fcpl(check(H5Pcreate(H5P_FILE_CREATE), "property list"), H5Pclose);
    if (!parallel) {
        check(H5Pset_file_space_strategy(fcpl.get(), H5F_FSPACE_STRATEGY_PAGE, false, 1), "file space strategy");
        check(H5Pset_file_space_page_size(fcpl.get(), kFileSpacePage), "file space page size");
    }
    const hid_t f = H5Fcreate(at.c_str(), truncate ? H5F_ACC_TRUNC : H5F_ACC_EXCL, fcpl.get(),
                              fapl.get());
    if (f < 0)
        throw IoError(fmt::format("cannot create trajectory file '{}': {}", at.string(),
                                  hdf5_error_text()));
    file = Hid(f, H5Fclose);
    open_path = at;
}

void TrajectoryWriter::Impl::sync_file(const std::filesystem::path& p) {
    const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

}  // namespace talus
