// The true shapes of a frame's bodies as glyphs (/shapes; docs/output-format.md). The body
// rows draw every body as a sphere of its bounding radius, right for spheres only; here
// each other body becomes the glyphs of what the engine collides with:
//   - a clump: each of its spheres, centred at x + R c_k, radius r_k;
//   - a capsule (segment along the body x axis, half length l, radius r): its two end
//     spheres at x ± l R e_x, and its middle, a cylinder of radius r and length 2 l;
//   - an ellipsoid (semi-axes a, b, c along the body axes): itself.
// A glyph row holds three world vectors u, v, w: the glyph source's x, y and z axes are
// mapped to 2u, 2v, 2w (ParaView's sphere and cylinder sources are of half size 1/2 and
// the sidecar's recipe scales by 2, docs/rendering.md). So an ellipsoid stores its semi-axes
// (a R e_x, b R e_y, c R e_z), a sphere r R; a cylinder, whose source's axis is y, stores
// (r R e_y, l R e_x, −r R e_z): radius across, half length along the capsule's axis, radius
// across, in a right-handed order so that its faces keep their outward normals.
#include "io/trajectory/writer_impl.hpp"

namespace talus::trajectory {

namespace {

/// One glyph row: `axes`' columns are its three vectors u, v, w.
void add(ShapeGlyphs& out, uint64_t id, uint32_t material, const Vec3& centre, const Mat3& axes) {
    out.body.push_back(id);
    out.material.push_back(material);
    out.position.push_back(centre);
    std::array<double, 9>& row = out.axes.emplace_back();
    Eigen::Map<Mat3>(row.data()) = axes;  // column-major: u, then v, then w
}

}  // namespace

void shape_glyphs(const BodyStore& b, std::span<const uint32_t> order, ShapeGlyphs& out) {
    out.clear();
    for (const uint32_t i : order) {  // ellipsoids, and spheres as ellipsoids
        const Shape shape = b.shape[i];
        if (shape == Shape::Sphere) continue;
        const Mat3 R = b.orientation[i].toRotationMatrix();
        const Vec3& x = b.position[i];
        const Vec3& p = b.shape_param[i];
        switch (shape) {
            case Shape::Ellipsoid:
                add(out, b.id[i], b.material[i], x, R * p.asDiagonal());
                break;
            case Shape::Capsule: {
                const double half = p.y();
                for (const double side : {-1.0, 1.0})
                    add(out, b.id[i], b.material[i], x + side * half * R.col(0), p.x() * R);
                break;
            }
            case Shape::Clump: {
                const ClumpTable& t = b.clumps;
                const uint32_t k = b.clump_of(i);
                for (uint32_t j = t.begin(k); j < t.end(k); ++j)
                    add(out, b.id[i], b.material[i], x + R * t.centre[j], t.radius[j] * R);
                break;
            }
            case Shape::Sphere: break;
        }
    }
    for (const uint32_t i : order) {  // the capsules' middles
        if (b.shape[i] != Shape::Capsule) continue;
        const Mat3 R = b.orientation[i].toRotationMatrix();
        const double r = b.shape_param[i].x(), half = b.shape_param[i].y();
        Mat3 axes;
        axes << r * R.col(1), half * R.col(0), -r * R.col(2);
        add(out, b.id[i], b.material[i], b.position[i], axes);
        ++out.cylinders;
    }
}

}  // namespace talus::trajectory
