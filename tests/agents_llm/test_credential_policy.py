"""The one credential policy (report_protocol.url_policy) and the redaction of keys in use."""

import pytest

from agents_llm.redaction import credential_problem, redact, redact_text, register_secret
from report_protocol.url_policy import url_credential_problem


@pytest.mark.parametrize(
    "url, problem",
    [
        ("http://u:p@h:8000/v1", "a user:password@ part"),
        ("http://h:8000/v1?key=abc123", "a secret-looking query parameter 'key'"),
        ("https://h/v1?model=m&api_key=abc123", "a secret-looking query parameter 'api_key'"),
        ("https://h/v1?access_token=abc", "a secret-looking query parameter 'access_token'"),
        ("https://h/blob?se=2030&sig=abc%2F", "a secret-looking query parameter 'sig'"),
        ("https://s3/b?X-Amz-Signature=abcd", "a secret-looking query parameter 'X-Amz-Signature'"),
        ("http://h:8000/v1", None),
        ("https://h/search?q=keyboard&page=2", None),
        ("the key=value pair, in prose", None),
    ],
)
def test_url_credentials_are_recognised_and_only_they(url, problem):
    assert url_credential_problem(url) == problem
    if problem:
        assert "abc" not in credential_problem(url) and "[REDACTED]" in credential_problem(url)


def test_a_registered_key_is_redacted_whatever_its_variable_is_called():
    value = "vQ7-registered-9917"
    text = f"server said: no model for {value}"
    assert value in redact_text(text)  # nothing about it looks like a secret...
    register_secret(value)
    assert value not in redact_text(text)  # ...until it is the key in use
    assert redact({"trace": [text]}) == {"trace": ["server said: no model for [REDACTED]"]}
    register_secret("abc")  # too short to scrub from prose without mangling it
    assert redact_text("abcdef") == "abcdef"


def test_query_secrets_in_logged_urls_are_redacted():
    line = "HTTP Request: POST http://h/v1/chat?model=m&key=Zx81abc99 HTTP/1.1 200"
    assert redact_text(line) == "HTTP Request: POST http://h/v1/chat?model=m&key=[REDACTED] HTTP/1.1 200"
