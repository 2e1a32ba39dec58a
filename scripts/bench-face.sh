#!/usr/bin/env bash
# `make bench-face`: the face pipeline's per-stage timings side by side with dlib itself.
#
# Installs Debian's libdlib-dev (dlib 19.24, built with BLAS = OpenBLAS) when missing, compiles a
# small C++ harness against it in a temporary directory, and runs `faceseal bench face` with the
# harness as its peer. The Swift side drives both, interleaved, one request at a time: for every
# stage and input it times its own code, then asks the harness to time dlib on the same pixels.
# Nothing of the harness is kept.
set -euo pipefail
cd "$(dirname "$0")/.."

export FACESEAL_CACHE="${FACESEAL_CACHE:-$HOME/.cache/faceseal}"
BIN="${FACESEAL_BIN:-.build/release/faceseal}"

need=()
dpkg -s libdlib-dev >/dev/null 2>&1 || need+=(libdlib-dev)
dpkg -s libopenblas-dev >/dev/null 2>&1 || need+=(libopenblas-dev)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v pkg-config >/dev/null 2>&1 || need+=(pkgconf)
if [ ${#need[@]} -gt 0 ]; then
    echo "bench-face: installing ${need[*]}" >&2
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >&2
fi

[ -x "$BIN" ] || make release >&2
bash scripts/setup-face-assets.sh >&2

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

cat > "$WORK/harness.cpp" <<'CPP'
// dlib peer for `faceseal bench face`. Reads requests on stdin, one per line:
//   <stage> <input file> [<l> <t> <r> <b>]
// and answers each with one line: the stage's wall time and the process's CPU time (all threads) in
// microseconds, then a result summary.
// Inputs are binary PPM (P6) written by the Swift side, or the original image for `decode`.
// Stages: decode, detect (MMOD), landmarks (5-point), align (150x150 chip), embed (ResNet on a chip),
// pipeline (detect, landmarks, chip and embedding of one frame).
#include <dlib/dnn.h>
#include <dlib/image_io.h>
#include <dlib/image_processing.h>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>

using namespace dlib;

// dnn_mmod_face_detection_ex.cpp
template <long num_filters, typename SUBNET> using con5d = con<num_filters,5,5,2,2,SUBNET>;
template <long num_filters, typename SUBNET> using con5  = con<num_filters,5,5,1,1,SUBNET>;
template <typename SUBNET> using downsampler  = relu<affine<con5d<32, relu<affine<con5d<32, relu<affine<con5d<16,SUBNET>>>>>>>>>;
template <typename SUBNET> using rcon5  = relu<affine<con5<45,SUBNET>>>;
using mmod_net = loss_mmod<con<1,9,9,1,1,rcon5<rcon5<rcon5<downsampler<input_rgb_image_pyramid<pyramid_down<6>>>>>>>>;

// dnn_face_recognition_ex.cpp
template <template <int,template<typename>class,int,typename> class block, int N, template<typename>class BN, typename SUBNET>
using residual = add_prev1<block<N,BN,1,tag1<SUBNET>>>;
template <template <int,template<typename>class,int,typename> class block, int N, template<typename>class BN, typename SUBNET>
using residual_down = add_prev2<avg_pool<2,2,2,2,skip1<tag2<block<N,BN,2,tag1<SUBNET>>>>>>;
template <int N, template <typename> class BN, int stride, typename SUBNET>
using block  = BN<con<N,3,3,1,1,relu<BN<con<N,3,3,stride,stride,SUBNET>>>>>;
template <int N, typename SUBNET> using ares      = relu<residual<block,N,affine,SUBNET>>;
template <int N, typename SUBNET> using ares_down = relu<residual_down<block,N,affine,SUBNET>>;
template <typename SUBNET> using alevel0 = ares_down<256,SUBNET>;
template <typename SUBNET> using alevel1 = ares<256,ares<256,ares_down<256,SUBNET>>>;
template <typename SUBNET> using alevel2 = ares<128,ares<128,ares_down<128,SUBNET>>>;
template <typename SUBNET> using alevel3 = ares<64,ares<64,ares<64,ares_down<64,SUBNET>>>>;
template <typename SUBNET> using alevel4 = ares<32,ares<32,ares<32,SUBNET>>>;
using anet_type = loss_metric<fc_no_bias<128,avg_pool_everything<
                            alevel0<alevel1<alevel2<alevel3<alevel4<
                            max_pool<3,3,2,2,relu<affine<con<32,7,7,2,2,
                            input_rgb_image_sized<150>>>>>>>>>>>>>;

static matrix<rgb_pixel> read_ppm(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string magic; long w, h, maxval;
    in >> magic >> w >> h >> maxval;
    in.get();
    if (!in || magic != "P6" || maxval != 255) throw std::runtime_error("not a binary PPM: " + path);
    matrix<rgb_pixel> img(h, w);
    in.read(reinterpret_cast<char*>(&img(0, 0)), w * h * 3);
    if (!in) throw std::runtime_error("short PPM: " + path);
    return img;
}

int main(int argc, char** argv) {
    if (argc != 2) { std::cerr << "usage: harness <models dir>\n"; return 2; }
    const std::string models = argv[1];
    mmod_net detector;
    deserialize(models + "/mmod_human_face_detector.dat") >> detector;
    shape_predictor sp;
    deserialize(models + "/shape_predictor_5_face_landmarks.dat") >> sp;
    anet_type embedder;
    deserialize(models + "/dlib_face_recognition_resnet_model_v1.dat") >> embedder;

    std::map<std::string, matrix<rgb_pixel>> cache;
    auto image = [&](const std::string& path) -> const matrix<rgb_pixel>& {
        auto it = cache.find(path);
        if (it == cache.end()) it = cache.emplace(path, read_ppm(path)).first;
        return it->second;
    };
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream request(line);
        std::string stage, path;
        long l = 0, t = 0, r = 0, b = 0;
        request >> stage >> path >> l >> t >> r >> b;
        std::ostringstream summary;
        auto start = std::chrono::steady_clock::now();
        std::clock_t cpu_start = std::clock();
        if (stage == "decode") {
            matrix<rgb_pixel> img;
            load_image(img, path);
            summary << img.nc() << "x" << img.nr();
        } else if (stage == "detect") {
            auto dets = detector(image(path));
            summary << dets.size();
            for (auto& d : dets) summary << " " << d.rect.left() << "," << d.rect.top() << "," << d.rect.right() << "," << d.rect.bottom();
        } else if (stage == "landmarks") {
            auto shape = sp(image(path), rectangle(l, t, r, b));
            summary << shape.part(0).x() << "," << shape.part(0).y();
        } else if (stage == "align") {
            const auto& img = image(path);
            auto shape = sp(img, rectangle(l, t, r, b));
            start = std::chrono::steady_clock::now();              // the chip only, as the Swift side
            cpu_start = std::clock();
            matrix<rgb_pixel> chip;
            extract_image_chip(img, get_face_chip_details(shape, 150, 0.25), chip);
            summary << chip.nr();
        } else if (stage == "pipeline") {
            const auto& img = image(path);
            auto dets = detector(img);
            if (!dets.empty()) {
                auto shape = sp(img, dets[0].rect);
                matrix<rgb_pixel> chip;
                extract_image_chip(img, get_face_chip_details(shape, 150, 0.25), chip);
                matrix<float,0,1> e = embedder(chip);
                summary << e(0);
            }
        } else if (stage == "embed") {
            matrix<float,0,1> e = embedder(image(path));
            summary << e(0);
        } else {
            std::cout << "error unknown stage " << stage << std::endl;
            continue;
        }
        auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
        long cpu_us = static_cast<long>((std::clock() - cpu_start) * (1e6 / CLOCKS_PER_SEC));
        std::cout << us << " " << cpu_us << " " << summary.str() << std::endl;
    }
    return 0;
}
CPP

echo "bench-face: compiling the dlib harness (about a minute)" >&2
# shellcheck disable=SC2046
g++ -O3 -march=native -std=c++14 -o "$WORK/harness" "$WORK/harness.cpp" $(pkg-config --cflags --libs dlib-1) -lopenblas

"$BIN" bench face --peer "$WORK/harness" --models "$FACESEAL_CACHE/models" --images "$FACESEAL_CACHE/images" \
    --work "$WORK" "$@"
