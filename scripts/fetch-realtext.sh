#!/usr/bin/env bash
# Fetches the Debian documentation packages whose text make-devset.py adds to its
# xl tier (the list: `make-devset.py --packages`) into $TRINE_REALTEXT (default
# ~/.cache/trine/realtext), one folder per package: `apt-get download`, never
# installed, `dpkg-deb -x`, only the folder make-devset.py reads kept, images,
# fonts, scripts and PDFs removed, man pages rendered to text (`man -l`), the
# .deb deleted. A package whose <package>/.done exists is skipped, so a second
# run fetches nothing. About 0.2 GB of downloads, 1.4 GB kept; the first run takes
# a few minutes, most of them rendering 4,700 man pages.
#
#     scripts/fetch-realtext.sh && python3 scripts/make-devset.py --tiers xl --flat --out devset-xl
#
# apt's own lists are left alone (the other tiers read them): when they are too
# old to download from, the packages are downloaded with fresh lists of its own,
# in <cache>/.apt-lists.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${TRINE_REALTEXT:-$HOME/.cache/trine/realtext}"
mkdir -p "$cache"
cache="$(cd "$cache" && pwd)"

declare -A folder reader
todo=()
while read -r package dir how; do
  folder[$package]=$dir
  reader[$package]=$how
  [[ -f $cache/$package/.done ]] || todo+=("$package")
done < <(python3 "$repo/scripts/make-devset.py" --packages)
if ((${#todo[@]} == 0)); then
  echo "real text: all ${#folder[@]} packages already in $cache ($(du -sh "$cache" | cut -f1))" >&2
  exit 0
fi

debs="$(mktemp -d "$cache/.debs.XXXXXX")"
trap 'rm -rf "$debs"' EXIT
apt=()
[[ $EUID -eq 0 ]] && apt+=(-o APT::Sandbox::User=root) # root downloads into a folder _apt cannot write
echo "real text: downloading ${todo[*]}" >&2
if ! (cd "$debs" && apt-get "${apt[@]}" -q download "${todo[@]}" >/dev/null); then
  echo "real text: apt's lists are too old; downloading with lists of our own in $cache/.apt-lists" >&2
  mkdir -p "$cache/.apt-lists/partial"
  apt+=(-o Dir::State::Lists="$cache/.apt-lists" -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache=
    -o Acquire::Languages=none)
  apt-get "${apt[@]}" -qq update
  # What the first try fetched before failing is fetched again, maybe in a
  # newer version: one .deb a package.
  rm -f "$debs"/*.deb
  (cd "$debs" && apt-get "${apt[@]}" -q download "${todo[@]}" >/dev/null)
fi

for package in "${todo[@]}"; do
  deb="$(ls "$debs/${package}"_*.deb)"
  version="$(dpkg-deb -f "$deb" Version)"
  size="$(du -h "$deb" | cut -f1)"
  rm -rf "$cache/$package" "$debs/x"
  dpkg-deb -x "$deb" "$debs/x"
  rm -f "$deb"
  dir="${folder[$package]}"
  if [[ -L $debs/x/$dir || ! -d $debs/x/$dir ]]; then
    echo "real text: $package has no folder $dir (make-devset.py's REALTEXT)" >&2
    exit 1
  fi
  mkdir -p "$(dirname "$cache/$package/$dir")"
  mv "$debs/x/$dir" "$cache/$package/$dir"
  rm -rf "$debs/x"
  find "$cache/$package" -type f \( -iname '*.png' -o -iname '*.gif' -o -iname '*.jpg' -o -iname '*.jpeg' \
    -o -iname '*.svg' -o -iname '*.ico' -o -iname '*.woff' -o -iname '*.woff2' -o -iname '*.ttf' \
    -o -iname '*.otf' -o -iname '*.eot' -o -iname '*.js' -o -iname '*.css' -o -iname '*.pdf' \
    -o -iname '*.chunk' \) -delete
  if [[ ${reader[$package]} == man ]]; then # roff to text, 80 columns, then only the text is kept
    (cd "$cache/$package/$dir" && find . -path './man*' -type f -name '*.gz' -print0 |
      xargs -0 -r -n 64 -P "$(nproc)" sh -c 'for f; do
        LC_ALL=C.UTF-8 MANWIDTH=80 man --no-hyphenation --no-justification -l "$f" >"${f%.gz}.txt" 2>/dev/null ||
          rm -f "${f%.gz}.txt"
        rm -f "$f"
      done' sh)
    find "$cache/$package/$dir" -type l -delete
  fi
  echo "$version" >"$cache/$package/.done"
  echo "real text: $package $version ($size .deb, $(du -sh "$cache/$package" | cut -f1) kept)" >&2
done
echo "real text: ${#folder[@]} packages in $cache ($(du -sh "$cache" | cut -f1))" >&2
