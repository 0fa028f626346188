#pragma once
/// FCLIB frictional contact problems (HDF5; Acary, Brémond, Dubois et al.) read through
/// Debian's libfclib into a DelassusProblem (core/delassus_problem.hpp), for `talus fclib`.
/// Local problems (/fclib_local) give W and q as stored; global ones (/fclib_global,
/// M v = H r + f, u = Hᵀ v + w) are condensed: W = Hᵀ M⁻¹ H, q = Hᵀ M⁻¹ f + w, with a sparse
/// LU factorisation of M (it need not be exactly symmetric). Matrices may be stored as CSR (nz = −2), CSC (nz = −1) or
/// triplets (nz ≥ 0; repeated entries add up). Only 3-D problems (spacedim 3) are read.
#include <filesystem>
#include <stdexcept>
#include <string>

#include "core/delassus_problem.hpp"

namespace talus {

/// A file that is not a readable FCLIB problem Talus can solve; the message names the file.
struct FclibError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct FclibProblem {
    DelassusProblem problem;
    std::string formulation;  ///< "local" or "global"
    std::string title;        ///< /fclib_*/info/title, if any
    int dofs = 0;             ///< global problems: size of v (0 for local ones)
};

FclibProblem read_fclib(const std::filesystem::path& file);

}  // namespace talus
