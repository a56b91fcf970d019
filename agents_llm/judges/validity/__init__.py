"""The judge validity suite: good reports and named degradations of them.

A score is worth learning from only if it orders reports as a reader would. This
package holds, per topic of the default corpus (`reports/<task_id>.json`), a good,
sourced, multi-section report written by hand: every claim is taken from the passage
it cites, and each passage is verbatim text of the `python_stdlib` corpus (a test
checks that it occurs there). Each file also holds one more good section
(`extra_section`) for the "a good append raises the score" check.

Twelve topics: six whose reports use the topic's own words, and six (archives,
context-managers, csv, hashing-secrets, serialization, url-parsing) whose topics name
things in a form the report does not use ("Parsing and quoting URLs" / parse, parser,
quoted; "Reading and writing CSV files" / readers, writers; "Compressing and archiving" /
compression, archive), as a writer would: a judge that counts spellings instead of
words fails them.

`DEGRADATIONS` turns a good report into worse ones; each is a named, documented,
deterministic transformation. Besides the twelve of issue 11 it holds what real small-model
runs wrote: `code_markup` (code and HTML/XML/JSON/shell in six styles, quoting the cited
chunk), `echo_headings` (good text under our own instructions as titles) and
`echo_rephrased` (our instructions restated as the team's plan); the echoes are read from
the prompt modules, so a rewording of the prompts carries over. And what the default
training run's final report did: `off_topic_appended` (grounded sections about another
topic after the good ones), `inside_other_report` (the good sections interleaved with
another topic's), `junk_headings` (good text under titles that say nothing), plus
`first_sentence` (a prefix shorter than the first paragraph). A valid judge scores the
good report above every degradation on every topic, scores junk (`JUNK`) near zero,
never scores a prefix of the good report (`prefixes_of`: cut after each paragraph) above
the whole, and moves up when a good section is appended and down when a section is
duplicated. `score_suite` and `violations` run those checks and return the figures
(tests/agents_llm/judges/test_validity.py asserts them, experiments/protocol/bench_judge.py prints
them per judge).

The held-out part (`load_heldout_reports`, `heldout/`): six topics far from the corpus, with
sources and reports written by hand from the report format alone before the judge's rules were
read; the same degradations and checks run on them, and nothing is tuned on them. A second
held-out part (`load_heldout_2_reports`, `heldout_2/`), six more such topics, was committed
before any judge scored it.

The package is the suite's public face; its parts: `reports` (the good reports),
`degradations` (what turns them into worse ones), `suite` (the scores and the checks).
"""

from __future__ import annotations

from .degradations import (  # noqa: F401 (re-exported: every degradation by name)
    CODE_STYLES,
    DEGRADATIONS,
    Degradation,
    ECHO_FRAMES,
    ECHO_TEMPLATE,
    FILLER,
    JUNK,
    JUNK_TITLES,
    STOCK_SENTENCE,
    citations_removed,
    code_block,
    code_markup,
    contradicted_facts,
    filler_appended,
    outline_only,
    shuffled_copy,
    echo_headings,
    echo_rephrased,
    empty,
    first_paragraph,
    first_sentence,
    headings_only,
    inside_other_report,
    instruction_sentences,
    junk_headings,
    off_topic,
    off_topic_appended,
    padded,
    prompt_echo,
    sections_duplicated,
    sentences_repeated,
    shuffled_headings,
    stock_sentence,
    wrong_citations,
)
from .reports import (  # noqa: F401
    HELDOUT_2_FOLDER,
    HELDOUT_3_FOLDER,
    HELDOUT_4_FOLDER,
    HELDOUT_FOLDER,
    REPORTS_PACKAGE,
    GoodReport,
    GoodSection,
    load_good_reports,
    load_heldout_2_reports,
    load_heldout_3_reports,
    load_heldout_4_reports,
    load_heldout_reports,
)
from .suite import (  # noqa: F401
    BLIND_SPOTS,
    JUNK_CEILING,
    TopicScores,
    other_report,
    prefixes_of,
    score_suite,
    violations,
)
