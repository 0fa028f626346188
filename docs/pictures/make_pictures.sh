#!/usr/bin/env bash
# docs/pictures/make_pictures.sh [WORKDIR]: the pictures of the example scenes (docs/rendering.md,
# "The example scenes"). Runs each scene (except million) for at most about
# two minutes of wall time on one thread (SIGTERM stops a run cleanly, with its frames
# written), then renders the chosen frame to docs/pictures/<scene>.png at 480x360.
# Which frame and time each picture shows depends on how far the run got: see the table.
# The trajectories go to WORKDIR (default /tmp/pics).
set -euo pipefail
top="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="${1:-/tmp/pics}"
mkdir -p "$work"
talus="$top/build/bin/talus"
[ -x "$talus" ] || { echo "build talus first (tools/run builds it)" >&2; exit 1; }

# scene  frame  view  [--set overrides for the run]
pictures=(
    "settle          10 oblique"
    "chute_flow      -1 side"
    "column_collapse 45 side"
    "heap_pour       40 oblique"
    "mixer           -1 oblique"
    "rotating_drum   -1 side"
    "silo_discharge  -1 oblique"
    "vibrated_bed    -1 oblique"
    "pile100k         0 oblique --set simulation.duration=0.004 --set output.interval=0.002"
)
for line in "${pictures[@]}"; do
    read -r scene frame view overrides <<<"$line"
    out="$work/$scene.h5"
    # shellcheck disable=SC2086 # the overrides are words
    timeout -s TERM 115 nice -n 10 "$talus" run "$top/scenes/$scene.toml" -o "$out" \
        --threads 1 --force --quiet ${overrides:-} || [ $? -eq 124 ]
    nice -n 10 "$top/tools/render" "$out" -o "$top/docs/pictures/$scene.png" --size 480x360 \
        --frame "$frame" --view "$view"
done
