"""The readable text of an HTML page as Markdown-ish lines: headings and list items
marked, page chrome (scripts, navigation, sidebars, forms) left out, the main content
alone when the page marks it. `rag.loaders.load_html` cleans and checks what this gives."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import List, Optional

# Elements whose text is never document content: code that runs, page chrome, forms.
_HTML_SKIP_TAGS = frozenset(
    "script style noscript template nav header footer aside form button select "
    "svg canvas iframe object embed head".split()
)
# Landmark roles and class names of page chrome (Sphinx, MkDocs and most site themes use these;
# GNU Texinfo's manuals put "Next: ..., Previous: ..., Up: ..." in a div of class header, or
# nav-panel since Texinfo 7).
_HTML_SKIP_ROLES = frozenset("navigation search banner contentinfo complementary".split())
_HTML_SKIP_CLASSES = frozenset(
    "sphinxsidebar related footer header nav-panel headerlink breadcrumb breadcrumbs navbar sidebar toc "
    "skip-link".split()
)
_HTML_VOID_TAGS = frozenset("area base br col embed hr img input link meta param source track wbr".split())
# Elements that end a line of text; headings and list items get Markdown marks.
_HTML_BLOCK_TAGS = frozenset(
    "p div section article main li dt dd pre blockquote table tr ul ol dl figure "
    "figcaption caption h1 h2 h3 h4 h5 h6 br hr body".split()
)
_HTML_HEADINGS = {f"h{n}": n for n in range(1, 7)}
# An API entry's signature (Sphinx marks it <dt class="sig ...">; Python's and most Sphinx
# projects' reference pages are lists of them): the page's headings for its functions, classes
# and constants, one level below their section, so a report can plan a section per entry as it
# does for a Markdown reference's "## `querystring.parse(str)`". A member's signature (a method
# or attribute, inside its class's entry or named under it) is a line of text, not a heading: the
# class is the part, its members are what it says. The keyword before the name ("class",
# "async") is left out.
_SIGNATURE_CLASS = "sig"
_SIGNATURE_KEYWORD_CLASS = "property"


def qualified_signature(text: str, anchor: str) -> str:
    """A member's signature under its qualified name: Sphinx shows a method as "wrap(text)" below
    its class, and its anchor is "textwrap.TextWrapper.wrap"; in the text it is
    "textwrap.TextWrapper.wrap(text)", apart from the module function "textwrap.wrap(text)"."""
    name = text.split("(", 1)[0].strip()
    if name and anchor != name and anchor.endswith("." + name) and " " not in name:
        return anchor + text.strip()[len(name) :]
    return text


class _HTMLText(HTMLParser):
    """Collects the readable text of a page as Markdown-ish lines.

    Keeps headings (as `#` lines), paragraphs, list items, definition lists, tables (cells
    joined by ` | `) and preformatted blocks; drops scripts, styles, navigation and other
    page chrome. When the page marks its main content (`<main>` or `role="main"`), only
    that is kept. Tolerates unclosed tags: an end tag closes everything opened after its
    matching start tag.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: List[tuple[str, bool, bool]] = []  # (tag, skipped, is main content)
        self.lines: List[str] = []
        self.main_lines: Optional[List[str]] = None  # lines inside the main-content element
        self.current: List[str] = []
        self.title: List[str] = []
        self.in_title = False
        self.pre_depth = 0
        self.heading: Optional[int] = None
        self.section_level = 1  # the level of the last <hN> opened: an API entry sits below it
        self.signature = False  # inside an API entry's signature (<dt class="sig">)
        self.signature_id = ""  # its anchor: Sphinx's fully qualified name ("textwrap.TextWrapper.wrap")
        self.entry_lists: List[int] = []  # stack places of the open <dl>s that hold API entries
        self.entry_anchors: set[str] = set()  # the anchors of the entries seen so far
        self.cell_count = 0

    # state helpers
    def _skipping(self) -> bool:
        return any(skipped for _, skipped, _ in self.stack)

    def _in_main(self) -> bool:
        return any(main for _, _, main in self.stack)

    def _end_line(self) -> None:
        text = "".join(self.current)
        if text.strip() == "-":
            return  # a list item's mark waits for the item's first paragraph
        self.current = []
        text = text if self.pre_depth else " ".join(text.split())
        if not text.strip():
            return
        if self.signature:  # a name and its arguments: code, which may open in lower case
            text = "`" + qualified_signature(text.strip().replace("`", ""), self.signature_id) + "`"
        if self.heading:
            text = "#" * self.heading + " " + text.strip()
        for target in (self.lines, self.main_lines if self._in_main() else None):
            if target is not None:
                target.append(text)

    def _fence(self) -> None:
        """A code fence line around a preformatted block: its lines stay code, apart from the prose,
        for every reader of the text (sentences, headings: a '# comment' in it is none)."""
        for target in (self.lines, self.main_lines if self._in_main() else None):
            if target is not None:
                target.append("```")

    def _paragraph_break(self) -> None:
        self._end_line()
        if self.current:
            return  # inside a list item that has not started yet
        for target in (self.lines, self.main_lines if self._in_main() else None):
            if target is not None and target and target[-1] != "":
                target.append("")

    # parser callbacks
    def handle_starttag(self, tag: str, attrs) -> None:
        attributes = dict(attrs)
        if tag == "title":
            self.in_title = True
        if tag in _HTML_VOID_TAGS:
            if tag in ("br", "hr") and not self._skipping():
                self._end_line()
            return
        classes = set((attributes.get("class") or "").split())
        role = (attributes.get("role") or "").lower()
        skipped = (
            tag in _HTML_SKIP_TAGS
            or role in _HTML_SKIP_ROLES
            or bool(classes & _HTML_SKIP_CLASSES)
            or attributes.get("aria-hidden") == "true"
            or "hidden" in attributes
            or (self.signature and _SIGNATURE_KEYWORD_CLASS in classes)
        )
        signature = tag == "dt" and _SIGNATURE_CLASS in classes and not self.signature
        is_main = tag == "main" or role == "main"
        if is_main and self.main_lines is None:
            self.main_lines = []
        if not self._skipping() and tag in _HTML_BLOCK_TAGS:
            self._paragraph_break() if tag in (
                "p",
                "pre",
                "table",
                "ul",
                "ol",
                "dl",
                "blockquote",
            ) or tag in _HTML_HEADINGS or signature else self._end_line()
        self.stack.append((tag, skipped, is_main))
        if self._skipping():
            return
        if tag in _HTML_HEADINGS:
            self.heading = self.section_level = _HTML_HEADINGS[tag]
        elif signature:
            self.signature = True
            self.signature_id = attributes.get("id") or ""
            lists = [i for i, (open_tag, _, _) in enumerate(self.stack) if open_tag == "dl"]
            own_list = lists[-1] if lists else -1
            # A member: inside another entry's description, or named under one ("shlex.shlex.get_token"
            # after the class "shlex.shlex", where a page lists a class's methods in a section of their own).
            owner = self.signature_id.rpartition(".")[0]
            member = any(i < own_list for i in self.entry_lists) or owner in self.entry_anchors
            if self.signature_id:
                self.entry_anchors.add(self.signature_id)
            if own_list >= 0 and own_list not in self.entry_lists:
                self.entry_lists.append(own_list)
            self.heading = None if member else min(6, self.section_level + 1)
        elif tag == "li":
            self.current.append("- ")
        elif tag == "pre":
            if not self._skipping() and self.pre_depth == 0:
                self._fence()
            self.pre_depth += 1
        elif tag == "tr":
            self.cell_count = 0
        elif tag in ("td", "th"):
            if self.cell_count:
                self.current.append(" | ")
            self.cell_count += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self.in_title = False
        if tag in _HTML_VOID_TAGS or not any(open_tag == tag for open_tag, _, _ in self.stack):
            return  # a stray end tag closes nothing
        while self.stack:
            open_tag, _, _ = self.stack[-1]
            skipping = self._skipping()
            ends_signature = open_tag == "dt" and self.signature
            if not skipping and open_tag in _HTML_BLOCK_TAGS:
                # a <pre> ends below
                self._paragraph_break() if open_tag in _HTML_HEADINGS or ends_signature else self._end_line()
            if not skipping and (open_tag in _HTML_HEADINGS or ends_signature):
                self.heading = None
                self.signature = False
            if not skipping and open_tag == "pre":
                self.pre_depth = max(0, self.pre_depth - 1)
                if self.pre_depth == 0:
                    self._fence()
                self._paragraph_break()
            self.stack.pop()
            self.entry_lists = [i for i in self.entry_lists if i < len(self.stack)]
            if open_tag == tag:
                break

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        if self._skipping() or not any(True for _ in self.stack):
            return
        if self.pre_depth:
            for i, part in enumerate(data.split("\n")):
                if i:
                    self._end_line()
                self.current.append(part)
        else:
            self.current.append(data)

    def text(self) -> str:
        self._end_line()
        lines = self.main_lines if self.main_lines else self.lines
        title = " ".join("".join(self.title).split())
        if title and not any(line.startswith("# ") for line in lines):
            lines = [f"# {title}", ""] + lines
        return "\n".join(lines).strip() + "\n"


def readable_text(html: str) -> str:
    """The page's readable text (see _HTMLText for what is kept), not yet cleaned."""
    parser = _HTMLText()
    parser.feed(html)
    parser.close()
    return parser.text()
