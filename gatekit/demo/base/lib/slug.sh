# slug TEXT: lower-case TEXT and join its words with dashes.
slug() {
  printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | tr -s ' ' '-'
}
