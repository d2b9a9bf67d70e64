"""Model endpoints that the operator declares in the environment, and the redaction of their keys.

A policy chooses an endpoint by name; the endpoint's base URL and key come from here together, so
a key is only ever sent to the base URL it was declared with. Nothing an admin can edit
holds a URL or a key.

    LLM_ENDPOINTS=local=http://127.0.0.1:8080/v1,openai=https://api.openai.com/v1|OPENAI_KEY

Entries are separated by commas; each is ``name=base_url``, optionally ``|KEY_VARIABLE``: the
*name* of the environment variable that holds the endpoint's key (a local server may need none),
then optionally ``;option=value`` settings for what the server accepts (see :data:`OPTIONS`):

    LLM_ENDPOINTS='local=http://127.0.0.1:8080/v1;tool_choice=required;instructions_in_user=yes'

The ``default`` endpoint takes the same settings from ``OPENAI_ENDPOINT_OPTIONS``
(``tool_choice=required;limit_param=max_tokens``). What the server can bear is declared the same way
(see :data:`LIMITS`): ``concurrency=1;max_completion_tokens=160;min_call_seconds=30``.
The ``OPENAI_*`` variables stay the one-endpoint shorthand: ``OPENAI_BASE_URL`` (or OpenAI's
URL) with ``OPENAI_API_KEY`` is the endpoint named ``default``, declared when either is set (or
``LLM_BACKEND=openai``). ``LLM_ENDPOINT=name`` makes every policy use that endpoint.
"""

from __future__ import annotations

import base64
import functools
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass, replace
from typing import Any
from urllib.parse import urlsplit

import re2

from agents.core import declarations

ENDPOINTS_VARIABLE = "LLM_ENDPOINTS"
DEFAULT_OPTIONS_VARIABLE = "OPENAI_ENDPOINT_OPTIONS"
OVERRIDE_VARIABLE = "LLM_ENDPOINT"
DEFAULT_ENDPOINT = "default"
OPENAI_URL = "https://api.openai.com/v1"
REDACTED = "[redacted]"
MIN_KEY_CHARS = 4  # a 1-3 character "key" would shred every text it is redacted from

_KEY_VARIABLES = re.compile(r"\|\s*([A-Za-z_][A-Za-z0-9_]*)")


class EndpointError(ValueError):
    """The declared endpoints cannot be read, or a policy asks for one that is not declared."""


GRAMMAR = declarations.Grammar(ENDPOINTS_VARIABLE, EndpointError, url_word="base_url", url_label="base URL",
                               secret_word="key", separators=",", settings=True)


# option -> (allowed values, default, meaning)
OPTIONS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "tool_choice": (
        ("named", "required", "auto", "omit"), "named",
        "how a tools-mode request forces the stage's tool: the named-function object (OpenAI, vLLM), "
        "\"required\", \"auto\", or omit the parameter (servers that refuse the object form)",
    ),
    "limit_param": (
        ("max_completion_tokens", "max_tokens"), "max_completion_tokens",
        "the request parameter that carries the completion-token limit",
    ),
    "instructions_in_user": (
        ("no", "yes"), "no",
        "also repeat the stage instructions at the top of the user message (chat templates that drop "
        "the system message)",
    ),
}


# limit -> (lowest, highest, meaning); unset means no limit. An admin may set the first two per
# endpoint as well (agents/models/endpoints.py): where both are set, the lower applies.
LIMITS: dict[str, tuple[int, int, str]] = {
    "concurrency": (
        1, 64,
        "how many calls the endpoint takes at once, counted across every worker thread and process "
        "(agents/core/llm/slots.py); a call waits for a free slot within the run's time budget",
    ),
    "max_completion_tokens": (
        16, 100_000,
        "the most tokens one answer may have at this endpoint, whatever a policy allows: it bounds "
        "how long the server works on one call, also after its client gave up",
    ),
    "min_call_seconds": (
        1, 3600,
        "a call is not sent when less of the run's time is left than this: the server would still be "
        "generating when the client gives up",
    ),
}


@dataclass(frozen=True)
class Endpoint:
    name: str
    base_url: str
    key_variable: str = ""  # the variable that holds the key; "" for a server that needs none
    api_key: str = field(default="", repr=False)
    tool_choice: str = "named"
    limit_param: str = "max_completion_tokens"
    instructions_in_user: bool = False
    concurrency: int | None = None  # None: as many calls at once as the runs make
    max_completion_tokens: int | None = None  # None: the policy's ceiling alone
    min_call_seconds: int = 0

    def settings(self) -> dict[str, Any]:
        """The endpoint's request settings, for the run record (no URL, no key). Its completion
        ceiling is in the record's own ``max_completion_tokens``, the lower of it and the policy's."""
        return {"endpoint": self.name, "tool_choice": self.tool_choice, "limit_param": self.limit_param,
                "instructions_in_user": self.instructions_in_user, "concurrency": self.concurrency,
                "min_call_seconds": self.min_call_seconds}

    def limited(self, concurrency: int | None, max_completion_tokens: int | None) -> Endpoint:
        """This endpoint under further limits (an admin's): the lower of each applies."""
        return replace(self, concurrency=lower(self.concurrency, concurrency),
                       max_completion_tokens=lower(self.max_completion_tokens, max_completion_tokens))


def lower(a: int | None, b: int | None) -> int | None:
    """The lower of two limits, None being no limit."""
    return b if a is None else a if b is None else min(a, b)


def parse_options(text: str, where: str) -> dict[str, Any]:
    """``tool_choice=required;instructions_in_user=yes;concurrency=1`` as Endpoint fields; unknown
    names or values raise :class:`EndpointError` naming ``where``."""
    values: dict[str, Any] = {}
    for item in text.split(";"):
        item = item.strip()
        if not item:
            continue
        name, equals, value = (part.strip().lower() for part in item.partition("="))
        if name in LIMITS and equals:
            values[name] = _limit(name, value, where)
            continue
        if name not in OPTIONS or not equals:
            known = ", ".join([*OPTIONS, *LIMITS])
            raise EndpointError(f"{where}: unknown endpoint setting {item!r} (known: {known})")
        allowed = OPTIONS[name][0]
        if value not in allowed:
            raise EndpointError(f"{where}: {name} must be one of {', '.join(allowed)}, got {value!r}")
        values[name] = value == "yes" if name == "instructions_in_user" else value
    return values


def declared_endpoints(environ: Mapping[str, str] = os.environ) -> dict[str, Endpoint]:
    """Every declared endpoint by name, with its key read from its variable ("" when unset).

    Raises :class:`EndpointError` naming the variable when a declaration cannot be read.
    """
    endpoints: dict[str, Endpoint] = {}
    for entry in declarations.parse(_env(environ, ENDPOINTS_VARIABLE), GRAMMAR):
        key = _env(environ, entry.variable) if entry.variable else ""
        endpoints[entry.name] = Endpoint(entry.name, entry.url.rstrip("/"), entry.variable, key,
                                         **parse_options(entry.settings, entry.where))
    backend = _env(environ, "LLM_BACKEND").lower()
    base_url = _env(environ, "OPENAI_BASE_URL")
    if DEFAULT_ENDPOINT in endpoints:
        if base_url:
            raise EndpointError(
                f"{ENDPOINTS_VARIABLE} declares the '{DEFAULT_ENDPOINT}' endpoint and OPENAI_BASE_URL is set "
                "too: keep one of them"
            )
    elif base_url or _env(environ, "OPENAI_API_KEY") or backend == "openai":
        endpoints[DEFAULT_ENDPOINT] = Endpoint(
            DEFAULT_ENDPOINT,
            declarations.checked_url(base_url, "OPENAI_BASE_URL", GRAMMAR).rstrip("/") if base_url else OPENAI_URL,
            "OPENAI_API_KEY", _env(environ, "OPENAI_API_KEY"),
            **parse_options(_env(environ, DEFAULT_OPTIONS_VARIABLE), DEFAULT_OPTIONS_VARIABLE),
        )
    return endpoints


def endpoint_names(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The names a policy can choose here, ``default`` first (it serves rows that choose none)."""
    names = list(declared_endpoints(environ))
    return sorted(names, key=lambda name: (name != DEFAULT_ENDPOINT, name))


def resolve_endpoint(
    endpoint: str, legacy_base_url: str | None = None, environ: Mapping[str, str] = os.environ
) -> Endpoint:
    """The declared endpoint a policy (or a run's policy snapshot) asks for; fails closed.

    ``legacy_base_url`` is the base URL that snapshots stored before endpoints were named carry:
    it is accepted only when an endpoint is declared with exactly that URL, whose key then goes
    with it. ``LLM_ENDPOINT`` overrides the policy's choice.
    """
    endpoints = declared_endpoints(environ)
    declared = ", ".join(endpoint_names(environ)) or "none"
    wanted = _env(environ, OVERRIDE_VARIABLE) or endpoint or DEFAULT_ENDPOINT
    if _env(environ, OVERRIDE_VARIABLE):
        if wanted not in endpoints:
            raise EndpointError(f"{OVERRIDE_VARIABLE} names the endpoint {wanted!r}, which is not declared "
                                f"(declared: {declared})")
    elif legacy_base_url:
        matches = [e for e in endpoints.values() if _same_url(e.base_url, legacy_base_url)]
        if not matches:
            raise EndpointError(
                f"the policy snapshot asks for the base URL {_public(legacy_base_url)}, which no declared "
                f"endpoint has (declared: {declared}); retry the run to use the current policy"
            )
        chosen = endpoints.get(wanted)
        return chosen if chosen in matches else matches[0]
    elif wanted not in endpoints:
        raise EndpointError(
            f"the policy chooses the endpoint {wanted!r}, which is not declared (declared: {declared}); "
            f"declare it in {ENDPOINTS_VARIABLE} or choose another endpoint in admin"
        )
    chosen = endpoints[wanted]
    if chosen.key_variable and chosen.key_variable != "OPENAI_API_KEY" and not chosen.api_key:
        raise EndpointError(
            f"the endpoint {chosen.name!r} takes its key from {chosen.key_variable}, which is not set"
        )
    return chosen


def _limit(name: str, value: str, where: str) -> int:
    lowest, highest, _ = LIMITS[name]
    try:
        number = int(value)
    except ValueError:
        number = None
    if number is None or not lowest <= number <= highest:
        raise EndpointError(f"{where}: {name} must be a whole number from {lowest} to {highest}, got {value!r}")
    return number


# -- redaction ----------------------------------------------------------------------------


def key_variables(environ: Mapping[str, str] = os.environ) -> set[str]:
    """The variables that hold keys: ``OPENAI_API_KEY`` and those that ``LLM_ENDPOINTS`` names,
    read leniently (a declaration that does not parse still names its keys)."""
    return {"OPENAI_API_KEY", *_KEY_VARIABLES.findall(environ.get(ENDPOINTS_VARIABLE) or "")}


def configured_keys(environ: Mapping[str, str] = os.environ) -> list[str]:
    """Every key the environment configures (see :func:`key_variables`)."""
    keys = {_env(environ, name) for name in key_variables(environ)}
    # The longest first: a key that contains another is replaced whole.
    return sorted((key for key in keys if len(key) >= MIN_KEY_CHARS), key=len, reverse=True)


# What a copy of a key may have between two of its characters, as many as there are: spaces and
# line breaks (any Unicode space too), dashes, "_", "." and the invisible zero-width characters, as
# written or URL-encoded ("%20", "+"). A key's own characters of this kind are optional in a copy
# ("sk-abc" is "SKABC", "s k - a b c"). Each character may be URL-encoded too ("%73k%2Dabc").
_GAP_CLASS = r"[\s\pZ\p{Pd}_.\x{0B}\x{85}\x{200B}-\x{200D}\x{2060}\x{FEFF}]"
_GAP = rf"(?:{_GAP_CLASS}|%(?:09|0A|0D|20|2D|2E|5F|C2%A0|E2%80%8B)|\+)"
# A key copied in base64 (standard or URL-safe) is found by the part of its encoding that does not
# depend on the bytes around it, at each of the three alignments: when that part is this long.
MIN_BASE64_CHARS = 12


def _re2_options():
    options = re2.Options()
    options.case_sensitive = False
    options.log_errors = False
    options.never_capture = True
    return options


_GAP_CHAR = re2.compile(_GAP_CLASS, _re2_options())
# RE2 reads UTF-8: a lone surrogate (a model's JSON may carry "\\ud800"; an environment variable's
# undecodable byte) is kept out of its patterns and texts.
_SURROGATE = re.compile("([\ud800-\udfff])")


@functools.lru_cache(maxsize=16)
def _keys_pattern(keys: tuple[str, ...]):
    """One RE2 pattern for every copy of ``keys``, whatever its case and spacing (longest key first:
    one that contains another is replaced whole). RE2 reads a text in time linear in its length:
    there is no backtracking for a text of near misses to exploit."""
    alternatives = []
    for key in keys:
        key = _SURROGATE.sub("", key)
        kept = [char for char in key if not _GAP_CHAR.fullmatch(char)]
        if len(kept) < MIN_KEY_CHARS:  # a key of mostly dashes and spaces: only as written
            alternatives.append(re2.escape(key))
        else:
            alternatives.append(f"{_GAP}*".join(_char_or_encoded(char) for char in kept))
        # base64 is case-sensitive: its copies are matched as they are encoded.
        alternatives += [f"(?-i:{re2.escape(core)})" for core in _base64_cores(key)]
    return re2.compile("|".join(f"(?:{alternative})" for alternative in alternatives), _re2_options())


def _char_or_encoded(char: str) -> str:
    """A character of a key, as written or URL-encoded (each of its UTF-8 bytes as %XX)."""
    encoded = "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    return f"(?:{re2.escape(char)}|{re2.escape(encoded)})"


def _base64_cores(key: str) -> set[str]:
    """The parts of the key's base64 (standard and URL-safe) that are the same wherever the key
    stands in what was encoded: at each of the three byte alignments, the characters made of the
    key's bits only."""
    data = key.encode("utf-8", "surrogatepass")
    cores = set()
    for shift in range(3):
        encoded = base64.b64encode(b"\0" * shift + data).decode()
        start, end = -(-8 * shift // 6), (8 * shift + 8 * len(data)) // 6
        core = encoded[start:end]
        if len(core) >= MIN_BASE64_CHARS:
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


def redact(value: Any, keys: Iterable[str] | None = None) -> Any:
    """``value`` with every configured key replaced by ``[redacted]``, in strings at any depth of
    lists, tuples, dicts (keys too) and dataclasses; so is every copy of a key in other case or with
    spaces, line breaks or dashes put between its characters. Everything stored or logged from a
    model passes through here."""
    keys = configured_keys() if keys is None else sorted((k for k in keys if len(k) >= MIN_KEY_CHARS),
                                                         key=len, reverse=True)
    if not keys:
        return value
    pattern = _keys_pattern(tuple(keys))
    # Most values hold no key: looking costs no copy (a run redacts every step, call and result).
    return _redact(value, pattern) if _holds_key(value, pattern) else value


def _holds_key(value: Any, pattern) -> bool:
    """Whether :func:`_redact` would change anything in ``value`` (a string with a lone surrogate is
    always redacted part by part)."""
    if isinstance(value, str):
        return bool(_SURROGATE.search(value) or pattern.search(value))
    if isinstance(value, dict):
        return any(_holds_key(k, pattern) or _holds_key(v, pattern) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return any(_holds_key(item, pattern) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        return any(_holds_key(getattr(value, f.name), pattern) for f in fields(value) if f.init)
    return False


def _redact(value: Any, pattern) -> Any:
    if isinstance(value, str):
        if _SURROGATE.search(value):  # each stretch between lone surrogates on its own
            return "".join(part if _SURROGATE.fullmatch(part) else pattern.sub(REDACTED, part)
                           for part in _SURROGATE.split(value))
        return pattern.sub(REDACTED, value) if value else value
    if isinstance(value, dict):
        return {_redact(k, pattern): _redact(v, pattern) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_redact(item, pattern) for item in value)
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: _redact(getattr(value, f.name), pattern) for f in fields(value) if f.init})
    return value


# -- helpers ------------------------------------------------------------------------------


def _same_url(a: str, b: str) -> bool:
    return a.rstrip("/") == b.strip().rstrip("/")


def _public(url: str) -> str:
    """A URL fit for a message: without user info, query and fragment."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "(unreadable URL)"
    return f"{parts.scheme}://{host}{port}{parts.path}"[:200]


def _env(environ: Mapping[str, str], name: str) -> str:
    """The variable's value, stripped; unset and blank are the same."""
    return (environ.get(name) or "").strip()
