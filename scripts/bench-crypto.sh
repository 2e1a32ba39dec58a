#!/usr/bin/env bash
# `make bench-crypto`: installs the two peers into a throwaway venv outside the repository —
# pycryptodome 4.4.0 (its _mlkem/_mldsa libraries are portable C from mlkem-native/mldsa-native) and
# cryptography 50 (OpenSSL 4.0 linked into its Rust extension) — then runs the release-built
# `faceseal bench crypto` against both, calling their C code directly. Arguments are passed through
# (e.g. `--all`, `--batches 11`). Afterwards, scripts/bench-crypto-python.py times OpenSSL through
# cryptography's Python API and reports Python's per-call overhead.
set -euo pipefail
cd "$(dirname "$0")/.."

CACHE="${FACESEAL_CACHE:-$HOME/.cache/faceseal}"
VENV="$CACHE/bench-venv"
PEER_VERSION="4.4.0"
OPENSSL_PEER_VERSION="50.0.2"

find_peer_dir() {
    # The directory holding _mlkem.abi3.so inside the venv's site-packages.
    find "$VENV" -path '*/Crypto/PublicKey/_mlkem*.so' -print -quit 2>/dev/null | xargs -r dirname
}

find_openssl_module() {
    find "$VENV" -path '*/cryptography/hazmat/bindings/_rust*.so' -print -quit 2>/dev/null
}

installed() {
    "$VENV/bin/python" -c "import Crypto, cryptography, sys; sys.exit(Crypto.__version__ != '$PEER_VERSION' or cryptography.__version__ != '$OPENSSL_PEER_VERSION')" 2>/dev/null
}

peer_dir="$(find_peer_dir || true)"
if [[ -z "$peer_dir" ]] || ! installed; then
    echo "bench-crypto: installing pycryptodome==$PEER_VERSION and cryptography==$OPENSSL_PEER_VERSION into $VENV" >&2
    mkdir -p "$CACHE"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "pycryptodome==$PEER_VERSION" "cryptography==$OPENSSL_PEER_VERSION"
    peer_dir="$(find_peer_dir)"
fi
if [[ -z "$peer_dir" ]]; then
    echo "bench-crypto: pycryptodome $PEER_VERSION has no Crypto/PublicKey/_mlkem*.so in $VENV" >&2
    exit 1
fi
openssl_module="$(find_openssl_module)"
# The extension module links against the Python runtime library; the benchmark loads it (never runs it).
python_library="$("$VENV/bin/python" -c 'import os, sysconfig; print(os.path.join(sysconfig.get_config_var("LIBDIR"), sysconfig.get_config_var("INSTSONAME") or ""))')"
if [[ -z "$openssl_module" || ! -f "$python_library" ]]; then
    echo "bench-crypto: cryptography $OPENSSL_PEER_VERSION's module or a shared Python runtime library is missing (module '$openssl_module', library '$python_library')" >&2
    exit 1
fi

if [[ ! -x .build/release/faceseal ]]; then
    echo "bench-crypto: .build/release/faceseal is missing; run \`make bench-crypto\` (it builds release first)" >&2
    exit 1
fi
output="$(mktemp)"
trap 'rm -f "$output"' EXIT
.build/release/faceseal bench crypto --peer "$peer_dir" --openssl "$openssl_module" --python-library "$python_library" "$@" | tee "$output"
# The same OpenSSL through its Python API, with the per-call overhead against the direct figures above
# (skipped when profiling one side or one row).
batches=9 python_step=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --batches) batches="${2:-9}"; shift ;;
        --profile|--only) python_step=0 ;;
    esac
    shift
done
if [[ "$python_step" == 1 ]]; then
    echo
    "$VENV/bin/python" scripts/bench-crypto-python.py "$output" "$batches"
fi
