#!/usr/bin/env bash
# Picture/sound sync rig: how far each player's picture lands from its sound, measured from the outside, orb-player
# and mpv in the same run. Results are reported, not asserted.
#
#   bench/avsync.sh
#
# 1. Builds the release binary (`scripts/build-release.sh`); ORB_PLAYER_BIN=/path/to/orb-player
#    skips the build. Installs what is missing with apt-get: mpv, ffmpeg, xdotool, vulkan-tools, python3, and
#    pipewire-pulse + pulseaudio-utils (pactl), because ffmpeg records the sound through PipeWire's PulseAudio server.
# 2. Makes ffmpeg's avsynctest clip once in ${ORB_BENCH_MEDIA:-/tmp/orb-bench-media} (bench/common.sh): 1280x720,
#    30 fps, a 33 ms beep every second and, from 1 s on, a white block in the middle of the frame that starts with
#    each beep; H.264 + AAC, 12 s.
# 3. Inside scripts/with-test-env.sh (Xvfb 1920x1080, PipeWire with the null sink `orb-null-sink`, WirePlumber) it
#    starts pipewire-pulse and checks that `pactl list short sources` has orb-null-sink.monitor. Then, for each
#    player in turn (PLAYERS):
#    a. orb-player --events-fd 1 --title T CLIP (its window is the video's 1280x720), or
#       mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device=LLVMPIPE --geometry=1280x720 CLIP, or
#       the same with --ao=pulse (row mpv-pulse). Two mpv rows because mpv's default sound output here (Debian 12's
#       mpv 0.35.1: PipeWire) estimates when its sound is heard from the graph's delay alone: it leaves out what the
#       stream's converter holds (pw_time.buffered) and the time since PipeWire took its reading (pw_time.now), which
#       mpv's developers added in 0.38 (commit "ao_pipewire: fix delay calculation"). Its PulseAudio output, here
#       through pipewire-pulse, asks the server for the latency instead. The run prints orb-player's mean less each
#       mpv's;
#    b. once its window is up at 1280x720, one ffmpeg records both, until the player exits:
#       - the picture: `-f x11grab -framerate 60.37 -use_wallclock_as_timestamps 1` of a 64x32 patch inside the
#         white block (from the window's position), stored as gray raw video with its wall-clock timestamps
#         (-copyts, -enc_time_base 1:1000000, no frame dropped or repeated). 60.37 captures a second, not 60: the
#         players show pictures at a 60 Hz refresh and the flashes come once a second, so at 60 every flash fell at
#         the same phase of the captures, and the half-interval each flash time is uncertain by was one error for the
#         whole run (runs of the same build differed by up to 14 ms); now each flash falls at another phase and
#         those errors average out in the mean;
#       - the sound: `-f pulse -use_wallclock_as_timestamps 1 -i orb-null-sink.monitor` (what the players play into
#         the null sink): pcm, each packet stamped with the wall-clock time ffmpeg read it.
#    Every playback and recording is bounded (ORB_AVSYNC_TIMEOUT s, default 40).
# 4. Analysis (python3): a flash is a capture whose mean brightness crosses the middle between the darkest and the
#    brightest capture; its time is halfway between that capture and the one before (it appeared in between, so
#    the picture's time is known to +- half a capture interval, 8 ms). The sound's samples come at exactly 48 kHz,
#    so sample n is at T0 + n / 48000; T0 is the earliest any packet could have been read, the least over packets
#    of (its read time - the time of its last sample after T0): the monitor passes a sample on in the graph cycle
#    that plays it, and a packet is read after that, by a delay that varies. (The pulse input's own timestamps,
#    the read time less the latency the server reports, smoothed, wandered by up to 10 ms within a run.) The
#    least delay per 2 s of the recording is reported as a check that the delay floor stayed put. A beep's onset
#    is the first sample above 30 % of the loudest one after 300 ms below it. Each
#    flash is paired with the nearest onset (within 450 ms; the clip's beeps are 1 s apart): offset = flash - beep,
#    with the picture's +- (half the gap between the two captures; more when x11grab fell behind) per pair,
#    positive = picture after sound. Reported per player: every offset, their mean and the largest |offset|.
#    Both times are on the same clock (the machine's wall clock) but are not free of the rig's own delays: the
#    monitor sees the sound when the null sink takes it, before any (here absent) device latency, and x11grab sees
#    the picture once it is in Xvfb's framebuffer.
# 5. Prints a table and writes bench/results/avsync.json (every pair, the capture rates and the commands).
#
# Environment: ORB_PLAYER_BIN (binary; skips the build), ORB_BENCH_MEDIA (clip cache), ORB_BENCH_SCRATCH
# (--scratch-path for the build), ORB_MPV_VULKAN_DEVICE (mpv's device name instead of vulkaninfo's llvmpipe one),
# ORB_AVSYNC_TIMEOUT (seconds one playback may take, default 40). About a minute after the build.
# Exits non-zero with a message naming the step that failed (e.g. no monitor source to record the sound from).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT="$PWD"
SELF="$ROOT/bench/avsync.sh"
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"

W=1280
H=720
GRAB_W=64
GRAB_H=32
GRAB_FPS=60.37
SINK=orb-null-sink
# The players measured, in order (names of the recordings and of the rows; `play` below has their commands).
# ORB_AVSYNC_PLAYERS: which rows to play (a subset of these, in this order); ORB_AVSYNC_ORB_ARGS: options added to
# orb-player's command (`--audio-delay 0.1`: its picture should then come 100 ms before its sound).
PLAYERS=(${ORB_AVSYNC_PLAYERS:-orb-player mpv mpv-pulse})
ORB_ARGS=(${ORB_AVSYNC_ORB_ARGS:-})
want() { [[ " ${PLAYERS[*]} " == *" $1 "* ]]; }
for p in "${PLAYERS[@]}"; do
  case "$p" in orb-player | mpv | mpv-pulse) ;; *) echo "avsync: ORB_AVSYNC_PLAYERS: no row '$p' (orb-player, mpv, mpv-pulse)" >&2; exit 2 ;; esac
done
TIMEOUT="${ORB_AVSYNC_TIMEOUT:-40}"
STEP="checking settings"
REPORTED=0

die() {
  echo "avsync: FAILED during: $STEP${1:+: $1}" >&2
  REPORTED=1
  [ -n "${ORB_AVSYNC_WORK:-}" ] && [ -d "$ORB_AVSYNC_WORK" ] && : >"$ORB_AVSYNC_WORK/reported"
  exit 1
}
log() { echo "avsync: $*" >&2; }
. "$ROOT/bench/common.sh"

# ================================================================================================= inner part
if [ "${1:-}" = "--measure" ]; then
  WORK="${ORB_AVSYNC_WORK:?}"
  BIN="${ORB_AVSYNC_BIN:?}"
  VKDEV="${ORB_AVSYNC_VKDEV:?}"
  CLIP="${ORB_AVSYNC_CLIP:?}"
  PULSE_PID=""
  CAP_PID=""
  on_inner_exit() {
    local rc=$?
    # Only what this script started, by PID.
    [ -n "$CAP_PID" ] && kill "$CAP_PID" 2>/dev/null
    [ -n "$PULSE_PID" ] && kill "$PULSE_PID" 2>/dev/null && wait "$PULSE_PID" 2>/dev/null
    if [ $rc -ne 0 ] && [ $REPORTED -eq 0 ]; then
      echo "avsync: FAILED during: $STEP (exit status $rc)" >&2
      : >"$WORK/reported"
    fi
    exit $rc
  }
  trap on_inner_exit EXIT

  STEP="checking the test environment"
  [ -n "${DISPLAY:-}" ] || die "no DISPLAY inside scripts/with-test-env.sh"
  [ -S "${PIPEWIRE_RUNTIME_DIR:-/nonexistent}/pipewire-0" ] ||
    die "PipeWire is not running in scripts/with-test-env.sh (see its warning above): there is no sound to record"

  STEP="starting pipewire-pulse (the PulseAudio server ffmpeg records through)"
  pipewire-pulse >"$WORK/pipewire-pulse.log" 2>&1 </dev/null &
  PULSE_PID=$!
  for ((i = 0; i < 100; i++)); do
    timeout 2 pactl info >/dev/null 2>&1 && break
    kill -0 "$PULSE_PID" 2>/dev/null || { tail -n 5 "$WORK/pipewire-pulse.log" >&2; die "pipewire-pulse exited"; }
    sleep 0.1
  done
  timeout 2 pactl info >/dev/null 2>&1 || die "pactl info got no answer from pipewire-pulse within 10 s"

  STEP="finding the null sink's monitor source (pactl list short sources)"
  for ((i = 0; i < 50; i++)); do
    timeout 2 pactl list short sources >"$WORK/sources" 2>&1 || true
    grep -qw "$SINK.monitor" "$WORK/sources" && break
    sleep 0.1
  done
  grep -qw "$SINK.monitor" "$WORK/sources" ||
    die "no source named $SINK.monitor; pactl list short sources says: $(paste -sd';' "$WORK/sources")"
  timeout 2 pactl info >"$WORK/pactl-info" 2>&1 || true

  position() { xdotool getwindowgeometry "$1" 2>/dev/null | sed -n 's/^ *Position: *\([0-9-]*,[0-9-]*\).*/\1/p'; }

  # record NAME WINDOW: starts ffmpeg recording the patch inside the white block of WINDOW and the sink's monitor
  record() {
    local pos x y gx gy
    pos="$(position "$2")"
    [ -n "$pos" ] || die "xdotool reports no position for the window"
    x="${pos%,*}"
    y="${pos#*,}"
    # The block spans 1/3..2/3 of the width and 1/3..7/12 of the height; the patch sits at its centre.
    gx=$((x + W / 2 - GRAB_W / 2))
    gy=$((y + H * 11 / 24 - GRAB_H / 2))
    echo "window=$pos $(geometry "$2")" >"$WORK/$1.grab"
    echo "patch=${GRAB_W}x$GRAB_H+$gx+$gy" >>"$WORK/$1.grab"
    timeout -k 5 $((TIMEOUT + 10)) ffmpeg -hide_banner -nostdin -loglevel error -y \
      -thread_queue_size 4096 -f x11grab -framerate "$GRAB_FPS" -draw_mouse 0 -video_size "${GRAB_W}x$GRAB_H" \
      -use_wallclock_as_timestamps 1 -i "$DISPLAY+$gx,$gy" \
      -thread_queue_size 4096 -f pulse -sample_rate 48000 -channels 2 -use_wallclock_as_timestamps 1 \
      -i "$SINK.monitor" \
      -copyts -map 0:v -c:v rawvideo -pix_fmt gray -fps_mode passthrough -enc_time_base:v 1:1000000 \
      -f nut "$WORK/$1.video.nut" \
      -map 1:a -c:a pcm_s16le -f nut "$WORK/$1.audio.nut" \
      >"$WORK/$1.ffmpeg.log" 2>&1 </dev/null &
    CAP_PID=$!
    echo "started=$EPOCHREALTIME" >>"$WORK/$1.grab"
  }
  stop_recording() { # stop_recording NAME: TERM (ffmpeg then writes its trailers), up to 5 s, then KILL
    local i rc=0
    kill -TERM "$CAP_PID" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do kill -0 "$CAP_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$CAP_PID" 2>/dev/null || true
    wait "$CAP_PID" 2>/dev/null || rc=$?
    CAP_PID=""
    echo "ffmpeg_rc=$rc" >>"$WORK/$1.grab"
  }

  play() { # play NAME TITLE CMD...
    local name="$1" title="$2" win i prc=0
    shift 2
    STEP="$name playback"
    log "$name: $(basename "$1") ... $(basename "$CLIP")"
    timeout -k 5 "$TIMEOUT" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" </dev/null &
    local pid=$!
    win="$(window_id "$title" "$pid")" || {
      wait "$pid" || true
      tail -n 20 "$WORK/$name.err" | sed "s/^/  $name: /" >&2
      die "no window titled $title appeared"
    }
    # orb-player sizes its window to the video (1280x720 here) once the file is open; wait for that size.
    for ((i = 0; i < 100; i++)); do
      [ "$(geometry "$win")" = "${W}x$H" ] && break
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.05
    done
    [ "$(geometry "$win")" = "${W}x$H" ] || log "$name: the window is $(geometry "$win"), not ${W}x$H"
    STEP="recording $name (ffmpeg x11grab + pulse)"
    record "$name" "$win"
    STEP="$name playback"
    wait "$pid" || prc=$?
    STEP="stopping the recording of $name"
    stop_recording "$name"
    echo "player_rc=$prc" >>"$WORK/$name.grab"
    [ $prc -eq 0 ] || {
      tail -n 20 "$WORK/$name.err" | tr '\r' '\n' | sed "s/^/  $name: /" >&2
      die "$name exited with status $prc"
    }
    [ -s "$WORK/$name.video.nut" ] && [ -s "$WORK/$name.audio.nut" ] ||
      { sed "s/^/  ffmpeg: /" "$WORK/$name.ffmpeg.log" >&2; die "ffmpeg recorded nothing for $name"; }
  }

  ! want orb-player || play orb-player "orb-avsync-$$" "$BIN" --events-fd 1 --title "orb-avsync-$$" "${ORB_ARGS[@]}" "$CLIP"
  ! want mpv || play mpv "mpv-avsync-$$" mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device="$VKDEV" \
    --geometry="${W}x$H" --autofit="${W}x$H" --title="mpv-avsync-$$" "$CLIP"
  ! want mpv-pulse || play mpv-pulse "mpvp-avsync-$$" mpv --no-config --ao=pulse --vo=gpu-next --gpu-api=vulkan \
    --vulkan-device="$VKDEV" --geometry="${W}x$H" --autofit="${W}x$H" --title="mpvp-avsync-$$" "$CLIP"
  STEP="done"
  exit 0
fi

# ================================================================================================= outer part
WORK=""
on_exit() {
  local rc=$?
  [ -n "$WORK" ] && [ -z "${ORB_AVSYNC_KEEP:-}" ] && rm -rf "$WORK"
  if [ $rc -ne 0 ] && [ $REPORTED -eq 0 ]; then echo "avsync: FAILED during: $STEP (exit status $rc)" >&2; fi
  exit $rc
}
trap on_exit EXIT
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "ORB_AVSYNC_TIMEOUT must be a positive whole number, got '$TIMEOUT'"

if [ -z "${ORB_PLAYER_BIN:-}" ] && [ -x scripts/setup.sh ]; then
  STEP="installing build dependencies (scripts/setup.sh)"
  scripts/setup.sh || die
fi
need ffmpeg ffmpeg
need ffprobe ffmpeg
need mpv mpv
need xdotool xdotool
need vulkaninfo vulkan-tools
need python3 python3
need pipewire-pulse pipewire-pulse
need pactl pulseaudio-utils
STEP="checking tools"
command -v timeout >/dev/null || die "timeout is not installed"
grep -qE '^ *D.? +pulse ' <<<"$(ffmpeg -hide_banner -devices 2>/dev/null)" || die "this ffmpeg cannot record from pulse"
grep -qE '^ *D.? +x11grab ' <<<"$(ffmpeg -hide_banner -devices 2>/dev/null)" || die "this ffmpeg has no x11grab"
grep -qw avsynctest <<<"$(ffmpeg -hide_banner -filters 2>/dev/null)" || die "this ffmpeg has no avsynctest source"
MPV="$(mpv --version 2>/dev/null | sed -n 1p)"

llvmpipe_device

bench_build
STEP="checking the player binary"
VERSION="$("$BIN" --version 2>/dev/null | sed -n 1p)" || die "$BIN --version failed"
MEDIA="${ORB_BENCH_MEDIA:-/tmp/orb-bench-media}"
bench_avsync_clip

WORK="$(mktemp -d "${TMPDIR:-/tmp}/orb-avsync.XXXXXX")"
LOAD="$(cut -d' ' -f1 /proc/loadavg)"
STEP="playing and recording inside scripts/with-test-env.sh"
rc=0
ORB_AVSYNC_WORK="$WORK" ORB_AVSYNC_BIN="$BIN" ORB_AVSYNC_VKDEV="$VKDEV" ORB_AVSYNC_CLIP="$AVS" \
  ORB_AVSYNC_TIMEOUT="$TIMEOUT" scripts/with-test-env.sh "$SELF" --measure || rc=$?
if [ $rc -ne 0 ]; then
  [ -e "$WORK/reported" ] && REPORTED=1
  exit $rc
fi

# ---------------------------------------------------------------------------------------------- analysis
STEP="reading the recordings"
for p in "${PLAYERS[@]}"; do
  ffprobe -v error -select_streams a:0 -show_entries packet=pts,size:stream=time_base -of compact=p=0:nk=0 \
    "$WORK/$p.audio.nut" >"$WORK/$p.audio.pts" || die "ffprobe could not read the sound recording of $p"
  ffmpeg -v error -nostdin -i "$WORK/$p.audio.nut" -map 0:a -c copy -f s16le -y "$WORK/$p.audio.raw" ||
    die "ffmpeg could not unpack the sound recording of $p"
  ffprobe -v error -select_streams v:0 -show_entries packet=pts:stream=time_base -of compact=p=0:nk=0 \
    "$WORK/$p.video.nut" >"$WORK/$p.video.pts" || die "ffprobe could not read the picture recording of $p"
  ffmpeg -v error -nostdin -i "$WORK/$p.video.nut" -map 0:v -c copy -f rawvideo -y "$WORK/$p.video.raw" ||
    die "ffmpeg could not unpack the picture recording of $p"
done

STEP="pairing flashes with beeps (python3)"
cat >"$WORK/analyse.py" <<'EOF'
import json, sys
from array import array
from fractions import Fraction

work, patch_bytes = sys.argv[1], int(sys.argv[2])

def packets(path):
    """(time base, [(pts, size or None)]) from ffprobe's compact output."""
    tb, rows = None, []
    for line in open(path):
        kv = dict(f.split("=", 1) for f in line.strip().split("|") if "=" in f)
        if "time_base" in kv:
            tb = Fraction(kv["time_base"])
        elif "pts" in kv and kv["pts"] not in ("N/A", ""):
            rows.append((int(kv["pts"]), int(kv["size"]) if "size" in kv else None))
    return tb, rows

def flashes(name):
    tb, rows = packets(f"{work}/{name}.video.pts")
    raw = open(f"{work}/{name}.video.raw", "rb").read()
    n = len(raw) // patch_bytes
    # Stopping the recording can cut its last packet: its timestamp is listed, its picture not decoded. One such
    # picture at the end is dropped; any other mismatch means the two do not line up, and nothing can be paired.
    if len(rows) == n + 1:
        rows = rows[:n]
    if n != len(rows):
        raise SystemExit(f"{name}: {n} pictures in the recording but {len(rows)} timestamps")
    t = [float(p * tb) for p, _ in rows]
    mean = [sum(raw[i * patch_bytes:(i + 1) * patch_bytes]) / patch_bytes for i in range(n)]
    lo, hi = min(mean), max(mean)
    found = []  # (time, uncertainty): the midpoint of the capture before and the first bright one, +- half the gap
    if hi - lo >= 50:
        mid = (lo + hi) / 2
        for i in range(1, n):
            if mean[i] >= mid > mean[i - 1]:
                found.append(((t[i - 1] + t[i]) / 2, (t[i] - t[i - 1]) / 2))
    gaps = sorted(b - a for a, b in zip(t, t[1:]))
    return found, {"captures": n, "seconds": t[-1] - t[0] if n else 0, "brightness_min": round(lo, 1),
                   "brightness_max": round(hi, 1), "interval_ms_median": round(gaps[len(gaps) // 2] * 1000, 2) if gaps else None,
                   "interval_ms_max": round(gaps[-1] * 1000, 2) if gaps else None}, (t[0] if n else None)

def beeps(name, rate=48000, channels=2):
    tb, rows = packets(f"{work}/{name}.audio.pts")
    pcm = array("h")
    raw = open(f"{work}/{name}.audio.raw", "rb").read()
    # A recording stopped mid-sample (the player's exit ends it) leaves a byte over: whole samples only.
    pcm.frombytes(raw[: len(raw) - len(raw) % (2 * channels)])
    frames = len(pcm) // channels
    env = [max(abs(pcm[i * channels + c]) for c in range(channels)) for i in range(frames)]
    # How long after its last sample each packet was read (relative to sample 0 at T0 = 0); the last few packets
    # are left out: stopping the recording flushes them early.
    delays, n = [], 0
    for pts, size in rows:
        n += size // (2 * channels)
        delays.append((float(pts * tb) - n / rate, n))
    if n != frames:
        raise SystemExit(f"{name}: {frames} sample frames but packets cover {n}")
    body = delays[:-3] if len(delays) > 6 else delays
    t0 = min(d for d, _ in body)
    # The least delay in each 2 s of the recording, above the overall least: flat when the floor stayed put.
    floors = {}
    for d, end in body:
        floors[end // (2 * rate)] = min(floors.get(end // (2 * rate), d), d)
    spread = round((max(floors.values()) - t0) * 1000, 1) if floors else None
    peak = max(env) if env else 0
    found = []
    if peak >= 300:
        thr, quiet, last = 0.3 * peak, int(0.3 * rate), -10**9
        for i, v in enumerate(env):
            if v >= thr:
                if i - last > quiet:
                    found.append(t0 + i / rate)
                last = i
    return found, {"sample_frames": frames, "seconds": frames / rate, "peak": peak, "packets": len(rows),
                   "read_delay_floor_spread_ms": spread}

out = {}
for name in sys.argv[3:]:
    fl, vinfo, t0 = flashes(name)
    bp, ainfo = beeps(name)
    pairs, unpaired = [], []
    for f, u in fl:
        near = min(bp, key=lambda b: abs(f - b), default=None)
        if near is not None and abs(f - near) <= 0.45:
            pairs.append({"beep_s": round(near - t0, 4), "flash_s": round(f - t0, 4),
                          "offset_ms": round((f - near) * 1000, 1), "uncertainty_ms": round(u * 1000, 1)})
        else:
            unpaired.append(round(f - t0, 4))
    offs = [p["offset_ms"] for p in pairs]
    out[name] = {
        "pairs": pairs, "offsets_ms": offs,
        "mean_ms": round(sum(offs) / len(offs), 1) if offs else None,
        "max_abs_ms": max(offs, key=abs) if offs else None,
        "flashes": len(fl), "beeps": len(bp), "unpaired_flashes_s": unpaired,
        "max_uncertainty_ms": max((p["uncertainty_ms"] for p in pairs), default=None),
        "picture_recording": vinfo, "sound_recording": ainfo,
    }
json.dump(out, sys.stdout)
EOF
python3 "$WORK/analyse.py" "$WORK" $((GRAB_W * GRAB_H)) "${PLAYERS[@]}" >"$WORK/pairs.json" || die

STEP="writing results"
read_json() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {"d": d}))' "$WORK/pairs.json" "$1"; }
ODD=()
for p in "${PLAYERS[@]}"; do
  n="$(read_json "len(d['$p']['pairs'])")"
  [ "$n" -ge 5 ] || ODD+=("$p: only $n flash/beep pairs (the clip has 11 flashes): see flashes, beeps and unpaired in avsync.json")
  u="$(read_json "d['$p']['unpaired_flashes_s']")"
  [ "$u" = "[]" ] || ODD+=("$p: flashes with no beep within 450 ms at $u s of the recording")
  g="$(read_json "d['$p']['max_uncertainty_ms']")"
  awk -v g="$g" 'BEGIN { exit !(g > 20) }' &&
    ODD+=("$p: x11grab fell behind around a flash (its time is known to +- $g ms): see each pair's uncertainty_ms")
  f="$(read_json "d['$p']['sound_recording']['read_delay_floor_spread_ms']")"
  awk -v f="$f" 'BEGIN { exit !(f > 3) }' &&
    ODD+=("$p: the sound's read delay floor moved by $f ms during the recording: its times are that uncertain")
  [ "$(sed -n 's/^ffmpeg_rc=//p' "$WORK/$p.grab")" = 0 ] || [ "$(sed -n 's/^ffmpeg_rc=//p' "$WORK/$p.grab")" = 255 ] ||
    ODD+=("$p: the recording ffmpeg exited with status $(sed -n 's/^ffmpeg_rc=//p' "$WORK/$p.grab")")
done
[ ${#INSTALLED[@]} -eq 0 ] || ODD+=("installed with apt-get in this run: ${INSTALLED[*]}")
ORB_CMD="orb-player --events-fd 1 --title T ${ORB_ARGS[*]+${ORB_ARGS[*]} }CLIP"
MPV_CMD="mpv --no-config --vo=gpu-next --gpu-api=vulkan --vulkan-device='$VKDEV' --geometry=${W}x$H --autofit=${W}x$H --title=T CLIP"
MPVP_CMD="mpv --no-config --ao=pulse --vo=gpu-next --gpu-api=vulkan --vulkan-device='$VKDEV' --geometry=${W}x$H --autofit=${W}x$H --title=T CLIP"
REC_CMD="ffmpeg -thread_queue_size 4096 -f x11grab -framerate $GRAB_FPS -draw_mouse 0 -video_size ${GRAB_W}x$GRAB_H -use_wallclock_as_timestamps 1 -i \$DISPLAY+X,Y -thread_queue_size 4096 -f pulse -sample_rate 48000 -channels 2 -use_wallclock_as_timestamps 1 -i $SINK.monitor -copyts -map 0:v -c:v rawvideo -pix_fmt gray -fps_mode passthrough -enc_time_base:v 1:1000000 -f nut video.nut -map 1:a -c:a pcm_s16le -f nut audio.nut"
{
  echo "| player | pairs | mean ms | max ms | per-pair offsets ms (picture - sound) | picture time +- ms (worst) |"
  echo "|---|--:|--:|--:|---|--:|"
  for p in "${PLAYERS[@]}"; do
    printf '| %s | %s | %s | %s | %s | %s |\n' "$p" "$(read_json "len(d['$p']['pairs'])")" \
      "$(read_json "d['$p']['mean_ms']")" "$(read_json "d['$p']['max_abs_ms']")" \
      "$(read_json "' '.join('%+.0f' % o for o in d['$p']['offsets_ms'])")" \
      "$(read_json "d['$p']['max_uncertainty_ms']")"
  done
  echo
  echo "Clip: avsynctest 1280x720 30 fps, H.264 + AAC, 12 s ($(basename "$AVS")); under Xvfb + PipeWire null sink, $(nproc) cores, load $LOAD."
  echo "Positive = the picture after the sound. Flash: 64x32 patch grabbed at ${GRAB_FPS} fps (x11grab, wall clock), time ="
  echo "midpoint of the first bright capture and the one before (+-8 ms). Beep: onset in the null sink's monitor (pulse"
  echo "input), sample n at T0 + n / 48 kHz, T0 the earliest the packets' read times allow (the least read delay moved by"
  echo "$(for p in "${PLAYERS[@]}"; do read_json "d['$p']['sound_recording']['read_delay_floor_spread_ms']"; done | paste -sd/ | sed 's|/| / |g') ms over the recordings). max = the largest |offset|, with its sign."
  for p in mpv mpv-pulse; do
    want orb-player && want "$p" || continue
    echo "orb-player's mean - $p's: $(read_json "round(d['orb-player']['mean_ms'] - d['$p']['mean_ms'], 1)") ms."
  done
  for o in "${ODD[@]+"${ODD[@]}"}"; do echo "- note: $o"; done
} >"$WORK/avsync.md"
echo
cat "$WORK/avsync.md"
echo
! want orb-player || echo "orb:    $ORB_CMD"
! want mpv || echo "mpv:    $MPV_CMD"
! want mpv-pulse || echo "mpv-pulse: $MPVP_CMD"
echo "record: $REC_CMD"
RESULTS="$ROOT/bench/results"
mkdir -p "$RESULTS"
{
  printf '{"date":"%s","host":{"cpu":"%s","cores":%s},"load_average_at_start":%s,' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
    "$(esc "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')")" "$(nproc)" "$LOAD"
  printf '"clip":"%s","orb_player":{"binary":"%s","version":"%s","commit":"%s","command":"%s"},' \
    "$(esc "$AVS")" "$(esc "$BIN")" "$(esc "$VERSION")" "$(esc "$(binary_commit)")" \
    "$(esc "$ORB_CMD")"
  printf '"mpv":{"version":"%s","command":"%s","command_pulse":"%s"},' "$(esc "$MPV")" "$(esc "$MPV_CMD")" "$(esc "$MPVP_CMD")"
  printf '"recording":{"command":"%s",' "$(esc "$REC_CMD")"
  for p in "${PLAYERS[@]}"; do printf '"%s":"%s",' "$p" "$(esc "$(paste -sd' ' "$WORK/$p.grab")")"; done
  printf '"pulse":"%s"},' "$(esc "$(grep -E '^Server (Name|Version)' "$WORK/pactl-info" | paste -sd';' -)")"
  printf '"results":%s,"notes":%s}\n' "$(cat "$WORK/pairs.json")" "$(json_strings "${ODD[@]+"${ODD[@]}"}")"
} >"$WORK/avsync.json"
python3 -m json.tool "$WORK/avsync.json" >/dev/null || { cp "$WORK/avsync.json" "$RESULTS/avsync.json.bad"; die "avsync.json is not valid JSON"; }
mv -f "$WORK/avsync.json" "$RESULTS/avsync.json"
cp "$WORK/avsync.md" "$RESULTS/avsync.md"
echo "results: $RESULTS/avsync.json, $RESULTS/avsync.md"
STEP="done"
