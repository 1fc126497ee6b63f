#!/usr/bin/env bash
# Builds the release binary that is run, installed and measured, and prints its path on stdout (the build's own
# output goes to stderr). Extra arguments go to `swift build` (e.g. --scratch-path DIR).
# The Swift runtime and Foundation are linked into the binary (--static-swift-stdlib): the installed player needs no
# Swift toolchain on the machine, and with 14 fewer shared libraries to load and bind it reaches main about 20 ms
# sooner (--version: 66 -> 46 ms here), which a window's first picture gains whole.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d /opt/swift/usr/bin ] && export PATH="/opt/swift/usr/bin:$PATH"
flags=(-c release --static-swift-stdlib)

# Linked by the toolchain's lld with the relative relocations packed (DT_RELR) where the C library reads them
# (glibc 2.36, Debian 12): a position-independent binary with Foundation linked in has some 74,000 relative
# relocations, 1.8 MB of table in the gold-linked file, which the loader reads in whole at every start. Packed they
# take 14 KB, and every window has 1.5-2 MB less resident (HDR10 1080p clip, peak RSS 146-148 -> 145-146 MB over 5
# alternating runs; --version 42.4-43.1 -> 41.1-41.3 MB); start-up time is the same (--version median 38.0 ms both,
# 40 alternating runs). Anywhere else the link stays Swift's default (gold).
relr_supported() {
  local swift_bin glibc
  swift_bin=$(dirname "$(command -v swift)")
  [ -x "$swift_bin/ld.lld" ] || return 1
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  [ -n "$glibc" ] && printf '%s\n2.36\n' "$glibc" | sort -V -C -r
}
if relr_supported; then
  flags+=(-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs)
fi
flags+=("$@")

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
# patchelf moves what it grows (.dynstr) and rewrites the dynamic entries it knows; a packed relocation table it
# moved without saying so would leave a binary that crashes at its first pointer. It must still start.
"$bin" --version >/dev/null || { echo "build-release.sh: $bin does not start after reordering" >&2; exit 1; }
echo "$bin"
