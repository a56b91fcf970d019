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
* secret-looking URL query parameters (`?key=`, `api_key=`, `access_token=`, `sig=`,
  `X-Amz-Signature=`, ...): the value, the name kept;
* the values of environment variables whose names say KEY/TOKEN/SECRET/PASSWORD/
  CREDENTIAL/AUTH (8 characters or more);
* every secret in use, whatever its variable is called: a backend that reads a key (from
  the variable `llm.api_key_env` names) registers its value with :func:`register_secret`.

:func:`credential_problem` is the one credential policy of every entry point: a URL with a
``user:password@`` part or a secret-looking query parameter is refused.
"""

from __future__ import annotations

import os
import re
from typing import Any

from report_protocol.url_policy import (
    QUERY_SECRET,
    URL_USERINFO,
    url_credential_problem,
    url_query_secret,
    url_userinfo,
)

__all__ = [
    "REDACTED",
    "credential_problem",
    "secret_setting_problem",
    "redact",
    "redact_text",
    "register_secret",
    "url_query_secret",
    "url_userinfo",
]

REDACTED = "[REDACTED]"

_SECRET_KEY = re.compile(
    r"(api[_-]?key|authorization|auth[_-]?token|access[_-]?token|bearer|password|passwd|"
    r"secret|credential|^token$|_token$)",
    re.IGNORECASE,
)
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
_SECRET_PATTERNS.append((QUERY_SECRET, r"\1" + REDACTED))
_ENV_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)", re.IGNORECASE)
_REGISTERED: set[str] = set()  # secrets in use in this process (register_secret)
MIN_SECRET_CHARS = 6  # shorter values are not scrubbed from text (they would match ordinary words)


def register_secret(value: str | None) -> None:
    """Redact ``value`` from everything written by this process from now on, whatever
    variable it came from (a backend registers the API key it sends)."""
    if value and len(value) >= MIN_SECRET_CHARS:
        _REGISTERED.add(value)


def _env_secret_values() -> list[str]:
    vals = [v for k, v in os.environ.items() if _ENV_SECRET_NAME.search(k) and len(v) >= 8]
    return sorted(set(vals) | _REGISTERED, key=len, reverse=True)


def credential_problem(text: str) -> str | None:
    """Why a config value or command-line override must be refused (it carries credentials
    that would be written to configs, checkpoints, logs and traces), or None."""
    problem = url_credential_problem(text)
    return f"{redact_text(text)} has {problem}" if problem else None


# An environment variable's name as shells accept it.
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
KEY_DOOR = (
    "an API key is read only from the environment variable the backend names "
    "(llm.api_key_env, OPENAI_API_KEY by default): export it there"
)


def secret_setting_problem(key: str, value: Any) -> str | None:
    """Why setting ``key`` (dotted) to ``value`` would write a secret, or None.

    A secret has one door, the environment variable a ``*_env`` setting names: a setting
    named like a secret (``llm.api_key``, ``+judge.token``) with a value is refused, and so
    is a ``*_env`` value that is no variable's name (a key pasted where the name goes) or
    that is some variable's value. The message names the key, never the value."""
    leaf = key.rsplit(".", 1)[-1].lstrip("+~")
    if value is None or value == "" or isinstance(value, (dict, list)):
        return None
    if leaf.endswith("_env"):
        text = str(value)
        if _ENV_NAME.fullmatch(text) is None:
            return f"{key} must be the name of an environment variable, and its value is not one; {KEY_DOOR}"
        if len(text) >= 8 and text in os.environ.values():
            return f"{key} holds the value of an environment variable, not its name; {KEY_DOOR}"
        return None
    if _SECRET_KEY.search(leaf):
        return f"{key} would put a secret in the config, which is written to disk; {KEY_DOOR}"
    return None


def redact_text(text: str, env_values: list[str] | None = None) -> str:
    for value in env_values if env_values is not None else _env_secret_values():
        text = text.replace(value, REDACTED)
    text = URL_USERINFO.sub(lambda m: f"{m.group(1)}{REDACTED}@", text)
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
