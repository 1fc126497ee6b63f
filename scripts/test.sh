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
exec scripts/with-test-env.sh swift test --skip-build "$@"
