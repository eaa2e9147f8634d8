#!/bin/sh
# Every shell file parses.
n=0
for f in lib/*.sh tests/*.sh scripts/*.sh; do
  sh -n "$f" || { echo "syntax error in $f"; exit 1; }
  n=$((n + 1))
done
echo "$n passed, 0 failed"
