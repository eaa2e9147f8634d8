#!/bin/sh
# The slug suite: runs the cases files named (default: every tests/cases*.sh), a TAP-style
# `not ok` line per failing case, then the plain closing line gate reads counts from.
. ./lib/slug.sh
passed=0
failed=0
check() {
  got=$(slug "$1")
  if [ "$got" = "$2" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "not ok $((passed + failed)) - slug '$1'"
    echo "  # gave '$got', expected '$2'"
  fi
}
[ $# -gt 0 ] || set -- tests/cases*.sh
for cases in "$@"; do
  . "./$cases"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
