#!/usr/bin/env bash
# Installs the Debian packages that building, running and testing Orb Player need.
# Idempotent: does nothing when every package is already installed. Run as root (or with sudo on PATH).
set -euo pipefail

PACKAGES=(
  pkg-config patchelf
  libgtk-4-dev libepoxy-dev
  libvulkan-dev mesa-vulkan-drivers vulkan-tools glslc
  libavcodec-dev libavformat-dev libavutil-dev libswresample-dev libswscale-dev
  libpipewire-0.3-dev pipewire pipewire-bin wireplumber
  libuchardet-dev libass-dev fonts-dejavu-core
  ffmpeg dvdauthor
  xvfb xauth x11-utils xdotool dbus dbus-x11 libglib2.0-bin desktop-file-utils
  libgl1-mesa-dri
  python3-gi
  ca-certificates openssl
  locales
  at-spi2-core gir1.2-atspi-2.0 openbox
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >&2
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
