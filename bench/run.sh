#!/usr/bin/env bash
# The README's benchmark: how fast orb-player decodes *and* renders compared with plain FFmpeg decoding.
#
#   bench/run.sh
#
# 1. Builds the release binary (`scripts/build-release.sh`), so it measures what the README builds.
#    ORB_PLAYER_BIN=/path/to/orb-player skips the build and measures that binary instead.
# 2. Generates two 10 s clips once into ${ORB_BENCH_MEDIA:-/tmp/orb-bench-media} (ffmpeg lavfi recipes):
#    SDR 1080p30 H.264 and HDR10 1080p24 HEVC Main10 (PQ, SDR white at 203 nits, mastering + MaxCLL metadata).
# 3. For each clip, in this run:
#    a. `ffmpeg -threads 0 -i CLIP -f null -`: decode only; frames / wall seconds, CPU seconds of the process;
#    b. `orb-player --benchmark --size 1280x720 CLIP`: decode + Vulkan render of every frame (its JSON line);
#    each ORB_BENCH_RUNS times (default 3, alternating), and prints a table of the median run of each and writes
#    bench/results/latest.json with every run (ratio = orb fps / ffmpeg decode fps, of the medians).
#
# Environment: ORB_PLAYER_BIN (binary; skips the build), ORB_BENCH_MEDIA (clip cache), ORB_BENCH_RUNS,
# ORB_BENCH_SIZE (render size, default 1280x720), ORB_BENCH_SCRATCH (optional --scratch-path for the build).
# Needs: ffmpeg with libx264, libx265 and zscale (Debian's has them), GNU time (/usr/bin/time, package `time`;
# without it CPU seconds come from bash's `times`). Takes about a minute after the build on 2 cores.
# Exits non-zero with a message naming the step that failed.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"

MEDIA="${ORB_BENCH_MEDIA:-/tmp/orb-bench-media}"
SIZE="${ORB_BENCH_SIZE:-1280x720}"
RUNS="${ORB_BENCH_RUNS:-3}"
RESULTS="$ROOT/bench/results"
STEP="checking settings"
WORK=""
REPORTED=0

die() {
  echo "bench: FAILED during: $STEP${1:+: $1}" >&2
  REPORTED=1
  exit 1
}
on_exit() {
  local rc=$?
  [ -n "$WORK" ] && rm -rf "$WORK"
  if [ $rc -ne 0 ] && [ $REPORTED -eq 0 ]; then echo "bench: FAILED during: $STEP (exit status $rc)" >&2; fi
  exit $rc
}
trap on_exit EXIT
log() { echo "bench: $*" >&2; }

[[ "$SIZE" =~ ^[0-9]+x[0-9]+$ ]] || die "ORB_BENCH_SIZE must look like 1280x720, got '$SIZE'"
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "ORB_BENCH_RUNS must be a positive whole number, got '$RUNS'"

# ---------------------------------------------------------------------------------------------- tools
STEP="checking tools"
if [ -z "${ORB_PLAYER_BIN:-}" ] && [ -x scripts/setup.sh ]; then
  STEP="installing build dependencies (scripts/setup.sh)"
  scripts/setup.sh || die
fi
STEP="checking tools"
command -v ffmpeg >/dev/null || die "ffmpeg is not installed (apt-get install ffmpeg)"
command -v ffprobe >/dev/null || die "ffprobe is not installed (apt-get install ffmpeg)"
# (grep the captured lists: `ffmpeg | grep -q` would fail under pipefail when grep stops reading early)
encoders="$(ffmpeg -hide_banner -encoders 2>/dev/null)"
for f in libx264 libx265; do
  grep -qw "$f" <<<"$encoders" || die "this ffmpeg has no $f encoder"
done
grep -qw zscale <<<"$(ffmpeg -hide_banner -filters 2>/dev/null)" || die "this ffmpeg has no zscale filter"
TIME_BIN=""
if [ -x /usr/bin/time ]; then
  TIME_BIN=/usr/bin/time
else
  log "/usr/bin/time not found (apt-get install time); measuring CPU with bash 'times' instead"
fi
if command -v mpv >/dev/null; then
  MPV="$(mpv --version 2>/dev/null | sed -n 1p)"
  log "mpv found ($MPV); not benchmarked here (bench/playback.sh plays it beside orb-player)"
else
  MPV="absent"
  log "mpv not installed; no mpv comparison"
fi

. "$ROOT/bench/common.sh"
bench_build

bench_clips

# ---------------------------------------------------------------------------------------------- measuring
WORK="$(mktemp -d "${TMPDIR:-/tmp}/orb-bench.XXXXXX")"

num_device() { echo "${DEVICE:-an unknown device}"; }

# timed NAME CMD... : runs CMD with stdout in $WORK/NAME.out and stderr in $WORK/NAME.err; sets WALL and CPU
# (seconds, CPU = user + system of the whole process and its threads). Returns CMD's exit status.
timed() {
  local name="$1" t0 t1 rc=0
  shift
  t0=$EPOCHREALTIME
  if [ -n "$TIME_BIN" ]; then
    "$TIME_BIN" -f "%U %S" -o "$WORK/$name.time" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
    t1=$EPOCHREALTIME
    # GNU time puts "Command exited with non-zero status N" first when CMD fails; the numbers are last.
    CPU="$(tail -n1 "$WORK/$name.time" | awk '{ printf "%.3f", $1 + $2 }')"
  else
    # `times` in a subshell: its second line is the CPU time of that subshell's children (CMD only).
    ("$@" >"$WORK/$name.out" 2>"$WORK/$name.err"; r=$?; times >"$WORK/$name.time"; exit $r) || rc=$?
    t1=$EPOCHREALTIME
    CPU="$(sed -n 2p "$WORK/$name.time" | awk '{
      for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } } END { printf "%.3f", t }')"
  fi
  WALL="$(calc "$t1 - $t0")"
  return $rc
}

STEP="checking the player binary"
VERSION="$("$BIN" --version 2>/dev/null | sed -n 1p)" || VERSION="unknown"

# median_index FPS... -> index of the median value (the lower middle one for an even count)
median_index() {
  local i=0 v
  for v in "$@"; do
    echo "$v $i"
    i=$((i + 1))
  done | sort -g | awk -v n=$# 'NR == int((n + 1) / 2) { print $2 }'
}

LOAD="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$LOAD" 'BEGIN { exit !(l > 0.5) }'; then
  log "load average is $LOAD before starting: something else is using the CPU, expect noisy numbers"
fi

FMT='%-21s %6s %6s %8s %7s %8s %7s %8s %8s %6s'
ROWS=()
CPF=()
CLIP_JSON=()
ODD=()
for spec in "sdr-1080p30-h264|$SDR" "hdr10-1080p24-hevc10|$HDR"; do
  name="${spec%%|*}"
  clip="${spec#*|}"
  ff_runs=() orb_runs=() ff_fpss=() orb_fpss=() ff_rows=() orb_rows=()

  for ((run = 1; run <= RUNS; run++)); do
    STEP="ffmpeg decode of $name (run $run of $RUNS)"
    log "$name: ffmpeg -threads 0 -i $(basename "$clip") -f null -   (run $run of $RUNS)"
    rm -f "$WORK/progress"
    timed ffmpeg ffmpeg -hide_banner -nostdin -loglevel error -nostats -progress "$WORK/progress" \
      -threads 0 -i "$clip" -f null - || {
      sed 's/^/  ffmpeg: /' "$WORK/ffmpeg.err" >&2
      die "ffmpeg could not decode $clip"
    }
    ff_frames="$(grep '^frame=' "$WORK/progress" | tail -n1 | cut -d= -f2)"
    [ "${ff_frames:-0}" -gt 0 ] || die "ffmpeg decoded no frames"
    ff_fps="$(calc "$ff_frames / $WALL" 2)"
    ff_fpss+=("$ff_fps")
    ff_rows+=("$ff_frames $WALL $CPU $ff_fps")
    ff_runs+=("$(printf '{"frames":%s,"wall_seconds":%s,"cpu_seconds":%s,"fps":%s}' "$ff_frames" "$WALL" "$CPU" "$ff_fps")")

    STEP="orb-player --benchmark of $name (run $run of $RUNS)"
    log "$name: orb-player --benchmark --size $SIZE $(basename "$clip")   (run $run of $RUNS)"
    timed orb "$BIN" --benchmark --size "$SIZE" "$clip" || {
      sed 's/^/  orb-player: /' "$WORK/orb.out" "$WORK/orb.err" >&2
      die "orb-player exited with an error"
    }
    orb_json="$(grep '^{' "$WORK/orb.out" | tail -n1)" || true
    DEVICE="$(grep -o '"device":"[^"]*"' <<<"$orb_json" | cut -d'"' -f4)" || true
    orb_fps="$(num fps "$orb_json")"
    orb_frames="$(num frames "$orb_json")"
    orb_cpu="$(num cpu_seconds "$orb_json")"
    orb_rss="$(num peak_rss_mb "$orb_json")"
    orb_corrupt="$(num corrupt_packets "$orb_json")"
    [ -n "$orb_fps" ] && [ -n "$orb_frames" ] && [ -n "$orb_cpu" ] && [ -n "$orb_rss" ] ||
      die "no benchmark JSON in its output: $(head -c 500 "$WORK/orb.out")"
    [ "$orb_frames" -gt 0 ] || die "orb-player rendered no frames"
    if [ -s "$WORK/orb.err" ] && [ "$run" -eq 1 ]; then
      ODD+=("$name: orb-player wrote to stderr: $(head -c 300 "$WORK/orb.err" | tr '\n' ' ')")
    fi
    [ "$orb_frames" -eq "$ff_frames" ] ||
      ODD+=("$name run $run: frame counts differ: ffmpeg $ff_frames, orb-player $orb_frames")
    [ "${orb_corrupt:-0}" -eq 0 ] || ODD+=("$name run $run: orb-player counted $orb_corrupt corrupt packets")
    orb_fpss+=("$orb_fps")
    orb_rows+=("$orb_frames $orb_fps $orb_cpu $CPU $orb_rss")
    orb_runs+=("$(printf '{"benchmark":%s,"process":{"wall_seconds":%s,"cpu_seconds":%s}}' "$orb_json" "$WALL" "$CPU")")
  done

  # The table and the ratio use the median run of each (by fps); every run is kept in the JSON.
  fi="$(median_index "${ff_fpss[@]}")"
  oi="$(median_index "${orb_fpss[@]}")"
  read -r ff_frames ff_wall ff_cpu ff_fps <<<"${ff_rows[$fi]}"
  read -r orb_frames orb_fps orb_cpu orb_proc_cpu orb_rss <<<"${orb_rows[$oi]}"
  ratio="$(calc "$orb_fps / $ff_fps" 3)"
  # CPU per frame moves much less than fps when something else shares the cores.
  ff_cpf="$(calc "1000 * $ff_cpu / $ff_frames" 2)"
  orb_cpf="$(calc "1000 * $orb_cpu / $orb_frames" 2)"
  CPF+=("$(printf '%-21s ffmpeg %6s ms, orb-player %6s ms (x%s)' "$name" "$ff_cpf" "$orb_cpf" "$(calc "$orb_cpf / $ff_cpf" 1)")")
  spread() { printf '%s\n' "$@" | sort -g | sed -n '1p;$p' | awk '{ printf "%s%.1f", (NR > 1 ? " to " : ""), $1 }'; }
  [ "$RUNS" -gt 1 ] && log "$name: fps over $RUNS runs: ffmpeg $(spread "${ff_fpss[@]}"), orb $(spread "${orb_fpss[@]}")"

  ROWS+=("$(printf "$FMT" "$name" "$ff_frames" "$orb_frames" "$ff_fps" "$(calc "$ff_cpu" 2)" \
    "$(calc "$orb_fps" 2)" "$(calc "$orb_cpu" 2)" "$(calc "$orb_proc_cpu" 2)" "$(calc "$orb_rss" 1)" "$ratio")")
  CLIP_JSON+=("$(
    printf '{"name":"%s","file":"%s",' "$name" "$(esc "$clip")"
    printf '"ffmpeg":{"command":"ffmpeg -threads 0 -i CLIP -f null -","median":%s,"runs":[%s]},' \
      "${ff_runs[$fi]}" "$(IFS=,; echo "${ff_runs[*]}")"
    printf '"orb":{"command":"orb-player --benchmark --size %s CLIP","median":%s,"runs":[%s]},' \
      "$SIZE" "${orb_runs[$oi]}" "$(IFS=,; echo "${orb_runs[*]}")"
    printf '"ratio_orb_fps_to_ffmpeg_decode_fps":%s,' "$ratio"
    printf '"cpu_ms_per_frame":{"ffmpeg":%s,"orb":%s}}' "$ff_cpf" "$orb_cpf"
  )")
done

# ---------------------------------------------------------------------------------------------- report
STEP="writing results"
echo
printf "$FMT\n" clip "ff fr" "orb fr" "ff fps" "ff CPU" "orb fps" "orb CPU" "orb pCPU" "orb RSS" ratio
printf '%s\n' "${ROWS[@]}"
echo "ff = ffmpeg -threads 0 decode only (CPU of the process); orb = orb-player --benchmark, decode + render at"
echo "$SIZE on $(num_device)"
echo "orb CPU = its own figure for the decode+render loop; orb pCPU = the whole process incl. Vulkan start-up;"
echo "CPU in seconds, RSS = orb peak RSS in MB, ratio = orb fps / ffmpeg decode fps"
echo
echo "CPU time per frame (less sensitive to other load than fps):"
printf '  %s\n' "${CPF[@]}"
for o in "${ODD[@]+"${ODD[@]}"}"; do echo "note: $o"; done

mkdir -p "$RESULTS"
{
  printf '{"date":"%s","host":{"cpu":"%s","cores":%s,"kernel":"%s"},' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$(esc "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')")" \
    "$(nproc)" "$(uname -r)"
  printf '"orb_player":{"binary":"%s","version":"%s","commit":"%s"},' \
    "$(esc "$BIN")" "$(esc "$VERSION")" "$(git describe --always --dirty 2>/dev/null || echo unknown)"
  printf '"ffmpeg":"%s","mpv":"%s","render_size":"%s","runs":%s,"load_average_at_start":%s,"clips":[' \
    "$(esc "$(ffmpeg -version | sed -n 1p)")" "$(esc "$MPV")" "$SIZE" "$RUNS" "$LOAD"
  (IFS=,; printf '%s' "${CLIP_JSON[*]}")
  printf '],"notes":'
  json_strings "${ODD[@]+"${ODD[@]}"}"
  printf '}\n'
} >"$WORK/latest.json"
if command -v python3 >/dev/null; then
  python3 -m json.tool "$WORK/latest.json" >/dev/null || die "latest.json is not valid JSON"
fi
mv -f "$WORK/latest.json" "$RESULTS/latest.json"
echo "results: $RESULTS/latest.json"
STEP="done"
