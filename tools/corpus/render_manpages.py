"""Render the man pages installed by Debian packages to plain UTF-8 text, one record per page.

Invariant: each page appears once (symlinked and `.so` alias files are dropped; the page they
point at carries their names in its NAME line), and rendering depends only on the page source
and groff, so the same packages give the same text.
"""
import dataclasses
import gzip
import os
import re
import subprocess

# groff options: tables on, no hyphenation, 78 columns, and plain text without overstrike or SGR.
# The preamble turns off justification once .TH has run (groff 1.22's man macros have no switch
# for it); justified text fills lines with doubled spaces that only waste model capacity.
GROFF_CMD = ["groff", "-t", "-man", "-Tutf8", "-rLL=78n", "-rHY=0", "-P-cbou"]
GROFF_PREAMBLE = b".am TH\n.  na\n..\n"

_MAN_FILE = re.compile(r"^/usr/share/man/man[0-9]/(?P<name>[^/]+)\.(?P<section>[0-9][a-z]*)\.gz$")
_SPDX = re.compile(rb"SPDX-License-Identifier:\s*([A-Za-z0-9.+-]+)")
# Older pages mark their licence with man-pages' own tags instead of an SPDX identifier.
_LICENSE_TAG = re.compile(rb"%%%LICENSE_START\(([A-Za-z0-9_]+)\)")
_SO_LINE = re.compile(rb"^\.so\s", re.MULTILINE)


@dataclasses.dataclass
class ManPage:
    package: str
    name: str          # file name without section, e.g. "mmap"
    section: str       # e.g. "2", "3type"
    path: str
    license: str       # SPDX id or man-pages licence tag from the source, "unknown" if absent
    text: str          # rendered plain text, header and footer lines removed

    @property
    def page_id(self):
        return f"{self.name}.{self.section}"


def package_man_files(package):
    """Real (non-symlink) English man page files of an installed Debian package, sorted."""
    result = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"package '{package}' is not installed (dpkg -L failed): "
                           f"{result.stderr.strip()}")
    files = []
    for path in result.stdout.splitlines():
        if _MAN_FILE.match(path) and not os.path.islink(path):
            files.append(path)
    return sorted(files)


def _clean_render(raw):
    """Strip the running header/footer and collapse blank-line runs to one blank line."""
    lines = [line.rstrip() for line in raw.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    # First line: "mmap(2)   System Calls Manual   mmap(2)"; last: "Linux man-pages 6.03 ...".
    if len(lines) >= 2:
        lines = lines[1:-1]
    out = []
    for line in lines:
        if not line and (not out or not out[-1]):
            continue
        out.append(line)
    return "\n".join(out).strip("\n") + "\n"


def render_page(package, path):
    """Render one man page file; returns None for a `.so` alias page."""
    with gzip.open(path, "rb") as f:
        source = f.read()
    if _SO_LINE.search(source[:400]) and len(source) < 400:
        return None
    match = _MAN_FILE.match(path)
    result = subprocess.run(GROFF_CMD, input=GROFF_PREAMBLE + source, capture_output=True)
    if result.returncode != 0:
        raise RuntimeError(f"groff failed on {path}: {result.stderr.decode(errors='replace')}")
    license_match = _SPDX.search(source) or _LICENSE_TAG.search(source)
    return ManPage(
        package=package,
        name=match.group("name"),
        section=match.group("section"),
        path=path,
        license=license_match.group(1).decode() if license_match else "unknown",
        text=_clean_render(result.stdout.decode("utf-8")),
    )


def render_packages(packages):
    """All pages of the given packages, sorted by page id; duplicates by page id are dropped."""
    pages = {}
    for package in packages:
        for path in package_man_files(package):
            page = render_page(package, path)
            if page is not None and page.page_id not in pages:
                pages[page.page_id] = page
    return [pages[key] for key in sorted(pages)]
