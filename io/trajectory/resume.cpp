// Continuing the file of a killed run (a resumed run, io/checkpoint.hpp): what of it to keep
// up to the checkpoint's step, cut in place or copied to a new file, and the writer's
// counters restored so the file grows on as if the run had never stopped.
#include "io/trajectory/writer_impl.hpp"

namespace talus {

using namespace trajectory;

bool TrajectoryWriter::Impl::exists(hid_t f, const char* name) const {
    // H5Lexists fails (< 0) when a parent group is missing, so each level is asked in turn;
    // a failure on a level whose parent exists is a group that does not read (a damaged
    // block), which must not pass for an absent one
    std::string prefix;
    for (std::string_view rest = name; !rest.empty();) {
        const std::size_t slash = rest.find('/', 1);
        prefix += rest.substr(0, slash);
        const htri_t here = H5Lexists(f, prefix.c_str(), H5P_DEFAULT);
        if (here < 0)
            throw IoError(fmt::format("trajectory '{}': cannot look up {}: {}", path.string(),
                                      prefix, hdf5_error_text()));
        if (here == 0) return false;
        rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
    }
    return true;
}

std::vector<hsize_t> TrajectoryWriter::Impl::dims_of(hid_t f, const std::string& name) const {
    Hid ds(check(H5Dopen2(f, name.c_str(), H5P_DEFAULT), "open " + name), H5Dclose);
    Hid space(check(H5Dget_space(ds.get()), "dataspace of " + name), H5Sclose);
    const int rank = check(H5Sget_simple_extent_ndims(space.get()), "dataspace of " + name);
    std::vector<hsize_t> d(std::size_t(std::max(rank, 1)), 0);
    check(H5Sget_simple_extent_dims(space.get(), d.data(), nullptr), "dataspace of " + name);
    return d;
}

std::vector<std::string> TrajectoryWriter::Impl::read_strings(hid_t f, const char* name) const {
    if (H5Aexists(f, name) <= 0) return {};
    Hid attr(check(H5Aopen(f, name, H5P_DEFAULT), fmt::format("attribute '{}'", name)), H5Aclose);
    Hid stored(check(H5Aget_type(attr.get()), "type"), H5Tclose);
    if (H5Tget_class(stored.get()) != H5T_STRING || H5Tis_variable_str(stored.get()) <= 0)
        return {};
    Hid space(check(H5Aget_space(attr.get()), "dataspace"), H5Sclose);
    const hssize_t n = check(H5Sget_simple_extent_npoints(space.get()), "dataspace");
    Hid type(check(H5Tcopy(H5T_C_S1), "string type"), H5Tclose);
    check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
    check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
    std::vector<char*> data(std::size_t(n), nullptr);
    if (n > 0)
        check(H5Aread(attr.get(), type.get(), data.data()), fmt::format("read attribute '{}'", name));
    std::vector<std::string> out;
    for (char* p : data) {
        out.emplace_back(p != nullptr ? p : "");
        H5free_memory(p);
    }
    return out;
}

void TrajectoryWriter::Impl::check_same_run(hid_t f, const RunMetadata& meta) const {
    if (read_strings(f, "format") != std::vector<std::string>{"talus-trajectory"})
        throw IoError(fmt::format("cannot continue '{}': not a Talus trajectory", path.string()));
    if (read_strings(f, "scene") != std::vector<std::string>{meta.scene_text} ||
        read_strings(f, "overrides") != meta.overrides)
        throw IoError(fmt::format(
            "cannot continue '{}': it is the trajectory of another scene (or other --set "
            "overrides) than the checkpoint's; give the run's own trajectory with -o",
            path.string()));
    const auto width = [&](const char* name) -> std::size_t {
        if (!exists(f, name)) return 0;
        const std::vector<hsize_t> d = dims_of(f, name);
        return d.size() >= 2 ? std::size_t(d[1]) : 0;
    };
    const std::size_t emitters = width("/flow/emitted_count"),
                      outlets = width("/flow/removed_count"), walls = width("/walls/force");
    const bool contacts = exists(f, "/walls/contacts");
    const bool want_contacts = meta.wall_contacts && !meta.wall_names.empty();
    const bool all = exists(f, "/contacts");
    bool stored32 = false;
    {
        Hid ds(check(H5Dopen2(f, "/bodies/position", H5P_DEFAULT), "open /bodies/position"),
               H5Dclose);
        Hid type(check(H5Dget_type(ds.get()), "type of /bodies/position"), H5Tclose);
        stored32 = H5Tget_size(type.get()) == sizeof(float);
    }
    if (emitters != meta.emitters || outlets != meta.outlets ||
        walls != meta.wall_names.size() || contacts != want_contacts || all != meta.contacts ||
        stored32 != (meta.precision == OutputPrecision::Float32))
        throw IoError(fmt::format(
            "cannot continue '{}': it has {} emitters, {} outlets, {} walls{}, {}{} rows; "
            "the checkpoint's run {}, {}, {}{}, {}{}",
            path.string(), emitters, outlets, walls, contacts ? " with contacts" : "",
            all ? "/contacts, " : "",
            name_of(stored32 ? OutputPrecision::Float32 : OutputPrecision::Float64), meta.emitters,
            meta.outlets, meta.wall_names.size(), want_contacts ? " with contacts" : "",
            meta.contacts ? "/contacts, " : "", name_of(meta.precision)));
}

TrajectoryWriter::Impl::Kept TrajectoryWriter::Impl::keep(hid_t f, uint64_t step) {
    Kept k;
    hsize_t index_rows = std::numeric_limits<hsize_t>::max(), body_rows = index_rows,
            diag_len = index_rows;
    for (Column* c : frame_columns()) index_rows = std::min(index_rows, dims_of(f, c->name)[0]);
    for (Column* c : body_columns()) body_rows = std::min(body_rows, dims_of(f, c->name)[0]);
    for (Column* c : diagnostic_columns())
        if (std::find(absent.begin(), absent.end(), c) == absent.end())
            diag_len = std::min(diag_len, dims_of(f, c->name)[0]);
    k.time = read_column<double>(f, frame_time, 0, index_rows);
    k.step = read_column<uint64_t>(f, frame_step, 0, index_rows);
    k.first_row = read_column<uint64_t>(f, frame_first_row, 0, index_rows);
    k.row_count = read_column<uint64_t>(f, frame_row_count, 0, index_rows);
    while (k.frames < index_rows && k.row_count[k.frames] != kUnwritten &&
           k.first_row[k.frames] <= body_rows &&
           k.row_count[k.frames] <= body_rows - k.first_row[k.frames] && k.step[k.frames] <= step)
        ++k.frames;
    if (exists(f, "/frames/committed")) {  // written in parallel: no frame past the count
        Hid ds(check(H5Dopen2(f, "/frames/committed", H5P_DEFAULT), "open /frames/committed"), H5Dclose);
        uint64_t committed_frames[2] = {0, 0};
        check(H5Dread(ds.get(), H5T_NATIVE_UINT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, committed_frames),
              "read /frames/committed");
        k.frames = std::min<hsize_t>(k.frames, committed_frames[0]);
    }
    if (k.frames == 0)
        throw IoError(fmt::format("cannot continue '{}': it holds no complete frame up to "
                                  "step {}", path.string(), step));
    const hsize_t last = k.frames - 1;
    k.rows = k.first_row[last] + k.row_count[last];
    if (wall_contacts)
        k.wc_rows = read_column<uint64_t>(f, wc_first_row, last, 1)[0] +
                    read_column<uint64_t>(f, wc_row_count, last, 1)[0];
    if (all_contacts) {
        k.c_first_row = read_column<uint64_t>(f, c_first_row, 0, k.frames);
        k.c_row_count = read_column<uint64_t>(f, c_row_count, 0, k.frames);
        k.c_dt = read_column<double>(f, c_dt, 0, k.frames);
        k.c_rows = k.c_first_row[last] + k.c_row_count[last];
    }
    if (shapes) {
        k.s_first_row = read_column<uint64_t>(f, s_first_row, 0, k.frames);
        k.s_row_count = read_column<uint64_t>(f, s_row_count, 0, k.frames);
        k.s_cylinders = read_column<uint64_t>(f, s_cylinders, 0, k.frames);
        k.s_rows = k.s_first_row[last] + k.s_row_count[last];
    }
    const auto diag_step = read_column<uint64_t>(f, d_step, 0, diag_len);
    while (k.diag_rows < diag_len && diag_step[k.diag_rows] != kUnwritten &&
           diag_step[k.diag_rows] <= step)
        ++k.diag_rows;
    return k;
}

void TrajectoryWriter::Impl::read_tallies(hid_t f, hsize_t k, std::vector<FlowTally>& emitted,
                                          std::vector<FlowTally>& removed) const {
    const auto tally = [&](const Column& total_count, const Column& total_mass,
                           std::vector<FlowTally>& out, std::size_t n) {
        out.assign(n, FlowTally{});
        if (n == 0) return;
        const auto c = read_column<uint64_t>(f, total_count, k, 1);
        const auto m = read_column<double>(f, total_mass, k, 1);
        for (std::size_t j = 0; j < n; ++j) out[j] = FlowTally{c[j], m[j]};
    };
    tally(f_emitted_total_count, f_emitted_total_mass, emitted, n_emitters);
    tally(f_removed_total_count, f_removed_total_mass, removed, n_outlets);
}

void TrajectoryWriter::Impl::adopt(hid_t f, const Kept& k) {
    frames.clear();
    for (hsize_t i = 0; i < k.frames; ++i) {
        XdmfFrame entry{k.time[i], k.first_row[i], k.row_count[i]};
        if (all_contacts) {
            entry.contact_first_row = k.c_first_row[i];
            entry.contact_count = k.c_row_count[i];
            entry.contact_dt = k.c_dt[i];
        }
        if (shapes) {
            entry.shape_first_row = k.s_first_row[i];
            entry.shape_count = k.s_row_count[i];
            entry.shape_cylinders = k.s_cylinders[i];
        }
        frames.push_back(entry);
    }
    rows = k.rows;
    diag_rows = k.diag_rows;
    wc_rows = k.wc_rows;
    c_rows = k.c_rows;
    s_rows = k.s_rows;
    last_step = k.step[k.frames - 1];
    last_time = k.time[k.frames - 1];
    read_tallies(f, k.frames - 1, last_emitted, last_removed);
}

TrajectoryWriter::Impl::Kept TrajectoryWriter::Impl::examine(hid_t f, const RunMetadata& meta, uint64_t step) {
    check_same_run(f, meta);
    surface = read_wall_surface(f);  // the file's own, whatever the resumed scene's bodies size
    creating = false;  // describe the columns (their names); the datasets are there
    RunMetadata as_stored = meta;
    as_stored.shapes = exists(f, "/shapes");  // the file's, whatever bodies the checkpoint kept
    define_columns(as_stored);
    absent.clear();  // a file from before a column was added (not the step: every file has it)
    for (Column* c : diagnostic_columns())
        if (c != &d_step && !exists(f, c->name.c_str())) absent.push_back(c);
    if (exists(f, "/clumps/first")) {
        const hsize_t n = dims_of(f, "/clumps/first")[0];
        clump_templates = n > 0 ? std::size_t(n - 1) : 0;
    }
    return keep(f, step);
}

void TrajectoryWriter::Impl::continue_in_place(const Kept& k) {
    adopt(file.get(), k);
    const auto cut = [&](const Column& c, hsize_t n) {
        Hid ds(check(H5Dopen2(file.get(), c.name.c_str(), H5P_DEFAULT), "open " + c.name), H5Dclose);
        Hid space(check(H5Dget_space(ds.get()), "dataspace of " + c.name), H5Sclose);
        hsize_t d[3] = {0, 0, 0};
        check(H5Sget_simple_extent_dims(space.get(), d, nullptr), "dataspace of " + c.name);
        if (d[0] <= n) return;
        d[0] = n;
        check(H5Dset_extent(ds.get(), d), "cut " + c.name);
    };
    for (Column* c : body_columns()) cut(*c, rows);
    for (Column* c : frame_columns()) cut(*c, k.frames);
    for (Column* c : diagnostic_columns()) cut(*c, diag_rows);
    for (Column* c : flow_columns()) cut(*c, kept_length(c, k.frames));
    check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");
    check(H5Fstart_swmr_write(file.get()), "start SWMR write mode");
    open_columns();
}

WallSurface TrajectoryWriter::Impl::read_wall_surface(hid_t f) const {
    WallSurface out;
    if (!exists(f, "/walls/surface/reference_points")) return out;
    const auto whole = [&](const char* name, auto element, hid_t type) {
        return read_rows<decltype(element)>(f, name, type, 0, dims_of(f, name)[0]);
    };
    out.points = whole("/walls/surface/reference_points", Vec3(0, 0, 0), H5T_NATIVE_DOUBLE);
    out.triangles = whole("/walls/surface/triangles", std::array<uint32_t, 3>{}, H5T_NATIVE_UINT32);
    out.triangle_wall = whole("/walls/surface/wall", uint32_t{}, H5T_NATIVE_UINT32);
    out.first_point = whole("/walls/surface/first_point", uint32_t{}, H5T_NATIVE_UINT32);
    return out;
}

hsize_t TrajectoryWriter::Impl::kept_length(const Column* c, hsize_t frames) const {
    if (c == &ws_points) return frames * surface.points.size();
    // a contact group's row columns (per_row in its table) are cut to its rows kept
    const auto row_column_of = [&](const std::vector<ColumnSpec>& specs) {
        return std::any_of(specs.begin(), specs.end(),
                           [&](const ColumnSpec& s) { return s.per_row && &(this->*s.column) == c; });
    };
    if (row_column_of(kWallContactColumns)) return wc_rows;
    if (row_column_of(kContactColumns)) return c_rows;
    if (row_column_of(kShapeColumns)) return s_rows;
    return frames;
}

void TrajectoryWriter::Impl::continue_by_copy(hid_t old, const Kept& k, const RunMetadata& meta,
                                              const MaterialTable& materials, const ClumpTable* clumps) {
    RunMetadata m = meta;
    if (const auto p = read_strings(old, "scene_path"); p.size() == 1) m.scene_path = p[0];
    if (const auto v = read_strings(old, "talus_version"); v.size() == 1) m.talus_version = v[0];
    m.wall_surface = surface;  // the original's (examine read it)
    m.shapes = shapes;         // likewise
    // the copy keeps the original's chunks (the run that made it may have started with
    // another body count than the checkpoint holds)
    {
        QuietHdf5 quiet;
        const Hid position(H5Dopen2(old, "/bodies/position", H5P_DEFAULT), H5Dclose);
        if (position.get() >= 0) {
            const Hid dcpl(H5Dget_create_plist(position.get()), H5Pclose);
            hsize_t dims[2] = {0, 0};
            if (dcpl.get() >= 0 && H5Pget_chunk(dcpl.get(), 2, dims) == 2) m.rows_per_frame = dims[0];
        }
    }
    std::filesystem::path tmp = path;
    tmp += ".resume.tmp";
    create_file(tmp, true);
    copying = true;
    creating = true;
    try {
        create_layout(m, materials);
        write_clumps(clumps);
        check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");
        check(H5Fstart_swmr_write(file.get()), "start SWMR write mode");
        open_columns();
        copy_frames(old, k);
        check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");
        sync_file(tmp);
        std::error_code ec;
        std::filesystem::rename(tmp, path, ec);
        if (ec)
            throw IoError(fmt::format("cannot continue '{}': cannot rename '{}' over it: {}",
                                      path.string(), tmp.string(), ec.message()));
    } catch (...) {
        // The copy goes. It is closed as it stands (frozen, HDF5 could not close it, and
        // would try again at exit: a crash in H5F__close_cb); a close that fails all the
        // same (a full disk) leaves the caller to end the process without HDF5's clean-up.
        for (Column* c : body_columns()) c->id.reset();
        for (Column* c : frame_columns()) c->id.reset();
        for (Column* c : diagnostic_columns()) c->id.reset();
        for (Column* c : flow_columns()) c->id.reset();
        file.reset();
        closed = true;
        std::error_code ignored;
        std::filesystem::remove(tmp, ignored);
        throw;
    }
    copying = false;
    open_path = path;
    write_seconds = 0.0;
}

void TrajectoryWriter::Impl::copy_frames(hid_t old, const Kept& k) {
    // Each dataset of `old` is opened once: its chunk cache then serves the frames that
    // share a chunk, instead of each frame decompressing the chunk again.
    std::map<const Column*, Hid> opened;
    const auto rows = [&](const Column& c, auto element, hsize_t first, hsize_t n) {
        using T = decltype(element);
        if (std::find(absent.begin(), absent.end(), &c) != absent.end())
            return std::vector<T>(std::size_t(n * c.width), unrecorded<T>());
        auto it = opened.find(&c);
        if (it == opened.end())
            it = opened.emplace(&c, Hid(check(H5Dopen2(old, c.name.c_str(), H5P_DEFAULT),
                                              "open " + c.name),
                                        H5Dclose))
                     .first;
        return read_open_rows<T>(it->second.get(), c.name, c.mem_type, first, n);
    };
    const auto diag_steps = rows(d_step, uint64_t{}, 0, k.diag_rows);
    uint64_t d = 0;  // next diagnostics entry to copy
    const auto diagnostics_up_to = [&](uint64_t last_step_included, FrameRows& into) {
        uint64_t n = 0;
        while (d + n < k.diag_rows && diag_steps[d + n] <= last_step_included) ++n;
        into.diagnostics.assign(std::size_t(n), StepDiagnostics{});
        if (n == 0) return;
        const auto time = rows(d_time, double{}, d, n);
        const auto contacts = rows(d_contacts, uint32_t{}, d, n);
        const auto iterations = rows(d_iterations, uint32_t{}, d, n);
        const auto residual = rows(d_residual, double{}, d, n);
        const auto kinetic = rows(d_kinetic, double{}, d, n);
        const auto potential = rows(d_potential, double{}, d, n);
        const auto wall = rows(d_wall, double{}, d, n);
        const auto envelope = rows(d_envelope, double{}, d, n);
        const auto converged = rows(d_converged, uint8_t{}, d, n);
        const auto joint = rows(d_joint_infeasibility, double{}, d, n);
        const auto penetration = rows(d_contact_infeasibility, double{}, d, n);
        const auto dt = rows(d_dt, double{}, d, n);
        const auto stage = rows(d_stage, uint32_t{}, d, n);
        const auto set_aside = rows(d_set_aside, uint32_t{}, d, n);
        const auto resolves = rows(d_resolves, uint32_t{}, d, n);
        // the step's series, row i of each: width entries from i * width
        const auto series = [&](const Column& c, std::size_t width, auto zero, auto member) {
            if (width == 0) return;
            const auto all = rows(c, zero, d, n);
            for (std::size_t i = 0; i < n; ++i)
                (into.diagnostics[i].*member)
                    .assign(all.begin() + std::ptrdiff_t(i * width), all.begin() + std::ptrdiff_t((i + 1) * width));
        };
        series(d_wall_force, n_walls, Vec3(0, 0, 0), &StepDiagnostics::wall_force);
        series(d_emitted_total_count, n_emitters, uint64_t{}, &StepDiagnostics::emitted_total_count);
        series(d_emitted_total_mass, n_emitters, double{}, &StepDiagnostics::emitted_total_mass);
        series(d_removed_total_count, n_outlets, uint64_t{}, &StepDiagnostics::removed_total_count);
        series(d_removed_total_mass, n_outlets, double{}, &StepDiagnostics::removed_total_mass);
        for (std::size_t i = 0; i < n; ++i) {
            StepDiagnostics& s = into.diagnostics[i];
            s.step = diag_steps[d + i];
            s.time = time[i];
            s.contacts = contacts[i];
            s.iterations = iterations[i];
            s.residual = residual[i];
            s.kinetic_energy = kinetic[i];
            s.potential_energy = potential[i];
            s.solver_wall_time = wall[i];
            s.envelope = envelope[i];
            s.converged = converged[i] != 0;
            s.joint_infeasibility = joint[i];
            s.contact_infeasibility = penetration[i];
            s.dt = dt[i];
            s.stage = stage[i];
            s.set_aside = set_aside[i];
            s.resolves = resolves[i];
        }
        d += n;
    };
    const auto tallies = [&](hsize_t frame, const Column& total_count, const Column& total_mass,
                             std::size_t n, std::vector<FlowTally>& out) {
        out.assign(n, FlowTally{});
        if (n == 0) return;
        const auto c = rows(total_count, uint64_t{}, frame, 1);
        const auto m = rows(total_mass, double{}, frame, 1);
        for (std::size_t j = 0; j < n; ++j) out[j] = FlowTally{c[j], m[j]};
    };
    FrameRows fr;
    const auto read_frame = [&](hsize_t i) {
        const hsize_t a = k.first_row[i], n = k.row_count[i];
        fr.frame = true;
        fr.time = k.time[i];
        fr.step = k.step[i];
        fr.n = std::size_t(n);
        diagnostics_up_to(fr.step, fr);
        fr.id = rows(id, uint64_t{}, a, n);
        fr.material = rows(material, uint32_t{}, a, n);
        fr.shape = rows(shape, uint8_t{}, a, n);
        fr.clump = rows(clump, int32_t{}, a, n);
        const RealColumns c(fr.n);
        const auto reals = [&](auto& out) {
            using T = typename std::decay_t<decltype(out)>::value_type;
            out.resize(c.total);
            const auto put = [&](const Column& col, std::size_t offset) {
                const auto v = rows(col, T{}, a, n);
                std::copy(v.begin(), v.end(), out.begin() + std::ptrdiff_t(offset));
            };
            put(position, c.position);
            put(orientation, c.orientation);
            put(velocity, c.velocity);
            put(angular_velocity, c.angular_velocity);
            put(radius, c.radius);
        };
        if (float32) reals(fr.real32);
        else reals(fr.real64);
        tallies(i, f_emitted_total_count, f_emitted_total_mass, n_emitters, fr.emitted);
        tallies(i, f_removed_total_count, f_removed_total_mass, n_outlets, fr.removed);
        if (n_walls > 0) {
            fr.wall_force = rows(w_force, Vec3(0, 0, 0), i, 1);
            fr.wall_torque = rows(w_torque, Vec3(0, 0, 0), i, 1);
        }
        fr.contacts.clear();
        if (wall_contacts) {
            const uint64_t ca = rows(wc_first_row, uint64_t{}, i, 1)[0];
            const uint64_t cn = rows(wc_row_count, uint64_t{}, i, 1)[0];
            fr.contacts.wall = rows(wc_wall, uint32_t{}, ca, cn);
            fr.contacts.body = rows(wc_body, uint64_t{}, ca, cn);
            fr.contacts.point = rows(wc_point, Vec3(0, 0, 0), ca, cn);
            fr.contacts.impulse = rows(wc_impulse, Vec3(0, 0, 0), ca, cn);
            fr.contacts.angular_impulse = rows(wc_angular, Vec3(0, 0, 0), ca, cn);
            fr.contacts.step = rows(wc_dt, double{}, i, 1)[0];
        }
        if (!surface.empty()) {
            const hsize_t v = surface.points.size();
            if (float32) {
                const auto stored = rows(ws_points, std::array<float, 3>{}, i * v, v);
                fr.wall_points.resize(v);  // widening is exact: written again as the same floats
                for (std::size_t j = 0; j < v; ++j)
                    fr.wall_points[j] = Vec3(stored[j][0], stored[j][1], stored[j][2]);
            } else {
                fr.wall_points = rows(ws_points, Vec3(0, 0, 0), i * v, v);
            }
        }
        fr.record.clear();
        if (all_contacts) {
            const uint64_t ca = rows(c_first_row, uint64_t{}, i, 1)[0];
            const uint64_t cn = rows(c_row_count, uint64_t{}, i, 1)[0];
            ContactRecord& r = fr.record;
            r.wall = rows(c_wall, int32_t{}, ca, cn);
            r.a = rows(c_a, uint64_t{}, ca, cn);
            r.b = rows(c_b, uint64_t{}, ca, cn);
            r.point = rows(c_point, Vec3(0, 0, 0), ca, cn);
            r.normal = rows(c_normal, Vec3(0, 0, 0), ca, cn);
            r.gap = rows(c_gap, double{}, ca, cn);
            r.normal_impulse = rows(c_normal_impulse, double{}, ca, cn);
            r.tangential_impulse = rows(c_tangential_impulse, Vec3(0, 0, 0), ca, cn);
            r.segment = rows(c_segment, std::array<Vec3, 2>{}, ca, cn);
            r.step = rows(c_dt, double{}, i, 1)[0];
        }
        fr.glyphs.clear();
        if (shapes) {
            const uint64_t sa = rows(s_first_row, uint64_t{}, i, 1)[0];
            const uint64_t sn = rows(s_row_count, uint64_t{}, i, 1)[0];
            trajectory::ShapeGlyphs& g = fr.glyphs;
            g.body = rows(s_body, uint64_t{}, sa, sn);
            g.material = rows(s_material, uint32_t{}, sa, sn);
            g.position = rows(s_position, Vec3(0, 0, 0), sa, sn);
            g.axes = rows(s_axes, std::array<double, 9>{}, sa, sn);
            g.cylinders = rows(s_cylinders, uint64_t{}, i, 1)[0];
        }
    };
    // A killed run's file can hold a metadata block that no longer reads (a chunk index
    // HDF5 was rewriting: "incorrect metadata checksum"). The frames before the first
    // that does not read are kept; the rest are lost, and said so (damage).
    hsize_t copied = 0;
    for (; copied < k.frames; ++copied) {
        const uint64_t d_before = d;
        try {
            read_frame(copied);
        } catch (const IoError& e) {
            d = d_before;
            const hsize_t last = k.frames - 1;
            damage = copied == last
                         ? fmt::format("frame {} (step {}) does not read", copied, k.step[copied])
                         : fmt::format("frames {} to {} (steps {} to {}) do not read", copied,
                                       last, k.step[copied], k.step[last]);
            damage += fmt::format(", from a block the killed run was writing ({}), and {} lost",
                                  e.what(), copied == last ? "is" : "are");
            break;
        }
        write_rows_unguarded(fr);  // a failure here is the copy's own: it ends the resume
    }
    if (copied == 0)
        throw IoError(fmt::format("cannot continue '{}': its {}", path.string(), damage));
    fr.frame = false;
    try {
        diagnostics_up_to(std::numeric_limits<uint64_t>::max(), fr);
    } catch (const IoError& e) {
        fr.diagnostics.clear();
        damage += fmt::format("{}the diagnostics after step {} do not read ({}) and are lost",
                              damage.empty() ? "" : "; ", k.step[copied - 1], e.what());
    }
    write_rows_unguarded(fr);
    last_step = k.step[copied - 1];
    last_time = k.time[copied - 1];
}

}  // namespace talus
