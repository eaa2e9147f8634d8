//! Shell completions and man pages, generated from a tool's clap definitions so they can never
//! drift from its `--help`. One place for all three tools.

use std::io::{self, Write};
use std::path::Path;

pub use clap_complete::Shell;

/// Writes the completion script for `shell` to stdout.
pub fn print_completions(shell: Shell, mut cmd: clap::Command) {
    let name = cmd.get_name().to_string();
    clap_complete::generate(shell, &mut cmd, name, &mut io::stdout());
}

/// The man page of `cmd` on stdout, or (with `out`) `NAME.1` and one `NAME-SUB.1` per
/// subcommand written into `out`.
pub fn write_man_pages(mut cmd: clap::Command, out: Option<&Path>) -> io::Result<()> {
    cmd.build();
    let Some(dir) = out else {
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page)?;
        return io::stdout().write_all(&page);
    };
    std::fs::create_dir_all(dir)?;
    let name = cmd.get_name().to_string();
    let mut pages = vec![(name.clone(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        // clap names are `&'static str` without its `string` feature; a page run leaks a few.
        let full: &'static str = format!("{name}-{}", sub.get_name()).leak();
        pages.push((full.to_string(), sub.clone().name(full)));
    }
    for (file, page_cmd) in pages {
        let mut page = Vec::new();
        clap_mangen::Man::new(page_cmd).render(&mut page)?;
        let path = dir.join(format!("{file}.1"));
        std::fs::write(&path, page)
            .map_err(|e| io::Error::new(e.kind(), format!("writing {}: {e}", path.display())))?;
    }
    Ok(())
}
