#!/usr/bin/env bash
# Installs what FaceSeal needs on a fresh Debian/Ubuntu machine; quick and silent when everything is there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

packages=(
  pkgconf libssl-dev libsqlite3-dev libpq-dev postgresql libmicrohttpd-dev libsodium-dev
  libopenblas-dev libjpeg62-turbo-dev libpng-dev libcurl4-openssl-dev libqrencode-dev ca-certificates openssl curl
  python3-venv gcc libc6-dev chromium chromium-driver
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Python tools written by others, each in its own virtual environment in the cache, rebuilt only when its pinned
# versions change: args: directory name, requirements.
python_tool() {
  local env="${FACESEAL_CACHE:-$HOME/.cache/faceseal}/$1" requirements="$2"
  if [ "$(cat "$env/.requirements" 2>/dev/null)" != "$requirements" ]; then
    echo "setup: installing $requirements into $env"
    rm -rf "$env"
    python3 -m venv "$env"
    # shellcheck disable=SC2086
    "$env/bin/python" -m pip install --quiet --disable-pip-version-check $requirements
    echo "$requirements" >"$env/.requirements"
  fi
}
# The browser sign-in's interoperability test drives an OIDC client (PyPI Authlib, over requests).
python_tool python "authlib==1.9.10 requests==2.34.2"
# The management API's conformance test runs schemathesis over docs/openapi.yaml against a live `faceseal serve`.
python_tool schemathesis "schemathesis==4.32.5 hypothesis==6.170.17"

# Face models and test images (PyPI and Debian packages) into the cache; skipped when present.
bash "$here/setup-face-assets.sh"
