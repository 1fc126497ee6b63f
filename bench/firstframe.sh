#!/usr/bin/env bash
# Launch to first picture, over many launches: the median of orb-player's `first_frame_ms` (its `ended` stats: from
# the process's start, as the kernel counts it, to the end of the paint that put the first picture on screen) per
# clip. bench/playback.sh times one launch per clip, whose figure moves by 20-30 ms from run to run on 2 cores; the
# target (150 ms for a local 1080p file) is a median.
#
#   bench/firstframe.sh
#
# 1. Builds the release binary (scripts/build-release.sh); ORB_PLAYER_BIN=/path/to/orb-player skips the build.
# 2. Uses bench/playback.sh's clips (bench/common.sh; made once in ${ORB_BENCH_MEDIA:-/tmp/orb-bench-media}): 1080p30
#    and 1080p60 H.264 + AAC, HDR10 1080p24 HEVC Main10.
# 3. Inside scripts/with-test-env.sh (Xvfb, session bus, PipeWire null sink), per clip: one launch unmeasured (a
#    fresh session's first window is slow), then ORB_FIRSTFRAME_LAUNCHES (default 15) launches of
#    `orb-player --geometry 1280x720 --events-fd 1 CLIP`, each stopped with SIGTERM after 2.5 s, 0.2 s apart.
# 4. Prints a Markdown table (launches, median, lowest, highest, how many within 150 ms) and writes
#    bench/results/firstframe.json and firstframe.md.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
SELF="$ROOT/bench/firstframe.sh"
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"
STEP="checking settings"
die() {
  echo "firstframe: FAILED during: $STEP${1:+: $1}" >&2
  exit 1
}
log() { echo "firstframe: $*" >&2; }
. "$ROOT/bench/common.sh"
LAUNCHES="${ORB_FIRSTFRAME_LAUNCHES:-15}"
[[ "$LAUNCHES" =~ ^[1-9][0-9]*$ ]] || die "ORB_FIRSTFRAME_LAUNCHES must be a positive whole number, got '$LAUNCHES'"

# Inner part, inside scripts/with-test-env.sh: `--measure BIN OUT CLIP...` writes one line per launch to OUT:
# "CLIP FIRST_FRAME_MS".
if [ "${1:-}" = "--measure" ]; then
  BIN="$2" OUT="$3"
  shift 3
  : >"$OUT"
  for clip in "$@"; do
    STEP="launching on $(basename "$clip")"
    timeout -k 5 -s TERM 3 "$BIN" --geometry 1280x720 --events-fd 1 "$clip" >/dev/null 2>&1 || true
    for ((i = 0; i < LAUNCHES; i++)); do
      ended="$(timeout -k 5 -s TERM 2.5 "$BIN" --geometry 1280x720 --events-fd 1 "$clip" 2>/dev/null | grep '"ended"')" ||
        true
      ms="$(num first_frame_ms "$ended")"
      [ -n "$ms" ] || die "no first_frame_ms in the ended event of launch $((i + 1)): '$ended'"
      echo "$(basename "$clip") $ms" >>"$OUT"
      sleep 0.2
    done
  done
  exit 0
fi

bench_build
MEDIA="${ORB_BENCH_MEDIA:-/tmp/orb-bench-media}"
need ffmpeg ffmpeg
need ffprobe ffmpeg
bench_playback_clips
STEP="launching inside scripts/with-test-env.sh"
LOAD="$(cut -d' ' -f1 /proc/loadavg)"
raw="$(mktemp)"
trap 'rm -f "$raw"' EXIT
ORB_FIRSTFRAME_LAUNCHES="$LAUNCHES" scripts/with-test-env.sh "$SELF" --measure "$BIN" "$raw" "$SDRA" "$SDR60" "$HDR" ||
  die "a launch failed (above)"

STEP="reporting"
mkdir -p bench/results
python3 - "$raw" "$(binary_commit)" "$LOAD" <<'PY'
import json, statistics, sys
raw, commit, load = sys.argv[1:4]
runs = {}
for line in open(raw):
    clip, ms = line.split()
    runs.setdefault(clip, []).append(int(ms))
rows = []
for clip, values in runs.items():
    values.sort()
    rows.append({"clip": clip, "launches": len(values), "median_ms": statistics.median(values),
                 "lowest_ms": values[0], "highest_ms": values[-1],
                 "within_150_ms": sum(v <= 150 for v in values), "all_ms": values})
md = ["| clip | launches | median ms | lowest | highest | within 150 ms |", "|---|--:|--:|--:|--:|--:|"]
for r in rows:
    md.append(f"| {r['clip']} | {r['launches']} | {r['median_ms']:g} | {r['lowest_ms']} | {r['highest_ms']} | "
              f"{r['within_150_ms']} of {r['launches']} |")
md.append("")
md.append(f"orb-player at {commit}; launch to first picture painted (`first_frame_ms`), 1280x720 window under Xvfb; "
          f"load average {load} at the start.")
text = "\n".join(md)
print(text)
open("bench/results/firstframe.md", "w").write(text + "\n")
json.dump({"commit": commit, "load": float(load), "clips": rows}, open("bench/results/firstframe.json", "w"), indent=2)
PY
rm -f "$raw"
echo "results: $ROOT/bench/results/firstframe.json, $ROOT/bench/results/firstframe.md" >&2
