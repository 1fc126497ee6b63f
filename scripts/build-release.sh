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

# The dynamic loader looks each symbol up library by library, in the binary's DT_NEEDED order, breadth first; Debian's
# FFmpeg brings 134 libraries, most bound at load (BIND_NOW), and the ones most symbols are bound to came late (libc
# 25th, OpenSSL's libcrypto, which satisfies 3,800 lookups, 123rd): do_lookup_x was a third of the time to main.
# Naming first the libraries that `LD_DEBUG=bindings` of this binary finds satisfying at least 100 lookups (about 40,
# most first) takes --version from 78-82 to 63-65 ms here (40 runs each, twice). Which library's definition wins changes only where two
# define the same symbol: C++ template code (the same by the one-definition rule) and the frexp/ldexp family that
# glibc puts in both libc and libm. Idempotent; without patchelf the link order stays.
order_needed() {
  local bin=$1 log needed libs=() add=() lib
  command -v patchelf >/dev/null || {
    echo "build-release.sh: no patchelf (scripts/setup.sh installs it): libraries left in link order" >&2
    return 0
  }
  log=$(mktemp -d)
  LD_DEBUG=bindings LD_DEBUG_OUTPUT="$log/bindings" "$bin" --version >/dev/null
  mapfile -t libs < <(sed -n 's/.* to \([^ ]*\) \[.*/\1/p' "$log"/bindings.* | xargs -n1 basename | sort | uniq -c |
    sort -k1,1nr -k2 | awk -v self="$(basename "$bin")" '$1 >= 100 && $2 != self && $2 !~ /^ld-linux/ {print $2}')
  rm -rf "$log"
  needed=$(readelf -d "$bin")
  for lib in "${libs[@]}"; do
    grep -qF "Shared library: [$lib]" <<<"$needed" || add+=(--add-needed "$lib")
  done
  # patchelf adds entries (in name order); the order is then set in place, without rewriting the file again.
  [ ${#add[@]} -eq 0 ] || patchelf "${add[@]}" "$bin"
  python3 scripts/order_needed.py "$bin" "${libs[@]}"
}

swift build "${flags[@]}" --product orb-player >&2
bin="$(swift build "${flags[@]}" --show-bin-path)/orb-player"
order_needed "$bin"
echo "$bin"
