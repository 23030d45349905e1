#!/bin/sh
# Install agentport from a release: the archive for this machine, checked
# against the release's SHA256SUMS before anything is installed.
#
#   sh install.sh --from DIR|URL [--prefix DIR]
#
# --from    where the release is: a folder or a base URL holding SHA256SUMS and
#           agentport-VERSION-TARGET.tar.gz (also $AGENTPORT_RELEASE)
# --prefix  installs PREFIX/bin/agentport (default: $HOME/.local)
set -eu

from="${AGENTPORT_RELEASE:-}"
prefix="${HOME}/.local"
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from="${2:?--from needs a folder or a URL}"; shift 2 ;;
    --prefix) prefix="${2:?--prefix needs a folder}"; shift 2 ;;
    *) echo "install.sh: unknown argument $1 (use --from DIR|URL, --prefix DIR)" >&2; exit 2 ;;
  esac
done
[ -n "$from" ] || { echo "install.sh: say where the release is: --from DIR|URL" >&2; exit 2; }

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "install.sh: no agentport build for $(uname -s)" >&2; exit 5 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "install.sh: no agentport build for $(uname -m)" >&2; exit 5 ;;
esac
target="$os-$arch"
if [ "$os" = linux ] && ls /lib/ld-musl-* >/dev/null 2>&1; then target="$target-musl"; fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM

fetch() { # fetch NAME: the release's file NAME into $tmp
  case "$from" in
    http://* | https://*)
      if command -v curl >/dev/null 2>&1; then curl -fsSL "$from/$1" -o "$tmp/$1"
      else wget -q "$from/$1" -O "$tmp/$1"; fi ;;
    *) cp "$from/$1" "$tmp/$1" ;;
  esac
}

fetch SHA256SUMS
archive="$(awk -v t="-$target.tar.gz" 'substr($2, length($2) - length(t) + 1) == t && $2 ~ /^agentport-/ { print $2; exit }' "$tmp/SHA256SUMS")"
[ -n "$archive" ] || { echo "install.sh: the release has no archive for $target" >&2; exit 5; }
fetch "$archive"

want="$(awk -v a="$archive" '$2 == a { print $1 }' "$tmp/SHA256SUMS")"
if command -v sha256sum >/dev/null 2>&1; then got="$(sha256sum "$tmp/$archive" | awk '{ print $1 }')"
else got="$(shasum -a 256 "$tmp/$archive" | awk '{ print $1 }')"; fi
if [ "$got" != "$want" ]; then
  echo "install.sh: $archive does not match SHA256SUMS (expected $want, got $got): nothing installed" >&2
  exit 5
fi

tar -xzf "$tmp/$archive" -C "$tmp"
mkdir -p "$prefix/bin"
cp "$tmp/${archive%.tar.gz}/agentport" "$prefix/bin/agentport.new"
chmod 755 "$prefix/bin/agentport.new"
mv "$prefix/bin/agentport.new" "$prefix/bin/agentport"
echo "installed $prefix/bin/agentport ($("$prefix/bin/agentport" --version), $target)"
