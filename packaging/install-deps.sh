#!/usr/bin/env bash
# Installs every Debian 12 package that building, testing and the demo of RunLens need.
# Idempotent: prints nothing and installs nothing when everything is present.
set -euo pipefail

packages=(
    build-essential cmake ninja-build pkg-config
    qt6-base-dev qt6-base-dev-tools qt6-svg-dev libqt6svg6 qt6-qpa-plugins libgl-dev
    libqcustomplot-dev
    libsqlite3-dev sqlite3 libzstd-dev zstd libfmt-dev zlib1g-dev libsimdjson-dev libxxhash-dev
    fonts-dejavu-core
    poppler-utils
    clang libclang-rt-14-dev llvm clang-format
)

missing=()
for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = "installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
