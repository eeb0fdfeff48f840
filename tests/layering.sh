#!/usr/bin/env bash
# The libraries depend one way only (README, "Layout"): no file of a folder includes a header of a
# folder above it. Prints every include that points the wrong way and fails if there is one.
set -euo pipefail
root=${1:-$(dirname "$0")/..}
cd "$root"
# folder: the folders it may include from (besides itself and the standard and package headers)
declare -A allowed=(
  [io]=""
  [sim]=""
  [params]="sim"
  [raft]="sim"
  [servers]="params raft sim"
  [protocols]="params raft sim"
  [analysis]="sim io"
  [drawing]="analysis sim io"
  [runner]="servers protocols params raft drawing analysis sim io"
  [playground]="runner servers protocols params raft drawing analysis sim io"
  [cli]="playground runner servers protocols params raft drawing analysis sim io"
)
bad=0
for folder in "${!allowed[@]}"; do
  while IFS= read -r line; do
    file=${line%%:*}
    target=$(sed -E 's/.*#include "([^/"]+)\/.*/\1/' <<<"$line")
    [[ $target == "$folder" ]] && continue
    if [[ " ${allowed[$folder]} " != *" $target "* ]]; then
      echo "$file includes $target/: $folder/ may include only from: ${allowed[$folder]:-nothing}"
      bad=1
    fi
  done < <(grep -rnE '^#include "[a-z_]+/' "$folder" --include='*.cpp' --include='*.hpp' --include='*.inc' || true)
done
if ((bad)); then exit 1; fi
echo "layering: every include points down"
