#pragma once
/// Small RAII helpers over the HDF5 C API shared by the trajectory writer and reader, and
/// the marker convention of the trajectory format.
#include <hdf5.h>

#include <cstdint>
#include <limits>
#include <utility>

namespace talus::hdf5 {

/// Fill value of the datasets that mark an index entry complete (/frames/row_count,
/// /diagnostics/step): "not written yet". Readers count an entry only once it is set.
inline constexpr uint64_t kUnwritten = std::numeric_limits<uint64_t>::max();

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

}  // namespace talus::hdf5
