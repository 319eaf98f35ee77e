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
         pandoc man-db groff-base qemu-user qemu-system-x86 busybox-static; do
  want_pkg "$p"
done
if [ ${#need[@]} -gt 0 ]; then
  echo "memhist: installing ${need[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The guest kernel of `memhist record --engine qemu-system` and its test:
# Debian's linux-image-amd64, whose vmlinuz is extracted with dpkg-deb into
# /var/cache/memhist (installing the package itself would build an
# initramfs for the host and needs none of it).
KCACHE=/var/cache/memhist
fetch_kernel() {
  local SUDO="" kpkg tmp deb ver
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')
  if [ -z "$kpkg" ]; then
    $SUDO apt-get update -qq || return 1
    kpkg=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/ {print $2; exit}')
    [ -n "$kpkg" ] || return 1
  fi
  tmp=$(mktemp -d) || return 1
  chmod 755 "$tmp" # apt's download user writes there
  (cd "$tmp" && apt-get download -qq "$kpkg" >/dev/null 2>&1) || { rm -rf "$tmp"; return 1; }
  deb=$(ls "$tmp"/*.deb) && ver=${kpkg#linux-image-} &&
    dpkg-deb --fsys-tarfile "$deb" | tar -x -O "./boot/vmlinuz-$ver" > "$tmp/vmlinuz" &&
    $SUDO mkdir -p "$KCACHE" &&
    $SUDO install -m 644 "$tmp/vmlinuz" "$KCACHE/vmlinuz-$ver" &&
    $SUDO ln -sf "vmlinuz-$ver" "$KCACHE/vmlinuz" || { rm -rf "$tmp"; return 1; }
  rm -rf "$tmp"
  echo "memhist: guest kernel $KCACHE/vmlinuz-$ver" >&2
}
if [ ! -r "$KCACHE/vmlinuz" ]; then
  fetch_kernel || echo "memhist: warning: could not extract linux-image-amd64's kernel into" \
    "$KCACHE: the qemu-system test will be skipped" >&2
fi
