#!/usr/bin/env bash
# Installs what building and testing memhist needs, on Debian, when missing.
# Runs apt-get only if a package is absent (as root, or through sudo).
set -euo pipefail
need=()
want_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed" || need+=("$1"); }
for p in build-essential cmake pkg-config liblz4-dev libxxhash-dev libsqlite3-dev \
         valgrind clang libclang-rt-14-dev cppcheck sqlite3 python3 qemu-user; do
  want_pkg "$p"
done
if [ ${#need[@]} -gt 0 ]; then
  echo "memhist: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
