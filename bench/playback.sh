#!/usr/bin/env bash
# Real-time playback benchmark: orb-player, mpv and ffplay side by side, each playing in a 1280x720 window under
# Xvfb, one after the other, in one run.
#
#   bench/playback.sh
#
# 1. Builds the release binary (`scripts/build-release.sh` -> .build/release/orb-player);
#    ORB_PLAYER_BIN=/path/to/orb-player skips the build and measures that binary instead.
# 2. Installs what is missing with apt-get (mpv, ffmpeg for ffplay, xdotool, time, vulkan-tools), and finds the
#    llvmpipe device name that `vulkaninfo --summary` reports, because mpv refuses software Vulkan devices unless
#    they are named.
# 3. Four clips, generated once into ${ORB_BENCH_MEDIA:-/tmp/orb-bench-media} (recipes in bench/common.sh):
#    - sdr: 1080p30 H.264 (a key frame every 2 s) + AAC stereo (a 440 Hz tone), 10 s;
#    - sdr60: the same at 60 fps (a picture each refresh: a jittering clock drops pictures there), 10 s;
#    - hdr: HDR10 1080p24 HEVC Main10, 10 s (bench/run.sh's clip), no audio;
#    - uhd: HDR10 2160p24 HEVC Main10, 5 s, no audio.
# 4. Inside scripts/with-test-env.sh (private Xvfb 1920x1080, session bus, PipeWire null sink, WirePlumber), each
#    player first plays the first clip for 2 s, unmeasured (a fresh session's first window is slow for all three);
#    then for each clip, once more for the sdr clip with seeks ("sdr+seeks"), and once more for the sdr clip with a
#    SubRip sidecar whose two-line cue shows from 0.5 s to 9.5 s ("sdr+subs": orb-player and mpv `--sub-file`,
#    ffplay `-vf subtitles=`, libass burning it into each picture), one player after the other:
#    a. `orb-player --events-fd 1 --geometry 1280x720 --title T CLIP` (the window size given as mpv's is; should the
#       window have another size once the file is open, `xdotool windowsize` sets it and the results say so). Frames presented, dropped and
#       repeated, first_frame_ms (launch to its first picture painted) and, with seeks, seek_ms_median (a seek's
#       request to its picture painted) and seeks come from the `stats` of its final `ended` event. mpv's
#       playback-restart comes once its first picture is handed to its VO, which may be before it is on screen:
#       if anything, the comparison favours mpv.
#    b. `mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device=LLVMPIPE --hr-seek=yes --geometry=1280x720
#       --autofit=1280x720 ... CLIP`. A small Lua script prints, on mpv's `on_unload` hook (after the last frame,
#       before the file is closed), decoder-frame-drop-count + frame-drop-count (the VO's) and
#       estimated-frame-number; its first frame is the first `playback-restart` event (mpv sends it once the first
#       picture after loading has been shown and audio is ready), timed from the process's start as orb-player
#       does (/proc/self/stat's start time against /proc/uptime, both 10 ms ticks, so +-20 ms); a seek's latency is
#       the time from its `seek` event to the next `playback-restart`. --hr-seek=yes makes its arrow-key seeks exact,
#       as orb-player's are. The --term-status-msg status line cross-checks the drop counters.
#    c. `SDL_AUDIODRIVER=pipewire ffplay -autoexit -stats -loglevel verbose -x 1280 -y 720 -window_title T
#       -seek_interval 5 CLIP` (SDL2, its sound through PipeWire: it would try ALSA and find no device; it
#       does no tone mapping, so the HDR clips look wrong in it, but are decoded and shown). Its drops are the
#       fd= counter of its last status line (frames dropped early + late). It reports no first picture or seek
#       times: those cells are "-". Its renderer is its own "Initialized ... renderer" log line.
#    The script looks for each player's window (xdotool) only from 1 s after the launch, so that it does not compete
#    with the start-up it times. For all three: wall seconds (launch to exit), CPU seconds (user + sys) and peak RSS (GNU time's %M, the process
#    tree under the timeout), the window size every 0.5 s, and the device: which of lavapipe's Vulkan driver
#    (libvulkan_lvp) and Mesa's GL driver (*_dri.so / libgallium) the player had mapped 2 s into playing
#    (/proc/PID/maps). With seeks: 1.5 s after the window is up, Right, Left, Right, Left, 0.8 s apart, typed with
#    xdotool into the focused window (orb-player and mpv: +5/-5 s exact seeks; ffplay: +5/-5 s by -seek_interval,
#    to the key frame before, and not timed). Every playback runs under `timeout` (ORB_PLAYBACK_TIMEOUT s).
# 5. Prints a Markdown table (CPU s, drops, peak RSS, first frame, seek median, the device, and each figure as a
#    ratio of mpv's on the same clip) with notes, and writes bench/results/playback.json (every number and the raw
#    counters) and bench/results/playback.md (the table).
#
# Environment: ORB_PLAYER_BIN (binary; skips the build), ORB_BENCH_MEDIA (clip cache), ORB_BENCH_SCRATCH
# (optional --scratch-path for the build), ORB_MPV_VULKAN_DEVICE (overrides the device name from vulkaninfo),
# ORB_PLAYBACK_TIMEOUT (seconds one playback may take, default 60), ORB_PLAYBACK_ONLY (a space-separated subset of
# the runs sdr, sdr60, hdr, uhd, sdr+seeks, sdr+subs; all by default), ORB_PLAYBACK_KEEP=1 (keep the raw logs; the path is printed).
# Needs: ffmpeg/ffprobe/ffplay with libx264, libx265 and zscale, mpv, xdotool, GNU time (/usr/bin/time), vulkaninfo,
# and what scripts/with-test-env.sh needs (Xvfb, dbus, pipewire, wireplumber). About 4 minutes after the build on
# 2 cores (the first run also encodes the 2160p clip, about a minute). One run each: expect noise on a busy machine.
# Exits non-zero with a message naming the step that failed.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
SELF="$ROOT/bench/playback.sh"
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"

W=1280
H=720
TIMEOUT="${ORB_PLAYBACK_TIMEOUT:-60}"
SEEK_KEYS=(Right Left Right Left)
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
. "$ROOT/bench/common.sh"

# ================================================================================================= inner part
# Runs inside scripts/with-test-env.sh: plays each run of $ORB_PLAYBACK_WORK/runs and leaves raw results in
# $ORB_PLAYBACK_WORK/RUN.PLAYER.* for the outer part.
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
-- Times mpv's first picture (from the process's start) and each seek (its `seek` event to the next
-- `playback-restart`), and prints them with its frame counters once, after the last frame, before the file unloads.
local tck = tonumber(mp.get_opt("orb-clk-tck") or "") or 100
local function since_start() -- seconds since this process started, as orb-player's HostTime.launch counts them
  local f = io.open("/proc/self/stat", "r")
  if not f then return nil end
  local s = f:read("*a")
  f:close()
  local rest = s:match(".*%)%s+(.*)") -- the fields after the command name, from field 3
  if not rest then return nil end
  local i, start = 3, nil
  for w in rest:gmatch("%S+") do
    if i == 22 then start = tonumber(w) break end
    i = i + 1
  end
  local u = io.open("/proc/uptime", "r")
  if not u then return nil end
  local up = tonumber((u:read("*l") or ""):match("^(%S+)") or "")
  u:close()
  if not start or not up then return nil end
  return up - start / tck
end
local base = since_start()
local offset = base and (base - mp.get_time()) or nil
local first, seek_at, seeks = nil, nil, {}
mp.register_event("seek", function() seek_at = mp.get_time() end)
mp.register_event("playback-restart", function()
  local now = mp.get_time()
  if first == nil then
    first = offset and string.format("%.0f", (now + offset) * 1000) or "null"
  elseif seek_at then
    seeks[#seeks + 1] = string.format("%.1f", (now - seek_at) * 1000)
    seek_at = nil
  end
end)
local function p(n)
  local v = mp.get_property_native(n)
  if v == nil then return "null" end
  return tostring(v)
end
mp.add_hook("on_unload", 50, function()
  io.stderr:write(string.format(
    'ORB-PLAYBACK-MPV {"decoder_drops":%s,"vo_drops":%s,"vo_delayed":%s,"last_frame_number":%s,' ..
    '"frame_count":%s,"time_pos":%s,"osd_width":%s,"osd_height":%s,"first_frame_ms":%s,"seek_ms":[%s]}\n',
    p("decoder-frame-drop-count"), p("frame-drop-count"), p("vo-delayed-frame-count"),
    p("estimated-frame-number"), p("estimated-frame-count"), p("time-pos"), p("osd-width"), p("osd-height"),
    first or "null", table.concat(seeks, ",")))
end)
EOF

  # leaf_pid PID: the innermost descendant along first children (GNU time -> timeout -> the player)
  leaf_pid() {
    local p="$1" c
    while c="$(ps -o pid= --ppid "$p" 2>/dev/null | head -n1 | tr -d ' ')" && [ -n "$c" ]; do p="$c"; done
    echo "$p"
  }
  # libs PID: which graphics drivers the process has mapped
  libs() {
    local m exe
    exe="$(readlink "/proc/$1/exe" 2>/dev/null)" || exe="?"
    m="$(cat "/proc/$1/maps" 2>/dev/null)" || m=""
    printf 'exe=%s\nlvp=%s\ngl=%s\n' "$exe" \
      "$(grep -c 'libvulkan_lvp' <<<"$m" || true)" "$(grep -cE '/dri/[^/ ]*_dri\.so|libgallium' <<<"$m" || true)"
  }
  # sample WINDOW PID NAME: the window size every 0.5 s while PID runs ("seconds size" lines in NAME.sizes), and the
  # player's mapped drivers once, 2 s in (NAME.libs)
  sample() {
    local t0=$EPOCHREALTIME g done=0
    while kill -0 "$2" 2>/dev/null; do
      g="$(geometry "$1")"
      [ -n "$g" ] && echo "$(calc "$EPOCHREALTIME - $t0" 1) $g" >>"$WORK/$3.sizes"
      if [ $done -eq 0 ] && awk -v d="$(calc "$EPOCHREALTIME - $T0" 2)" 'BEGIN { exit !(d >= 2) }'; then
        libs "$(leaf_pid "$2")" >"$WORK/$3.libs"
        done=1
      fi
      sleep 0.5
    done
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
  # seek_keys WINDOW NAME: 1.5 s after now, types SEEK_KEYS 0.8 s apart into WINDOW (focused first, so xdotool
  # uses XTEST rather than a synthetic event that SDL and mpv may ignore); logs when each went (s from launch)
  seek_keys() {
    local k at=$EPOCHREALTIME i=0
    for k in "${SEEK_KEYS[@]}"; do
      at="$(calc "$at + $([ $i -eq 0 ] && echo 1.5 || echo 0.8)" 6)"
      i=$((i + 1))
      while awk -v a="$at" -v n="$EPOCHREALTIME" 'BEGIN { exit !(n < a) }'; do sleep 0.02; done
      kill -0 "$PID" 2>/dev/null || { log "$2: the player ended before key $i"; return 0; }
      timeout 5 xdotool windowfocus --sync "$1" 2>/dev/null || true
      timeout 5 xdotool key --window "$1" "$k" || log "$2: xdotool key $k failed"
      echo "$k $(calc "$EPOCHREALTIME - $T0" 3)" >>"$WORK/$2.keys"
    done
  }

  # ------------------------------------------------------------------------------------------- the players
  play_orb() { # play_orb RUN CLIP VW VH SEEKS [SUBTITLE FILE]
    local run="$1" clip="$2" seeks="$5" name="$1.orb" title win i subs=()
    [ -n "${6:-}" ] && subs=(--sub-file "$6")
    STEP="orb-player playback of $run"
    title="orb-playback-${run//[^a-z0-9]/-}-$$"
    log "$run: orb-player --events-fd 1 --geometry ${W}x$H --title $title ${subs[*]} $(basename "$clip")"
    run_timed "$name" "$BIN" --events-fd 1 --geometry "${W}x$H" --title "$title" "${subs[@]}" "$clip"
    win="$(window_id "$title" "$PID" 1)" || {
      finish "$name" || true
      sed 's/^/  orb-player: /' "$WORK/$name.err" >&2
      die "no window titled $title appeared"
    }
    echo "window_first=$(geometry "$win")" >>"$WORK/$name.win"
    # Given --geometry as mpv is, the player opens its window at that size and keeps it once the file is open.
    for ((i = 0; i < 100; i++)); do
      [ "$(geometry "$win")" = "${W}x$H" ] && break
      kill -0 "$PID" 2>/dev/null || break
      sleep 0.05
    done
    echo "window_player=$(geometry "$win")" >>"$WORK/$name.win"
    if [ "$(geometry "$win")" != "${W}x$H" ]; then # not expected: recorded in the results as the size it had
      log "$run: orb-player's window was $(geometry "$win"), not ${W}x$H; resizing it"
      timeout 5 xdotool windowsize --sync "$win" "$W" "$H" || log "$run: xdotool windowsize did not confirm ${W}x$H"
    fi
    echo "resized_after=$(calc "$EPOCHREALTIME - $T0" 2)" >>"$WORK/$name.win"
    echo "window_resized=$(geometry "$win")" >>"$WORK/$name.win"
    sample "$win" "$PID" "$name" &
    SAMPLER=$!
    if [ "$seeks" = 1 ]; then seek_keys "$win" "$name"; fi
    finish "$name" || {
      sed 's/^/  orb-player: /' "$WORK/$name.err" "$WORK/$name.out" >&2
      die "orb-player exited with status $(sed -n 's/^rc=//p' "$WORK/$name.kv")"
    }
    grep -q '"event":"ended"' "$WORK/$name.out" || die "orb-player printed no ended event"
  }

  play_mpv() { # play_mpv RUN CLIP VW VH SEEKS [SUBTITLE FILE]
    local run="$1" clip="$2" seeks="$5" name="$1.mpv" title win="" subs=()
    [ -n "${6:-}" ] && subs=(--sub-file="$6")
    STEP="mpv playback of $run"
    title="mpv-playback-${run//[^a-z0-9]/-}-$$"
    log "$run: mpv --vo=gpu-next --gpu-api=vulkan --vulkan-device='$VKDEV' --geometry=${W}x$H $(basename "$clip")"
    run_timed "$name" mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device="$VKDEV" --hr-seek=yes \
      --geometry="${W}x$H" --autofit="${W}x$H" --title="$title" \
      --script="$WORK/mpv-stats.lua" --script-opts="orb-clk-tck=$(getconf CLK_TCK)" \
      '--term-status-msg=ORB-PLAYBACK-STATUS decoder-drop=${decoder-frame-drop-count} vo-drop=${frame-drop-count}' \
      "${subs[@]}" "$clip"
    if win="$(window_id "$title" "$PID" 1)"; then
      echo "window_first=$(geometry "$win")" >>"$WORK/$name.win"
      sample "$win" "$PID" "$name" &
      SAMPLER=$!
      if [ "$seeks" = 1 ]; then seek_keys "$win" "$name"; fi
    fi
    finish "$name" || {
      cat "$WORK/$name.out" "$WORK/$name.err" | tr '\r' '\n' | grep -v '^$' | tail -n 20 | sed 's/^/  mpv: /' >&2
      die "mpv exited with status $(sed -n 's/^rc=//p' "$WORK/$name.kv")"
    }
    [ -n "$win" ] || die "no mpv window titled $title appeared"
    grep -q 'ORB-PLAYBACK-MPV {' "$WORK/$name.err" || die "mpv did not print its frame counters (Lua hook)"
  }

  play_ffplay() { # play_ffplay RUN CLIP VW VH SEEKS [SUBTITLE FILE]
    local run="$1" clip="$2" seeks="$5" name="$1.ffplay" title win="" subs=()
    [ -n "${6:-}" ] && subs=(-vf "subtitles=$6")
    STEP="ffplay playback of $run"
    title="ffplay-playback-${run//[^a-z0-9]/-}-$$"
    log "$run: ffplay -autoexit -x $W -y $H -seek_interval 5 $(basename "$clip")"
    # SDL 2.26 tries ALSA before PipeWire and finds no ALSA device here: name its PipeWire driver.
    run_timed "$name" env SDL_AUDIODRIVER=pipewire ffplay -hide_banner -loglevel verbose -stats -autoexit -x "$W" -y "$H" \
      -window_title "$title" -seek_interval 5 "${subs[@]}" "$clip"
    if win="$(window_id "$title" "$PID" 1)"; then
      echo "window_first=$(geometry "$win")" >>"$WORK/$name.win"
      sample "$win" "$PID" "$name" &
      SAMPLER=$!
      if [ "$seeks" = 1 ]; then seek_keys "$win" "$name"; fi
    fi
    finish "$name" || {
      tr '\r' '\n' <"$WORK/$name.err" | grep -v '^$' | tail -n 20 | sed 's/^/  ffplay: /' >&2
      die "ffplay exited with status $(sed -n 's/^rc=//p' "$WORK/$name.kv")"
    }
    [ -n "$win" ] || die "no ffplay window titled $title appeared"
  }

  # Each player once, unmeasured, on the first clip for two seconds: a fresh session's first window of each (its
  # font and Vulkan caches, the libraries read from disk) took twice as long to its first picture as every later one
  # in this same environment, for orb-player and mpv alike, and only the first row paid for it.
  STEP="warming up the players"
  IFS='|' read -r _ warm _ <"$WORK/runs"
  timeout -k 2 2 "$BIN" --geometry "${W}x$H" "$warm" >/dev/null 2>&1 </dev/null || true
  timeout -k 2 2 mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device="$VKDEV" "$warm" \
    >/dev/null 2>&1 </dev/null || true
  timeout -k 2 2 env SDL_AUDIODRIVER=pipewire ffplay -autoexit "$warm" >/dev/null 2>&1 </dev/null || true

  while IFS='|' read -r run clip vw vh seeks subs; do
    for player in orb mpv ffplay; do
      "play_$player" "$run" "$clip" "$vw" "$vh" "$seeks" "$subs"
    done
  done <"$WORK/runs"
  STEP="done"
  exit 0
fi

# ================================================================================================= outer part
WORK=""
on_exit() {
  local rc=$?
  if [ -n "$WORK" ]; then
    if [ -n "${ORB_PLAYBACK_KEEP:-}" ]; then echo "playback: raw results kept in $WORK" >&2; else rm -rf "$WORK"; fi
  fi
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
need mpv mpv
need ffmpeg ffmpeg
need ffprobe ffmpeg
need ffplay ffmpeg
need xdotool xdotool
need /usr/bin/time time
need vulkaninfo vulkan-tools
STEP="checking tools"
for t in timeout ps getconf; do
  command -v "$t" >/dev/null || die "$t is not installed"
done
MPV="$(mpv --version 2>/dev/null | sed -n 1p)"
FFPLAY="$(ffplay -version 2>/dev/null | sed -n 1p)"
encoders="$(ffmpeg -hide_banner -encoders 2>/dev/null)"
for f in libx264 libx265 aac; do
  grep -qw "$f" <<<"$encoders" || die "this ffmpeg has no $f encoder"
done
grep -qw zscale <<<"$(ffmpeg -hide_banner -filters 2>/dev/null)" || die "this ffmpeg has no zscale filter"

llvmpipe_device
log "mpv: $MPV; Vulkan device '$VKDEV'; ffplay: $FFPLAY"

bench_build
STEP="checking the player binary"
VERSION="$("$BIN" --version 2>/dev/null | sed -n 1p)" || die "$BIN --version failed"

MEDIA="${ORB_BENCH_MEDIA:-/tmp/orb-bench-media}"
bench_playback_clips

WORK="$(mktemp -d "${TMPDIR:-/tmp}/orb-playback.XXXXXX")"
STEP="probing the clips"
RUNS=()
declare -A FRAMES=() FPS=() AUDIO=() CLIPFILE=() DESC=() RUNCLIP=() RUNSEEKS=()
for spec in "sdr|$SDRA|1080p30 H.264 + AAC, 10 s" "sdr60|$SDR60|1080p60 H.264 + AAC, 10 s" \
  "hdr|$HDR|HDR10 1080p24 HEVC Main10, 10 s" "uhd|$UHD|HDR10 2160p24 HEVC Main10, 5 s"; do
  IFS='|' read -r name clip desc <<<"$spec"
  dims="$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=p=0:s=x "$clip")" ||
    die "ffprobe could not read $clip"
  # Frames in the file (counted, since the mkv has no frame count in its header).
  FRAMES[$name]="$(ffprobe -v error -select_streams v:0 -count_packets -show_entries stream=nb_read_packets \
    -of default=nw=1:nk=1 "$clip")" || die "ffprobe could not count packets of $clip"
  FPS[$name]="$(ffprobe -v error -select_streams v:0 -show_entries stream=r_frame_rate -of default=nw=1:nk=1 "$clip")"
  AUDIO[$name]="$(ffprobe -v error -select_streams a -show_entries stream=codec_name -of csv=p=0 "$clip" | head -n1)"
  CLIPFILE[$name]="$clip"
  DESC[$name]="$desc"
  echo "$name|$clip|${dims%x*}|${dims#*x}|0" >>"$WORK/runs"
  RUNS+=("$name")
  RUNCLIP[$name]="$name"
  RUNSEEKS[$name]=0
done
echo "sdr+seeks|$SDRA|1920|1080|1" >>"$WORK/runs"
RUNS+=("sdr+seeks")
# Subtitles shown all along: what drawing them costs each player.
SUBS="$MEDIA/two-lines-0.5-9.5s.v1.srt"
printf '1\n00:00:00,500 --> 00:00:09,500\nA line of dialogue shown all along,\nand a second line under it\n' >"$SUBS" ||
  die "cannot write $SUBS"
echo "sdr+subs|$SDRA|1920|1080|0|$SUBS" >>"$WORK/runs"
RUNS+=("sdr+subs")
if [ -n "${ORB_PLAYBACK_ONLY:-}" ]; then # a subset of the runs, e.g. "sdr+seeks" (for checking the script)
  only=" $ORB_PLAYBACK_ONLY "
  RUNS=()
  while IFS='|' read -r run rest; do
    [[ "$only" == *" $run "* ]] && { RUNS+=("$run"); echo "$run|$rest"; }
  done <"$WORK/runs" >"$WORK/runs.only"
  mv "$WORK/runs.only" "$WORK/runs"
  [ ${#RUNS[@]} -gt 0 ] || die "ORB_PLAYBACK_ONLY='$ORB_PLAYBACK_ONLY' names none of sdr, sdr60, hdr, uhd, sdr+seeks, sdr+subs"
fi
RUNCLIP[sdr+seeks]=sdr
RUNSEEKS[sdr+seeks]=1
RUNCLIP[sdr+subs]=sdr
RUNSEEKS[sdr+subs]=0

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
kv() { sed -n "s/^$1=//p" "$2" 2>/dev/null | tail -n1 || true; }
median() { tr ',' '\n' | { grep . || true; } | sort -g | awk '{ v[NR - 1] = $1 } END { if (NR) printf "%.0f", v[int(NR / 2)] }'; }
ratio() { # ratio A B: A/B as "0.45x", or "-" when either is unknown
  if [[ "$1" =~ ^[0-9.]+$ ]] && [[ "$2" =~ ^[0-9.]+$ ]] && awk -v b="$2" 'BEGIN { exit !(b > 0) }'; then
    echo "$(calc "$1 / $2" 2)x"
  else echo "-"; fi
}
sizes() { awk '{ print $2 }' "$1" 2>/dev/null | uniq | paste -sd' ' - || true; }
usage() { # usage KEY PLAYER FILE: CPU[KEY] and RSS[KEY] from FILE.kv (GNU time); the CPU time must be there
  CPU[$1]="$(kv cpu "$3.kv")"
  RSS[$1]="$(kv rss "$3.kv")"
  [ -n "${CPU[$1]}" ] || die "no CPU time for $2 on ${1%.*}"
}
drivers() { # drivers FILE NONE: Vulkan lavapipe or NONE (from FILE.libs, the drivers mapped), then "+ Mesa GL"
  local lvp d
  lvp="$(kv lvp "$1.libs")"
  if [ -z "$lvp" ]; then d="? (not sampled)"; elif [ "$lvp" -gt 0 ]; then d="Vulkan lavapipe"; else d="$2"; fi
  [ "$(kv gl "$1.libs")" -gt 0 ] 2>/dev/null && d+=" + Mesa GL"
  echo "$d"
}
check_sizes() { # check_sizes RUN PLAYER FILE: a note when the window left W x H once it had reached it
  local s
  s="$(awk -v want="${W}x$H" '$2 == want { on = 1 } on { print $2 }' "$3" 2>/dev/null | uniq | paste -sd' ' - || true)"
  [ -n "$s" ] && grep -qv "^${W}x$H\$" <<<"$(tr ' ' '\n' <<<"$s")" && ODD+=("$1: $2 window sizes seen while playing: $s")
  return 0
}
declare -A CPU=() RSS=() FIRST=() SEEK=() DROPS=() DEVICE=() NSEEK=() SAID=()
ODD=()
RUN_JSON=()
for run in "${RUNS[@]}"; do
  clipname="${RUNCLIP[$run]}"
  frames="${FRAMES[$clipname]}"
  seeks="${RUNSEEKS[$run]}"
  k="$run"
  # ------------------------------------------------------------------ orb-player
  f="$WORK/$run.orb"
  ended="$(grep '"event":"ended"' "$f.out" | tail -n1)"
  o_pres="$(num presented "$ended")"
  o_drop="$(num dropped "$ended")"
  o_rep="$(num repeated "$ended")"
  o_corrupt="$(num corrupt_packets "$ended")"
  o_under="$(num audio_underruns "$ended")"
  o_reason="$(grep -o '"reason":"[^"]*"' <<<"$ended" | cut -d'"' -f4)"
  [ -n "$o_pres" ] && [ -n "$o_drop" ] || die "no stats in orb-player's ended event for $run: $ended"
  usage "$k.orb" orb-player "$f"
  FIRST[$k.orb]="$(num first_frame_ms "$ended")"
  SEEK[$k.orb]="$(num seek_ms_median "$ended")"
  NSEEK[$k.orb]="$(num seeks "$ended")"
  DROPS[$k.orb]="$o_drop"
  DEVICE[$k.orb]="$(drivers "$f" "CPU (no Vulkan device)")"
  o_win="$(kv window_resized "$f.win")"
  o_err="$(cat "$f.err")"
  [ "$o_reason" = eof ] || ODD+=("$run: orb-player ended with reason '$o_reason', not eof")
  [ "$o_win" = "${W}x$H" ] || ODD+=("$run: orb-player window was $o_win after the resize, not ${W}x$H")
  check_sizes "$run" orb-player "$f.sizes"
  if [ "$seeks" = 0 ]; then
    [ $((o_pres + o_drop)) -eq "$frames" ] ||
      ODD+=("$run: orb-player presented + dropped = $((o_pres + o_drop)), the clip has $frames frames")
  else
    [ "${NSEEK[$k.orb]:-0}" -eq "${#SEEK_KEYS[@]}" ] ||
      ODD+=("$run: orb-player counted ${NSEEK[$k.orb]:-0} seeks, ${#SEEK_KEYS[@]} keys were typed")
  fi
  [ "${o_corrupt:-0}" -eq 0 ] || ODD+=("$run: orb-player counted $o_corrupt corrupt packets")
  if [ -n "${AUDIO[$clipname]}" ] && [ "${o_under:-0}" -gt 0 ]; then ODD+=("$run: orb-player counted $o_under audio underruns"); fi
  if [ -n "$o_err" ]; then # its log lines, once each across the runs
    while IFS= read -r line; do
      [ -n "${SAID[$line]:-}" ] || ODD+=("orb-player stderr (first seen in $run): $line")
      SAID[$line]=1
    done <<<"$o_err"
  fi
  orb_json="$(
    printf '{"presented":%s,"dropped":%s,"repeated":%s,"corrupt_packets":%s,"reason":"%s",' \
      "$o_pres" "$o_drop" "${o_rep:-null}" "${o_corrupt:-null}" "$(esc "$o_reason")"
    printf '"cpu_seconds":%s,"wall_seconds":%s,"peak_rss_mb":%s,"first_frame_ms":%s,"seek_ms_median":%s,"seeks":%s,' \
      "${CPU[$k.orb]}" "$(kv wall "$f.kv")" "${RSS[$k.orb]:-null}" "${FIRST[$k.orb]:-null}" "${SEEK[$k.orb]:-null}" \
      "${NSEEK[$k.orb]:-null}"
    printf '"device":"%s","maps":{"lvp":%s,"gl":%s},"keys":"%s",' "$(esc "${DEVICE[$k.orb]}")" \
      "$(kv lvp "$f.libs" | grep . || echo null)" "$(kv gl "$f.libs" | grep . || echo null)" \
      "$(paste -sd' ' "$f.keys" 2>/dev/null || true)"
    printf '"window":{"first":"%s","player":"%s","resized":"%s","resized_after_seconds":%s,"seen":"%s"},' \
      "$(kv window_first "$f.win")" "$(kv window_player "$f.win")" "$o_win" \
      "$(kv resized_after "$f.win")" "$(sizes "$f.sizes")"
    printf '"ended_event":%s,"stderr":"%s"}' "$ended" "$(esc "$o_err")"
  )"

  # ------------------------------------------------------------------ mpv
  f="$WORK/$run.mpv"
  # (the line may follow mpv's last status line, which ends in a carriage return, not a newline)
  m_json="$( { grep -o 'ORB-PLAYBACK-MPV {.*}' "$f.err" || true; } | tail -n1 | cut -d' ' -f2-)"
  m_ddrop="$(num decoder_drops "$m_json")"
  m_vdrop="$(num vo_drops "$m_json")"
  m_last="$(num last_frame_number "$m_json")"
  [ -n "$m_ddrop" ] && [ -n "$m_vdrop" ] && [ -n "$m_last" ] || die "mpv's frame counters are incomplete: $m_json"
  m_drop=$((m_ddrop + m_vdrop))
  # mpv counts no presented frames; frames it reached (last frame number + 1) minus those it dropped.
  m_pres=$((m_last + 1 - m_drop))
  m_status="$(tr '\r' '\n' <"$f.err" | { grep -o 'ORB-PLAYBACK-STATUS decoder-drop=[0-9]* vo-drop=[0-9]*' || true; } | tail -n1)"
  [ "$m_status" = "ORB-PLAYBACK-STATUS decoder-drop=$m_ddrop vo-drop=$m_vdrop" ] ||
    ODD+=("$run: mpv's last status line ('${m_status#ORB-PLAYBACK-STATUS }') differs from its on_unload counters")
  m_seeks="$(grep -o '"seek_ms":\[[^]]*\]' <<<"$m_json" | sed 's/.*\[//; s/\]//')"
  usage "$k.mpv" mpv "$f"
  FIRST[$k.mpv]="$(num first_frame_ms "$m_json")"
  NSEEK[$k.mpv]="$(tr ',' '\n' <<<"$m_seeks" | grep -c . || true)"
  SEEK[$k.mpv]="$(median <<<"$m_seeks")"
  DROPS[$k.mpv]="$m_drop"
  DEVICE[$k.mpv]="$(drivers "$f" "no lavapipe mapped?")"
  m_ao="$( { tr '\r' '\n' <"$f.out"; tr '\r' '\n' <"$f.err"; } | grep -o 'AO: \[[a-z]*\].*' | head -n1 || true)"
  check_sizes "$run" mpv "$f.sizes"
  if [ "$seeks" = 1 ] && [ "${NSEEK[$k.mpv]}" -ne "${#SEEK_KEYS[@]}" ]; then
    ODD+=("$run: mpv timed ${NSEEK[$k.mpv]} seeks, ${#SEEK_KEYS[@]} keys were typed")
  fi
  if [ -n "${AUDIO[$clipname]}" ] && [ -z "$m_ao" ]; then ODD+=("$run: mpv printed no 'AO:' line (no audio output?)"); fi
  mpv_json="$(
    printf '{"presented_derived":%s,"dropped":%s,"decoder_drops":%s,"vo_drops":%s,"cpu_seconds":%s,' \
      "$m_pres" "$m_drop" "$m_ddrop" "$m_vdrop" "${CPU[$k.mpv]}"
    printf '"wall_seconds":%s,"peak_rss_mb":%s,"first_frame_ms":%s,"seek_ms_median":%s,"seek_ms":[%s],' \
      "$(kv wall "$f.kv")" "${RSS[$k.mpv]:-null}" "${FIRST[$k.mpv]:-null}" "${SEEK[$k.mpv]:-null}" "$m_seeks"
    printf '"device":"%s","audio_output":"%s","keys":"%s","window":{"first":"%s","seen":"%s"},"counters":%s}' \
      "$(esc "${DEVICE[$k.mpv]}")" "$(esc "$m_ao")" "$(paste -sd' ' "$f.keys" 2>/dev/null || true)" \
      "$(kv window_first "$f.win")" "$(sizes "$f.sizes")" "$m_json"
  )"

  # ------------------------------------------------------------------ ffplay
  f="$WORK/$run.ffplay"
  f_status="$(tr '\r' '\n' <"$f.err" | { grep -E 'fd= *[0-9]+' || true; } | tail -n1 | sed 's/^ *//; s/ *$//')"
  f_drop="$(grep -oE 'fd= *[0-9]+' <<<"$f_status" | grep -oE '[0-9]+' || true)"
  [ -n "$f_drop" ] || ODD+=("$run: ffplay printed no status line with fd= (drops unknown)")
  usage "$k.ffplay" ffplay "$f"
  DROPS[$k.ffplay]="${f_drop:-}"
  f_renderer="$(tr '\r' '\n' <"$f.err" | sed -n 's/.*Initialized \([^ ]*\) renderer.*/\1/p' | head -n1)"
  DEVICE[$k.ffplay]="SDL ${f_renderer:-?}"
  if [ "$(kv gl "$f.libs")" -gt 0 ] 2>/dev/null; then DEVICE[$k.ffplay]+=" on Mesa GL (llvmpipe)"; fi
  [ "$(kv lvp "$f.libs")" -gt 0 ] 2>/dev/null && DEVICE[$k.ffplay]+=" + Vulkan lavapipe"
  f_audio="$(tr '\r' '\n' <"$f.err" | grep -iE 'SDL_OpenAudio|audio open failed|audio device' | head -n3 | paste -sd';' - || true)"
  [ -z "$f_audio" ] || ODD+=("$run: ffplay audio: $f_audio")
  check_sizes "$run" ffplay "$f.sizes"
  ffplay_json="$(
    printf '{"dropped":%s,"cpu_seconds":%s,"wall_seconds":%s,"peak_rss_mb":%s,"renderer":"%s","device":"%s",' \
      "${f_drop:-null}" "${CPU[$k.ffplay]}" "$(kv wall "$f.kv")" "${RSS[$k.ffplay]:-null}" "$(esc "$f_renderer")" \
      "$(esc "${DEVICE[$k.ffplay]}")"
    printf '"last_status":"%s","keys":"%s","window":{"first":"%s","seen":"%s"}}' "$(esc "$f_status")" \
      "$(paste -sd' ' "$f.keys" 2>/dev/null || true)" "$(kv window_first "$f.win")" "$(sizes "$f.sizes")"
  )"

  RUN_JSON+=("$(
    printf '{"run":"%s","clip":"%s","description":"%s","file":"%s","frames":%s,"frame_rate":"%s","audio":"%s",' \
      "$run" "$clipname" "$(esc "${DESC[$clipname]}")" "$(esc "${CLIPFILE[$clipname]}")" "$frames" \
      "${FPS[$clipname]}" "${AUDIO[$clipname]:-none}"
    printf '"seek_keys":"%s","orb":%s,"mpv":%s,"ffplay":%s}' "$([ "$seeks" = 1 ] && echo "${SEEK_KEYS[*]}")" \
      "$orb_json" "$mpv_json" "$ffplay_json"
  )")
done
[ "$(cat "$WORK/audio-env")" = pipewire ] ||
  ODD+=("PipeWire was not running in the test environment (see with-test-env's warning above): no sound was played")

STEP="writing results"
MPV_CMD="mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device='$VKDEV' --hr-seek=yes --geometry=${W}x$H --autofit=${W}x$H --title=T --script=mpv-stats.lua --script-opts=orb-clk-tck=$(getconf CLK_TCK) '--term-status-msg=...' CLIP"
ORB_CMD="orb-player --events-fd 1 --geometry ${W}x$H --title T CLIP"
FFPLAY_CMD="SDL_AUDIODRIVER=pipewire ffplay -hide_banner -loglevel verbose -stats -autoexit -x $W -y $H -window_title T -seek_interval 5 CLIP"
dash() { if [ -n "$1" ]; then echo "$1"; else echo "-"; fi; }
{
  echo "| clip | player | device | CPU s | drops | peak RSS MB | first frame ms | seek ms (median of n) | vs mpv: CPU / RSS / first / seek |"
  echo "|---|---|---|--:|--:|--:|--:|--:|---|"
  for run in "${RUNS[@]}"; do
    clipname="${RUNCLIP[$run]}"
    label="$run: ${DESC[$clipname]}"
    [ "${RUNSEEKS[$run]}" = 1 ] && label="$run: sdr clip, ${#SEEK_KEYS[@]} seeks (${SEEK_KEYS[*]})"
    [ "$run" = sdr+subs ] && label="$run: sdr clip, a SubRip cue of two lines from 0.5 to 9.5 s"
    for p in orb mpv ffplay; do
      k="$run.$p"
      pname="$p"; [ $p = orb ] && pname=orb-player
      seekcell="-"
      if [ -n "${SEEK[$k]:-}" ]; then seekcell="${SEEK[$k]} (n=${NSEEK[$k]})"; fi
      if [ $p = mpv ]; then vs="1 (reference)"
      else
        vs="$(ratio "${CPU[$k]}" "${CPU[$run.mpv]}") / $(ratio "${RSS[$k]:-}" "${RSS[$run.mpv]:-}") / $(ratio "${FIRST[$k]:-}" "${FIRST[$run.mpv]:-}") / $(ratio "${SEEK[$k]:-}" "${SEEK[$run.mpv]:-}")"
      fi
      printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$label" "$pname" "${DEVICE[$k]}" \
        "$(calc "${CPU[$k]}" 2)" "$(dash "${DROPS[$k]:-}")" "$(dash "${RSS[$k]:-}")" "$(dash "${FIRST[$k]:-}")" \
        "$seekcell" "$vs"
      label=""
    done
  done
  echo
  echo "Real-time playback in a ${W}x$H window under Xvfb ($(cat "$WORK/audio-env") audio into a null sink), one run each after a 2 s unmeasured warm-up of each player, $(nproc) cores, load $LOAD at start."
  echo "CPU s = user + sys and peak RSS = GNU time's %M of the player's process tree, launch to exit. drops: orb-player's"
  echo "\`ended\` stats; mpv decoder-frame-drop-count + frame-drop-count (Lua on_unload hook); ffplay's fd= (early + late)."
  echo "first frame: orb-player's first_frame_ms (to the end of its paint); mpv's first playback-restart event (its picture"
  echo "handed to its VO), both from the process start time"
  echo "in /proc (10 ms ticks). seek: orb-player's seek_ms_median (request to picture); mpv: seek event to playback-restart,"
  echo "median (upper middle, as orb-player's) of the n it timed; keys typed with xdotool, mpv with --hr-seek=yes (exact)."
  echo "ffplay has no such figures (\"-\"); its seeks are to the key frame. device: drivers mapped 2 s in (/proc/PID/maps)."
  echo "ffplay does no HDR tone mapping. Ratios are player / mpv on the same clip."
  for o in "${ODD[@]+"${ODD[@]}"}"; do echo "- note: $o"; done
} >"$WORK/playback.md"
echo
cat "$WORK/playback.md"
echo
echo "orb:    $ORB_CMD"
echo "mpv:    $MPV_CMD"
echo "ffplay: $FFPLAY_CMD"

RESULTS="$ROOT/bench/results"
mkdir -p "$RESULTS"
{
  printf '{"date":"%s","host":{"cpu":"%s","cores":%s,"kernel":"%s"},"load_average_at_start":%s,' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$(esc "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')")" \
    "$(nproc)" "$(uname -r)" "$LOAD"
  printf '"orb_player":{"binary":"%s","version":"%s","commit":"%s","command":"%s"},' \
    "$(esc "$BIN")" "$(esc "$VERSION")" "$(esc "$(binary_commit)")" "$(esc "$ORB_CMD")"
  printf '"mpv":{"version":"%s","command":"%s"},"ffplay":{"version":"%s","command":"%s"},' \
    "$(esc "$MPV")" "$(esc "$MPV_CMD")" "$(esc "$FFPLAY")" "$(esc "$FFPLAY_CMD")"
  printf '"vulkan_device":"%s","window":"%sx%s","audio":"%s","runs":[' "$(esc "$VKDEV")" "$W" "$H" "$(cat "$WORK/audio-env")"
  (IFS=,; printf '%s' "${RUN_JSON[*]}")
  printf '],"notes":'
  json_strings "${ODD[@]+"${ODD[@]}"}"
  printf '}\n'
} >"$WORK/playback.json"
if command -v python3 >/dev/null && ! python3 -m json.tool "$WORK/playback.json" >/dev/null; then
  cp "$WORK/playback.json" "$RESULTS/playback.json.bad"
  die "playback.json is not valid JSON (kept as $RESULTS/playback.json.bad)"
fi
mv -f "$WORK/playback.json" "$RESULTS/playback.json"
cp "$WORK/playback.md" "$RESULTS/playback.md"
echo "results: $RESULTS/playback.json, $RESULTS/playback.md"
STEP="done"
