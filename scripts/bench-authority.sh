#!/usr/bin/env bash
# `make bench-authority`: builds the C libmicrohttpd ceiling peer (scripts/bench/mhd-responder.c) into the cache, then
# runs the release-built `faceseal bench authority` on SQLite and, beside a throwaway PostgreSQL server
# (scripts/with-postgres.sh, fsync off like the test server), on PostgreSQL. Arguments go to both runs
# (e.g. `--seconds 30 --pending 10000`).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${FACESEAL_CACHE:-$HOME/.cache/faceseal}"
peer="$CACHE/bench/mhd-responder"
source="scripts/bench/mhd-responder.c"
if [[ ! -x "$peer" || "$source" -nt "$peer" ]]; then
    mkdir -p "$(dirname "$peer")"
    # shellcheck disable=SC2046
    cc -O2 -Wall -Wextra -o "$peer" "$source" $(pkg-config --cflags --libs libmicrohttpd)
fi
faceseal=.build/release/faceseal
status=0
"$faceseal" bench authority --database sqlite --peer "$peer" "$@" || status=1
bash scripts/with-postgres.sh "$faceseal" bench authority --database postgres --peer "$peer" "$@" || status=1
exit "$status"
