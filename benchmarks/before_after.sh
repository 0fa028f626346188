#!/bin/bash
# benchmarks/before_after.sh OLD_BIN_DIR NEW_BIN_DIR [OUT_DIR]
#
# Speed of two builds in one invocation, alternating old/new so that the shared machine's
# noise falls on both: the solver throughput (talus_solver_benchmark throughput, PGS, PJ,
# APGD on a settled benchmarks/settle_pgs.toml bed: ~31,000 contacts) and two whole scenes,
# benchmarks/settle_pgs.toml (PGS) and the LIGGGHTS peer bed benchmarks/peers/settle_24389.toml
# (APGD), each run twice per build, and a joint-heavy scene written by
# benchmarks/joints/make_chains.py (10,800 spheres on 10,800 spherical joints, PGS), twice per
# build. Prints the figures; the throughput CSVs and the scene
# logs stay in OUT_DIR. Run it with nothing else on the machine.
set -eu
old=$(realpath "$1"); new=$(realpath "$2"); out=${3:-/tmp/before_after}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
state=$out/settle_state.h5
if [ ! -f "$state" ]; then
    "$new/talus_solver_benchmark" --scene "$root/benchmarks/settle_pgs.toml" --state "$state" \
        --results "$out/generate" generate > "$out/generate.log"
fi
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; load $(cut -d' ' -f1 /proc/loadavg)"
for round in 1 2; do
    for side in old new; do
        bin=$old; [ $side = new ] && bin=$new
        "$bin/talus_solver_benchmark" --scene "$root/benchmarks/settle_pgs.toml" --state "$state" \
            --results "$out/$side-$round" throughput > "$out/$side-$round-throughput.log" 2>&1
        awk -F, -v s=$side -v r=$round 'NR > 1 { printf "throughput %s round %s: %-4s %s threads %.3g contact-iterations/s\n", s, r, $2, $3, $10 }' \
            "$out/$side-$round/throughput.csv"
    done
done
[ -f "$out/chains.toml" ] || /usr/bin/python3 "$root/benchmarks/joints/make_chains.py" > "$out/chains.toml"
for scene in benchmarks/settle_pgs.toml benchmarks/peers/settle_24389.toml "$out/chains.toml"; do
    for round in 1 2; do
        for side in old new; do
            bin=$old; [ $side = new ] && bin=$new
            name=$(basename "$scene" .toml)-$side-$round
            start=$(date +%s.%N)
            path=$scene; [ "${scene#/}" = "$scene" ] && path=$root/$scene
            "$bin/talus" run --quiet --force -o "$out/$name.h5" "$path" > "$out/$name.log" 2>&1
            end=$(date +%s.%N)
            solver=$(/usr/bin/python3 -c "import h5py,sys; print('%.2f' % h5py.File(sys.argv[1])['/diagnostics/solver_wall_time'][:].sum())" "$out/$name.h5")
            printf "%-40s %s round %s: %6.1f s in all, %s s in the solver\n" "$scene" $side $round "$(/usr/bin/python3 -c "print($end - $start)")" "$solver"
        done
    done
done
