#!/usr/bin/env bash
# Builds the release binary that is run, installed and measured, and prints its path on stdout (the build's own
# output goes to stderr). Extra arguments go to `swift build` (e.g. --scratch-path DIR).
# The Swift runtime and Foundation are linked into the binary (--static-swift-stdlib): the installed player needs no
# Swift toolchain on the machine, and with 14 fewer shared libraries to load and bind it reaches main about 20 ms
# sooner (--version: 66 -> 46 ms here), which a window's first picture gains whole.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"
flags=(-c release --static-swift-stdlib "$@")
swift build "${flags[@]}" --product orb-player >&2
echo "$(swift build "${flags[@]}" --show-bin-path)/orb-player"
