#!/usr/bin/env python3
"""Fail on a broken link in the user guide and the top-level docs.

usage: scripts/check-book-links.py BUILT_BOOK_DIR [MARKDOWN_FILE...]

- Every page of the built book (mdbook's HTML output): each relative href/src must name a file
  that exists in the output, and each #anchor an id on the page it points to.
- Each markdown file given (README.md, DESIGN.md, docs/benchmarks.md): each relative link must
  name a file or folder of the repository; an #anchor into a book chapter (docs/book/src/X.md)
  must be an id of its built page, and one into another markdown file must be one of its
  headings (GitHub's anchor rule).

External links (http:, https:, mailto:) are not fetched: CI has no network to prove them with.
Exits 1 listing every broken link, 0 when there is none.
"""

import html.parser
import os
import re
import sys
import urllib.parse

EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids = set()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name"):
                self.ids.add(value)
            if (tag, name) in (("a", "href"), ("link", "href"), ("img", "src"), ("script", "src")):
                self.links.append(value)


def parse_html(path, cache={}):
    if path not in cache:
        page = Page()
        with open(path, encoding="utf-8") as f:
            page.feed(f.read())
        cache[path] = page
    return cache[path]


def github_slug(heading):
    """The anchor GitHub gives a markdown heading."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_anchors(path):
    anchors, fence = set(), False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            elif not fence and line.startswith("#"):
                anchors.add(github_slug(line.lstrip("#")))
    return anchors


def markdown_links(path):
    """(line number, target) of each inline link outside code blocks and code spans."""
    out, fence = [], False
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.startswith("```"):
                fence = not fence
                continue
            if fence:
                continue
            line = re.sub(r"`[^`]*`", "", line)
            for m in re.finditer(r"\]\(([^)\s]+)\)", line):
                out.append((number, m.group(1)))
    return out


def check_book(book):
    broken = []
    for root, _, files in os.walk(book):
        for name in files:
            if not name.endswith(".html"):
                continue
            page_path = os.path.join(root, name)
            page = parse_html(page_path)
            for link in page.links:
                if EXTERNAL.match(link) or link.startswith("//"):
                    continue
                target, _, anchor = link.partition("#")
                target = urllib.parse.unquote(target.split("?")[0])
                if target:
                    dest = os.path.normpath(os.path.join(root, target))
                    if os.path.isdir(dest):
                        dest = os.path.join(dest, "index.html")
                else:
                    dest = page_path
                where = os.path.relpath(page_path, book)
                if not os.path.exists(dest):
                    broken.append(f"{where}: {link}: no such file")
                elif anchor and dest.endswith(".html"):
                    if urllib.parse.unquote(anchor) not in parse_html(dest).ids:
                        broken.append(f"{where}: {link}: no such anchor")
    return broken


def check_markdown(path, book, repo):
    broken = []
    book_src = os.path.join(repo, "docs", "book", "src")
    for number, link in markdown_links(path):
        if EXTERNAL.match(link):
            continue
        target, _, anchor = link.partition("#")
        target = urllib.parse.unquote(target)
        dest = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
        where = f"{os.path.relpath(path, repo)}:{number}"
        if not os.path.exists(dest):
            broken.append(f"{where}: {link}: no such file")
            continue
        if not anchor:
            continue
        if os.path.commonpath([dest, book_src]) == book_src and dest.endswith(".md"):
            page = os.path.join(book, os.path.relpath(dest, book_src))[: -len(".md")] + ".html"
            ids = parse_html(page).ids if os.path.exists(page) else set()
        elif dest.endswith(".md"):
            ids = markdown_anchors(dest)
        else:
            ids = set()
        if anchor not in ids:
            broken.append(f"{where}: {link}: no such anchor")
    return broken


def main():
    if len(sys.argv) < 2 or not os.path.isdir(sys.argv[1]):
        sys.exit("usage: check-book-links.py BUILT_BOOK_DIR [MARKDOWN_FILE...]")
    book = os.path.abspath(sys.argv[1])
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
    pages = sum(len([f for f in fs if f.endswith(".html")]) for _, _, fs in os.walk(book))
    if pages == 0:
        sys.exit(f"{book}: no HTML pages: build the book first (mdbook build docs/book)")
    broken = check_book(book)
    for md in sys.argv[2:]:
        broken += check_markdown(os.path.abspath(md), book, repo)
    for line in broken:
        print(f"broken link: {line}")
    if broken:
        sys.exit(1)
    print(f"links: {pages} pages and {len(sys.argv) - 2} markdown files checked, none broken")


if __name__ == "__main__":
    main()
