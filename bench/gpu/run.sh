#!/usr/bin/env bash
# The renderer on a real GPU, headless: runs on a machine with an NVIDIA GPU (or any Vulkan GPU) and none of the
# player's packages, from the bundle that bench/gpu/pack.sh makes here. Prints what it measures and writes it to
# OUT (default /tmp/orb-gpu-out): log.txt (everything), bench.jsonl (one `--benchmark` JSON line a run, with the
# clip, size and run number added) and the `--frame-at` stills as PNGs (log.txt's `still` lines say what each one
# is), for bench/gpu/report.py to hold against the same stills drawn here. At most 8 files: what the device tool
# brings back.
#
#   bench/gpu/run.sh BUNDLE.tar.xz [OUT]
#
# Finds the Vulkan driver's manifest (VK_DRIVER_FILES if set, else NVIDIA's in the usual places) and the folder of
# the driver's libraries, and runs the bundled player with the bundled loader so that only the driver comes from
# that machine. Each step has a time limit and a failed step does not stop the others.
set -u
BUNDLE="${1:?usage: bench/gpu/run.sh BUNDLE.tar.xz [OUT]}"
OUT="${2:-${OUT:-/tmp/orb-gpu-out}}"
RUNS="${ORB_GPU_RUNS:-3}"
mkdir -p "$OUT"
exec > >(tee "$OUT/log.txt") 2>&1

step() { echo; echo "== $*"; }
DIR=/tmp/orb-gpu
rm -rf "$DIR" && mkdir -p "$DIR" && tar -xJf "$BUNDLE" -C "$DIR" || { echo "cannot unpack $BUNDLE"; exit 1; }

step "machine"
uname -srm
sed -n 's/^PRETTY_NAME=//p' /etc/os-release
nproc
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
ls /dev/nvidia* /dev/dri 2>&1 | tr '\n' ' '
echo

step "Vulkan driver"
icd="${VK_DRIVER_FILES:-}"
if [ -z "$icd" ]; then
  for f in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd*.json /usr/share/vulkan/icd.d/nvidia_icd*.json \
    /etc/vulkan/icd.d/nvidia_icd*.json /usr/local/share/vulkan/icd.d/nvidia_icd*.json; do
    [ -f "$f" ] && { icd="$f"; break; }
  done
fi
[ -n "$icd" ] || icd="$(find /usr /etc /opt -maxdepth 6 -name 'nvidia_icd*.json' 2>/dev/null | head -n1)"
echo "manifest: ${icd:-none found}"
[ -n "$icd" ] && cat "$icd"
export VK_DRIVER_FILES="$icd"
lib="$(ldconfig -p | sed -n 's/.*libGLX_nvidia.so.0 .*=> //p' | head -n1)"
[ -n "$lib" ] ||
  lib="$(find /usr/local/nvidia /usr/lib /usr/lib64 -maxdepth 3 -name libGLX_nvidia.so.0 2>/dev/null | head -n1)"
DRIVER_DIRS="$(dirname "${lib:-/usr/local/nvidia/lib64/x}")"
for d in /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib/x86_64-linux-gnu; do
  [ -d "$d" ] && [[ ":$DRIVER_DIRS:" != *":$d:"* ]] && DRIVER_DIRS="$DRIVER_DIRS:$d"
done
echo "driver libraries: $DRIVER_DIRS"
# The driver starts GLVND's EGL (packed), which looks for its vendor's manifest.
if [ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ]; then
  for f in /usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json /usr/share/glvnd/egl_vendor.d/10_nvidia.json; do
    [ -f "$f" ] && { export __EGL_VENDOR_LIBRARY_FILENAMES="$f"; break; }
  done
fi
echo "EGL vendor: ${__EGL_VENDOR_LIBRARY_FILENAMES:-none found}"
echo "stand-ins: $(tr '\n' ' ' <"$DIR/lib/STUBS")"

player() {
  timeout "${LIMIT:-120}" "$DIR/lib/ld-linux-x86-64.so.2" --library-path "$DIR/lib:$DRIVER_DIRS" \
    "$DIR/bin/orb-player" "$@"
}

step "orb-player --version"
player --version
step "Vulkan check"
if ! player --benchmark --benchmark-seconds 0.2 --size 16x16 "$DIR/media/hlg.mkv"; then
  echo "no Vulkan device: what the loader and the dynamic linker say (all of it in $OUT/ld.txt)"
  VK_LOADER_DEBUG=error,warn,driver LD_DEBUG=libs player --benchmark --benchmark-seconds 0.2 --size 16x16 \
    "$DIR/media/hlg.mkv" >"$OUT/ld.txt" 2>&1
  grep -E "ERROR|error|cannot|DRIVER" "$OUT/ld.txt" | grep -v "search path" | tail -40
  exit 1
fi
step "--probe sdr"
player --probe "$DIR/media/sdr.mp4"

# Frame threads (ORB_VIDEO_THREADS) against what they cost: decoding speed (16x16, where drawing is next to nothing),
# peak RSS, and an exact seek late in a group of pictures (--frame-at decodes every picture from the key frame
# before to the one asked for: 58 of sdr.mp4's 2 s group, 229 and 109 of the HEVC clips', whose only key frame is
# at 0 s) timed from launch to the PNG written. Lines `threads CLIP N ...`. ORB_GPU_THREADS lists the counts (default "1 2 4 8 16"; empty skips this).
threads_sweep() {
  local clip n i t0 t1 line
  for clip in sdr.mp4:1.95 hdr.mkv:9.5 uhd.mkv:4.5; do
    for n in ${ORB_GPU_THREADS-1 2 4 8 16}; do
      for ((i = 1; i <= RUNS; i++)); do
        line="$(ORB_VIDEO_THREADS=$n player --benchmark --size 16x16 "$DIR/media/${clip%%:*}")" || line=failed
        t0=$(date +%s%N)
        ORB_VIDEO_THREADS=$n player --frame-at "${clip#*:}" --size 1280x720 --output "$DIR/seek.png" \
          "$DIR/media/${clip%%:*}" >/dev/null || t0=failed
        t1=$(date +%s%N)
        [ "$t0" = failed ] && t1=0 t0=0
        echo "threads ${clip%%:*} $n run $i frame-at ${clip#*:} ms $(((t1 - t0) / 1000000)) benchmark $line"
      done
    done
  done
}
if [ "${ORB_GPU_ONLY:-}" = threads ]; then
  step "frame threads (only)"
  threads_sweep
  step "done"
  exit 0
fi

: >"$OUT/bench.jsonl"
bench() { # bench NAME SIZE
  local i line
  for ((i = 1; i <= RUNS; i++)); do
    line="$(player --benchmark --size "$2" "$DIR/media/$1")" || { echo "benchmark $1 $2 failed"; return; }
    echo "$1 $2 run $i: $line"
    echo "{\"clip\":\"$1\",\"size\":\"$2\",\"run\":$i,\"result\":$line}" >>"$OUT/bench.jsonl"
  done
}
step "--benchmark (decode + render every frame; 16x16 is decoding with almost no drawing)"
for clip in sdr.mp4 sdr60.mp4 hdr.mkv uhd.mkv i1080.mkv; do
  bench "$clip" 1280x720
  bench "$clip" 16x16
done
bench hdr.mkv 1920x1080
bench uhd.mkv 3840x2160

step "--frame-at stills (each a line: still PNG CLIP SECONDS SIZE)"
for still in sdr.mp4:1280x720 hdr.mkv:1280x720 uhd.mkv:1920x1080 hlg.mkv:1280x720 wide.mkv:1280x720 \
  i1080.mkv:1920x1080; do
  clip="${still%%:*}" size="${still#*:}"
  if player --frame-at 2 --size "$size" --output "$OUT/${clip%%.*}.png" "$DIR/media/$clip"; then
    echo "still ${clip%%.*}.png $clip 2 $size"
  fi
done
step "frame threads"
threads_sweep
step "done"
