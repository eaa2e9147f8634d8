# slug TEXT: lower-case TEXT, drop what is not a letter, digit or space, and join its words
# with dashes (no dash at either end).
slug() {
  printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | tr -cd 'a-z0-9 ' | tr -s ' ' '-' \
    | sed 's/^-//; s/-$//'
}
