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
# clang-tidy 22 (Debian 12's security updates carry it) checks the code in the test suite; without it that one test
# is skipped, so a machine without those updates can still build and test.
optional=(clang-tidy-22)
missingOptional=()
for p in "${optional[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$status" = "installed" ] || missingOptional+=("$p")
done
[ ${#missing[@]} -eq 0 ] && [ ${#missingOptional[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]} ${missingOptional[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if [ ${#missingOptional[@]} -gt 0 ]; then
    $SUDO apt-get install -y -qq --no-install-recommends "${missingOptional[@]}" >/dev/null ||
        echo "Not installed: ${missingOptional[*]} (the tidy test will be skipped)" >&2
fi
