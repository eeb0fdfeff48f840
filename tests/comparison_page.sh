#!/usr/bin/env bash
# docs/comparison.md, its pictures and the README's flagship picture are electsim's output, not
# hand-typed: regenerate them and require the committed files to be identical. After a deliberate change, regenerate with
#   electsim comparison -o docs/comparison.md --pictures docs/img
# Usage: tests/comparison_page.sh ELECTSIM SOURCE_DIR
set -euo pipefail
electsim=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/docs"
"$electsim" comparison -o "$work/docs/comparison.md" --pictures "$work/docs/img" \
  --scenarios "$source/scenarios" >/dev/null
status=0
for f in "$work/docs/comparison.md" "$work"/docs/img/*.svg; do
  rel=${f#"$work/"}
  if ! cmp -s "$f" "$source/$rel"; then
    echo "comparison_page: $rel differs from what electsim writes today" >&2
    status=1
  fi
done
# The README's picture of the flagship run.
"$electsim" run "$source/scenarios/lease-gc-pause-fence.json" --svg "$work/flagship.svg" >/dev/null
if ! cmp -s "$work/flagship.svg" "$source/docs/img/flagship.svg"; then
  echo "comparison_page: docs/img/flagship.svg differs from what electsim draws today" >&2
  echo "regenerate with: electsim run scenarios/lease-gc-pause-fence.json --svg docs/img/flagship.svg" >&2
  status=1
fi
if [[ $status -ne 0 ]]; then
  echo "regenerate with: electsim comparison -o docs/comparison.md --pictures docs/img" >&2
fi
exit $status
