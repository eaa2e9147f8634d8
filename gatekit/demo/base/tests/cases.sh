check "Hello World" "hello-world"
check "gatekit" "gatekit"
check "Two  Spaces" "two-spaces"
