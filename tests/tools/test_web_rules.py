"""fetch_url's rules on their own: the lists' entries, which addresses are never reached
unless allowed, and the URL check; property tests for the parser and the address rule."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zcoder.tools.web.connect import Fetched
from zcoder.tools.web.pages import page_text
from zcoder.tools.web.rules import WebRules, is_public, parse_host_list
from zcoder.tools.web.tool import checked_url

NOT_PUBLIC = [
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
        "172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4", "::1/128",
        "fc00::/7", "fe80::/10", "ff00::/8", "::ffff:0:0/96",
    )
]  # fmt: skip


@given(st.ip_addresses())
def test_no_address_of_a_private_or_special_range_is_public(address: object) -> None:
    assert isinstance(address, ipaddress.IPv4Address | ipaddress.IPv6Address)
    inside = any(address in network for network in NOT_PUBLIC if network.version == address.version)
    if inside and not (
        isinstance(address, ipaddress.IPv6Address)
        and address.ipv4_mapped is not None
        and is_public(address.ipv4_mapped)
    ):
        assert not is_public(address)
        assert WebRules().address_refusal("h.test", address) is not None


@given(st.text())
def test_the_list_parser_accepts_or_says_why(raw: str) -> None:
    try:
        entries = parse_host_list(raw)
    except ValueError as exc:
        assert str(exc)
    else:
        assert all(entry and "," not in entry for entry in entries)


def test_names_subdomains_addresses_and_networks() -> None:
    rules = WebRules(allow=("*.corp.test", "10.2.0.0/16", "fd00::5"), deny=("bad.corp.test",))
    ten = ipaddress.ip_address("10.2.3.4")
    assert rules.address_refusal("wiki.corp.test", ipaddress.ip_address("192.168.1.1")) is None
    assert rules.address_refusal("corp.test", ipaddress.ip_address("192.168.1.1")) is None
    assert rules.address_refusal("evilcorp.test", ipaddress.ip_address("192.168.1.1")) is not None
    assert rules.address_refusal("x.test", ten) is None
    assert rules.address_refusal("x.test", ipaddress.ip_address("10.3.0.1")) is not None
    assert rules.address_refusal("x.test", ipaddress.ip_address("fd00::5")) is None
    assert rules.host_refusal("BAD.corp.test.") is not None  # case and a trailing dot
    assert rules.host_refusal("wiki.corp.test") is None


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("HTTP://Do.Ex.com/a b?q=1 2#f", ("http://do.ex.com/a%20b?q=1%202", "do.ex.com")),
        ("https://bücher.example/", ("https://xn--bcher-kva.example/", "xn--bcher-kva.example")),
        ("http://[::1]:8080/x", ("http://[::1]:8080/x", "::1")),
    ],
)  # fmt: skip
def test_a_url_is_made_ascii_and_its_fragment_dropped(url: str, expected: object) -> None:
    assert checked_url(url) == expected


@pytest.mark.parametrize("url", ["http://x.test:99999/", "http:///nohost", "//x.test/"])
def test_a_url_that_cannot_be_fetched_says_why(url: str) -> None:
    assert isinstance(checked_url(url), str)


def test_an_unknown_charset_is_read_as_utf8() -> None:
    page = Fetched("u", 200, {"content-type": "text/plain; charset=klingon"}, "é".encode())
    result = page_text(page, lambda: None)
    assert not isinstance(result, str) and result.text == "é"
