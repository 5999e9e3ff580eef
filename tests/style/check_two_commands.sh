#!/usr/bin/env bash
# Fails when README's two commands and CI drift apart: command 1 must install through
# tools/install_dependencies.sh (the one package list), CI must run that script, and .ci/run must
# hold command 2 word for word.
#   check_two_commands.sh SOURCE_DIR
set -euo pipefail
cd "$1"
status=0
command1=$(grep -A1 -m1 '^# 1\. ' README.md | tail -n 1)
command2=$(grep -A1 -m1 '^# 2\. ' README.md | tail -n 1)
if [[ "$command1" != tools/install_dependencies.sh* ]]; then
  echo "README's command 1 does not start with tools/install_dependencies.sh: $command1" >&2
  status=1
fi
if ! grep -q '^tools/install_dependencies.sh$' .ci/run; then
  echo ".ci/run does not install through tools/install_dependencies.sh" >&2
  status=1
fi
if [ -z "$command2" ] || ! grep -qxF "$command2" .ci/run; then
  echo ".ci/run does not run README's command 2 word for word: $command2" >&2
  status=1
fi
if ! grep -q 'debian-packages.txt' tools/install_dependencies.sh; then
  echo "tools/install_dependencies.sh does not read tools/debian-packages.txt" >&2
  status=1
fi
exit $status
