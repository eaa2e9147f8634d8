//! Installs in a linked folder that point back at the user's checkout.
//!
//! `[worktree] link` gives every checkout gatekit makes a copy of a folder of the user's checkout
//! (`.venv`, `node_modules`; see [`crate::linked`]), and a copy keeps every absolute path. When that folder holds the project itself installed *editable*
//! (`pip install -e .`: a `.pth` line, an `__editable__` finder or a `direct_url.json` naming
//! the user's checkout), or a workspace package linked to it (`node_modules/@app/core ->
//! ../../packages/core`), the suites import the user's files, not the checkout under review:
//! every PASS and every SURVIVED would be about the wrong code. So such a link is refused
//! before any work, naming the file that points back. (The canary catches the cases this
//! scan does not know; this one names the cause.)
//!
//! Only the places installers write are read: `lib*/python*/site-packages` (and
//! `dist-packages`) for Python, the first two levels of a `node_modules` for links.

use std::fs;
use std::path::{Path, PathBuf};

/// The first file in the linked folder `linked` (a path in the user's checkout `top`) that
/// makes an import resolve into `top` outside `linked`, and what it names.
pub fn pointing_back(linked: &Path, top: &Path) -> Option<(PathBuf, PathBuf)> {
    let top = top.canonicalize().ok()?;
    let linked_real = linked.canonicalize().ok()?;
    let back = |target: &Path| -> bool {
        target
            .canonicalize()
            .is_ok_and(|t| t.starts_with(&top) && !t.starts_with(&linked_real))
    };
    for dir in site_packages(&linked_real) {
        if let Some(found) = python_installs(&dir, &top, &back) {
            return Some(found);
        }
    }
    node_links(&linked_real, &back)
}

/// `lib/python3.12/site-packages` and the like under a virtualenv (or a folder that is one).
fn site_packages(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let is_site = |p: &Path| {
        p.file_name()
            .is_some_and(|n| n == "site-packages" || n == "dist-packages")
    };
    if is_site(root) {
        found.push(root.to_path_buf());
    }
    for lib in children(root).into_iter().filter(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("lib"))
    }) {
        for py in children(&lib) {
            if is_site(&py) {
                found.push(py.clone());
            }
            for site in children(&py) {
                if is_site(&site) {
                    found.push(site);
                }
            }
        }
    }
    found
}

/// Real folders (not links) directly in `dir`, sorted.
fn children(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// Files in `dir` whose name satisfies `want`, sorted.
fn files(dir: &Path, want: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter(|e| e.file_name().to_str().is_some_and(&want))
        .map(|e| e.path())
        .collect();
    out.sort();
    out
}

/// A small text file, or nothing (an installer's files are small; anything else is not one).
fn small_text(path: &Path) -> Option<String> {
    let meta = fs::metadata(path).ok()?;
    if meta.len() > 1 << 20 {
        return None;
    }
    fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Editable installs in one site-packages folder: `.pth` path lines, `__editable__` finders,
/// legacy `.egg-link` files, and `direct_url.json` of an editable `file://` install.
fn python_installs(
    site: &Path,
    top: &Path,
    back: &dyn Fn(&Path) -> bool,
) -> Option<(PathBuf, PathBuf)> {
    for pth in files(site, |n| n.ends_with(".pth") || n.ends_with(".egg-link")) {
        let Some(text) = small_text(&pth) else {
            continue;
        };
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') || line.starts_with("import ") {
                continue;
            }
            let target = site.join(line);
            if back(&target) {
                return Some((pth, target));
            }
        }
    }
    // setuptools' finder holds the mapping from module to source folder as text.
    for finder in files(site, |n| {
        n.starts_with("__editable__") && n.ends_with(".py")
    }) {
        let Some(text) = small_text(&finder) else {
            continue;
        };
        if let Some(named) = quoted_paths(&text).into_iter().find(|p| back(p)) {
            return Some((finder, named));
        }
    }
    for info in children(site).into_iter().filter(|p| {
        p.extension()
            .is_some_and(|x| x == "dist-info" || x == "egg-info")
    }) {
        let direct = info.join("direct_url.json");
        let Some(text) = small_text(&direct) else {
            continue;
        };
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        let editable = value["dir_info"]["editable"].as_bool().unwrap_or(false);
        let Some(url) = value["url"].as_str() else {
            continue;
        };
        if let Some(path) = url.strip_prefix("file://") {
            let path = PathBuf::from(percent_decoded(path));
            if editable && (back(&path) || path.starts_with(top)) {
                return Some((direct, path));
            }
        }
    }
    None
}

/// Absolute paths written as string literals in a Python file (`'/home/me/app/src/app'`).
fn quoted_paths(text: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for quote in ['\'', '"'] {
        for (i, piece) in text.split(quote).enumerate() {
            if i % 2 == 1 && piece.starts_with('/') && !piece.contains('\n') {
                out.push(PathBuf::from(piece));
            }
        }
    }
    out
}

/// `%20` and the like in a `file://` URL, decoded.
fn percent_decoded(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Links in the first two levels of a `node_modules` (`pkg`, `@scope/pkg`) that resolve into
/// the checkout: workspace packages, `npm link`.
fn node_links(root: &Path, back: &dyn Fn(&Path) -> bool) -> Option<(PathBuf, PathBuf)> {
    let modules = if root.file_name().is_some_and(|n| n == "node_modules") {
        root.to_path_buf()
    } else {
        root.join("node_modules")
    };
    let mut entries: Vec<PathBuf> = Vec::new();
    for e in fs::read_dir(&modules).into_iter().flatten().flatten() {
        let p = e.path();
        let scoped = e.file_name().to_str().is_some_and(|n| n.starts_with('@'));
        if scoped && e.file_type().is_ok_and(|t| t.is_dir()) {
            entries.extend(
                fs::read_dir(&p)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|s| s.path()),
            );
        } else {
            entries.push(p);
        }
    }
    entries.sort();
    entries.into_iter().find_map(|p| {
        let is_link = fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink());
        if is_link && back(&p) {
            let target = p.canonicalize().ok()?;
            Some((p, target))
        } else {
            None
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A checkout with `src/app/__init__.py` and a `.venv` whose site-packages is made by `with`.
    fn venv(with: impl Fn(&Path, &Path)) -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("app");
        fs::create_dir_all(top.join("src/app")).unwrap();
        fs::write(top.join("src/app/__init__.py"), "").unwrap();
        let site = top.join(".venv/lib/python3.12/site-packages");
        fs::create_dir_all(&site).unwrap();
        with(&top, &site);
        (tmp, top)
    }

    #[test]
    fn an_editable_install_of_the_checkout_is_found_in_each_form_pip_writes() {
        // A plain .pth path line (setuptools' compat mode, hatchling, flit).
        let (_t, top) = venv(|top, site| {
            fs::write(
                site.join("_app.pth"),
                format!("{}\n", top.join("src").display()),
            )
            .unwrap();
        });
        let (file, named) = pointing_back(&top.join(".venv"), &top).unwrap();
        assert!(file.ends_with("_app.pth"));
        assert!(named.ends_with("src"));

        // setuptools' strict finder: an import line, and the mapping in the finder module.
        let (_t, top) = venv(|top, site| {
            fs::write(
                site.join("__editable__.app-0.1.pth"),
                "import __editable___app_0_1_finder; __editable___app_0_1_finder.install()\n",
            )
            .unwrap();
            fs::write(
                site.join("__editable___app_0_1_finder.py"),
                format!("MAPPING = {{'app': '{}'}}\n", top.join("src/app").display()),
            )
            .unwrap();
        });
        let (file, _) = pointing_back(&top.join(".venv"), &top).unwrap();
        assert!(file.ends_with("__editable___app_0_1_finder.py"));

        // Only the metadata says it: direct_url.json of an editable install.
        let (_t, top) = venv(|top, site| {
            let info = site.join("app-0.1.dist-info");
            fs::create_dir_all(&info).unwrap();
            fs::write(
                info.join("direct_url.json"),
                format!(
                    r#"{{"url": "file://{}", "dir_info": {{"editable": true}}}}"#,
                    top.display()
                ),
            )
            .unwrap();
        });
        let (file, _) = pointing_back(&top.join(".venv"), &top).unwrap();
        assert!(file.ends_with("direct_url.json"));

        // The legacy form (`setup.py develop`, old pip): an `.egg-link` naming the project,
        // then `.` (the site folder itself, which is not the checkout).
        let (_t, top) = venv(|top, site| {
            fs::write(
                site.join("app.egg-link"),
                format!("{}\n.\n", top.join("src").display()),
            )
            .unwrap();
        });
        let (file, named) = pointing_back(&top.join(".venv"), &top).unwrap();
        assert!(file.ends_with("app.egg-link"));
        assert!(named.ends_with("src"));
    }

    #[test]
    fn dependencies_installed_normally_and_paths_inside_the_venv_are_not_an_editable_install() {
        let (_t, top) = venv(|_, site| {
            fs::create_dir_all(site.join("requests")).unwrap();
            fs::write(site.join("distutils-precedence.pth"), "import os\n").unwrap();
            fs::write(site.join("extra.pth"), "requests\n").unwrap();
            let info = site.join("requests-2.0.dist-info");
            fs::create_dir_all(&info).unwrap();
            fs::write(
                info.join("direct_url.json"),
                r#"{"url": "file:///elsewhere/requests", "dir_info": {}}"#,
            )
            .unwrap();
        });
        assert_eq!(pointing_back(&top.join(".venv"), &top), None);
    }

    #[test]
    fn a_workspace_package_linked_back_into_the_checkout_is_found() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("mono");
        fs::create_dir_all(top.join("packages/core")).unwrap();
        fs::create_dir_all(top.join("node_modules/@app")).unwrap();
        fs::create_dir_all(top.join("node_modules/left-pad")).unwrap();
        std::os::unix::fs::symlink("../../packages/core", top.join("node_modules/@app/core"))
            .unwrap();
        let (file, named) = pointing_back(&top.join("node_modules"), &top).unwrap();
        assert!(file.ends_with("node_modules/@app/core"));
        assert!(named.ends_with("packages/core"));
        fs::remove_file(top.join("node_modules/@app/core")).unwrap();
        assert_eq!(pointing_back(&top.join("node_modules"), &top), None);
    }
}
