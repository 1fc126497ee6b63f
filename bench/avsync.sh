#!/usr/bin/env bash
# The engine's A/V figures, measured and reported (the suite only checks loose bounds, which hold under load):
# the picture's offset from the sound (mean and worst) at 1x and 1.5x over ffmpeg's avsynctest clip, and the media
# clock's rate against real time at 1x and 1.5x, from `AudioSyncTests` run RUNS times (default 3) inside the private
# test session (Xvfb, PipeWire with a null sink). Writes bench/results/avsync.txt.
#   usage: bench/avsync.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"
runs=${1:-3}
scripts/setup.sh
swift build --build-tests >&2
mkdir -p bench/results
out=bench/results/avsync.txt
: >"$out"
for i in $(seq "$runs"); do
  log=$(mktemp)
  scripts/with-test-env.sh swift test --skip-build --filter 'AudioSyncTests' >"$log" 2>&1 || {
    echo "avsync: run $i failed; its log:" >&2
    tail -30 "$log" >&2
    rm -f "$log"
    exit 1
  }
  grep -E '^(A/V offset|clock rate)' "$log" | sed "s/^/run $i: /" | tee -a "$out"
  rm -f "$log"
done
echo "avsync: $runs runs written to $out" >&2
