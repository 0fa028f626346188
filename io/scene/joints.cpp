// [[joint]] entries: bodies joined by ball, hinge, distance or fixed joints.
#include "io/scene/readers.hpp"

namespace talus::scene_read {

/// A joint's body: a stable id of an existing body, or "world" (→ −1).
static std::optional<long> body_ref(Reader& r, const Ctx& c, std::string_view k, std::size_t bodies) {
    const toml::node* n = r.find(c, k);
    if (!n) return std::nullopt;
    if (auto s = n->as_string()) {
        if (s->get() == "world") return -1;
        r.problem_at(c, k, fmt::format("expected a body id or \"world\", got \"{}\"", s->get()));
        return std::nullopt;
    }
    const auto id = r.integer(c, k, Need::Required, 0, INT64_MAX);
    if (!id) return std::nullopt;
    if (std::size_t(*id) >= bodies) {
        r.problem_at(c, k, fmt::format("no body with id {} (the scene has bodies 0 to {})", *id,
                                       bodies - 1));
        return std::nullopt;
    }
    return long(*id);
}

/// [[joint]] entries, after the bodies are placed (ids are dense indices at this point).
void read_joints(Reader& r, const Ctx& root, World& world) {
    const BodyStore& bodies = world.bodies;
    for (const Ctx& c : r.entries(root, "joint")) {
        const auto type_name = r.string(c, "type", Need::Required);
        if (!type_name) continue;
        const std::optional<JointType> named = value_of<JointType>(*type_name);
        if (!named) {
            r.problem_at(c, "type", fmt::format("unknown joint type '{}'{}", *type_name,
                                                suggest(*type_name, names_of<JointType>(), "known")));
            continue;
        }
        const JointType type = *named;
        bool ok = true;
        const auto unused = [&](std::string_view k, std::string_view hint = {}) {
            if (!r.find(c, k)) return;
            r.problem_at(c, k, fmt::format("not used by a {} joint{}", *type_name, hint));
            ok = false;
        };
        if (!r.find(c, "body_a")) r.problem(c.place, c.key("body_a"), "missing required key");
        const auto a = body_ref(r, c, "body_a", bodies.size());
        const auto b = r.find(c, "body_b") ? body_ref(r, c, "body_b", bodies.size())
                                           : std::optional<long>(-1);
        if (!a || !b) continue;
        if (*a < 0) {
            r.problem_at(c, "body_a", "must be a body (only body_b may be \"world\")");
            continue;
        }
        if (*a == *b) {
            r.problem_at(c, "body_b", fmt::format("must differ from body_a ({})", *a));
            continue;
        }
        // A joint needs a dynamic body: between two kinematic bodies (or one and the world)
        // its row would have no mass to act on (1 / (G M⁻¹ Gᵀ) infinite).
        const auto kinematic = [&](long i) { return i < 0 || bodies.kinematic(std::size_t(i)); };
        if (kinematic(*a) && kinematic(*b)) {
            r.problem_at(c, *b < 0 ? "body_a" : "body_b",
                         fmt::format("a joint needs at least one dynamic body; body {} {} {}",
                                     *a, *b < 0 ? "has a motion and body_b is" : "and body",
                                     *b < 0 ? std::string("\"world\"")
                                            : fmt::format("{} both have a motion", *b)));
            continue;
        }
        const bool distance = type == JointType::Distance;
        const bool has_axis = type == JointType::Revolute || type == JointType::Prismatic;
        if (!has_axis) unused("axis");
        if (type != JointType::Revolute) unused("motor_speed");
        if (!distance) {
            unused("anchor_a", " (the anchor is the same point on both bodies: give 'anchor')");
            unused("length");
        }
        // distance: `anchor` is the end on body_b (default: its centre), `anchor_a` the end
        // on body_a (default: its centre); others: `anchor` is on both bodies.
        const bool need_anchor = !distance || *b < 0;
        std::optional<Vec3> anchor = r.vec3(c, "anchor", need_anchor ? Need::Required : Need::Optional);
        if (!anchor && (need_anchor || r.find(c, "anchor"))) ok = false;
        std::optional<Vec3> anchor_a = distance ? r.vec3(c, "anchor_a", Need::Optional) : std::nullopt;
        if (distance && !anchor_a && r.find(c, "anchor_a")) ok = false;
        Vec3 axis = Vec3::UnitZ();
        if (has_axis) {
            if (auto v = r.vec3(c, "axis", Need::Required)) {
                if (v->norm() > 0.0)
                    axis = v->normalized();
                else {
                    r.problem_at(c, "axis", "must not be zero");
                    ok = false;
                }
            } else {
                ok = false;
            }
        }
        std::optional<double> length;
        if (distance) {
            length = r.number(c, "length", Need::Optional);
            if (!length && r.find(c, "length")) ok = false;
        }
        std::optional<double> motor;
        if (type == JointType::Revolute) {
            motor = r.number(c, "motor_speed", Need::Optional);
            if (!motor && r.find(c, "motor_speed")) ok = false;
        }
        if (!ok) continue;
        Joint j;
        if (distance) {
            const Vec3 pa = anchor_a ? *anchor_a : bodies.position[std::size_t(*a)];
            const Vec3 pb = anchor ? *anchor : bodies.position[std::size_t(*b)];
            j = make_joint(type, bodies, *a, *b, pa, axis, pb);
            if (length) {
                j.length = *length;
            } else if (!(j.length > 0.0)) {
                r.problem(c.place, c.key("length"),
                          "the two ends coincide at t = 0: give the length (> 0)");
                continue;
            }
        } else {
            j = make_joint(type, bodies, *a, *b, *anchor, axis);
        }
        if (motor) {
            j.motor = true;
            j.motor_speed = *motor;
        }
        world.joints.push_back(j);
    }
}

}  // namespace talus::scene_read
