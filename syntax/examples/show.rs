//! Shows what `syntax` proposes for one file: `cargo run -p syntax --example show -- FILE
//! [--one] [--tree] [--hex]`. `--one` asks for one mutant per line instead of every operator,
//! `--tree` prints the file's syntax tree first (field names, kinds, text), `--hex` prints each
//! proposal as `LINE OPERATOR HEX(anchor) HEX(replace)` for scripts that compare with peers.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: show FILE [--one] [--tree] [--hex]");
        std::process::exit(2);
    };
    let flag = |f: &str| args.iter().any(|a| a == f);
    let bytes = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2);
    });
    if flag("--tree") {
        tree(path, &String::from_utf8_lossy(&bytes));
    }
    let options = syntax::Options {
        all: !flag("--one"),
    };
    match syntax::propose(path, &bytes, &syntax::Scope::Whole, &options) {
        syntax::Outcome::Proposed(p) => {
            for m in p.mutants.iter().chain(p.control.iter()) {
                if flag("--hex") {
                    println!(
                        "{} {} {} {}",
                        m.line,
                        m.operator.name(),
                        hex(&m.anchor),
                        hex(&m.replace)
                    );
                } else {
                    let site = m.site.clone().unwrap_or_default();
                    println!(
                        "{:>4} {:<17} {:<24} {:?} -> {:?}  [{}]",
                        m.line,
                        m.operator.name(),
                        site,
                        m.anchor,
                        m.replace,
                        m.description
                    );
                }
            }
            eprintln!("{} proposed, {} dropped", p.mutants.len(), p.dropped);
        }
        syntax::Outcome::Skipped(skip) => eprintln!("{path}: skipped: {skip}"),
    }
}

fn hex(s: &str) -> String {
    s.bytes().map(|b| format!("{b:02x}")).collect()
}

fn tree(path: &str, text: &str) {
    let Some(language) = syntax::Language::of_path(path) else {
        return;
    };
    let grammar: tree_sitter::Language = match language {
        syntax::Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        syntax::Language::Python => tree_sitter_python::LANGUAGE.into(),
        syntax::Language::Go => tree_sitter_go::LANGUAGE.into(),
        syntax::Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        syntax::Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        syntax::Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
    };
    let mut parser = tree_sitter::Parser::new();
    if parser.set_language(&grammar).is_err() {
        return;
    }
    let Some(parsed) = parser.parse(text, None) else {
        return;
    };
    let mut cursor = parsed.walk();
    let mut depth = 0;
    loop {
        let node = cursor.node();
        let short: String = text[node.byte_range()].chars().take(40).collect();
        let field = cursor
            .field_name()
            .map(|f| format!("{f}: "))
            .unwrap_or_default();
        println!("{}{field}{} {:?}", "  ".repeat(depth), node.kind(), short);
        if cursor.goto_first_child() {
            depth += 1;
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
            depth -= 1;
        }
    }
}
