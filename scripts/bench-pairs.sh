#!/usr/bin/env bash
# Alternated pairs: `bash scripts/bench-pairs.sh ROUNDS BIN_A BIN_B [bench arguments…]` runs `BIN bench authority`
# with the arguments (`--modes poll --seconds 8` when none are given: SQLite, 64 concurrent) for two builds ROUNDS
# times, A first in odd rounds and B first in even ones, so the machine's drift falls on both. The first mode's line counts.
# One line a run (ceremonies a second, the authority's and the load generator's CPU a ceremony, idle cores), then the
# means of each build and B's over A's. The machine must be otherwise idle (docs/PERFORMANCE.md, "Method").
set -euo pipefail
if [[ $# -lt 3 ]] || ! [[ "$1" =~ ^[1-9][0-9]?$ ]]; then
    echo "usage: $0 ROUNDS(1-99) BIN_A BIN_B [faceseal bench authority arguments…]" >&2
    exit 2
fi
rounds=$1 a=$2 b=$3
shift 3
arguments=("$@")
(( ${#arguments[@]} > 0 )) || arguments=(--modes poll --seconds 8)
for binary in "$a" "$b"; do
    [[ -x "$binary" ]] || { echo "not an executable: $binary" >&2; exit 2; }
done
field() { grep -o " $1=[0-9.]*" <<<"$2" | head -1 | cut -d= -f2; }
declare -A sum=()
for round in $(seq 1 "$rounds"); do
    if (( round % 2 == 1 )); then order=(A B); else order=(B A); fi
    for which in "${order[@]}"; do
        binary=$a; [[ $which == B ]] && binary=$b
        output=$("$binary" bench authority "${arguments[@]}")
        line=$(grep -m 1 '^bench=authority db=[a-z]* mode=[a-z]* .*ceremonies_per_s=' <<<"$output")
        rate=$(field ceremonies_per_s "$line") authority=$(field cpu_ms_per_ceremony "$line")
        loadgen=$(field loadgen_cpu_ms_per_ceremony "$line") idle=$(field idle_cores "$line")
        echo "round=$round build=$which ceremonies_per_s=$rate cpu_ms_per_ceremony=$authority loadgen_cpu_ms_per_ceremony=$loadgen idle_cores=$idle"
        for key in rate authority loadgen; do
            sum[$which.$key]=$(awk -v s="${sum[$which.$key]:-0}" -v x="${!key}" 'BEGIN { print s + x }')
        done
    done
done
for which in A B; do
    awk -v n="$rounds" -v w="$which" -v r="${sum[$which.rate]}" -v c="${sum[$which.authority]}" -v l="${sum[$which.loadgen]}" \
        'BEGIN { printf "mean build=%s ceremonies_per_s=%.0f cpu_ms_per_ceremony=%.3f loadgen_cpu_ms_per_ceremony=%.3f\n", w, r / n, c / n, l / n }'
done
awk -v ra="${sum[A.rate]}" -v rb="${sum[B.rate]}" -v ca="${sum[A.authority]}" -v cb="${sum[B.authority]}" \
    'BEGIN { printf "ratio B/A ceremonies_per_s=%.3f cpu_ms_per_ceremony=%.3f\n", rb / ra, cb / ca }'
