"""The HTML loader keeps a page's headings and prose and drops scripts, styles and navigation."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag import ingest_paths, load_document, query
from rag.loaders import DocumentError, html_to_text

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Heat exchangers &mdash; Plant manual</title>
<style>body { color: red; } .secret { display: none }</style>
<script>var tracking = "SCRIPT-TEXT"; document.write("<p>injected</p>");</script></head>
<body>
<header><a href="/">HEADER-LINK Home</a></header>
<nav class="menu"><ul><li><a href="a.html">NAV-ITEM Previous</a></li><li>NAV-ITEM Next</li></ul></nav>
<div class="related" role="navigation">RELATED-BAR index | modules</div>
<div class="sphinxsidebar">SIDEBAR-TEXT Quick search</div>
<div class="body" role="main">
<h1>Heat exchangers<a class="headerlink" href="#h">&para;</a></h1>
<p>A shell-and-tube exchanger passes one fluid through tubes
   and the other around them.
<p>Fouling lowers the <em>heat transfer</em> coefficient &amp; raises pressure drop.</p>
<h2>Cleaning</h2>
<ul><li><p>Chemical cleaning dissolves scale.</p></li><li>Mechanical cleaning uses brushes.</li></ul>
<dl><dt>Fouling factor</dt><dd>The added thermal resistance of deposits.</dd></dl>
<table><tr><th>Fluid</th><th>Factor</th></tr><tr><td>Sea water</td><td>0.0001</td></tr></table>
<pre>clean(tube)
    rinse(tube)</pre>
<span hidden>HIDDEN-TEXT</span><br>
<p>Unclosed <b>bold text at the end
</div>
<footer>FOOTER-TEXT Copyright</footer>
</body></html>
"""

CHROME = (
    "SCRIPT-TEXT",
    "injected",
    "color: red",
    "HEADER-LINK",
    "NAV-ITEM",
    "RELATED-BAR",
    "SIDEBAR-TEXT",
    "FOOTER-TEXT",
    "HIDDEN-TEXT",
    "\u00b6",
)


def test_html_keeps_headings_paragraphs_lists_tables_and_code_and_drops_page_chrome():
    text = html_to_text(PAGE)
    lines = text.splitlines()
    assert lines[0] == "# Heat exchangers"
    assert "## Cleaning" in lines
    # Hard-wrapped source text becomes one line per paragraph; entities are decoded.
    assert "A shell-and-tube exchanger passes one fluid through tubes and the other around them." in lines
    assert "Fouling lowers the heat transfer coefficient & raises pressure drop." in lines
    assert "- Chemical cleaning dissolves scale." in lines and "- Mechanical cleaning uses brushes." in lines
    assert "Fouling factor" in lines and "The added thermal resistance of deposits." in lines
    assert "Fluid | Factor" in lines and "Sea water | 0.0001" in lines
    assert "clean(tube)" in lines and "    rinse(tube)" in lines  # preformatted text keeps its indentation
    # ... inside a code fence, so that it stays one code block apart from the prose
    at = lines.index("clean(tube)")
    assert lines[at - 1] == "```" and lines[at + 2] == "```", lines[at - 2 : at + 4]
    assert "Unclosed bold text at the end" in lines
    for chrome in CHROME:
        assert chrome not in text, chrome
    # Paragraphs are separated by a blank line, so the chunker and the judges see them apart.
    assert "\n\n## Cleaning\n\n" in text


def test_a_page_without_a_main_landmark_keeps_its_body_and_uses_the_title():
    text = html_to_text(
        "<html><head><title>Pumps</title></head><body><nav>menu</nav><p>Centrifugal pumps add head.</p></body></html>"
    )
    assert text.splitlines()[0] == "# Pumps"
    assert "Centrifugal pumps add head." in text and "menu" not in text


def test_html_files_load_ingest_and_retrieve(tmp_path, store):
    docs = tmp_path / "site"
    docs.mkdir()
    (docs / "exchangers.html").write_text(PAGE, encoding="utf-8")
    (docs / "pumps.htm").write_bytes("<p>Pumps \u2014 centrifugal impellers add head to water.</p>".encode("cp1252"))
    loaded = load_document(docs / "exchangers.html")
    assert loaded.kind == "html" and loaded.text.startswith("# Heat exchangers")
    assert "centrifugal impellers" in load_document(docs / "pumps.htm").text  # cp1252 decoded
    report = ingest_paths(store, docs)
    assert sorted(Path(p).name for p in report.ingested) == ["exchangers.html", "pumps.htm"]
    hits = query(store, "fouling factor thermal resistance of deposits", top_k=1)
    assert hits[0].source == "exchangers.html" and "SIDEBAR" not in hits[0].text


def test_a_texinfo_manuals_navigation_panels_are_left_out():
    # GNU Texinfo's HTML (libffi's manual in Debian): each page opens and ends on a navigation
    # panel, which otherwise became the "opening words" of a reference.
    nav = (
        'Next: <a href="Closure-Example.html" rel="next">Closure Example</a>, Previous: '
        '<a href="Multiple-ABIs.html" rel="prev">Multiple ABIs</a>, Up: <a href="Using-libffi.html">Using libffi</a>'
    )
    page = (
        f'<body><div class="section" id="x"><div class="header"><p>{nav}</p></div>'
        '<h3 class="section">2.4 The Closure API</h3><p>libffi also provides a way to write a generic function.</p>'
        f'<hr><div class="nav-panel"><p>{nav}</p></div></div></body>'
    )
    text = html_to_text(page)
    assert "Next:" not in text and "Multiple ABIs" not in text
    assert text.splitlines()[0] == "### 2.4 The Closure API"
    assert "libffi also provides a way to write a generic function." in text


def test_an_api_entrys_signature_is_a_heading_below_its_section_and_a_members_a_line_of_it():
    # Sphinx marks each function, class and attribute of a reference page <dt class="sig ...">:
    # those are the page's parts, as a Markdown reference's "## `name(args)`" headings are.
    page = (
        '<body><div role="main"><h1>glob \u2014 Unix style pathname pattern expansion</h1>'
        "<p>The glob module finds all the pathnames matching a specified pattern.</p>"
        '<dl class="py function"><dt class="sig sig-object py" id="glob.glob">'
        '<span class="sig-prename descclassname">glob.</span><span class="sig-name descname">glob</span>'
        '<span class="sig-paren">(</span><em class="sig-param">pathname</em>, <em>*</em>, '
        '<em class="sig-param">recursive=False</em><span class="sig-paren">)</span>'
        '<a class="headerlink" href="#glob.glob">\u00b6</a></dt>'
        "<dd><p>Return a possibly empty list of path names that match pathname.</p></dd></dl>"
        '<dl class="py class"><dt class="sig sig-object py" id="glob.Finder">'
        '<em class="property">class </em><span class="sig-name descname">glob.Finder</span></dt>'
        '<dd><p>Finds paths.</p><dl class="py method"><dt class="sig sig-object py" id="glob.Finder.find">'
        '<span class="sig-name descname">find</span>()</dt><dd><p>Finds them.</p></dd></dl></dd></dl>'
        '<h2>Finder objects</h2><dl class="py attribute"><dt class="sig sig-object py" id="glob.Finder.root">'
        '<span class="sig-name descname">root</span></dt><dd><p>Where it starts.</p></dd></dl>'
        "<dl><dt>pattern</dt><dd>A glossary term, not an API entry.</dd></dl>"
        "</div></body>"
    )
    lines = html_to_text(page).splitlines()
    assert "## `glob.glob(pathname, *, recursive=False)`" in lines, lines
    assert "## `glob.Finder`" in lines, "the keyword before the name is left out"
    # A member is what its class's entry says, under its qualified name, not a part of its own:
    # inside the class's description, or in a section of its own after the class.
    assert "`glob.Finder.find()`" in lines and "`glob.Finder.root`" in lines, lines
    assert "## Finder objects" in lines and not any(line.startswith("#") and "Finder." in line for line in lines)
    assert "Return a possibly empty list of path names that match pathname." in lines
    assert "pattern" in lines and not any(line.startswith("#") and line.endswith("pattern`") for line in lines)


def test_html_with_only_chrome_is_rejected_with_a_reason(tmp_path):
    page = tmp_path / "empty.html"
    page.write_text("<html><head><script>x=1</script></head><body><nav>Home</nav></body></html>")
    with pytest.raises(DocumentError, match="no readable text in the HTML"):
        load_document(page)


@pytest.mark.skipif(
    not Path("/usr/share/doc/python3/html/library/json.html").is_file(),
    reason="Debian's python3-doc is not installed (make system-deps installs it)",
)
def test_real_sphinx_page_from_python3_doc():
    text = load_document("/usr/share/doc/python3/html/library/json.html").text
    assert text.startswith("# json") and "## Basic Usage" in text
    assert "Quick search" not in text and "Navigation" not in text and "\u00b6" not in text
    assert "Serialize obj as a JSON formatted stream to fp" in text
    assert any(line.startswith("### `json.dump(obj, fp,") for line in text.splitlines()), "an API entry is a heading"
