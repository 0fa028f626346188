// Bilateral rows from joints (docs/design.md §4; Anitescu, Miller and Hart 2003, eq. 2.8 for the
// stabilisation b_j = γ_s g_j / h, eq. 3.15 for the infeasibility I(q) = max |g_j|).
//
// Each joint contributes scalar constraints g(q) = 0 whose velocity-level form is a row
// G_jᵀ ν with world-frame angular parts (the solvers iterate on world ω). With p = x + R s
// an anchor, r = p − x its lever arm and ṗ = v + ω × r:
//  - point rows (spherical, revolute, fixed), g_k = e_kᵀ (p_B − p_A):
//      l_b = e_k, k_b = r_B × e_k,  l_a = −e_k, k_a = −r_A × e_k;
//  - distance, g = ‖p_B − p_A‖ − L with n the unit direction A → B: the same with e_k = n;
//  - axis rows (revolute): t_1, t_2 ⊥ the axis, fixed in A; g_k = t_kᵀ a_B with a_B the
//    axis fixed in B; ġ_k = (ω_A × t_k)ᵀ a_B + t_kᵀ (ω_B × a_B), so k_a = t_k × a_B = −k_b;
//  - orientation rows (prismatic, fixed): e = q_B ⊗ (q_A ⊗ q_rest)⁻¹ (w ≥ 0) is B's
//    rotation away from its rest pose relative to A, g = 2 vec(e) ≈ the rotation vector,
//    ġ ≈ ω_B − ω_A: k_b = e_k, k_a = −e_k;
//  - slide rows (prismatic): g_k = t_kᵀ (p_B − p_A), t_k ⊥ the axis, fixed in A;
//    ġ_k = (ω_A × t_k)ᵀ d + t_kᵀ (ṗ_B − ṗ_A) gives l = ±t_k, k_b = r_B × t_k and
//    k_a = −(p_B − x_A) × t_k (the point of A under p_B);
//  - motor (revolute): a velocity row a_Aᵀ (ω_A − ω_B) = ω_target (A spins relative to B,
//    so a body joined to the world as body_a spins at +ω_target), i.e. k_a = a_A = −k_b
//    and b = −ω_target; no position term.
// Row order is joint order, then the order above. A joint's rows share its two bodies: the
// colour sweep takes them as one block (solvers/colouring.cpp), swept by one task in row
// order, so results do not depend on the thread count.
#include "solvers/bilateral.hpp"

#include <unordered_map>

namespace talus {
namespace {

struct Pose {
    Vec3 x = Vec3::Zero();
    Quat q = Quat::Identity();
    Mat3 R = Mat3::Identity();
};

Pose pose_of(const BodyStore& bodies, int32_t i) {
    Pose p;
    if (i == kNoBody) return p;
    p.x = bodies.position[std::size_t(i)];
    p.q = bodies.orientation[std::size_t(i)];
    p.R = p.q.toRotationMatrix();
    return p;
}

/// I⁻¹ t = R (J̄⁻¹ ⊙ Rᵀ t) for dense body i.
Vec3 inv_inertia_world(const BodyStore& bodies, const Pose& p, int32_t i, const Vec3& t) {
    return p.R * bodies.inv_inertia[std::size_t(i)].cwiseProduct(p.R.transpose() * t);
}

class RowWriter {
public:
    RowWriter(BilateralBatch& out, const BodyStore& bodies, int32_t a, int32_t b,
              const Pose& pa, const Pose& pb, double gs_over_h)
        : out_(out), bodies_(bodies), a_(a), b_(b), pa_(pa), pb_(pb), k_(gs_over_h) {}

    void row(const Vec3& la, const Vec3& ka, const Vec3& lb, const Vec3& kb, double g,
             bool position = true, double dgdt = 0.0) {
        out_.a.push_back(a_);
        out_.b.push_back(b_);
        out_.lin_a.push_back(la);
        out_.ang_a.push_back(ka);
        out_.lin_b.push_back(lb);
        out_.ang_b.push_back(kb);
        out_.rhs.push_back(k_ * g + dgdt);
        double w = 0.0;
        if (a_ != kNoBody)
            w += bodies_.inv_mass[std::size_t(a_)] * la.squaredNorm() +
                 ka.dot(inv_inertia_world(bodies_, pa_, a_, ka));
        if (b_ != kNoBody)
            w += bodies_.inv_mass[std::size_t(b_)] * lb.squaredNorm() +
                 kb.dot(inv_inertia_world(bodies_, pb_, b_, kb));
        out_.eta.push_back(w > 0.0 ? 1.0 / w : 0.0);
        out_.value.push_back(position ? g : 0.0);
        out_.position.push_back(position ? 1 : 0);
    }

private:
    BilateralBatch& out_;
    const BodyStore& bodies_;
    int32_t a_, b_;
    const Pose &pa_, &pb_;
    double k_;
};

/// Two unit vectors ⊥ the unit axis u, a deterministic function of u (docs/design.md §3's basis).
void perpendiculars(const Vec3& u, Vec3& t1, Vec3& t2) { orthonormal_basis(u, t1, t2); }

void joint_rows(const Joint& j, int32_t a, int32_t b, const BodyStore& bodies, double gs_over_h,
                BilateralBatch& out) {
    const Pose pa = pose_of(bodies, a), pb = pose_of(bodies, b);
    RowWriter w(out, bodies, a, b, pa, pb, gs_over_h);
    const Vec3 ra = pa.R * j.anchor_a, rb = pb.R * j.anchor_b;  // lever arms (world: the point)
    const Vec3 p_a = pa.x + ra, p_b = pb.x + rb;
    const Vec3 d = p_b - p_a;

    auto point_rows = [&] {
        for (int k = 0; k < 3; ++k) {
            const Vec3 e = Vec3::Unit(k);
            w.row(-e, -ra.cross(e), e, rb.cross(e), d[k]);
        }
    };
    auto orientation_rows = [&] {
        Quat e = pb.q * (pa.q * j.rest).conjugate();
        if (e.w() < 0.0) e.coeffs() = -e.coeffs();
        const Vec3 theta = 2.0 * e.vec();
        for (int k = 0; k < 3; ++k) {
            const Vec3 u = Vec3::Unit(k);
            w.row(Vec3::Zero(), -u, Vec3::Zero(), u, theta[k]);
        }
    };
    Vec3 t_body[2];
    perpendiculars(j.axis_a, t_body[0], t_body[1]);
    const Vec3 axis_a = pa.R * j.axis_a;

    switch (j.type) {
        case JointType::Spherical: point_rows(); break;
        case JointType::Distance: {
            const double len = d.norm();
            const Vec3 n = len > 0.0 ? Vec3(d / len) : Vec3::UnitZ();
            w.row(-n, -ra.cross(n), n, rb.cross(n), len - j.length);
            break;
        }
        case JointType::Revolute: {
            point_rows();
            const Vec3 axis_b = pb.R * j.axis_b;
            for (const Vec3& tb : t_body) {
                const Vec3 t = pa.R * tb;
                const Vec3 k = t.cross(axis_b);
                w.row(Vec3::Zero(), k, Vec3::Zero(), -k, t.dot(axis_b));
            }
            if (j.motor) w.row(Vec3::Zero(), axis_a, Vec3::Zero(), -axis_a, 0.0, false, -j.motor_speed);
            break;
        }
        case JointType::Prismatic: {
            orientation_rows();
            const Vec3 lever_a = p_b - pa.x;
            for (const Vec3& tb : t_body) {
                const Vec3 t = pa.R * tb;
                w.row(-t, -lever_a.cross(t), t, rb.cross(t), t.dot(d));
            }
            break;
        }
        case JointType::Fixed:
            orientation_rows();
            point_rows();
            break;
    }
}

}  // namespace

std::string map_joint_bodies(const std::vector<Joint>& joints, const BodyStore& bodies,
                             std::vector<int32_t>& index_a, std::vector<int32_t>& index_b) {
    auto still_valid = [&](uint64_t id, int32_t i) {
        if (id == kWorldBody) return i == kNoBody;
        return i >= 0 && std::size_t(i) < bodies.size() && bodies.id[std::size_t(i)] == id;
    };
    bool valid = index_a.size() == joints.size() && index_b.size() == joints.size();
    for (std::size_t k = 0; valid && k < joints.size(); ++k)
        valid = still_valid(joints[k].body_a, index_a[k]) && still_valid(joints[k].body_b, index_b[k]);
    if (valid) return {};

    std::unordered_map<uint64_t, int32_t> where;
    where.reserve(bodies.size());
    for (std::size_t i = 0; i < bodies.size(); ++i) where.emplace(bodies.id[i], int32_t(i));
    index_a.resize(joints.size());
    index_b.resize(joints.size());
    for (std::size_t k = 0; k < joints.size(); ++k) {
        for (int side = 0; side < 2; ++side) {
            const uint64_t id = side == 0 ? joints[k].body_a : joints[k].body_b;
            int32_t& out = side == 0 ? index_a[k] : index_b[k];
            if (id == kWorldBody) {
                out = kNoBody;
                continue;
            }
            const auto it = where.find(id);
            if (it == where.end()) {
                index_a.clear();
                index_b.clear();
                return "joint " + std::to_string(k) + " (" + joint_name(joints[k].type) +
                       ") refers to body " + std::to_string(id) + ", which does not exist";
            }
            out = it->second;
        }
    }
    return {};
}

void build_bilateral_rows(const std::vector<Joint>& joints, const std::vector<int32_t>& index_a,
                          const std::vector<int32_t>& index_b, const BodyStore& bodies,
                          double stabilization, double h, bool warm_start, BilateralBatch& out) {
    const std::size_t previous = out.lambda.size();
    std::vector<double> lambda;
    lambda.swap(out.lambda);
    out.clear();
    for (std::size_t k = 0; k < joints.size(); ++k)
        joint_rows(joints[k], index_a[k], index_b[k], bodies, stabilization / h, out);
    if (warm_start && previous == out.size())
        out.lambda.swap(lambda);
    else
        out.lambda.assign(out.size(), 0.0);
}

double joint_infeasibility(const std::vector<Joint>& joints, const std::vector<int32_t>& index_a,
                           const std::vector<int32_t>& index_b, const BodyStore& bodies) {
    BilateralBatch rows;
    for (std::size_t k = 0; k < joints.size(); ++k)
        joint_rows(joints[k], index_a[k], index_b[k], bodies, 0.0, rows);
    double m = 0.0;
    for (std::size_t j = 0; j < rows.size(); ++j)
        if (rows.position[j]) m = std::max(m, std::abs(rows.value[j]));
    return m;
}

}  // namespace talus
