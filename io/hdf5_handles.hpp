#pragma once
/// Small RAII helpers over the HDF5 C API shared by the trajectory writer and reader, and
/// the marker convention of the trajectory format.
#include <hdf5.h>

#include <cstdint>
#include <limits>
#include <string>
#include <utility>

namespace talus::hdf5 {

/// Fill value of the datasets that mark an index entry complete (/frames/row_count,
/// /diagnostics/step): "not written yet". Readers count an entry only once it is set.
inline constexpr uint64_t kUnwritten = std::numeric_limits<uint64_t>::max();

/// HDF5's innermost (most specific) error description on the current stack, then clears it.
inline std::string hdf5_error_text() {
    std::string text;
    auto visit = [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        auto* s = static_cast<std::string*>(out);
        if (n == 0 && e->desc != nullptr) *s = e->desc;
        return 0;
    };
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, visit, &text);
    H5Eclear2(H5E_DEFAULT);
    return text.empty() ? std::string("unknown HDF5 error") : text;
}

/// Owns an HDF5 identifier and closes it with the matching H5xclose.
class Hid {
public:
    using Closer = herr_t (*)(hid_t);
    Hid() = default;
    Hid(hid_t id, Closer closer) : id_(id), closer_(closer) {}
    Hid(Hid&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), closer_(o.closer_) {}
    Hid& operator=(Hid&& o) noexcept {
        if (this != &o) {
            reset();
            id_ = std::exchange(o.id_, H5I_INVALID_HID);
            closer_ = o.closer_;
        }
        return *this;
    }
    Hid(const Hid&) = delete;
    Hid& operator=(const Hid&) = delete;
    ~Hid() { reset(); }

    hid_t get() const { return id_; }
    bool valid() const { return id_ >= 0; }
    /// Closes now; returns false if HDF5 reported an error.
    bool reset() {
        bool ok = true;
        if (id_ >= 0 && closer_ != nullptr) ok = closer_(id_) >= 0;
        id_ = H5I_INVALID_HID;
        return ok;
    }

private:
    hid_t id_ = H5I_INVALID_HID;
    Closer closer_ = nullptr;
};

/// Silences HDF5's automatic error printing while alive; failures are reported by IoError.
class QuietHdf5 {
public:
    QuietHdf5() {
        H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    }
    ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
    QuietHdf5(const QuietHdf5&) = delete;
    QuietHdf5& operator=(const QuietHdf5&) = delete;

private:
    H5E_auto2_t func_ = nullptr;
    void* data_ = nullptr;
};

/// Opens a trajectory for reading whether or not its writer closed it: a plain open first
/// (a cleanly closed file), then in SWMR read mode (a file being written, or left by a
/// killed run). In SWMR mode HDF5 reads a metadata block again when its checksum fails,
/// doubling a sleep between tries (from 1 ns), 100 times by default: a block a killed
/// writer left torn then holds the reader for ever (2^100 ns). Twenty-four tries wait
/// about 34 ms in all, far longer than a live writer takes to finish writing a block, and
/// a torn block then fails the read with HDF5's "incorrect metadata checksum" at once.
/// Returns a negative id if neither open succeeds; `closed_cleanly` says which one did.
inline hid_t open_trajectory_for_reading(const char* path, bool* closed_cleanly = nullptr) {
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (closed_cleanly != nullptr) *closed_cleanly = f >= 0;
    if (f >= 0) return f;
    H5Eclear2(H5E_DEFAULT);
    const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0) return fapl;
    constexpr unsigned kSwmrReadAttempts = 24;
    if (H5Pset_metadata_read_attempts(fapl, kSwmrReadAttempts) >= 0)
        f = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl);
    H5Pclose(fapl);
    return f;
}

}  // namespace talus::hdf5
