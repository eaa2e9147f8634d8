fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = std::fs::read_to_string(&args[1]).unwrap();
    if args.len() > 2 {
        dump(&args[1], &text);
    }
    let out = syntax::propose(
        &args[1],
        text.as_bytes(),
        &syntax::Scope::Whole,
        &syntax::Options {
            all: std::env::var("ONE").is_err(),
        },
    );
    match out {
        syntax::Outcome::Proposed(p) => {
            for m in p.mutants.iter().chain(p.control.iter()) {
                println!(
                    "{:>3} {:<14} {:<20} {:?} -> {:?}   [{}]",
                    m.line,
                    m.operator.name(),
                    m.site.clone().unwrap_or_default(),
                    m.anchor,
                    m.replace,
                    m.description
                );
            }
            println!("dropped {}", p.dropped);
        }
        o => println!("{o:?}"),
    }
}

fn dump(path: &str, text: &str) {
    let lang: tree_sitter::Language = match path.rsplit('.').next().unwrap() {
        "rs" => tree_sitter_rust::LANGUAGE.into(),
        "py" => tree_sitter_python::LANGUAGE.into(),
        "go" => tree_sitter_go::LANGUAGE.into(),
        "ts" => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        "tsx" => tree_sitter_typescript::LANGUAGE_TSX.into(),
        _ => tree_sitter_javascript::LANGUAGE.into(),
    };
    let mut p = tree_sitter::Parser::new();
    p.set_language(&lang).unwrap();
    let t = p.parse(text, None).unwrap();
    fn walk(n: tree_sitter::Node, src: &str, depth: usize, field: Option<&str>) {
        let txt = &src[n.byte_range()];
        let short: String = txt.chars().take(40).collect::<String>().replace('\n', "⏎");
        println!(
            "{}{}{} [{}] {:?}",
            "  ".repeat(depth),
            field.map(|f| format!("{f}: ")).unwrap_or_default(),
            n.kind(),
            if n.is_named() { "n" } else { "a" },
            short
        );
        let mut c = n.walk();
        for (i, ch) in n.children(&mut c).enumerate() {
            walk(ch, src, depth + 1, n.field_name_for_child(i as u32));
        }
    }
    walk(t.root_node(), text, 0, None);
}
