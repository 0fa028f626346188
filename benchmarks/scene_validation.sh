#!/usr/bin/env bash
# Runs the example scenes of scenes/ in full and takes each one's measurement with
# tools/talus_measure.py: the figures and plots quoted in docs/validation/scenes.md.
#
#   benchmarks/scene_validation.sh [OUTDIR] [THREADS]
#
# OUTDIR (default build/scene-validation) receives the trajectories (about 1 GB in all),
# the PNG plots and figures.txt, every measurement's output. Needs a Release build at
# build/bin/talus (tools/run or tools/test make one). About 25 minutes on 2 cores.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$here/build/scene-validation}
threads=${2:-2}
talus=$here/build/bin/talus
measure="/usr/bin/python3 $here/tools/talus_measure.py"
mkdir -p "$out"
[ -x "$talus" ] || { echo "scene_validation: build $talus first (tools/test)" >&2; exit 1; }
figures=$out/figures.txt
: > "$figures"

run() {  # run SCENE NAME [--set ...]
    local scene=$1 name=$2
    shift 2
    echo "== $name: running $scene" | tee -a "$figures"
    local t0=$SECONDS
    "$talus" run "$here/scenes/$scene" -o "$out/$name.h5" --force --quiet --threads "$threads" "$@"
    echo "   ran in $((SECONDS - t0)) s" | tee -a "$figures"
}
take() {  # take NAME TOOL ARGS...: a measurement, appended to figures.txt
    local name=$1 tool=$2
    shift 2
    $measure "$tool" "$out/$name.h5" --png "$out/${name}_$tool.png" "$@" | tee -a "$figures"
}

run silo_discharge.toml silo
take silo flow-rate --level 0
# at the settle stage's end (where its stop on kinetic energy fired), before the gate opens
take silo packing --min "-0.025 -0.025 0.01" --max "0.025 0.025 0.06" --frame end:settle

run rotating_drum.toml drum
take drum drum-angle --axis y
take drum velocity-profile --across "0.5 0 0.866" --component "0.866 0 -0.5" --width 0.005

run column_collapse.toml collapse
take collapse runout --initial-time 0.8 --min-thickness 1.5

run heap_pour.toml heap
take heap repose --centre "0 0 0"

run chute_flow.toml chute
take chute velocity-profile --across "0 0 1" --component "1 0 0" --bins 12 --bagnold 0

run vibrated_bed.toml vibrated --set output.interval=0.001
/usr/bin/python3 "$here/benchmarks/vibrated_bed_phase.py" "$out/vibrated.h5" \
    --png "$out/vibrated_phase.png" | tee -a "$figures"

echo "figures in $figures, plots in $out"
