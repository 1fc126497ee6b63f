#!/usr/bin/env bash
# The README's run command: installs what is missing, builds, and plays FILE|URL (default: the built-in
# test://bars). With no display (a fresh headless machine), it plays 5 s of the pattern inside a private Xvfb
# session and saves a screenshot of the window to out/orb-player-window.png.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"

scripts/setup.sh
bin=$(scripts/build-release.sh)

if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
  [ $# -eq 0 ] && set -- test://bars   # the player alone opens its welcome page; this command plays the pattern
  exec "$bin" "$@"
fi

echo "run: no display here; playing in a private Xvfb session and taking a screenshot" >&2
mkdir -p out
args=("$@")
[ ${#args[@]} -eq 0 ] && args=("test://bars?duration=5")
shot="$PWD/out/orb-player-window.png"
scripts/with-test-env.sh bash -c '
  "$0" "$@" & player=$!
  sleep 3
  # Just the window: found by the player process, measured by xwininfo.
  id=$(xdotool search --pid $player 2>/dev/null | tail -1)
  geometry=$(xwininfo -id "$id" 2>/dev/null | awk "/Absolute upper-left X/{x=\$NF} /Absolute upper-left Y/{y=\$NF}
    /Width:/{w=\$NF} /Height:/{h=\$NF} END{if (w) print w \"x\" h \" +\" x \",\" y}")
  size=${geometry%% *}
  at=${geometry#* }
  [ -n "$geometry" ] || { size=1920x1080; at=+0,0; }
  ffmpeg -hide_banner -loglevel error -y -f x11grab -video_size "$size" -i "$DISPLAY$at" -frames:v 1 "'"$shot"'"
  wait $player
' "$bin" "${args[@]}"
echo "run: screenshot of the window: $shot" >&2
