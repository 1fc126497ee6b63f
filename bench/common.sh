#!/usr/bin/env bash
# Shared by bench/run.sh and bench/playback.sh (sourced, not run): building the player and the two clips.
# The caller defines `log`, `die` and `STEP`, and sets MEDIA (the clip cache).

# Sets BIN: ORB_PLAYER_BIN if given, else a fresh release build.
bench_build() {
  if [ -n "${ORB_PLAYER_BIN:-}" ]; then
    STEP="checking ORB_PLAYER_BIN"
    BIN="$ORB_PLAYER_BIN"
    [ -x "$BIN" ] || die "ORB_PLAYER_BIN=$BIN is not an executable file"
    log "using $BIN (no build)"
  else
    STEP="building the release binary (swift build -c release)"
    command -v swift >/dev/null || die "swift is not on PATH"
    scratch=()
    [ -n "${ORB_BENCH_SCRATCH:-}" ] && scratch=(--scratch-path "$ORB_BENCH_SCRATCH")
    log "swift build -c release ${scratch[*]}"
    swift build -c release --product orb-player "${scratch[@]}" >&2 || die
    BIN="$(swift build -c release "${scratch[@]}" --show-bin-path)/orb-player"
    [ -x "$BIN" ] || die "the build finished but $BIN is missing"
  fi
}

# Sets SDR and HDR: two 10 s clips made once in $MEDIA, written under a temporary name and renamed (never half a clip).
bench_clips() {
  # Name, file, recipe version: bump the version in the file name when a recipe changes, so old caches are not reused.
  SDR="$MEDIA/sdr-1080p30-h264-10s.v1.mp4"
  HDR="$MEDIA/hdr10-1080p24-hevc-main10-10s.v1.mkv"

  # A cached clip counts only if ffprobe can read it and it lasts about 10 s.
  clip_ok() {
    local d
    d="$(ffprobe -v error -show_entries format=duration -of default=nw=1:nk=1 "$1" 2>/dev/null)" || return 1
    awk -v d="$d" 'BEGIN { exit !(d + 0 > 9.5 && d + 0 < 10.5) }'
  }

  make_clip() { # make_clip OUT ffmpeg-args... ; writes to a temporary name, then renames (never half a clip)
    local out="$1"
    shift
    if clip_ok "$out"; then
      log "clip cached: $out"
      return 0
    fi
    log "generating $out"
    local tmp="${out%.*}.partial.${out##*.}"
    rm -f "$tmp"
    ffmpeg -hide_banner -nostdin -loglevel error -y "$@" "$tmp" || die "ffmpeg could not write $out"
    clip_ok "$tmp" || die "generated $tmp is not a readable 10 s clip"
    mv -f "$tmp" "$out"
  }

  STEP="generating clips in $MEDIA"
  mkdir -p "$MEDIA" || die "cannot create $MEDIA"
  make_clip "$SDR" \
    -f lavfi -i testsrc2=size=1920x1080:rate=30 -t 10 \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p
  make_clip "$HDR" \
    -f lavfi -i testsrc2=size=1920x1080:rate=24 -t 10 \
    -vf "zscale=tin=bt709:pin=bt709:min=bt709:rin=tv:t=smpte2084:p=bt2020:m=bt2020nc:r=tv:npl=203,format=yuv420p10le" \
    -c:v libx265 -preset ultrafast \
    -x265-params "hdr10=1:colorprim=bt2020:transfer=smpte2084:colormatrix=bt2020nc:master-display=G(13250,34500)B(7500,3000)R(34000,16000)WP(15635,16450)L(10000000,1):max-cll=1000,400:log-level=error" \
    -color_primaries bt2020 -color_trc smpte2084 -colorspace bt2020nc -color_range tv
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
