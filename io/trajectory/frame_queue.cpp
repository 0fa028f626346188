// Appending frames in SWMR mode, in the order that keeps the file readable at every instant
// (data first, the marking datasets last), the XDMF sidecar, and the background writer
// thread that makes these calls for the step loop.
#include "core/ranks.hpp"
#include "io/trajectory/writer_impl.hpp"

namespace talus {

using namespace trajectory;

void TrajectoryWriter::Impl::append_flow(hsize_t frame, const std::vector<FlowTally>& now, std::vector<FlowTally>& last,
                                         Column& count, Column& mass, Column& total_count, Column& total_mass) {
    const std::size_t n = last.size();
    if (n == 0) return;
    std::vector<uint64_t> dc(n), tc(n);
    std::vector<double> dm(n), tm(n);
    for (std::size_t j = 0; j < n; ++j) {
        dc[j] = now[j].count - last[j].count;
        dm[j] = now[j].mass - last[j].mass;
        tc[j] = now[j].count;
        tm[j] = now[j].mass;
    }
    append(count, frame, 1, dc.data());
    append(mass, frame, 1, dm.data());
    append(total_count, frame, 1, tc.data());
    append(total_mass, frame, 1, tm.data());
    last = now;
}

void TrajectoryWriter::Impl::append(Column& c, hsize_t old_rows, hsize_t n, const void* data) {
    if (n == 0) return;
    if (parallel) {  // every rank holds these rows alike: rank 0 writes them
        append_part(c, old_rows, n, 0, writes_shared() ? n : 0, data);
        return;
    }
    const hsize_t new_dims[3] = {old_rows + n, c.width, 3};
    check(H5Dset_extent(c.id.get(), new_dims), "extend " + c.name);
    write_at(c, old_rows, n, data);
}

void TrajectoryWriter::Impl::write_at(Column& c, hsize_t at, hsize_t n, const void* data) {
    const int rank = c.triple ? 3 : c.width == 1 && !c.matrix ? 1 : 2;
    const hsize_t start[3] = {at, 0, 0};
    const hsize_t count[3] = {n, c.width, 3};
    Hid file_space(check(H5Dget_space(c.id.get()), "dataspace of " + c.name), H5Sclose);
    check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
          "select rows of " + c.name);
    Hid mem_space(check(H5Screate_simple(rank, count, nullptr), "dataspace"), H5Sclose);
    check(H5Dwrite(c.id.get(), c.mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, data),
          "write " + c.name);
}

void TrajectoryWriter::Impl::update_sidecar(bool always) {
    if (copying || sidecar_frames == frames.size()) return;
    if (!writes_shared()) {  // written in parallel: rank 0 keeps the sidecar
        sidecar_frames = frames.size();
        return;
    }
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const double lifetime = std::chrono::duration<double>(start - created).count();
    if (!always && frames.size() > kSidecarAlwaysFrames &&
        sidecar_seconds > kSidecarTimeShare * lifetime)
        return;
    write_xdmf_sidecar(path, frames, rows, float32 ? 4 : 8, sidecar_extras());
    sidecar_seconds += std::chrono::duration<double>(clock::now() - start).count();
    sidecar_frames = frames.size();
}

void TrajectoryWriter::Impl::append_diagnostics() {
    const hsize_t n = to_write.size();
    if (n == 0) return;
    std::vector<uint64_t> step(n);
    std::vector<double> time(n), residual(n), kinetic(n), potential(n), wall(n), envelope(n),
        joint(n), penetration(n), dt(n);
    std::vector<uint32_t> contacts(n), iterations(n), stage(n), set_aside(n), resolves(n);
    std::vector<uint8_t> converged(n);
    for (std::size_t i = 0; i < n; ++i) {
        const StepDiagnostics& d = to_write[i];
        step[i] = d.step;
        time[i] = d.time;
        contacts[i] = d.contacts;
        iterations[i] = d.iterations;
        residual[i] = d.residual;
        kinetic[i] = d.kinetic_energy;
        potential[i] = d.potential_energy;
        wall[i] = d.solver_wall_time;
        envelope[i] = d.envelope;
        joint[i] = d.joint_infeasibility;
        penetration[i] = d.contact_infeasibility;
        dt[i] = d.dt;
        stage[i] = d.stage;
        set_aside[i] = d.set_aside;
        resolves[i] = d.resolves;
        converged[i] = d.converged ? 1 : 0;
    }
    const hsize_t r = diag_rows;
    append(d_time, r, n, time.data());
    append(d_contacts, r, n, contacts.data());
    append(d_iterations, r, n, iterations.data());
    append(d_residual, r, n, residual.data());
    append(d_kinetic, r, n, kinetic.data());
    append(d_potential, r, n, potential.data());
    append(d_wall, r, n, wall.data());
    append(d_envelope, r, n, envelope.data());
    append(d_joint_infeasibility, r, n, joint.data());
    append(d_contact_infeasibility, r, n, penetration.data());
    append(d_dt, r, n, dt.data());
    append(d_stage, r, n, stage.data());
    append(d_set_aside, r, n, set_aside.data());
    append(d_resolves, r, n, resolves.data());
    append(d_converged, r, n, converged.data());
    // the step's series: one row of W walls (x, y, z), E emitters or O outlets per step
    const auto series = [&](Column& c, std::size_t width, auto member, auto zero) {
        if (width == 0) return;
        std::vector<decltype(zero)> rows(n * width, zero);
        for (std::size_t i = 0; i < n; ++i) {
            const auto& v = to_write[i].*member;
            if (v.size() == width) std::copy(v.begin(), v.end(), rows.begin() + std::ptrdiff_t(i * width));
        }
        append(c, r, n, rows.data());
    };
    series(d_wall_force, n_walls, &StepDiagnostics::wall_force, Vec3(Vec3::Zero()));
    series(d_emitted_total_count, n_emitters, &StepDiagnostics::emitted_total_count, uint64_t{0});
    series(d_emitted_total_mass, n_emitters, &StepDiagnostics::emitted_total_mass, 0.0);
    series(d_removed_total_count, n_outlets, &StepDiagnostics::removed_total_count, uint64_t{0});
    series(d_removed_total_mass, n_outlets, &StepDiagnostics::removed_total_mass, 0.0);
    for (Column* c : diagnostic_columns())
        if (c != &d_step) flush(*c);
    append(d_step, r, n, step.data());
    flush(d_step);
    diag_rows += n;
    to_write.clear();
}

void TrajectoryWriter::Impl::pack(FrameRows& out, const BodyStore& bodies, double time, uint64_t step,
                                  const std::vector<FlowTally>& emitted, const std::vector<FlowTally>& removed,
                                  const WallLoads* loads, const WallContactList* contacts,
                                  const ContactRecord* record, const std::vector<Wall>* walls) {
    if (emitted.size() != n_emitters || removed.size() != n_outlets)
        throw IoError(fmt::format("trajectory '{}': the file was created for {} emitters and {} "
                                  "outlets, the frame brings {} and {}",
                                  path.string(), n_emitters, n_outlets, emitted.size(),
                                  removed.size()));
    const std::size_t n = bodies.size();
    if (bodies.position.size() != n || bodies.orientation.size() != n ||
        bodies.velocity.size() != n || bodies.angular_velocity.size() != n ||
        bodies.radius.size() != n || bodies.material.size() != n || bodies.shape.size() != n ||
        bodies.shape_param.size() != n) {
        throw IoError(fmt::format("trajectory '{}': BodyStore arrays have different lengths",
                                  path.string()));
    }
    out.frame = true;
    out.time = time;
    out.step = step;
    out.n = n;
    const std::vector<uint32_t> order = trajectory::rows_by_id(bodies);
    out.shape.resize(n);
    out.clump.resize(n);
    out.id.resize(n);
    out.material.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = order[i];
        out.shape[i] = uint8_t(bodies.shape[k]);
        out.clump[i] = bodies.shape[k] == Shape::Clump ? int32_t(bodies.clump_of(k)) : -1;
        out.id[i] = bodies.id[k];
        out.material[i] = bodies.material[k];
        if (out.clump[i] >= int32_t(clump_templates))
            throw IoError(fmt::format("trajectory '{}': body {} uses clump template {}, but the "
                                      "file was created with {} templates",
                                      path.string(), bodies.id[k], out.clump[i],
                                      clump_templates));
    }
    if (float32) {
        pack_reals(bodies, order, out.real32);
        out.real64.clear();
    } else {
        pack_reals(bodies, order, out.real64);
        out.real32.clear();
    }
    out.emitted = emitted;
    out.removed = removed;
    out.wall_force.assign(n_walls, Vec3::Zero());
    out.wall_torque.assign(n_walls, Vec3::Zero());
    if (loads != nullptr && loads->time > 0.0 && loads->impulse.size() == n_walls) {
        for (std::size_t w = 0; w < n_walls; ++w) {
            out.wall_force[w] = loads->impulse[w] / loads->time;
            out.wall_torque[w] = loads->angular_impulse[w] / loads->time;
        }
    }
    out.contacts.clear();
    if (wall_contacts && contacts != nullptr) out.contacts = *contacts;
    out.record.clear();
    if (all_contacts && record != nullptr) out.record = *record;
    out.glyphs.clear();
    if (shapes) trajectory::shape_glyphs(bodies, order, out.glyphs);
    if (walls != nullptr) posed_wall_points(surface, *walls, time, out.wall_points);
    else out.wall_points = surface.points;
    out.diagnostics.swap(pending);
    pending.clear();
}

void TrajectoryWriter::Impl::freeze() {
    if (frozen) return;
    frozen = true;
    if (parallel) return;  // the MPI-IO driver's handle is not a descriptor: readers trust /frames/committed
    void* handle = nullptr;
    if (H5Fget_vfd_handle(file.get(), H5P_DEFAULT, &handle) < 0 || handle == nullptr) return;
    const int fd = *static_cast<int*>(handle);  // the sec2 (POSIX) driver's descriptor
    const int read_only = ::open(open_path.c_str(), O_RDONLY | O_CLOEXEC);
    if (read_only < 0) return;
    ::dup2(read_only, fd);
    ::close(read_only);
}

void TrajectoryWriter::Impl::write_rows(FrameRows& fr) {
    try {
        write_rows_unguarded(fr);
    } catch (...) {
        freeze();
        throw;
    }
}

void TrajectoryWriter::Impl::write_rows_unguarded(FrameRows& fr) {
    const auto start = std::chrono::steady_clock::now();
    to_write.swap(fr.diagnostics);
    append_diagnostics();
    if (!fr.frame) {  // sync(): the diagnostics alone
        check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");
        write_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return;
    }

    const hsize_t r = rows, mine = fr.n;
    // The frame's rows: this process's, or in parallel every rank's, rank after rank (this
    // one's `mine` rows from `offset`).
    hsize_t n = mine, offset = 0;
    if (parallel) {
        std::vector<std::string> all;
        ranks->all_gather(std::string(reinterpret_cast<const char*>(&mine), sizeof mine), all);
        n = 0;
        for (std::size_t q = 0; q < all.size(); ++q) {
            hsize_t k = 0;
            std::memcpy(&k, all[q].data(), sizeof k);
            if (int(q) < ranks->rank()) offset += k;
            n += k;
        }
    }
    const RealColumns c(fr.n);
    const auto real = [&](std::size_t at) -> const void* {
        return float32 ? static_cast<const void*>(fr.real32.data() + at)
                       : static_cast<const void*>(fr.real64.data() + at);
    };
    const auto body_rows = [&](Column& col, const void* data) {
        if (parallel) append_part(col, r, n, offset, mine, data);
        else append(col, r, n, data);
    };
    body_rows(id, fr.id.data());
    body_rows(position, real(c.position));
    body_rows(orientation, real(c.orientation));
    body_rows(velocity, real(c.velocity));
    body_rows(angular_velocity, real(c.angular_velocity));
    body_rows(radius, real(c.radius));
    body_rows(material, fr.material.data());
    body_rows(shape, fr.shape.data());
    body_rows(clump, fr.clump.data());
    for (Column* col : body_columns()) flush(*col);

    // The frame's /flow row (with the body rows: complete once row_count is set).
    const hsize_t f = frames.size();
    append_flow(f, fr.emitted, last_emitted, f_emitted_count, f_emitted_mass,
                f_emitted_total_count, f_emitted_total_mass);
    append_flow(f, fr.removed, last_removed, f_removed_count, f_removed_mass,
                f_removed_total_count, f_removed_total_mass);
    if (n_walls > 0) {
        append(w_force, f, 1, fr.wall_force.data());
        append(w_torque, f, 1, fr.wall_torque.data());
    }
    if (wall_contacts) {
        const WallContactList& wc = fr.contacts;
        const uint64_t first = wc_rows, count = wc.size();
        if (count > 0) {
            append(wc_wall, first, count, wc.wall.data());
            append(wc_body, first, count, wc.body.data());
            append(wc_point, first, count, wc.point.data());
            append(wc_impulse, first, count, wc.impulse.data());
            append(wc_angular, first, count, wc.angular_impulse.data());
        }
        append(wc_first_row, f, 1, &first);
        append(wc_row_count, f, 1, &count);
        append(wc_dt, f, 1, &wc.step);
        wc_rows += count;
    }
    if (!surface.empty()) {
        const std::size_t v = surface.points.size();
        if (float32) {
            wall_points32.resize(3 * v);
            for (std::size_t i = 0; i < v; ++i)
                for (int a = 0; a < 3; ++a) wall_points32[3 * i + a] = static_cast<float>(fr.wall_points[i][a]);
            append(ws_points, f * v, v, wall_points32.data());
        } else {
            append(ws_points, f * v, v, fr.wall_points.data());
        }
    }
    if (all_contacts) {
        const ContactRecord& cr = fr.record;
        const uint64_t first = c_rows, count = cr.size();
        if (count > 0) {
            append(c_wall, first, count, cr.wall.data());
            append(c_a, first, count, cr.a.data());
            append(c_b, first, count, cr.b.data());
            append(c_point, first, count, cr.point.data());
            append(c_normal, first, count, cr.normal.data());
            append(c_gap, first, count, cr.gap.data());
            append(c_normal_impulse, first, count, cr.normal_impulse.data());
            append(c_tangential_impulse, first, count, cr.tangential_impulse.data());
            append(c_segment, first, count, cr.segment.data());
        }
        append(c_first_row, f, 1, &first);
        append(c_row_count, f, 1, &count);
        append(c_dt, f, 1, &cr.step);
        c_rows += count;
    }
    if (shapes) {
        const trajectory::ShapeGlyphs& g = fr.glyphs;
        const uint64_t first = s_rows, count = g.size();
        if (count > 0) {
            append(s_body, first, count, g.body.data());
            append(s_material, first, count, g.material.data());
            append(s_position, first, count, g.position.data());
            append(s_axes, first, count, g.axes.data());
        }
        append(s_first_row, f, 1, &first);
        append(s_row_count, f, 1, &count);
        append(s_cylinders, f, 1, &g.cylinders);
        s_rows += count;
    }
    for (Column* col : flow_columns()) flush(*col);

    // The index entry, row_count last: once it is set, everything above is on disk.
    const uint64_t first_row = r, row_count = n;
    append(frame_time, f, 1, &fr.time);
    append(frame_step, f, 1, &fr.step);
    append(frame_first_row, f, 1, &first_row);
    flush(frame_time);
    flush(frame_step);
    flush(frame_first_row);
    append(frame_row_count, f, 1, &row_count);
    flush(frame_row_count);
    check(H5Fflush(file.get(), H5F_SCOPE_LOCAL), "flush");
    if (parallel) commit_frames(f + 1);

    rows += n;
    XdmfFrame entry{fr.time, first_row, row_count};
    if (all_contacts) {
        entry.contact_count = fr.record.size();
        entry.contact_first_row = c_rows - entry.contact_count;
        entry.contact_dt = fr.record.step;
    }
    if (shapes) {
        entry.shape_count = fr.glyphs.size();
        entry.shape_first_row = s_rows - entry.shape_count;
        entry.shape_cylinders = fr.glyphs.cylinders;
    }
    frames.push_back(entry);
    update_sidecar(false);
    write_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void TrajectoryWriter::Impl::rethrow_if_failed() {
    if (!failed.load(std::memory_order_acquire)) return;
    std::lock_guard<std::mutex> lock(mutex);
    throw IoError(error);
}

std::unique_ptr<FrameRows> TrajectoryWriter::Impl::take_buffer() {
    std::unique_lock<std::mutex> lock(mutex);
    wake_main.wait(lock, [&] { return !spare.empty() || buffers < kFrameBuffers || failed; });
    if (failed) throw IoError(error);
    if (!spare.empty()) {
        std::unique_ptr<FrameRows> b = std::move(spare.back());
        spare.pop_back();
        return b;
    }
    ++buffers;
    return std::make_unique<FrameRows>();
}

void TrajectoryWriter::Impl::give_back(std::unique_ptr<FrameRows> b) {
    {
        std::lock_guard<std::mutex> lock(mutex);
        spare.push_back(std::move(b));
    }
    wake_main.notify_all();
}

void TrajectoryWriter::Impl::run_worker() {
    QuietHdf5 quiet;  // HDF5's error stack and its printing are per thread
    for (;;) {
        std::unique_ptr<FrameRows> job;
        {
            std::unique_lock<std::mutex> lock(mutex);
            wake_worker.wait(lock, [&] { return !queue.empty() || stopping; });
            if (queue.empty()) return;
            job = std::move(queue.front());
            queue.pop_front();
            busy = true;
        }
        std::string message;
        if (!failed.load(std::memory_order_acquire)) {
            try {
                write_rows(*job);
            } catch (const IoError& e) {
                message = e.what();
            } catch (const std::exception& e) {
                message = fmt::format("trajectory '{}': {}", path.string(), e.what());
            }
        }
        {
            std::lock_guard<std::mutex> lock(mutex);
            if (!message.empty() && !failed) {
                error = message;
                failed.store(true, std::memory_order_release);
            }
            busy = false;
            // A large frame's buffer goes back to the system instead of waiting for
            // the next frame: between frames it would only add to the run's peak
            // (73 MB at a million bodies in float32).
            if (job->n >= kKeepBufferBodies) {
                job.reset();
                --buffers;
            } else {
                spare.push_back(std::move(job));
            }
        }
        wake_main.notify_all();
    }
}

void TrajectoryWriter::Impl::drain() {
    if (!worker.joinable()) return;
    std::unique_lock<std::mutex> lock(mutex);
    wake_main.wait(lock, [&] { return (queue.empty() && !busy) || failed; });
}

void TrajectoryWriter::Impl::stop_worker() {
    if (!worker.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(mutex);
        stopping = true;
    }
    wake_worker.notify_one();
    worker.join();
}

void TrajectoryWriter::Impl::close_all() {
    if (closed) return;
    closed = true;
    stop_worker();  // every queued frame is in the file (or the writer failed) after this
    QuietHdf5 quiet;
    std::string message = failed ? error : std::string();
    try {
        if (!frozen) {
            to_write.insert(to_write.end(), pending.begin(), pending.end());
            pending.clear();
            append_diagnostics();
        }
        update_sidecar(true);  // a file of its own: describes the complete frames
        if (parallel && !frozen) commit_frames(frames.size(), true);
    } catch (const IoError& e) {
        if (message.empty()) message = e.what();
    }
    bool ok = true;
    for (Column* c : body_columns()) ok = c->id.reset() && ok;
    for (Column* c : frame_columns()) ok = c->id.reset() && ok;
    for (Column* c : diagnostic_columns()) ok = c->id.reset() && ok;
    for (Column* c : flow_columns()) ok = c->id.reset() && ok;
    ok = committed.reset() && ok;
    ok = file.reset() && ok;
    if (!message.empty()) throw IoError(message);
    if (!ok) fail("close");
}

}  // namespace talus
