"""The documentation site as a reader meets it (nightly): built strict, served over HTTP,
every page of the navigation opened in headless Chromium from the home page's own links,
each showing its title and the navigation once the theme's scripts ran.

The default run checks the pages' figures (test_docs_figures.py); .ci/run builds the site
strict (links, anchors, the nav). This is what neither can: that the built pages render
and navigate.
"""
from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import subprocess
import sys
import threading
import urllib.parse

import browser
import pytest
from helpers import ROOT

pytestmark = [
    pytest.mark.nightly,
    pytest.mark.skipif(browser.CHROMIUM is None, reason=browser.MISSING),
    pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None,
                       reason="mkdocs is not installed: pip install -e '.[docs]'"),
]


@pytest.fixture(scope="session")
def site(tmp_path_factory):
    """The built site served on a free port: its base URL."""
    folder = tmp_path_factory.mktemp("site")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                            str(folder)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert built.returncode == 0, built.stderr[-3000:]
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


def nav_links(dom: str, base: str) -> list[str]:
    """The pages the primary navigation links to, as absolute URLs, in order."""
    hrefs = re.findall(r'<a href="([^"#]*)" class="md-nav__link', dom)
    return list(dict.fromkeys(urllib.parse.urljoin(base, href) for href in hrefs))


def test_every_page_of_the_navigation_opens_with_its_title(site, tmp_path):
    home = browser.dom(site, tmp_path / "profile")
    assert "<h1" in home and "tvm-extraction-harness" in home
    pages = nav_links(home, site)
    assert len(pages) >= 25, pages
    for url in pages:
        dom = browser.dom(url, tmp_path / "profile")
        title = re.search(r'<h1[^>]*id="([^"]+)"', dom) or re.search(r"<h1[^>]*>", dom)
        assert title, f"{url} shows no title"
        assert 'class="md-nav' in dom, f"{url} shows no navigation"
        assert "404" not in re.search(r"<title>(.*?)</title>", dom).group(1), url


def test_the_generated_tables_render_as_tables(site, tmp_path):
    """The figures are Markdown tables between HTML comments: they must reach the page
    as tables, not as text."""
    dom = browser.dom(urllib.parse.urljoin(site, "reference/outcomes/"), tmp_path / "profile")
    tables = re.findall(r"<table>.*?</table>", dom, re.S)
    assert any("harness-error" in table and "<td>125</td>" in table for table in tables)
