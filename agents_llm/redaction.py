"""The one redaction used wherever a config, a trace or an error is written.

`redact(value)` deep-copies a config/trace value with secrets replaced by
'[REDACTED]'; `redact_text(text)` scrubs one string. What counts as a secret:

* values under keys that name secrets (api_key, authorization, token, password,
  secret, ...); a key ending in `_env` names a variable, not a secret, and is kept;
* credentials in URLs (`scheme://user:password@host` keeps scheme and host);
* header echoes (`Authorization: Basic ...`, `"authorization": "Bearer ..."`);
* bearer tokens, `sk-...`/`ghp_...`-style keys, AWS access key ids;
* `password: ...`, `api_key=...`, `credential ...` phrases (after a space only when the
  value looks like a secret: it holds a digit or a symbol, so prose such as
  "password hashing" stays readable);
* the values of environment variables whose names say KEY/TOKEN/SECRET/PASSWORD/
  CREDENTIAL (8 characters or more).
"""

from __future__ import annotations

import os
import re
from typing import Any

REDACTED = "[REDACTED]"

_SECRET_KEY = re.compile(
    r"(api[_-]?key|authorization|auth[_-]?token|access[_-]?token|bearer|password|passwd|"
    r"secret|credential|^token$|_token$)",
    re.IGNORECASE,
)
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s'\"]+@")
_SECRET_WORDS = r"api[_-]?key|access[_-]?key|auth[_-]?token|token|secret|password|passwd|pwd|credentials?"
_SECRET_PATTERNS: list[tuple[re.Pattern, str]] = [
    # A header echo: everything after the header name up to the end of the value.
    (
        re.compile(
            r"(?i)(\"?(?:proxy-)?authorization\"?\s*[:=]\s*\"?)(?:(?:basic|bearer|token|digest)\s+)?"
            r"[^\s\"',;}]+"
        ),
        r"\1" + REDACTED,
    ),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8,}"), REDACTED),
    (re.compile(r"\bsk-[A-Za-z0-9_-]{12,}"), REDACTED),
    (re.compile(r"\b(?:hf|ghp|gho|ghs|xox[bpa]|glpat)[-_][A-Za-z0-9_-]{12,}"), REDACTED),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), REDACTED),
    # `password: x`, `api_key=x`, `"secret": "x"`: any value after a colon or an equals sign.
    (re.compile(rf"(?i)\b({_SECRET_WORDS})(\"?\s*[:=]\s*)['\"]?[^\s'\",;]{{4,}}"), r"\1\2" + REDACTED),
    # `credential S3cr3t!`, `password is hunter2`: only values that look like secrets.
    (
        re.compile(
            rf"(?i)\b({_SECRET_WORDS})(\s+(?:is\s+|was\s+)?)['\"]?(?=[^\s'\",;]*[0-9!@#$%^&*+/=_-])"
            r"[^\s'\",;]{6,}"
        ),
        r"\1\2" + REDACTED,
    ),
]
_ENV_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)", re.IGNORECASE)


def _env_secret_values() -> list[str]:
    vals = [v for k, v in os.environ.items() if _ENV_SECRET_NAME.search(k) and len(v) >= 8]
    return sorted(set(vals), key=len, reverse=True)


def url_userinfo(text: str) -> bool:
    """True when `text` holds a URL with credentials (`scheme://user[:password]@host`)."""
    return bool(_URL_USERINFO.search(text))


def redact_text(text: str, env_values: list[str] | None = None) -> str:
    for value in env_values if env_values is not None else _env_secret_values():
        text = text.replace(value, REDACTED)
    text = _URL_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def redact(value: Any, env_values: list[str] | None = None) -> Any:
    """A deep copy of `value` with secrets replaced by '[REDACTED]'."""
    env_values = _env_secret_values() if env_values is None else env_values
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if (
                isinstance(k, str)
                and _SECRET_KEY.search(k)
                and isinstance(v, (str, int, float))
                and v not in ("", None)
            ):
                # A config key such as api_key_env names a variable, not a secret: keep it.
                out[k] = v if k.endswith("_env") else REDACTED
            else:
                out[k] = redact(v, env_values)
        return out
    if isinstance(value, (list, tuple)):
        return [redact(v, env_values) for v in value]
    if isinstance(value, str):
        return redact_text(value, env_values)
    return value
