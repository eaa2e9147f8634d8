check "Hello, World!" "hello-world"
check " padded " "padded"
check "v1.2 (beta)" "v12-beta"
