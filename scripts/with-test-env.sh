#!/usr/bin/env bash
# Runs a command inside a private headless session (Xvfb, a session D-Bus, PipeWire with a null sink, WirePlumber),
# so GTK windows and pw_streams work on a machine with no display or sound card (a null sink stands in for one).
#
#   usage: scripts/with-test-env.sh CMD [ARGS...]
#
# Exits with CMD's status, or 1 when Xvfb cannot start. Missing audio only warns: the player is meant to run
# without PipeWire, and tests that need audio skip or fail on their own. Everything it starts is stopped (by PID,
# newest first) and its temp dir removed on any exit, SIGINT and SIGTERM included. Safe to run concurrently.
set -uo pipefail   # no -e: every daemon failure is handled on purpose below

me=with-test-env
if [ $# -eq 0 ]; then echo "usage: $0 CMD [ARGS...]" >&2; exit 2; fi
# With stdin closed, fd 0 would go to the first file we open and CMD would read a log; park it on /dev/null.
{ : <&0; } 2>/dev/null || exec </dev/null

tmp=$(mktemp -d "${TMPDIR:-/tmp}/orb-test-env.XXXXXX") || { echo "$me: mktemp failed" >&2; exit 1; }
pids=()   # daemons we started, oldest first; the only processes this script ever signals

# Asks bash's own job table, not /proc or kill -0: bash reaps exited children on its own, after which the PID
# may be reused; a job still listed as running is unreaped, so signalling its PID cannot hit a stranger.
alive() { local p; for p in $(jobs -rp); do [ "$p" = "$1" ] && return 0; done; return 1; }

stop() {   # stop PID: TERM, up to 3 s grace, then KILL, and always reap
  local i
  alive "$1" && kill -TERM "$1" 2>/dev/null
  for ((i = 0; i < 30; i++)); do alive "$1" || break; sleep 0.1; done
  alive "$1" && kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
stop_last() { stop "${pids[-1]}"; unset 'pids[-1]'; }

cleanup() {
  trap '' INT TERM   # a second Ctrl-C must not cut the cleanup short and leak daemons
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do stop "${pids[i]}"; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# pdeathsig: if this script is SIGKILLed (no trap runs), the kernel still TERMs the daemons and CMD.
pdeath=()
command -v setpriv >/dev/null && pdeath=(setpriv --pdeathsig TERM)
start() {   # start NAME CMD...: background daemon, output to $tmp/NAME.log
  local name=$1; shift
  "${pdeath[@]}" "$@" >"$tmp/$name.log" 2>&1 </dev/null &
  pids+=($!)
}

wait_for() {   # wait_for TENTHS PID CHECK...: 0 once CHECK succeeds; 1 if PID dies or time runs out
  local n=$1 pid=$2; shift 2
  while ((n-- > 0)); do
    alive "$pid" || return 1
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

log_tail() { tail -n "${2:-15}" "$tmp/$1.log" 2>/dev/null | sed "s/^/  $1| /" >&2; }

# The daemons must never reach the caller's real session through inherited variables.
unset DISPLAY WAYLAND_DISPLAY PIPEWIRE_REMOTE PIPEWIRE_CONFIG_DIR PIPEWIRE_CONFIG_NAME

# --- Xvfb. Xvfb's own lock file arbitrates between concurrent runs that pick the same number: the loser sees
# "already active" and moves on. (-displayfd is not used: with an explicit display it skips the lock file.)
xready() {   # xready N PID: the server on :N is up and is ours. A concurrent run's server may answer on :N
  local owner  # while ours is still failing to take it; the lock file names the PID that holds :N.
  read -r owner 2>/dev/null <"/tmp/.X$1-lock" && [ "$owner" = "$2" ] || return 1
  if command -v xdpyinfo >/dev/null; then xdpyinfo -display ":$1"; else [ -S "/tmp/.X11-unix/X$1" ]; fi
}
display=
for n in $(seq 90 120); do
  if [ -e "/tmp/.X11-unix/X$n" ] || [ -e "/tmp/.X$n-lock" ]; then continue; fi
  start xvfb Xvfb ":$n" -screen 0 1920x1080x24 -nolisten tcp
  if wait_for 100 "${pids[-1]}" xready "$n" "${pids[-1]}"; then display=:$n; break; fi
  # Lost :$n to a concurrent run: try the next number. Any other failure (or a hang) is fatal.
  if alive "${pids[-1]}" || ! grep -q "already active" "$tmp/xvfb.log"; then break; fi
  stop_last
done
if [ -z "$display" ]; then
  echo "$me: error: Xvfb did not start (last try :$n of :90-:120); cannot run without a display" >&2
  log_tail xvfb
  exit 1
fi

# --- Session bus and audio, all under a private XDG_RUNTIME_DIR.
export XDG_RUNTIME_DIR=$tmp/run PIPEWIRE_RUNTIME_DIR=$tmp/run
mkdir -m 0700 "$XDG_RUNTIME_DIR"
export DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus

# A pw_stream only runs once a session manager links it to a driving sink; the null sink is that sink here.
# It goes in a conf.d drop-in under a private XDG_CONFIG_HOME so the stock pipewire.conf still applies and the
# user's own ~/.config/pipewire and wireplumber settings do not.
mkdir -p "$tmp/config/pipewire/pipewire.conf.d"
cat >"$tmp/config/pipewire/pipewire.conf.d/50-orb-null-sink.conf" <<'EOF'
context.objects = [
  { factory = adapter
    args = {
      factory.name     = support.null-audio-sink
      node.name        = orb-null-sink
      node.description = "Orb test null sink"
      media.class      = Audio/Sink
      object.linger    = true
      audio.position   = [ FL FR ]
    }
  }
]
EOF
# WirePlumber picking our sink as the default proves it is up and will link new streams to it.
sink_ready() { timeout 2 pw-metadata -n default 0 default.audio.sink | grep -q '"orb-null-sink"'; }

audio_fail() {   # audio_fail WHY LOG: one warning, then carry on without PipeWire at all
  echo "$me: warning: no audio: $1; running without PipeWire (audio tests will skip or fail)" >&2
  log_tail "$2" 5
  # A PipeWire that never links streams would leave the player waiting on a silent stream; with none at all it
  # takes its documented no-audio path instead.
  while [ ${#pids[@]} -gt 1 ]; do stop_last; done
}

start dbus dbus-daemon --session --address="$DBUS_SESSION_BUS_ADDRESS" --nofork --nopidfile
if ! wait_for 50 "${pids[-1]}" test -S "$XDG_RUNTIME_DIR/bus"; then
  audio_fail "dbus-daemon did not start" dbus
  unset DBUS_SESSION_BUS_ADDRESS   # so GLib does not wait on a bus that is not there
elif ! { XDG_CONFIG_HOME=$tmp/config start pipewire pipewire
         wait_for 50 "${pids[-1]}" test -S "$XDG_RUNTIME_DIR/pipewire-0"; }; then
  audio_fail "pipewire did not start" pipewire
elif ! { XDG_CONFIG_HOME=$tmp/config start wireplumber wireplumber
         wait_for 100 "${pids[-1]}" sink_ready; }; then
  audio_fail "wireplumber did not come up with the null sink as default within 10 s" wireplumber
fi

# --- Run CMD. It runs in the background so that `wait` (unlike a foreground child) is interrupted by our
# INT/TERM traps; env restores SIGINT/SIGQUIT, which bash ignores in background jobs and which children
# (e.g. a player a test means to Ctrl-C) would otherwise inherit as ignored.
# The player's own config file, what it remembers and what it keeps to go faster (HDR tables), and any other user
# setting, are not the real home's: empty folders.
# Mesa's shader cache stays where it was (a cold one would slow every lavapipe and llvmpipe start).
mkdir -p "$tmp/config-home" "$tmp/state-home" "$tmp/cache-home"
export MESA_SHADER_CACHE_DIR="${MESA_SHADER_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}}"
export XDG_CONFIG_HOME=$tmp/config-home XDG_STATE_HOME=$tmp/state-home XDG_CACHE_HOME=$tmp/cache-home
export DISPLAY=$display GDK_BACKEND=x11 LIBGL_ALWAYS_SOFTWARE=1
dflt=()
env --default-signal=INT true 2>/dev/null && dflt=(env --default-signal=INT,QUIT)
sig= cmd=
trap 'sig=1; alive "$cmd" && kill -TERM "$cmd" 2>/dev/null' INT TERM
"${pdeath[@]}" "${dflt[@]}" "$@" <&0 &
cmd=$!
# A signal interrupts `wait` early; wait again for CMD's real status after forwarding TERM to it.
while sig=; wait "$cmd"; rc=$?; [ -n "$sig" ]; do :; done
exit "$rc"
