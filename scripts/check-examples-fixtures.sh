# Repositories and files the book's examples stand in, for scripts/check-examples.py: a page's
# hidden `check: setup` note sources this file and calls one function, in the sandbox's work/.
# Each builds what a user would have at that point of the page, nothing more.

# bus_repo: a small node package whose `origin/main` and tag `a3f6e9e6` name the base; `main`
# has one later commit that touches no candidate path. The candidate (a fix to page() and the
# test that proves it) is in the working tree of branch `work`, made on the base, not yet
# staged, as an author has it before `git add -A`.
bus_repo() {
    git init -q
    mkdir -p packages/bus/src packages/bus/tests scripts
    cat > packages/bus/src/broker.mjs <<'EOF'
// A topic's messages, one page at a time: the refs strictly after `after`.
export function page(refs, after, size = 10) {
  return refs.filter((ref) => ref >= after).slice(0, size);
}
EOF
    cat > packages/bus/tests/broker.test.mjs <<'EOF'
import { test } from "node:test";
import assert from "node:assert/strict";
import { page } from "../src/broker.mjs";

test("a page holds at most size refs", () => {
  assert.deepEqual(page([1, 2, 3, 4], 0, 2), [1, 2]);
});
EOF
    cat > scripts/test-smoke.sh <<'EOF'
#!/bin/sh
# The broker is there and loads.
node -e 'import("./packages/bus/src/broker.mjs").then((m) => process.exit(typeof m.page === "function" ? 0 : 1))'
echo "1 passed, 0 failed"
EOF
    chmod +x scripts/test-smoke.sh
    printf 'node_modules/\n' > .gitignore
    git add -A
    git commit -qm "bus: pages of a topic"
    git update-ref refs/remotes/origin/main HEAD
    git tag a3f6e9e6 HEAD
    printf '# bus\nPages of a topic.\n' > README.md
    git add README.md
    git commit -qm "README: say what the bus is"
    git checkout -q -b work a3f6e9e6
    # The candidate: the page starts past `after`, not at it, and a test that says so.
    sed -i 's/ref >= after/ref > after/' packages/bus/src/broker.mjs
    cat > packages/bus/tests/after.test.mjs <<'EOF'
import { test } from "node:test";
import assert from "node:assert/strict";
import { page } from "../src/broker.mjs";

test("the page starts past after, not at it", () => {
  assert.deepEqual(page([1, 2, 3], 1), [2, 3]);
});
EOF
}

# bus_candidate DIR: bus_repo with its candidate staged and packed into DIR, with a gate.toml.
bus_candidate() {
    bus_repo
    git add -A
    gate pack --base origin/main --out "$1" > /dev/null
    cat > "$1/gate.toml" <<'EOF'
base = "a3f6e9e6"
patch = "build.patch"
manifest = "candidate-manifest.sha256"
head = "main"

[[suite]]
name = "bus"
run = "node --test packages/bus/tests"
timeout = "1m"
EOF
}

# bus_spec FILE: the candidate's mutants, each named with the claim it undoes.
bus_spec() {
    cat > "$1" <<'EOF'
[suites.bus]
run = "node --test packages/bus/tests"
timeout = "1m"

[suites.pre-existing]
run = "node --test packages/bus/tests/broker.test.mjs"
timeout = "1m"

[[mutant]]
name = "after inclusive"
site = "page"
file = "packages/bus/src/broker.mjs"
anchor = "ref > after"
replace = "ref >= after"
undoes = "the page starts past after, not at it"
suite = "bus"
also = ["pre-existing"]

[[mutant]]
name = "comment: refs to items"
file = "packages/bus/src/broker.mjs"
anchor = "the refs strictly after"
replace = "the items strictly after"
suite = "bus"
expect = "survive"
EOF
}

# shell_lib: lib.sh, its tests (test.sh) and the tests it had before (test-old.sh) at the root,
# as the README's and mutants.toml's specs name them.
shell_lib() {
    cat > lib.sh <<'EOF'
# after_page LIST AFTER: the items strictly after AFTER, one a line.
after_page() {
    for x in $1; do
        if [ "$x" -gt "$2" ]; then echo "$x"; fi
    done
}
EOF
    cat > test.sh <<'EOF'
. ./lib.sh
got=$(after_page "1 2 3" 1 | tr '\n' ' ')
if [ "$got" = "2 3 " ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
EOF
    cat > test-old.sh <<'EOF'
. ./lib.sh
got=$(after_page "1 5" 3 | tr '\n' ' ')
if [ "$got" = "5 " ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
EOF
    if [ ! -d .git ]; then
        git init -q
        git add lib.sh test.sh test-old.sh
        git commit -qm "after_page"
    fi
}

# task_server: server.js, a task board's stdio MCP server with one tool, list_tasks.
task_server() {
    cat > server.js <<'EOF'
// A task board's MCP server: one tool, list_tasks, a page of 50 tasks.
const readline = require("node:readline");
const reply = (id, result) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id, result }) + "\n");
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (msg.method === "initialize") {
    reply(msg.id, { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} },
                    serverInfo: { name: "tasks", version: "1.0.0" } });
  } else if (msg.method === "tools/list") {
    reply(msg.id, { tools: [{ name: "list_tasks", description: "a page of tasks",
                              inputSchema: { type: "object", properties: { page: { type: "number" } } } }] });
  } else if (msg.method === "tools/call") {
    const page = msg.params.arguments.page;
    const tasks = Array.from({ length: 50 }, (_, i) => ({ id: (page - 1) * 50 + i + 1, title: `task ${i + 1}` }));
    reply(msg.id, { content: [{ type: "text", text: JSON.stringify(tasks) }] });
  } else {
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "no such method" } }) + "\n");
  }
});
EOF
}

# signing_key: ~/.ssh/id_ed25519 for you@example.com, and the allowed_signers file git keeps.
signing_key() {
    mkdir -p ~/.ssh ~/.config/git
    ssh-keygen -q -t ed25519 -N "" -C you@example.com -f ~/.ssh/id_ed25519
    printf 'you@example.com namespaces="gatekit-attestation" %s\n' "$(cut -d' ' -f1,2 ~/.ssh/id_ed25519.pub)" \
        > ~/.config/git/allowed_signers
}

# demo_sample: the sample `gatekit demo` builds (a shell library on branch `work`, its
# candidate staged, tag `base`), copied into work/ with its mutants.toml.
demo_sample() {
    gatekit demo --keep > "$EXAMPLES_ROOT/demo.out"
    kept=$(sed -n 's/^sample kept in //p' "$EXAMPLES_ROOT/demo.out")
    cp -a "$kept/sample/." .
    cp "$kept/candidate/mutants.toml" mutants.toml
    rm -rf "$kept"
}

# linked_node_project: a node project whose ignored node_modules holds an installed left-pad,
# with a candidate packed into cand/ and a gate.toml that links node_modules and whose setup
# runs `npm ci` (which empties node_modules before it installs).
linked_node_project() {
    git init -q
    printf 'node_modules/\ncand/\n' > .gitignore
    printf '{"name":"pad","version":"1.0.0","scripts":{"test":"node test.js"}}\n' > package.json
    printf '{"name":"pad","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{"":{"name":"pad","version":"1.0.0"}}}\n' > package-lock.json
    printf 'console.log("1 passed, 0 failed");\n' > test.js
    git add -A
    git commit -qm "pad"
    mkdir -p node_modules/left-pad
    printf 'module.exports = (s, n) => String(s).padStart(n);\n' > node_modules/left-pad/index.js
    printf 'console.log("2 passed, 0 failed");\n' > test.js
    git add -A
    gate pack --base HEAD --out cand > /dev/null
    cat > cand/gate.toml <<'TOML'
base = "HEAD"
patch = "build.patch"
manifest = "candidate-manifest.sha256"

[worktree]
link = ["node_modules"]
setup = "npm ci --offline --no-audit --no-fund"

[[suite]]
name = "unit"
run = "npm test"
TOML
}
