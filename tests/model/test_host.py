"""normalize_host: every way a user writes an Ollama address."""

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from zcoder.model import DEFAULT_HOST, normalize_host


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("", "http://127.0.0.1:11434"),
        ("   ", "http://127.0.0.1:11434"),
        ("localhost", "http://localhost:11434"),
        ("localhost:1234", "http://localhost:1234"),
        (":8080", "http://127.0.0.1:8080"),
        ("127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("0.0.0.0", "http://0.0.0.0:11434"),
        ("http://127.0.0.1:11434", "http://127.0.0.1:11434"),
        ("http://127.0.0.1:11434/", "http://127.0.0.1:11434"),
        ("HTTP://Box.Example:5000", "http://box.example:5000"),
        ("https://ollama.example.com", "https://ollama.example.com:443"),
        ("http://ollama.example.com", "http://ollama.example.com:80"),
        ("https://proxy.example/ollama/", "https://proxy.example:443/ollama"),
        ("http://:9000", "http://127.0.0.1:9000"),
        ("[::1]:11434", "http://[::1]:11434"),
        ("::1", "http://[::1]:11434"),
        ("http://[::1]", "http://[::1]:80"),
    ],
)
def test_accepted_forms(value: str, expected: str):
    assert normalize_host(value) == expected


@pytest.mark.parametrize(
    "value",
    ["ftp://host", "host:", "host:0", "host:99999", "host:abc", "a b", "http://u:p@h:1", "h/?q=1"],
)
def test_rejected_forms_raise_value_error_naming_the_value(value: str):
    with pytest.raises(ValueError, match="Ollama host"):
        normalize_host(value)


def test_default_is_loopback_on_ollamas_port():
    assert DEFAULT_HOST == "http://127.0.0.1:11434"
    assert normalize_host("") == DEFAULT_HOST


hostnames = st.from_regex(
    r"[a-z][a-z0-9-]{0,20}[a-z0-9](\.[a-z][a-z0-9]{0,10}){0,3}", fullmatch=True
)
ipv4 = st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: ".".join(map(str, t)))
hosts = st.one_of(hostnames, ipv4)
ports = st.integers(1, 65535)
schemes = st.sampled_from(["", "http://", "https://"])


@given(host=hosts, port=ports)
def test_host_port_without_scheme_means_http_on_that_port(host: str, port: int):
    assert normalize_host(f"{host}:{port}") == f"http://{host}:{port}"


@given(scheme=schemes, host=hosts, port=st.none() | ports)
def test_normalizing_is_idempotent_and_gives_a_full_url(scheme: str, host: str, port: int | None):
    value = f"{scheme}{host}" + (f":{port}" if port is not None else "")
    once = normalize_host(value)
    assert normalize_host(once) == once
    url = httpx.URL(once)
    assert url.scheme in ("http", "https")
    assert url.host == host
    assert url.port is not None or once.endswith((":80", ":443"))


async def test_the_http_client_is_made_on_first_use_and_closing_an_unused_one_is_fine() -> None:
    from zcoder.model.http import LazyHttpClient
    from zcoder.model.ollama import OllamaClient

    lazy = LazyHttpClient(base_url="http://127.0.0.1:9")
    await lazy.aclose()  # never made: nothing to close
    client = OllamaClient("http://127.0.0.1:9")
    assert client._lazy_http._client is None  # start-up made no client (no CA bundle read)
    first = client._http
    assert client._http is first and str(first.base_url) == "http://127.0.0.1:9"
    await client.aclose()
    assert first.is_closed
