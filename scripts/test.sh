#!/usr/bin/env bash
# The README's test command: installs what is missing, checks shaders and formatting, builds, and runs the
# whole suite inside a private headless session (Xvfb, session bus, PipeWire + null sink, WirePlumber).
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"

scripts/setup.sh
scripts/compile-shaders.sh --check
swift format lint --strict --recursive Package.swift Sources Tests
swift build --build-tests
export ORB_PLAYER_BIN="$PWD/.build/debug/orb-player"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
set +e
# A GLib or GTK critical (a widget used after it was freed, a failed assertion) ends the process that has it, so
# the test that caused it fails; the session's daemons run without it.
scripts/with-test-env.sh env G_DEBUG=fatal-criticals swift test --skip-build "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e
# One line that says how many tests ran, were skipped and failed (XCTest names skips only per test).
ran=$(grep -Eo "^Test Case '[^']+' (passed|failed|skipped)" "$log" | wc -l)
skipped=$(grep -Ec "^Test Case '[^']+' skipped" "$log" || true)
failed=$(grep -Ec "^Test Case '[^']+' failed" "$log" || true)
echo "test.sh: $ran tests ran, $skipped skipped, $failed failed (exit status $status)"
exit "$status"
