"""The report as people see it, in headless Chromium (Debian's `chromium` and
`chromium-driver`, driven through Selenium) from disk, with no network: the front page's
grid links every run and the blind hunt's table shows its bugs; a failing run's page draws
its timeline (fault bands, controller tenures, partition lanes, rate and latency series,
a marker per witness whose hover tells the witness and its time), shows its violation's
witness with links into the event browser, which marks the event linked to, and with a
link that zooms the timeline to the witness's marker, which links back to its row; the
verdict's JSON lies beside the page. No page shows a raw
13-digit wall-clock number and the browser logs no JavaScript error. Screenshots of both
pages are kept under the test's temporary directory (printed).

Setup: the integration tier's shared local Spark session builds the report of the
synthetic runs (`local_report`). Steps: open each page from disk, wait for it to render.
Validate: the elements and data above.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline.report import Report

#: Spark starts slowly on a shared 2-core machine (docs/pipeline.md, Cost).
pytestmark = pytest.mark.timeout(900)

CHROMIUM = shutil.which("chromium")
DRIVER = shutil.which("chromedriver")
#: How long a page may take to render.
RENDER_S = 30
THIRTEEN_DIGITS = re.compile(r"(?<!\d)\d{13,}(?!\d)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium with its console log kept."""
    if CHROMIUM is None or DRIVER is None:
        pytest.skip("chromium and chromium-driver are not installed (make setup installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots go."""
    path = Path(tmp_path_factory.mktemp("report-screenshots"))
    print(f"\nscreenshots in {path}")
    return path


def _open(driver: Any, page: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.resolve().as_uri())
    WebDriverWait(driver, RENDER_S).until(
        expected_conditions.presence_of_element_located((By.TAG_NAME, "h1"))
    )


def _screenshot(driver: Any, path: Path) -> None:
    height = int(driver.execute_script("return document.body.scrollHeight"))
    driver.set_window_size(1400, min(height + 100, 4000))
    assert driver.save_screenshot(str(path))
    assert path.read_bytes()[:4] == b"\x89PNG"


def _visible_text(driver: Any) -> str:
    return str(driver.execute_script("return document.body.innerText"))


def _errors(driver: Any) -> list[dict[str, Any]]:
    return [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]


def _failing_run(report: Report) -> str:
    """A run whose violation has events for its witness (two controllers in one epoch)."""
    return next(r for r in report.run_pages if r.endswith("two_controllers"))


#: A wheel turn over the middle of the timeline; the span it shows after.
_WHEEL = """
const box = document.getElementById("timeline");
const r = box.querySelector("svg").getBoundingClientRect();
box.dispatchEvent(new WheelEvent("wheel", {deltaY: -100, clientX: r.left + r.width / 2,
    clientY: r.top + 40, bubbles: true, cancelable: true}));
const svg = box.querySelector("svg");
return svg.getAttribute("data-to") - svg.getAttribute("data-from");
"""


def _hover_and_zoom(driver: Any) -> None:
    """Hovering a partition's lane tells its time, leader and ISR; the wheel zooms in."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    lane = driver.find_element(By.CSS_SELECTOR, "#timeline svg rect.lane")
    ActionChains(driver).move_to_element(lane).perform()
    tip = driver.find_element(By.CSS_SELECTOR, "#timeline .tip").text
    assert re.match(r"t = -?\d+\.\d{3} s\n", tip), tip
    assert re.search(r": leader \d+, ISR \[[\d,]+\]", tip), tip
    svg = driver.find_element(By.CSS_SELECTOR, "#timeline svg")
    before = float(svg.get_attribute("data-to")) - float(svg.get_attribute("data-from"))
    assert float(driver.execute_script(_WHEEL)) < before


def test_the_front_page_grid_links_every_run(
    local_report: Report, browser: Any, artifacts: Path
) -> None:
    from selenium.webdriver.common.by import By

    assert local_report.index is not None
    _open(browser, local_report.index)
    cells = browser.find_elements(By.CSS_SELECTOR, "table.grid a.cell")
    assert len(cells) == len(local_report.run_pages)
    failing = [c for c in cells if "fail" in str(c.get_attribute("class"))]
    assert {c.text for c in failing} == {"\u2717"}
    assert len(failing) == int((local_report.tables["verdicts"]["ok"] == False).sum())  # noqa: E712
    titles = [str(c.get_attribute("title")) for c in failing]
    assert all(re.search(r"; first witness \w+ at \d+\.\d{3} s$", t) for t in titles), titles
    for cell in cells:
        href = str(cell.get_attribute("href"))
        assert Path(href.removeprefix("file://")).is_file(), href
    first_row = browser.find_element(By.CSS_SELECTOR, "table.grid tbody tr td")
    assert first_row.text == "broker-failure"  # the scenario with failing runs comes first
    assert browser.find_elements(By.CSS_SELECTOR, "table[data-table=failing] tbody tr")
    assert browser.find_elements(By.CSS_SELECTOR, "svg.dist")
    hunt = browser.find_elements(By.CSS_SELECTOR, "table[data-table=hunt] tbody tr")
    assert [r.text.split(" ")[:2] for r in hunt] == [
        ["unclean-election", "yes"],
        ["kafka-1188", "no"],
    ]
    text = _visible_text(browser)
    assert THIRTEEN_DIGITS.findall(text) == []
    _screenshot(browser, artifacts / "index.png")
    assert _errors(browser) == []


def _witness_on_the_timeline(driver: Any) -> None:
    """The witness's marker tells the witness on hover; its row's link zooms the timeline
    to the marker and highlights it; the marker links back to the row."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    anchor = "witness-one_controller_per_epoch-1"
    mark = driver.find_element(
        By.CSS_SELECTOR, f"#timeline svg path.witness-mark[data-witness={anchor}]"
    )
    ActionChains(driver).move_to_element(mark).perform()
    tip = driver.find_element(By.CSS_SELECTOR, "#timeline .tip").text
    assert (
        "witness of one_controller_per_epoch\ncontroller epoch 2: brokers broker 2, broker 3" in tip
    )
    at = re.search(r"proof complete at (\d+\.\d{3}) s", tip)
    assert at, tip
    row = driver.find_element(By.ID, anchor)
    link = row.find_element(By.CSS_SELECTOR, "a.witness-time")
    assert f"on the timeline at {at.group(1)} s" in link.text
    svg = driver.find_element(By.CSS_SELECTOR, "#timeline svg")
    before = float(svg.get_attribute("data-to")) - float(svg.get_attribute("data-from"))
    link.click()
    svg = driver.find_element(By.CSS_SELECTOR, "#timeline svg")
    shown = float(svg.get_attribute("data-from")), float(svg.get_attribute("data-to"))
    assert shown[0] <= float(at.group(1)) <= shown[1]
    assert shown[1] - shown[0] < before
    active = driver.find_element(By.CSS_SELECTOR, "#timeline svg path.witness-mark.active")
    assert active.get_attribute("data-witness") == anchor
    active.click()
    assert driver.execute_script("return location.hash") == f"#{anchor}"
    assert driver.find_elements(By.CSS_SELECTOR, f"li.witness#{anchor}:target")


def test_a_failing_runs_page_draws_its_timeline_and_witness(
    local_report: Report, browser: Any, artifacts: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = local_report.run_pages[_failing_run(local_report)]
    _open(browser, page)
    WebDriverWait(browser, RENDER_S).until(
        lambda d: d.find_element(By.ID, "timeline").get_attribute("data-rendered") == "true"
    )
    for selector in (
        "rect.band",
        "rect.fault-bar",
        "rect.controller",
        "rect.lane",
        "polyline.series-ok",
        "polyline.series-p50_ms",
        "line.marker-failover",
        "text.tick-label",
        "path.witness-mark.witness-violation",
        "line.witness-line",
    ):
        assert browser.find_elements(By.CSS_SELECTOR, f"#timeline svg {selector}"), selector
    json_link = browser.find_element(By.ID, "verdict-json").get_attribute("href")
    assert '"one_controller_per_epoch"' in Path(json_link.removeprefix("file://")).read_text()
    _witness_on_the_timeline(browser)
    _hover_and_zoom(browser)
    bands = browser.execute_script("return window.RUN_TIMELINE.faults")
    assert [(b["kind"], b["node"]) for b in bands] == [("kill", "broker1")]
    assert bands[0]["from"] < bands[0]["to"]
    witness = browser.find_element(
        By.CSS_SELECTOR, "section.violation[data-invariant=one_controller_per_epoch]"
    )
    first = witness.find_elements(By.CSS_SELECTOR, "li.witness")[0]
    words = first.find_element(By.CSS_SELECTOR, ".words").text
    assert words.startswith("controller epoch 2: brokers broker 2, broker 3")
    proofs = first.find_elements(By.CSS_SELECTOR, "a.proof")
    assert len(proofs) == 2
    assert all(re.search(r"at -?\d+\.\d{3} s: controller_elected", p.text) for p in proofs)
    assert THIRTEEN_DIGITS.findall(_visible_text(browser)) == []
    _screenshot(browser, artifacts / "run.png")
    assert _errors(browser) == []

    proofs[0].click()
    WebDriverWait(browser, RENDER_S).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#events tr.hit")
    )
    (hit,) = browser.find_elements(By.CSS_SELECTOR, "#events tr.hit")
    assert "controller_elected" in hit.text
    assert THIRTEEN_DIGITS.findall(_visible_text(browser)) == []
    _screenshot(browser, artifacts / "events.png")
    assert _errors(browser) == []


def test_the_report_stays_within_its_size_budget(local_report: Report) -> None:
    assert local_report.index is not None
    assert local_report.index.stat().st_size < 5_000_000
    for page in local_report.run_pages.values():
        size = sum(p.stat().st_size for p in page.parent.iterdir() if p.suffix != ".csv")
        assert size < 2_000_000, page
