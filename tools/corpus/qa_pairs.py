"""Deterministic question/answer pairs built from rendered man pages (NAME, SYNOPSIS, section).

Invariant: every question text maps to exactly one answer; a name that would give the same
question on two pages is disambiguated as `name(section)` on all of them.
"""
import collections
import dataclasses
import re

SECTION_TITLES = {
    "1": "User Commands", "2": "System Calls", "3": "Library Functions", "4": "Special Files",
    "5": "File Formats", "6": "Games", "7": "Miscellaneous", "8": "System Administration",
}
# Pages of these sections describe callable things; the others describe files and concepts.
_CALLABLE_SECTIONS = {"1", "2", "3", "8"}
_HEADING = re.compile(r"^[A-Z][A-Z0-9 ]+$")
_INCLUDE = re.compile(r"^#include\s+(<[^>]+>)")
_MAX_HEADERS = 3
_MAX_PROTOTYPE_CHARS = 160


@dataclasses.dataclass(frozen=True)
class QaPair:
    question: str
    answer: str
    form: str      # "name", "header", "section" or "prototype"
    page_id: str

    def render(self):
        """Plain training text of the pair; the prompt is everything up to and including 'A:'."""
        return f"Q: {self.question}\nA: {self.answer}\n"


def split_sections(text):
    """Map heading -> body text (lines dedented by their common indent) of a rendered page."""
    sections = collections.OrderedDict()
    current = None
    for line in text.split("\n"):
        if _HEADING.match(line):
            current = line.strip()
            sections.setdefault(current, [])
        elif current is not None:
            sections[current].append(line)
    return {key: "\n".join(lines).strip("\n") for key, lines in sections.items()}


def _collapse(text):
    return " ".join(text.split())


def parse_name_line(sections):
    """('mmap, munmap - map or unmap ...', ['mmap', 'munmap']) or None when malformed."""
    body = sections.get("NAME")
    if not body:
        return None
    line = _collapse(body)
    if " - " not in line:
        return None
    names_part = line.split(" - ", 1)[0]
    names = [n.strip() for n in names_part.split(",") if n.strip()]
    if not names or any(" " in n for n in names):
        return None
    return line, names


def parse_includes(sections):
    """Headers named by '#include <...>' lines of the SYNOPSIS, in order, without repeats."""
    headers = []
    for line in sections.get("SYNOPSIS", "").split("\n"):
        match = _INCLUDE.match(line.strip())
        if match and match.group(1) not in headers:
            headers.append(match.group(1))
    return headers


def parse_prototypes(sections):
    """Map function name -> one-line C declaration from the SYNOPSIS (first declaration wins)."""
    lines = []
    for line in sections.get("SYNOPSIS", "").split("\n"):
        stripped = line.strip()
        if stripped.startswith("#") or stripped.startswith("/*"):
            continue
        lines.append(stripped)
    prototypes = {}
    for statement in " ".join(lines).split(";"):
        statement = _collapse(statement)
        match = re.match(r"^[A-Za-z_][\w\s\*\[\]]*?\**\b([A-Za-z_]\w*)\s*\(", statement)
        if match and match.group(1) not in prototypes:
            prototypes[match.group(1)] = statement + ";"
    return prototypes


def _page_pairs(page):
    """All candidate pairs of one page; question text may still collide with other pages."""
    sections = split_sections(page.text)
    parsed = parse_name_line(sections)
    if parsed is None:
        return []
    name_line, names = parsed
    base_section = page.section[0]
    callable_page = page.section in _CALLABLE_SECTIONS
    headers = parse_includes(sections) if base_section in ("2", "3") else []
    prototypes = parse_prototypes(sections) if base_section in ("2", "3") else {}
    title = SECTION_TITLES.get(base_section, "Unknown")
    pairs = []
    for name in names:
        what = "What does {} do?" if callable_page else "What is {}?"
        pairs.append(("name", what, name, name_line))
        pairs.append(("section", "What section is {} in?", name,
                      f"section {page.section} ({title})"))
        if headers and len(headers) <= _MAX_HEADERS and name in prototypes:
            pairs.append(("header", "Which header declares {}?", name, " ".join(headers)))
        proto = prototypes.get(name)
        if proto and len(proto) <= _MAX_PROTOTYPE_CHARS:
            pairs.append(("prototype", "What is the prototype of {}?", name, proto))
    return pairs


def build_qa_pairs(pages):
    """Q/A pairs of all pages, sorted by page then generation order; collisions disambiguated."""
    raw = []
    for page in pages:
        for form, template, name, answer in _page_pairs(page):
            raw.append((page, form, template, name, answer))
    plain_count = collections.Counter(template.format(name) for _, _, template, name, _ in raw)
    pairs, seen = [], set()
    for page, form, template, name, answer in raw:
        question = template.format(name)
        if plain_count[question] > 1:
            question = template.format(f"{name}({page.section})")
        if question in seen:  # a name listed twice on the same page
            continue
        seen.add(question)
        pairs.append(QaPair(question, answer, form, page.page_id))
    return pairs
