#!/usr/bin/env bash
# docs/playground.html is current: electsim play writes the same page around its module today,
# and its module computes what this build computes, summary and trace hash, for every shipped
# scenario (tests/playground/compare_module.sh; skipped when it is byte for byte the module just
# built, which that test already ran).
# Usage: tests/playground/docs_page.sh ELECTSIM MODULE
set -euo pipefail
electsim=$1
module=$2
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
page=docs/playground.html
regenerate="regenerate it with: scripts/playground docs"
if [[ ! -f $page ]]; then
  echo "docs_page: $page is missing; $regenerate" >&2
  exit 1
fi
# The module is the page's script element with id electsim-module.
/usr/bin/python3 - "$page" "$work/module.js" <<'PY'
import sys
text = open(sys.argv[1], encoding='utf-8').read()
start = text.index('<script id="electsim-module">\n') + len('<script id="electsim-module">\n')
end = text.index('\n</script>', start)
open(sys.argv[2], 'w', encoding='utf-8').write(text[start:end])
PY
"$electsim" play scenarios/*.json --open experiment:acquire-and-renew --module "$work/module.js" \
  -o "$work/page.html" 2>/dev/null
if ! cmp -s "$work/page.html" "$page"; then
  echo "docs_page: $page differs from what electsim play writes around its module today;" \
    "$regenerate" >&2
  exit 1
fi
if cmp -s "$work/module.js" "$module"; then
  echo "docs_page: $page is current; its module is byte for byte the one just built"
  exit 0
fi
if ! tests/playground/compare_module.sh "$electsim" "$work/module.js"; then
  echo "docs_page: $page's module computes runs other than this build's; $regenerate" >&2
  exit 1
fi
echo "docs_page: $page is current; its module runs every shipped scenario as this build does"
