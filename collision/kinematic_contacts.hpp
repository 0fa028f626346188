#pragma once
/// Contacts of kinematic bodies (core/kinematic.hpp), after the narrow phase: a
/// kinematic body has infinite mass, so the solver sees it as a moving wall (docs/design.md §3:
/// "static and kinematic bodies have M⁻¹ = 0: their velocity enters the contact's free
/// velocity only … pairs with no dynamic body are skipped").
#include "collision/narrow_phase.hpp"
#include "core/body_store.hpp"
#include "core/contacts.hpp"

namespace talus {

/// Rewrites `contacts` in place, keeping the order of the rest:
///  - a contact between two kinematic bodies, or between a kinematic body and a wall, is
///    removed (no dynamic body: it would be a row with W_ii = 0);
///  - a contact between a kinematic body K and a dynamic body D becomes A = K as a
///    non-dynamic side: a = kNoBody, b = D, key_a = K's stable id (no wall bit), key_b = D's,
///    normal from K to D, velocity_a = v_K + ω_K × (p − x_K) (K's velocity over the step at
///    the contact point), material_a = K's material. A clump–clump sub-feature is written
///    K's sphere first, so the warm-start key does not depend on the dense order.
/// Periodic image shifts are not handled (kinematic bodies are refused with periodic
/// boundaries); such contacts keep shift_b = 0.
/// Does nothing when `bodies` has no kinematic body.
void route_kinematic_contacts(const BodyStore& bodies, ContactList& contacts);

/// Removes from the narrow phase's "no contact routine" lists what cannot matter: kinematic
/// bodies near mesh, cone or orifice walls (they never touch walls). Does nothing when
/// `bodies` has no kinematic body.
void forget_kinematic_unsupported(const BodyStore& bodies, NarrowPhaseScratch& scratch);

}  // namespace talus
