"""The one grammar of named URLs (agents/core/declarations.py) that endpoints and destinations share."""

import pytest

from agents.core.declarations import Grammar, parse
from agents.core.llm.endpoints import GRAMMAR as ENDPOINTS
from agents.core.llm.endpoints import EndpointError, declared_endpoints
from reviewer.outbox.destinations import GRAMMAR as DESTINATIONS
from reviewer.outbox.destinations import DestinationError, declared

BAD = [
    ("a", "entry 1 ('a') is not name={url} or name={url}|{SECRET}_VARIABLE"),
    ("A=https://x.example", "entry 1 ('A'): the name must be lower-case letters, digits, '-' and '_'"),
    ("a=https://x.example|not a variable",
     "entry 1 ('a'): after '|' comes the NAME of the variable that holds the {secret} "
     "(letters, digits and '_'), never the {secret} itself"),
    ("a=ftp://x.example", "entry 1 ('a'): the {label} must start with http:// or https:// and name a host"),
    ("a=https://x.example:port", "entry 1 ('a'): the {label} is not a URL"),
    ("a=https://u:p@x.example", "entry 1 ('a'): the {label} must not carry user info"),
    ("=https://x.example", "entry 1 (?): the name must be"),
]


@pytest.mark.parametrize("entry, message", BAD)
def test_endpoints_and_destinations_refuse_the_same_entries_with_the_same_sentences(entry, message):
    for grammar, read, error in ((ENDPOINTS, declared_endpoints, EndpointError),
                                 (DESTINATIONS, declared, DestinationError)):
        expected = message.format(url=grammar.url_word, SECRET=grammar.secret_word.upper(),
                                  secret=grammar.secret_word, label=grammar.url_label)
        with pytest.raises(error) as raised:
            read({grammar.variable: entry})
        assert str(raised.value).startswith(f"{grammar.variable}: {expected}"), str(raised.value)


def test_a_url_in_a_refused_entry_is_never_echoed():
    with pytest.raises(ValueError) as raised:
        parse("a=https://user:hunter22@x.example/hook", Grammar("V", ValueError, "url", "URL", "secret"))
    assert "hunter22" not in str(raised.value)


def test_settings_and_a_query_are_the_grammar_s_choice():
    with_settings = Grammar("V", ValueError, "url", "URL", "secret", settings=True, query_allowed=True)
    [entry] = parse("a=https://x.example/v1?x=1|KEY;tool_choice=auto", with_settings)
    assert (entry.name, entry.url, entry.variable, entry.settings) == ("a", "https://x.example/v1?x=1", "KEY",
                                                                        "tool_choice=auto")
    with pytest.raises(ValueError, match="must not carry user info, a query or a fragment"):
        parse("a=https://x.example/v1?x=1", Grammar("V", ValueError, "url", "URL", "secret"))
