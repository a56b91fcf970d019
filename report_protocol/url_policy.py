"""The credential policy for URLs, shared by every layer and entry point.

A URL is written to configs, checkpoints, logs and traces, so it must not carry a
secret: a ``user:password@`` part, or a query parameter whose name says it holds a key,
token or signature (``?key=``, ``api_key=``, ``access_token=``, ``sig=``,
``X-Amz-Signature=``, ...). API keys go in environment variables instead.
Standard library only; ``agents_llm.redaction`` builds its redaction on these patterns.
"""

from __future__ import annotations

import re
from typing import Optional

URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s'\"]+@")
# Query parameters that carry credentials (API keys, OAuth tokens, signed-URL signatures).
QUERY_SECRET_NAMES = (
    r"(?:api[_-]?)?key|apikey|access[_-]?key|(?:access|auth|id|refresh|session)?[_-]?token|sig|signature|"
    r"x-amz-signature|x-amz-credential|x-amz-security-token|x-goog-signature|x-goog-credential|secret|"
    r"client[_-]?secret|password|passwd|pwd|auth|authorization|credentials?"
)
URL_QUERY_SECRET = re.compile(
    rf"(?i)(\b[a-z][a-z0-9+.-]*://[^\s?#'\"]*\?(?:[^\s#'\"]*?[&;])?)({QUERY_SECRET_NAMES})=([^&;#\s'\"]+)"
)
QUERY_SECRET = re.compile(rf"(?i)([?&;](?:{QUERY_SECRET_NAMES})=)[^&;#\s'\"]+")


def url_userinfo(text: str) -> bool:
    """True when `text` holds a URL with credentials (`scheme://user[:password]@host`)."""
    return bool(URL_USERINFO.search(text))


def url_query_secret(text: str) -> Optional[str]:
    """The name of a secret-looking query parameter of a URL in `text`, or None."""
    m = URL_QUERY_SECRET.search(text)
    return m.group(2) if m else None


def url_credential_problem(text: str) -> Optional[str]:
    """What credential a URL in `text` carries ("a user:password@ part", "a secret-looking
    query parameter 'key'"), or None when it carries none."""
    if url_userinfo(text):
        return "a user:password@ part"
    name = url_query_secret(text)
    return f"a secret-looking query parameter {name!r}" if name else None
