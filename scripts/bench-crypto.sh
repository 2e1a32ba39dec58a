#!/usr/bin/env bash
# `make bench-crypto`: installs the C peer (pycryptodome 4.4.0, whose _mlkem/_mldsa libraries are
# portable C from mlkem-native/mldsa-native) into a throwaway venv outside the repository, then runs
# the release-built `faceseal bench crypto` against those libraries. Arguments are passed through
# (e.g. `--all`, `--batches 11`).
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${FACESEAL_CACHE:-$HOME/.cache/faceseal}"
VENV="$CACHE/bench-venv"
PEER_VERSION="4.4.0"

find_peer_dir() {
    # The directory holding _mlkem.abi3.so inside the venv's site-packages.
    find "$VENV" -path '*/Crypto/PublicKey/_mlkem*.so' -print -quit 2>/dev/null | xargs -r dirname
}

peer_dir="$(find_peer_dir || true)"
if [[ -z "$peer_dir" ]] || ! "$VENV/bin/python" -c "import Crypto, sys; sys.exit(Crypto.__version__ != '$PEER_VERSION')" 2>/dev/null; then
    echo "bench-crypto: installing pycryptodome==$PEER_VERSION into $VENV" >&2
    mkdir -p "$CACHE"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "pycryptodome==$PEER_VERSION"
    peer_dir="$(find_peer_dir)"
fi
if [[ -z "$peer_dir" ]]; then
    echo "bench-crypto: pycryptodome $PEER_VERSION has no Crypto/PublicKey/_mlkem*.so in $VENV" >&2
    exit 1
fi

if [[ ! -x .build/release/faceseal ]]; then
    echo "bench-crypto: .build/release/faceseal is missing; run \`make bench-crypto\` (it builds release first)" >&2
    exit 1
fi
exec .build/release/faceseal bench crypto --peer "$peer_dir" "$@"
