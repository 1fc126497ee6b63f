#!/usr/bin/env bash
# Real-time playback benchmark: orb-player against mpv, both playing in a 1280x720 window under Xvfb.
#
#   bench/playback.sh
#
# 1. Builds the release binary (`swift build -c release --product orb-player` -> .build/release/orb-player);
#    ORB_PLAYER_BIN=/path/to/orb-player skips the build and measures that binary instead.
# 2. Installs mpv with apt-get if it is missing (Debian 12 has 0.35), and finds the llvmpipe device name that
#    `vulkaninfo --summary` reports, because mpv refuses software Vulkan devices unless they are named.
# 3. Uses the clips of bench/run.sh from its cache ${ORB_BENCH_MEDIA:-/tmp/orb-bench-media} (same file names and
#    recipes, generated here if missing): SDR 1080p30 H.264 and HDR10 1080p24 HEVC Main10, 10 s each. They have
#    no audio track; both players still run with audio enabled, through PipeWire's null sink.
# 4. Inside scripts/with-test-env.sh (private Xvfb 1920x1080, session bus, PipeWire null sink, WirePlumber), for
#    each clip, one after the other:
#    a. `orb-player --events-fd 1 --title T CLIP`. The player sizes its window to the video fitted into 1600x900,
#       so once that has happened `xdotool windowsize --sync` sets it to 1280x720. Frames presented, dropped and
#       repeated come from its final `ended` event.
#    b. `mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device=LLVMPIPE --geometry=1280x720
#       --autofit=1280x720 ... CLIP`. Its drop counts come from a small Lua script that runs on mpv's `on_unload`
#       hook (after the last frame, before the file is closed), which prints decoder-frame-drop-count,
#       frame-drop-count (the VO's drops; mpv 0.35 renamed vo-drop-frame-count to this) and
#       estimated-frame-number. The --term-status-msg status line is kept as a cross-check.
#    For both: wall seconds (launch to exit) and CPU seconds (user + sys of the process, GNU time). The window
#    size is sampled every 0.5 s while it plays.
# 5. Prints a table (with each player's peak RSS from GNU time's %M, orb-player's time from launch to its first
#    picture, from the `ended` event's first_frame_ms, and its CPU seconds and RSS as ratios of mpv's) and writes
#    bench/results/playback.json.
#
# Environment: ORB_PLAYER_BIN (binary; skips the build), ORB_BENCH_MEDIA (clip cache), ORB_BENCH_SCRATCH
# (optional --scratch-path for the build), ORB_MPV_VULKAN_DEVICE (overrides the device name from vulkaninfo),
# ORB_PLAYBACK_TIMEOUT (seconds one playback may take, default 60).
# Needs: ffmpeg with libx264, libx265 and zscale, xdotool, GNU time (/usr/bin/time), vulkaninfo (vulkan-tools),
# and what scripts/with-test-env.sh needs (Xvfb, dbus, pipewire, wireplumber). About a minute after the build.
# Exits non-zero with a message naming the step that failed.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
SELF="$ROOT/bench/playback.sh"
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"

W=1280
H=720
TIMEOUT="${ORB_PLAYBACK_TIMEOUT:-60}"
STEP="checking settings"
REPORTED=0

die() {
  echo "playback: FAILED during: $STEP${1:+: $1}" >&2
  REPORTED=1
  # Tell the outer run that the failure inside the test environment has already been reported.
  [ -n "${ORB_PLAYBACK_WORK:-}" ] && [ -d "$ORB_PLAYBACK_WORK" ] && : >"$ORB_PLAYBACK_WORK/reported"
  exit 1
}
log() { echo "playback: $*" >&2; }
calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }
num() { # num KEY JSON -> the first number stored under "KEY" (empty if absent)
  { grep -o "\"$1\":[-+0-9.eE]*" <<<"$2" || true; } | sed -n 1p | cut -d: -f2
}

# ================================================================================================= inner part
# Runs inside scripts/with-test-env.sh: plays each clip with both players and leaves raw results in
# $ORB_PLAYBACK_WORK/NAME.PLAYER.* for the outer part.
if [ "${1:-}" = "--measure" ]; then
  WORK="${ORB_PLAYBACK_WORK:?}"
  BIN="${ORB_PLAYBACK_BIN:?}"
  VKDEV="${ORB_PLAYBACK_VKDEV:?}"
  trap 'rc=$?; if [ $rc -ne 0 ] && [ $REPORTED -eq 0 ]; then
          echo "playback: FAILED during: $STEP (exit status $rc)" >&2; : >"$WORK/reported"; fi' EXIT

  STEP="checking the test environment"
  [ -n "${DISPLAY:-}" ] || die "no DISPLAY inside scripts/with-test-env.sh"
  if [ -S "${PIPEWIRE_RUNTIME_DIR:-/nonexistent}/pipewire-0" ]; then echo pipewire >"$WORK/audio-env"
  else echo none >"$WORK/audio-env"; fi

  cat >"$WORK/mpv-stats.lua" <<'EOF'
-- Prints mpv's frame counters once, after the last frame and before the file is unloaded.
local function p(n)
  local v = mp.get_property_native(n)
  if v == nil then return "null" end
  return tostring(v)
end
mp.add_hook("on_unload", 50, function()
  io.stderr:write(string.format(
    'ORB-PLAYBACK-MPV {"decoder_drops":%s,"vo_drops":%s,"vo_delayed":%s,"last_frame_number":%s,' ..
    '"frame_count":%s,"time_pos":%s,"osd_width":%s,"osd_height":%s}\n',
    p("decoder-frame-drop-count"), p("frame-drop-count"), p("vo-delayed-frame-count"),
    p("estimated-frame-number"), p("estimated-frame-count"), p("time-pos"), p("osd-width"), p("osd-height")))
end)
EOF

  # window_id TITLE PID: the X window named exactly TITLE, waiting up to 15 s while PID runs (empty on failure)
  window_id() {
    local i w
    for ((i = 0; i < 300; i++)); do
      w="$(xdotool search --name "^$1\$" 2>/dev/null | head -n1)" || true
      [ -n "$w" ] && { echo "$w"; return 0; }
      kill -0 "$2" 2>/dev/null || return 1
      sleep 0.05
    done
    return 1
  }
  geometry() { xdotool getwindowgeometry "$1" 2>/dev/null | sed -n 's/^ *Geometry: *//p'; }
  # sample_sizes WINDOW PID OUT: the window size every 0.5 s while PID runs, one "seconds size" per line
  sample_sizes() {
    local t0=$EPOCHREALTIME g
    while kill -0 "$2" 2>/dev/null; do
      g="$(geometry "$1")"
      [ -n "$g" ] && echo "$(calc "$EPOCHREALTIME - $t0" 1) $g"
      sleep 0.5
    done >"$3"
  }
  # run_timed NAME CMD...: starts CMD in the background under GNU time and a timeout; sets PID, T0
  run_timed() {
    local name="$1"
    shift
    T0=$EPOCHREALTIME
    /usr/bin/time -f "%U %S %M" -o "$WORK/$name.time" timeout -k 5 "$TIMEOUT" "$@" \
      >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null &
    PID=$!
  }
  # finish NAME: waits for the run; writes NAME.kv (rc, wall, cpu, rss: the peak resident set in MB)
  finish() {
    local rc=0 t1 cpu rss
    wait "$PID" || rc=$?
    t1=$EPOCHREALTIME
    if [ -n "${SAMPLER:-}" ]; then # our own background sampler: stop it if it has not noticed the exit
      kill "$SAMPLER" 2>/dev/null || true
      wait "$SAMPLER" 2>/dev/null || true
      SAMPLER=""
    fi
    cpu="$(tail -n1 "$WORK/$1.time" 2>/dev/null | awk 'NF == 3 { printf "%.2f", $1 + $2 }')"
    # GNU time's %M: the largest resident set of the process tree it waited for (the player under timeout), in KB.
    rss="$(tail -n1 "$WORK/$1.time" 2>/dev/null | awk 'NF == 3 { printf "%.0f", $3 / 1024 }')"
    printf 'rc=%s\nwall=%s\ncpu=%s\nrss=%s\n' "$rc" "$(calc "$t1 - $T0" 2)" "${cpu:-}" "${rss:-}" >"$WORK/$1.kv"
    return "$rc"
  }

  while IFS='|' read -r name clip vw vh; do
    # ------------------------------------------------------------------------------- orb-player
    STEP="orb-player playback of $name"
    title="orb-playback-$name-$$"
    log "$name: orb-player --events-fd 1 --title $title $(basename "$clip")"
    run_timed "$name.orb" "$BIN" --events-fd 1 --title "$title" "$clip"
    win="$(window_id "$title" "$PID")" || {
      finish "$name.orb" || true
      sed 's/^/  orb-player: /' "$WORK/$name.orb.err" >&2
      die "no window titled $title appeared"
    }
    echo "window_first=$(geometry "$win")" >>"$WORK/$name.orb.win"
    # The player resizes its window to the video fitted into 1600x900 once the file is open (just before its
    # `state` event); resizing before that would be undone. Wait for that size, then set 1280x720.
    fit="$(awk -v w="$vw" -v h="$vh" 'BEGIN { s = 1; if (1600 / w < s) s = 1600 / w; if (900 / h < s) s = 900 / h;
      w *= s; h *= s; if (w < 480) { h *= 480 / w; w = 480 } printf "%dx%d", w + 0.5, h + 0.5 }')"
    for ((i = 0; i < 100; i++)); do
      [ "$(geometry "$win")" = "$fit" ] && break
      kill -0 "$PID" 2>/dev/null || break
      sleep 0.05
    done
    echo "window_player=$(geometry "$win")" >>"$WORK/$name.orb.win"
    if [ "$(geometry "$win")" != "${W}x$H" ]; then
      timeout 5 xdotool windowsize --sync "$win" "$W" "$H" || log "$name: xdotool windowsize did not confirm ${W}x$H"
    fi
    echo "resized_after=$(calc "$EPOCHREALTIME - $T0" 2)" >>"$WORK/$name.orb.win"
    echo "window_resized=$(geometry "$win")" >>"$WORK/$name.orb.win"
    sample_sizes "$win" "$PID" "$WORK/$name.orb.sizes" &
    SAMPLER=$!
    finish "$name.orb" || {
      sed 's/^/  orb-player: /' "$WORK/$name.orb.err" "$WORK/$name.orb.out" >&2
      die "orb-player exited with status $(sed -n 's/^rc=//p' "$WORK/$name.orb.kv")"
    }
    grep -q '"event":"ended"' "$WORK/$name.orb.out" || die "orb-player printed no ended event"

    # ------------------------------------------------------------------------------- mpv
    STEP="mpv playback of $name"
    title="mpv-playback-$name-$$"
    log "$name: mpv --vo=gpu-next --gpu-api=vulkan --vulkan-device='$VKDEV' --geometry=${W}x$H $(basename "$clip")"
    run_timed "$name.mpv" mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device="$VKDEV" \
      --geometry="${W}x$H" --autofit="${W}x$H" --title="$title" \
      --script="$WORK/mpv-stats.lua" \
      '--term-status-msg=ORB-PLAYBACK-STATUS decoder-drop=${decoder-frame-drop-count} vo-drop=${frame-drop-count}' \
      "$clip"
    if win="$(window_id "$title" "$PID")"; then
      echo "window_first=$(geometry "$win")" >>"$WORK/$name.mpv.win"
      sample_sizes "$win" "$PID" "$WORK/$name.mpv.sizes" &
      SAMPLER=$!
    fi
    finish "$name.mpv" || {
      cat "$WORK/$name.mpv.out" "$WORK/$name.mpv.err" | tr '\r' '\n' | grep -v '^$' | tail -n 20 | sed 's/^/  mpv: /' >&2
      die "mpv exited with status $(sed -n 's/^rc=//p' "$WORK/$name.mpv.kv")"
    }
    [ -n "${win:-}" ] || die "no mpv window titled $title appeared"
    grep -q 'ORB-PLAYBACK-MPV {' "$WORK/$name.mpv.err" || die "mpv did not print its frame counters (Lua hook)"
  done <"$WORK/clips"
  STEP="done"
  exit 0
fi

# ================================================================================================= outer part
WORK=""
on_exit() {
  local rc=$?
  [ -n "$WORK" ] && rm -rf "$WORK"
  if [ $rc -ne 0 ] && [ $REPORTED -eq 0 ]; then echo "playback: FAILED during: $STEP (exit status $rc)" >&2; fi
  exit $rc
}
trap on_exit EXIT

[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "ORB_PLAYBACK_TIMEOUT must be a positive whole number, got '$TIMEOUT'"

# ---------------------------------------------------------------------------------------------- tools
if [ -z "${ORB_PLAYER_BIN:-}" ] && [ -x scripts/setup.sh ]; then
  STEP="installing build dependencies (scripts/setup.sh)"
  scripts/setup.sh || die
fi
STEP="installing mpv"
if ! command -v mpv >/dev/null; then
  [ "$(id -u)" -eq 0 ] || die "mpv is not installed and this is not root (apt-get install mpv)"
  log "apt-get install -y --no-install-recommends mpv"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mpv >&2 ||
    { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends mpv >&2; } ||
    die "apt-get could not install mpv"
fi
MPV="$(mpv --version 2>/dev/null | sed -n 1p)"
STEP="checking tools"
for t in ffmpeg ffprobe xdotool timeout; do
  command -v "$t" >/dev/null || die "$t is not installed"
done
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (apt-get install time)"
encoders="$(ffmpeg -hide_banner -encoders 2>/dev/null)"
for f in libx264 libx265; do
  grep -qw "$f" <<<"$encoders" || die "this ffmpeg has no $f encoder"
done
grep -qw zscale <<<"$(ffmpeg -hide_banner -filters 2>/dev/null)" || die "this ffmpeg has no zscale filter"

STEP="finding the llvmpipe Vulkan device for mpv"
VKDEV="${ORB_MPV_VULKAN_DEVICE:-}"
if [ -z "$VKDEV" ]; then
  command -v vulkaninfo >/dev/null || die "vulkaninfo is not installed (apt-get install vulkan-tools), or set ORB_MPV_VULKAN_DEVICE"
  VKDEV="$(vulkaninfo --summary 2>/dev/null | sed -n 's/^[[:space:]]*deviceName[[:space:]]*=[[:space:]]*//p' |
    grep -m1 llvmpipe)" || true
  [ -n "$VKDEV" ] || die "vulkaninfo --summary lists no llvmpipe device (set ORB_MPV_VULKAN_DEVICE)"
fi
log "mpv: $MPV; Vulkan device '$VKDEV'"

. "$ROOT/bench/common.sh"
bench_build
STEP="checking the player binary"
VERSION="$("$BIN" --version 2>/dev/null | sed -n 1p)" || die "$BIN --version failed"

MEDIA="${ORB_BENCH_MEDIA:-/tmp/orb-bench-media}"
bench_clips

WORK="$(mktemp -d "${TMPDIR:-/tmp}/orb-playback.XXXXXX")"
STEP="probing the clips"
NAMES=()
declare -A FRAMES=() FPS=() AUDIO=() CLIPFILE=()
for spec in "sdr-1080p30-h264|$SDR" "hdr10-1080p24-hevc10|$HDR"; do
  name="${spec%%|*}"
  clip="${spec#*|}"
  dims="$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0:s=x "$clip")" ||
    die "ffprobe could not read $clip"
  # Frames in the file (counted, since the mkv has no frame count in its header).
  FRAMES[$name]="$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets \
    -of default=nw=1:nk=1 "$clip")" || die "ffprobe could not count packets of $clip"
  FPS[$name]="$(ffprobe -v error -select_streams v:0 -show_entries stream=r_frame_rate -of default=nw=1:nk=1 "$clip")"
  AUDIO[$name]="$(ffprobe -v error -select_streams a -show_entries stream=codec_name -of csv=p=0 "$clip" | head -n1)"
  CLIPFILE[$name]="$clip"
  echo "$name|$clip|${dims%x*}|${dims#*x}" >>"$WORK/clips"
  NAMES+=("$name")
done

# ---------------------------------------------------------------------------------------------- measuring
LOAD="$(cut -d' ' -f1 /proc/loadavg)"
if awk -v l="$LOAD" 'BEGIN { exit !(l > 0.5) }'; then
  log "load average is $LOAD before starting: something else is using the CPU, expect noisy numbers"
fi
STEP="playing inside scripts/with-test-env.sh"
rc=0
ORB_PLAYBACK_WORK="$WORK" ORB_PLAYBACK_BIN="$BIN" ORB_PLAYBACK_VKDEV="$VKDEV" ORB_PLAYBACK_TIMEOUT="$TIMEOUT" \
  scripts/with-test-env.sh "$SELF" --measure || rc=$?
if [ $rc -ne 0 ]; then
  [ -e "$WORK/reported" ] && REPORTED=1 # the inner part said what failed
  exit $rc
fi

# ---------------------------------------------------------------------------------------------- report
STEP="reading the results"
kv() { sed -n "s/^$1=//p" "$2" | tail -n1; }
ROWS=()
ODD=()
CLIP_JSON=()
FMT='%-21s %-10s %9s %8s %8s %7s %7s  %s'
for name in "${NAMES[@]}"; do
  frames="${FRAMES[$name]}"
  # orb-player
  f="$WORK/$name.orb"
  ended="$(grep '"event":"ended"' "$f.out" | tail -n1)"
  o_pres="$(num presented "$ended")"
  o_drop="$(num dropped "$ended")"
  o_rep="$(num repeated "$ended")"
  o_corrupt="$(num corrupt_packets "$ended")"
  o_pos="$(num position_ms "$ended")"
  o_reason="$(grep -o '"reason":"[^"]*"' <<<"$ended" | cut -d'"' -f4)"
  o_first="$(num first_frame_ms "$ended")"
  [ -n "$o_pres" ] && [ -n "$o_drop" ] || die "no stats in orb-player's ended event for $name: $ended"
  o_wall="$(kv wall "$f.kv")"
  o_cpu="$(kv cpu "$f.kv")"
  o_rss="$(kv rss "$f.kv")"
  [ -n "$o_cpu" ] || die "no CPU time for orb-player on $name"
  o_win="$(kv window_resized "$f.win")"
  o_sizes="$(awk '{ print $2 }' "$f.sizes" 2>/dev/null | uniq | paste -sd' ' -)"
  o_err="$(cat "$f.err")"
  [ "$o_reason" = eof ] || ODD+=("$name: orb-player ended with reason '$o_reason', not eof")
  [ "$o_win" = "${W}x$H" ] || ODD+=("$name: orb-player window was $o_win after the resize, not ${W}x$H")
  [ -n "$o_sizes" ] && grep -qv "^${W}x$H\$" <<<"$(tr ' ' '\n' <<<"$o_sizes")" &&
    ODD+=("$name: orb-player window sizes seen while playing: $o_sizes")
  [ $((o_pres + o_drop)) -eq "$frames" ] ||
    ODD+=("$name: orb-player presented + dropped = $((o_pres + o_drop)), the clip has $frames frames")
  [ "${o_corrupt:-0}" -eq 0 ] || ODD+=("$name: orb-player counted $o_corrupt corrupt packets")
  if [ -n "$o_err" ]; then
    while IFS= read -r line; do ODD+=("$name: orb-player stderr: $line"); done <<<"$o_err"
  fi
  ROWS+=("$(printf "$FMT" "$name" orb-player "$o_pres" "$o_drop" "$o_rep" "$(calc "$o_cpu" 2)" "$o_wall" \
    "peak RSS ${o_rss:-?} MB; first picture ${o_first:-?} ms; window $(kv window_first "$f.win") -> $(kv window_player "$f.win") -> $o_win at $(kv resized_after "$f.win") s")")

  # mpv
  f="$WORK/$name.mpv"
  # (the line may follow mpv's last status line, which ends in a carriage return, not a newline)
  m_json="$( { grep -o 'ORB-PLAYBACK-MPV {[^}]*}' "$f.err" || true; } | tail -n1 | cut -d' ' -f2-)"
  m_ddrop="$(num decoder_drops "$m_json")"
  m_vdrop="$(num vo_drops "$m_json")"
  m_last="$(num last_frame_number "$m_json")"
  [ -n "$m_ddrop" ] && [ -n "$m_vdrop" ] && [ -n "$m_last" ] || die "mpv's frame counters are incomplete: $m_json"
  m_drop=$((m_ddrop + m_vdrop))
  # mpv counts no presented frames; frames it reached (last frame number + 1) minus those it dropped.
  m_pres=$((m_last + 1 - m_drop))
  m_status="$(tr '\r' '\n' <"$f.err" | grep -o 'ORB-PLAYBACK-STATUS decoder-drop=[0-9]* vo-drop=[0-9]*' | tail -n1)"
  [ "$m_status" = "ORB-PLAYBACK-STATUS decoder-drop=$m_ddrop vo-drop=$m_vdrop" ] ||
    ODD+=("$name: mpv's last status line ('${m_status#ORB-PLAYBACK-STATUS }') differs from its on_unload counters")
  m_wall="$(kv wall "$f.kv")"
  m_cpu="$(kv cpu "$f.kv")"
  m_rss="$(kv rss "$f.kv")"
  [ -n "$m_cpu" ] || die "no CPU time for mpv on $name"
  m_sizes="$(awk '{ print $2 }' "$f.sizes" 2>/dev/null | uniq | paste -sd' ' -)"
  [ -n "$m_sizes" ] && grep -qv "^${W}x$H\$" <<<"$(tr ' ' '\n' <<<"$m_sizes")" &&
    ODD+=("$name: mpv window sizes seen while playing: $m_sizes")
  ROWS+=("$(printf "$FMT" "" mpv "$m_pres" "$m_drop" "-" "$(calc "$m_cpu" 2)" "$m_wall" \
    "peak RSS ${m_rss:-?} MB; drops: decoder $m_ddrop + vo $m_vdrop; window $(kv window_first "$f.win"); orb/mpv CPU $(calc "$o_cpu / $m_cpu" 2)x, RSS $(calc "${o_rss:-0} / ${m_rss:-1}" 2)x")")

  CLIP_JSON+=("$(
    printf '{"name":"%s","file":"%s","frames":%s,"frame_rate":"%s","audio":"%s",' \
      "$name" "$(esc "${CLIPFILE[$name]}")" "$frames" \
      "${FPS[$name]}" "${AUDIO[$name]:-none}"
    printf '"orb":{"presented":%s,"dropped":%s,"repeated":%s,"corrupt_packets":%s,"position_ms":%s,"reason":"%s",' \
      "$o_pres" "$o_drop" "${o_rep:-null}" "${o_corrupt:-null}" "${o_pos:-null}" "$(esc "$o_reason")"
    printf '"cpu_seconds":%s,"wall_seconds":%s,"peak_rss_mb":%s,' "$o_cpu" "$o_wall" "${o_rss:-null}"
    printf '"window":{"first":"%s","player":"%s","resized":"%s","resized_after_seconds":%s,"seen":"%s"},' \
      "$(kv window_first "$WORK/$name.orb.win")" "$(kv window_player "$WORK/$name.orb.win")" "$o_win" \
      "$(kv resized_after "$WORK/$name.orb.win")" "$o_sizes"
    printf '"ended_event":%s,"stderr":"%s"},' "$ended" "$(esc "$o_err")"
    printf '"mpv":{"presented_derived":%s,"dropped":%s,"decoder_drops":%s,"vo_drops":%s,"cpu_seconds":%s,' \
      "$m_pres" "$m_drop" "$m_ddrop" "$m_vdrop" "$m_cpu"
    printf '"wall_seconds":%s,"peak_rss_mb":%s,"window":{"first":"%s","seen":"%s"},"counters":%s}}' \
      "$m_wall" "${m_rss:-null}" "$(kv window_first "$WORK/$name.mpv.win")" "$m_sizes" "$m_json"
  )")
done
for name in "${NAMES[@]}"; do
  [ -n "${AUDIO[$name]}" ] || ODD+=("$name: the clip has no audio track (bench/run.sh's recipe), so neither player had sound to play or sync to")
done
[ "$(cat "$WORK/audio-env")" = pipewire ] ||
  ODD+=("PipeWire was not running in the test environment (see with-test-env's warning above)")

STEP="writing results"
MPV_CMD="mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device='$VKDEV' --geometry=${W}x$H --autofit=${W}x$H --title=T --script=mpv-stats.lua '--term-status-msg=ORB-PLAYBACK-STATUS decoder-drop=\${decoder-frame-drop-count} vo-drop=\${frame-drop-count}' CLIP"
ORB_CMD="orb-player --events-fd 1 --title T CLIP; then xdotool windowsize --sync WINDOW $W $H"
echo
printf "$FMT\n" clip player presented dropped repeated "CPU s" "wall s" ""
printf '%s\n' "${ROWS[@]}"
echo "Real-time playback in a ${W}x$H window under Xvfb ($(cat "$WORK/audio-env") audio), Vulkan on $VKDEV."
echo "CPU s = user + sys of the whole process; wall s = launch to exit. mpv presented = frames reached - dropped"
echo "(mpv has no presented counter); mpv dropped = decoder-frame-drop-count + frame-drop-count (VO)."
echo "orb:  $ORB_CMD"
echo "mpv:  $MPV_CMD"
for o in "${ODD[@]+"${ODD[@]}"}"; do echo "note: $o"; done

RESULTS="$ROOT/bench/results"
mkdir -p "$RESULTS"
{
  printf '{"date":"%s","host":{"cpu":"%s","cores":%s,"kernel":"%s"},"load_average_at_start":%s,' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$(esc "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')")" \
    "$(nproc)" "$(uname -r)" "$LOAD"
  printf '"orb_player":{"binary":"%s","version":"%s","commit":"%s","command":"%s"},' \
    "$(esc "$BIN")" "$(esc "$VERSION")" "$(git describe --always --dirty 2>/dev/null || echo unknown)" "$(esc "$ORB_CMD")"
  printf '"mpv":{"version":"%s","command":"%s"},"vulkan_device":"%s","window":"%sx%s","audio":"%s","clips":[' \
    "$(esc "$MPV")" "$(esc "$MPV_CMD")" "$(esc "$VKDEV")" "$W" "$H" "$(cat "$WORK/audio-env")"
  (IFS=,; printf '%s' "${CLIP_JSON[*]}")
  printf '],"notes":'
  json_strings "${ODD[@]+"${ODD[@]}"}"
  printf '}\n'
} >"$WORK/playback.json"
if command -v python3 >/dev/null && ! python3 -m json.tool "$WORK/playback.json" >/dev/null; then
  cp "$WORK/playback.json" "$RESULTS/playback.json.bad"
  die "playback.json is not valid JSON (kept as $RESULTS/playback.json.bad)"
fi
mv -f "$WORK/playback.json" "$RESULTS/playback.json"
echo "results: $RESULTS/playback.json"
STEP="done"
