#!/usr/bin/env bash
# Fails when a C++ file of the tree differs from what clang-format-14 makes of it (.clang-format
# at the root). Only clang-format-14 is the reference: other versions format some constructs
# differently.
#   check_format.sh SOURCE_DIR
set -euo pipefail
cd "$1"
format=$(command -v clang-format-14 || true)
if [ -z "$format" ]; then
  echo "clang-format-14 is not installed (tools/install_dependencies.sh installs it)" >&2
  exit 1
fi
if [ -d .git ]; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
else
  mapfile -t files < <(find bench include python src tests -name '*.cpp' -o -name '*.hpp' -o -name '*.h')
fi
status=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue  # deleted in the work tree, not yet in git
  if ! "$format" --dry-run --Werror "$f" 2> /dev/null; then
    echo "not formatted: $f (clang-format-14 -i $f)"
    status=1
  fi
done
exit $status
