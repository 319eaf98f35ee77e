#!/usr/bin/env bash
# Installs what building and testing memhist needs, on Debian, when missing.
# Runs apt-get only if a package is absent (as root, or through sudo).
set -euo pipefail
need=()
want_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed" || need+=("$1"); }
# pandoc builds the man page (cmake -DMH_MAN=OFF builds without it); man-db
# and groff-base render it in the install test.
for p in build-essential cmake pkg-config liblz4-dev libxxhash-dev libsqlite3-dev \
         valgrind clang libclang-rt-14-dev cppcheck sqlite3 python3 \
         python3-venv python3-pip python3-setuptools python3-wheel python3-pytest \
         python3-numpy python3-pandas python3-matplotlib \
         pandoc man-db groff-base qemu-user; do
  want_pkg "$p"
done
if [ ${#need[@]} -gt 0 ]; then
  echo "memhist: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
