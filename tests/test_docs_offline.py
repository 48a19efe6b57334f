"""The documentation site renders offline: it loads no script, style or font from another host (Mermaid is served
from the site itself, fonts are the system's), and a real headless Chromium with every host name unresolvable
draws the architecture page's diagrams."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXTERNAL = re.compile(r"^(https?:)?//", re.IGNORECASE)
# Link relations that make a browser fetch something (an `<a href>` to another site fetches nothing by itself).
FETCHING = {"stylesheet", "preload", "modulepreload", "preconnect", "dns-prefetch", "icon", "prefetch", "manifest"}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    built = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(built)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ | {"NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    yield built


class _Fetches(HTMLParser):
    """Every URL a page makes the browser fetch by itself: scripts, styles, fonts, icons, images, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        given = {name: value or "" for name, value in attrs}
        if tag == "link" and FETCHING & set(given.get("rel", "").lower().split()):
            self.urls.append(given.get("href", ""))
        elif tag in ("script", "img", "iframe", "source", "audio", "video", "embed") and "src" in given:
            self.urls.append(given["src"])
        elif tag == "object" and "data" in given:
            self.urls.append(given["data"])


def test_the_built_site_loads_no_script_style_or_font_from_another_host(site: Path) -> None:
    external: list[str] = []
    for page in site.rglob("*.html"):
        parser = _Fetches()
        parser.feed(page.read_text(encoding="utf-8"))
        external += [f"{page.relative_to(site)}: {url}" for url in parser.urls if EXTERNAL.match(url.strip())]
        inline_styles = re.findall(r"<style[^>]*>(.*?)</style>", page.read_text(encoding="utf-8"), re.DOTALL)
        external += [f"{page.relative_to(site)}: {u}" for css in inline_styles for u in _css_urls(css)]
    for sheet in site.rglob("*.css"):
        external += [f"{sheet.relative_to(site)}: {url}" for url in _css_urls(sheet.read_text(encoding="utf-8"))]
    assert external == []
    assert (site / "assets" / "javascripts" / "mermaid.min.js").stat().st_size > 1_000_000


def _css_urls(css: str) -> list[str]:
    found = re.findall(r"url\(\s*['\"]?([^'\")]+)", css) + re.findall(r"@import\s+['\"]([^'\"]+)", css)
    return [url for url in found if EXTERNAL.match(url.strip())]


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def test_a_browser_without_network_draws_the_architecture_diagrams(site: Path, tmp_path: Path) -> None:
    browser = chromium()
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail("no chromium: apt-get install chromium (.ci/run installs it)")
        pytest.skip("no chromium on this machine")
    source = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagrams = source.count("```mermaid")
    assert diagrams >= 2
    done = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",  # as root in CI
            "--disable-gpu",
            f"--user-data-dir={tmp_path / 'profile'}",
            # Offline: every host name fails to resolve, so a CDN script could not load.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            # Runs the page's scripts until they are idle (virtual time: no wall-clock wait).
            "--virtual-time-budget=20000",
            "--dump-dom",
            (site / "architecture" / "index.html").as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    assert "<h1" in dom, dom[:2000]
    # Material swaps each `<pre class="mermaid">` for a `<div class="mermaid">` whose shadow root holds the drawn
    # SVG once Mermaid has loaded; when it cannot load (from unpkg.com, offline) the diagram's source stays shown.
    assert dom.count('<div class="mermaid"') == diagrams, "a diagram was left as source: Mermaid did not load"
