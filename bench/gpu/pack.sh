#!/usr/bin/env bash
# Packs what bench/gpu/run.sh needs on a machine with a GPU and none of the player's packages: the release binary,
# every library it loads (bench/gpu/bundle.py; the C library and its loader too), bench/playback.sh's four clips and
# three short ones for what the bench clips do not cover (HLG, SDR with BT.2020 primaries, and 1080i: interlaced
# H.264, deinterlaced to 50 pictures a second), into one xz-compressed tar.
#
#   bench/gpu/pack.sh [DEST]        # DEST defaults to .gpu (ignored by git): DEST/orb-gpu.tar.xz, DEST/run.sh
#
# ORB_PLAYER_BIN=/path/to/orb-player packs that binary instead of building one. Clips are cached in
# ${ORB_BENCH_MEDIA:-/tmp/orb-bench-media} as for the other benchmarks.
#
# Libraries the headless modes never call on these clips are packed as stand-ins (bundle.py --stub), which keeps
# the bundle at 58-62 MB (the clips 18-22 of them) instead of 70: the encoders (x264, x265, SVT-AV1, rav1e), decoders
# of other formats (codec2, AV1 through libaom, VP8/9 through libvpx, JPEG XL, SVG) and ICU's 31 MB of data (only
# libxml2's encodings use it). A stand-in's functions all return 0 (FFmpeg asks a few of them for versions as it
# starts).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
DEST="${1:-$ROOT/.gpu}"
MEDIA="${ORB_BENCH_MEDIA:-/tmp/orb-bench-media}"
STEP="starting"
log() { echo "pack: $*" >&2; }
die() {
  echo "pack: FAILED during: $STEP${1:+: $1}" >&2
  exit 1
}
# shellcheck source=bench/common.sh
. bench/common.sh

bench_build
bench_playback_clips
STEP="generating the HLG and wide-gamut stills' clips"
HLG="$MEDIA/hlg-1080p24-hevc-main10-3s.v1.mkv"
WIDE="$MEDIA/sdr-bt2020-1080p24-hevc-main10-3s.v1.mkv"
make_clip "$HLG" 3 -f lavfi -i testsrc2=size=1920x1080:rate=24 -t 3 \
  -vf "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=arib-std-b67:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le" \
  -c:v libx265 -preset ultrafast \
  -x265-params "colorprim=bt2020:transfer=arib-std-b67:colormatrix=bt2020nc:log-level=error" \
  -color_primaries bt2020 -color_trc arib-std-b67 -colorspace bt2020nc -color_range tv
make_clip "$WIDE" 3 -f lavfi -i testsrc2=size=1920x1080:rate=24 -t 3 \
  -vf "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=bt709:p=bt2020:m=bt2020nc:r=tv,format=yuv420p10le" \
  -c:v libx265 -preset ultrafast -x265-params "colorprim=bt2020:transfer=bt709:colormatrix=bt2020nc:log-level=error" \
  -color_primaries bt2020 -color_trc bt709 -colorspace bt2020nc -color_range tv

INTERLACED="$MEDIA/interlaced-1080i25-h264-4s.v1.mkv"
make_clip "$INTERLACED" 4 -f lavfi -i testsrc2=size=1920x1080:rate=50 -t 4 \
  -vf "tinterlace=mode=interleave_top,setfield=tff" -c:v libx264 -preset veryfast -pix_fmt yuv420p \
  -flags +ildct+ilme -x264-params "tff=1:log-level=error"

STEP="bundling the binary and its libraries"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
stubs=(libicudata.so.72 libcodec2.so.1.0 libx265.so.199 libx264.so.164 librsvg-2.so.2 libSvtAv1Enc.so.1 libaom.so.3
  libjxl.so.0.7 libvpx.so.7 librav1e.so.0)
# NVIDIA's Vulkan driver opens GLVND's libEGL as it starts (without it, it answers no vkCreateInstance), and its
# libraries need librt, which the player does not load: from here, to match the packed C library.
added=(libEGL.so.1 libGLX.so.0 libGLdispatch.so.0 librt.so.1)
python3 bench/gpu/bundle.py "$BIN" "$WORK/orb" "${stubs[@]/#/--stub=}" "${added[@]/#/--add=}" || die
mkdir -p "$WORK/orb/media"
cp "$SDRA" "$WORK/orb/media/sdr.mp4"
cp "$SDR60" "$WORK/orb/media/sdr60.mp4"
cp "$HDR" "$WORK/orb/media/hdr.mkv"
cp "$UHD" "$WORK/orb/media/uhd.mkv"
cp "$HLG" "$WORK/orb/media/hlg.mkv"
cp "$WIDE" "$WORK/orb/media/wide.mkv"
cp "$INTERLACED" "$WORK/orb/media/i1080.mkv"
STEP="compressing"
mkdir -p "$DEST"
tar -C "$WORK/orb" -cf - . | xz -T2 -9 >"$DEST/orb-gpu.tar.xz.partial" || die
mv -f "$DEST/orb-gpu.tar.xz.partial" "$DEST/orb-gpu.tar.xz"
cp bench/gpu/run.sh "$DEST/run.sh"
log "$DEST/orb-gpu.tar.xz: $(du -m "$DEST/orb-gpu.tar.xz" | cut -f1) MB; run there: bash run.sh orb-gpu.tar.xz [OUT]"
