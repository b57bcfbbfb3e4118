"""The matrix page as a person sees it: rendered by headless Chromium, cells and details there."""
import os
import re
import shutil
import subprocess

import pytest

from harness.cli import matrix_page

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _cell(verdict, status, stage="", pass_name="", detail=""):
    return {"verdict": verdict, "status": status, "outcome_count": 22, "seconds": 3.5,
            "stage": stage,
            "pass": pass_name, "detail": detail, "known": [], "path": "extract",
            "reproduce": "python -m harness check yolov3-tiny" if verdict != "pass" else ""}


@pytest.fixture
def page(tmp_path):
    cells = {("yolov3-tiny", "tvm==0.27.0.post1"): _cell(
                 "mutated", "known", "zero-pipeline", "tirx.AnnotateEntryFunc",
                 "mutated at stage zero-pipeline, pass tirx.AnnotateEntryFunc (#1983)"),
             ("yolov3-tiny", "tvm==0.26.0"): _cell("pass", "pass"),
             ("conv-sum-nhwc", "tvm==0.27.0.post1"): _cell("error", "new", "convert-layout"),
             ("conv-sum-nhwc", "tvm==0.26.0"): _cell("crash", "known", "zero-pipeline")}
    path = tmp_path / "matrix.html"
    path.write_text(matrix_page.render(["yolov3-tiny", "conv-sum-nhwc"],
                                       ["tvm==0.27.0.post1", "tvm==0.26.0"], cells, "extract"))
    return path


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed "
                    "(apt-get install chromium); the page is checked as text instead")
def test_chromium_renders_every_cell_with_its_detail(page, tmp_path):
    profile = tmp_path / "profile"
    dom = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                          page.as_uri()], capture_output=True, text=True, timeout=120).stdout
    cells = re.findall(r'<td class="cell (\w[\w-]*)"[^>]*data-verdict="([\w-]+)"', dom)
    assert sorted(cells) == [("known", "crash"), ("known", "mutated"), ("new", "error"),
                             ("pass", "pass")], dom[:2000]
    assert "stage zero-pipeline, pass tirx.AnnotateEntryFunc" in dom
    assert "reproduce: python -m harness check yolov3-tiny" in dom
    shot = tmp_path / "matrix.png"    # for a person to look at; never in the repo
    subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={shot}",
                    "--window-size=900,400", page.as_uri()], capture_output=True, timeout=120)
    assert shot.exists() and os.path.getsize(shot) > 1000


def test_page_is_self_contained(page):
    text = page.read_text()
    assert "http://" not in text and "https://" not in text   # no CDN, opens from disk
    assert text.count("<td class=\"cell") == 4
