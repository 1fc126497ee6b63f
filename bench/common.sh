#!/usr/bin/env bash
# Shared by bench/run.sh, bench/playback.sh and bench/avsync.sh (sourced, not run, at the top of each, so their
# inner parts under scripts/with-test-env.sh have it too): numbers from JSON lines, installing a missing tool, the
# llvmpipe device mpv needs named, finding a window, building the player and the clips.
# The caller defines `log`, `die` and `STEP`, and sets MEDIA (the clip cache) before making clips.

calc() { awk "BEGIN { printf \"%.${2:-3}f\", $1 }"; }

num() { # num KEY JSON -> the first number stored under "KEY" (empty if absent)
  { grep -o "\"$1\":[-+0-9.eE]*" <<<"$2" || true; } | sed -n 1p | cut -d: -f2
}

# need COMMAND PACKAGE: installs PACKAGE with apt-get when COMMAND (a name on PATH, or a path) is missing; as root
# only, `apt-get update` once if the first try fails. What it installed is listed in INSTALLED.
INSTALLED=()
APT_UPDATED=0
need() {
  [ -x "$1" ] || command -v "$1" >/dev/null && return 0
  STEP="installing $2 (for $1)"
  [ "$(id -u)" -eq 0 ] || die "$1 is missing and this is not root (apt-get install $2)"
  log "$1 is missing: apt-get install -y --no-install-recommends $2"
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$2" >&2 || {
    [ $APT_UPDATED -eq 0 ] && APT_UPDATED=1 && apt-get update >&2 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$2" >&2
  } || die "apt-get could not install $2"
  command -v "$1" >/dev/null || [ -x "$1" ] || die "$2 is installed but $1 is still missing"
  INSTALLED+=("$2")
}

# Sets VKDEV: the llvmpipe Vulkan device's name as vulkaninfo gives it (mpv refuses a software device unless it is
# named), or ORB_MPV_VULKAN_DEVICE.
llvmpipe_device() {
  STEP="finding the llvmpipe Vulkan device for mpv"
  VKDEV="${ORB_MPV_VULKAN_DEVICE:-}"
  if [ -z "$VKDEV" ]; then
    VKDEV="$(vulkaninfo --summary 2>/dev/null | sed -n 's/^[[:space:]]*deviceName[[:space:]]*=[[:space:]]*//p' |
      grep -m1 llvmpipe)" || true
    [ -n "$VKDEV" ] || die "vulkaninfo --summary lists no llvmpipe device (set ORB_MPV_VULKAN_DEVICE)"
  fi
}

# window_id TITLE PID [QUIET]: the X window named exactly TITLE, waiting up to 15 s while PID runs (empty on
# failure). With QUIET (seconds), the first look is that long after the call: each look is an xdotool process and a
# query of every window on the server, and looking every 50 ms while a player starts took CPU and the X server from
# it on 2 cores (a player's first picture 150 -> 181 ms median, 6 launches each, when searched for meanwhile).
window_id() {
  local i w
  sleep "${3:-0}"
  for ((i = 0; i < 300; i++)); do
    w="$(xdotool search --name "^$1\$" 2>/dev/null | head -n1)" || true
    [ -n "$w" ] && { echo "$w"; return 0; }
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
geometry() { xdotool getwindowgeometry "$1" 2>/dev/null | sed -n 's/^ *Geometry: *//p'; }

# Sets BIN: ORB_PLAYER_BIN if given, else a fresh release build.
bench_build() {
  if [ -n "${ORB_PLAYER_BIN:-}" ]; then
    STEP="checking ORB_PLAYER_BIN"
    BIN="$ORB_PLAYER_BIN"
    [ -x "$BIN" ] || die "ORB_PLAYER_BIN=$BIN is not an executable file"
    log "using $BIN (no build)"
  else
    STEP="building the release binary (scripts/build-release.sh)"
    command -v swift >/dev/null || die "swift is not on PATH"
    scratch=()
    [ -n "${ORB_BENCH_SCRATCH:-}" ] && scratch=(--scratch-path "$ORB_BENCH_SCRATCH")
    log "scripts/build-release.sh ${scratch[*]}"
    BIN="$("$ROOT/scripts/build-release.sh" "${scratch[@]}")" || die
    [ -x "$BIN" ] || die "the build finished but $BIN is missing"
  fi
}

# A cached clip counts only if ffprobe can read it and it lasts SECONDS (within half a second).
clip_ok() { # clip_ok FILE SECONDS
  local d
  d="$(ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$1" 2>/dev/null)" || return 1
  awk -v d="$d" -v s="$2" 'BEGIN { exit !(d + 0 > s - 0.5 && d + 0 < s + 0.5) }'
}

# make_clip OUT SECONDS ffmpeg-args...: generates OUT once (cached in $MEDIA); writes to a temporary name, then
# renames (never half a clip).
make_clip() {
  local out="$1" secs="$2"
  shift 2
  if clip_ok "$out" "$secs"; then
    log "clip cached: $out"
    return 0
  fi
  log "generating $out"
  local tmp="${out%.*}.partial.${out##*.}"
  rm -f "$tmp"
  ffmpeg -hide_banner -nostdin -loglevel error -y "$@" "$tmp" || die "ffmpeg could not write $out"
  clip_ok "$tmp" "$secs" || die "generated $tmp is not a readable ${secs} s clip"
  mv -f "$tmp" "$out"
}

# The HDR10 encoding: PQ, BT.2020, SDR white at 203 nits, mastering display + MaxCLL metadata (x265's SEI).
HDR10_VF="zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le"
HDR10_ARGS=(-c:v libx265 -preset ultrafast
  -x265-params "hdr10=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400:log-level=error"
  -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc -color_range tv)

# Sets SDR and HDR: bench/run.sh's two 10 s clips (no audio), made once in $MEDIA.
bench_clips() {
  # Name, file, recipe version: bump the version in the file name when a recipe changes, so old caches are not reused.
  SDR="$MEDIA/sdr-1080p30-h264-10s.v1.mp4"
  STEP="generating clips in $MEDIA"
  mkdir -p "$MEDIA" || die "cannot create $MEDIA"
  make_clip "$SDR" 10 \
    -f lavfi -i testsrc2=size=1920x1080:rate=30 -t 10 \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p
  make_hdr_clip
}
make_hdr_clip() {
  HDR="$MEDIA/hdr10-1080p24-hevc-main10-10s.v1.mkv"
  make_clip "$HDR" 10 \
    -f lavfi -i testsrc2=size=1920x1080:rate=24 -t 10 \
    -vf "$HDR10_VF" "${HDR10_ARGS[@]}"
}

# Sets SDRA, SDR60, HDR and UHD: bench/playback.sh's four clips, made once in $MEDIA.
#   SDRA:  1080p30 H.264 with a key frame every 2 s (-g 60, no scene-cut key frames), so an exact seek decodes up to
#          2 s of frames; AAC stereo 48 kHz, a 440 Hz tone (lavfi sine: 1/8 of full scale); 10 s.
#   SDR60: the same at 60 fps (a key frame every 2 s, -g 120): a picture each refresh of a 60 Hz display, where a
#          clock that jitters by a few milliseconds drops pictures; 10 s.
#   HDR:   bench/run.sh's HDR10 1080p24 HEVC Main10 clip, 10 s, no audio.
#   UHD:   HDR10 2160p24 HEVC Main10 (same encoding as HDR), 5 s, no audio.
bench_playback_clips() {
  STEP="generating clips in $MEDIA"
  mkdir -p "$MEDIA" || die "cannot create $MEDIA"
  make_hdr_clip
  SDRA="$MEDIA/sdr-1080p30-h264-g60-aac-10s.v1.mp4"
  SDR60="$MEDIA/sdr-1080p60-h264-g120-aac-10s.v1.mp4"
  UHD="$MEDIA/hdr10-2160p24-hevc-main10-5s.v1.mkv"
  STEP="generating clips in $MEDIA"
  make_clip "$SDRA" 10 \
    -f lavfi -i testsrc2=size=1920x1080:rate=30 -f lavfi -i sine=frequency=440:sample_rate=48000 -t 10 \
    -map 0:v -map 1:a -c:v libx264 -preset veryfast -pix_fmt yuv420p -g 60 -keyint_min 60 -sc_threshold 0 \
    -af aformat=channel_layouts=stereo -c:a aac -b:a 128k
  make_clip "$SDR60" 10 \
    -f lavfi -i testsrc2=size=1920x1080:rate=60 -f lavfi -i sine=frequency=440:sample_rate=48000 -t 10 \
    -map 0:v -map 1:a -c:v libx264 -preset veryfast -pix_fmt yuv420p -g 120 -keyint_min 120 -sc_threshold 0 \
    -af aformat=channel_layouts=stereo -c:a aac -b:a 128k
  make_clip "$UHD" 5 \
    -f lavfi -i testsrc2=size=3840x2160:rate=24 -t 5 \
    -vf "$HDR10_VF" "${HDR10_ARGS[@]}"
}

# Sets AVS: bench/avsync.sh's clip, made once in $MEDIA: ffmpeg's avsynctest at 1280x720, 30 fps, a beep (33 ms)
# every second from 0 s and, in the frame that starts with each beep from 1 s on, a white block in the middle of the
# picture (one frame); H.264 + AAC stereo 48 kHz, 12 s.
bench_avsync_clip() {
  AVS="$MEDIA/avsynctest-720p30-h264-aac-12s.v1.mp4"
  STEP="generating the avsynctest clip in $MEDIA"
  mkdir -p "$MEDIA" || die "cannot create $MEDIA"
  make_clip "$AVS" 12 \
    -f lavfi -i "avsynctest=s=1280x720:fr=30:sr=48000:p=1:d=12[out1][out0]" \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p -af aformat=channel_layouts=stereo -c:a aac -b:a 128k
}

# The source the measured binary was built from: the checkout's commit after a build here; with ORB_PLAYER_BIN it is
# not known (the checkout may have moved on since that binary was built), so say so.
binary_commit() {
  local head
  head="$(git describe --always --dirty 2>/dev/null || echo unknown)"
  if [ -n "${ORB_PLAYER_BIN:-}" ]; then echo "unknown (ORB_PLAYER_BIN; checkout at $head)"; else echo "$head"; fi
}

# One string as JSON string content: backslashes and quotes escaped, control whitespace made spaces.
esc() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g' | tr '\t\r\n' '   '; }

# Prints its arguments as a JSON array of strings.
json_strings() {
  local first=1 o
  printf '['
  for o in "$@"; do
    [ $first -eq 1 ] || printf ','
    first=0
    printf '"%s"' "$(esc "$o")"
  done
  printf ']'
}
