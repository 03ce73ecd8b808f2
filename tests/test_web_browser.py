"""The household page in a real browser: Debian's chromium, driven by Playwright, against the
real daemon. The password is set with the CLI; the page logs in, sees a simulated device
come online and go offline live, sees a panic alert appear live and acknowledges it,
changes the device's volume, searches a memory added with ``fayd memory add``, and logs
out. Screenshots at a phone's width (360 px) go to the test's tmp folder."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fayd.protocol import SensorEvent, encode
from fayd.testing.care import Posts
from fayd.testing.harness import DaemonProcess
from tests.conftest import needs_mosquitto

playwright = pytest.importorskip("playwright.async_api", reason="playwright (the dev extra)")
CHROMIUM = shutil.which("chromium")
pytestmark = [
    needs_mosquitto,
    pytest.mark.skipif(
        CHROMIUM is None, reason="chromium not installed (./install.sh installs Debian's)"
    ),
]
PASSWORD = "our kitchen table"
DEVICE = "panic-1"
#: Long enough for a slow shared machine; nothing here is a speed check.
WAIT_MS = 30_000


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    d = DaemonProcess(tmp_path_factory.mktemp("web-browser")).start()
    yield d
    assert d.stop() == 0, d.log_text()


def run(daemon: DaemonProcess, *args: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "fayd", *args],
        env=daemon.env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def volume(daemon: DaemonProcess) -> int | None:
    return daemon.setting(DEVICE, "volume")


async def scenario(daemon: DaemonProcess, shots: Path) -> None:
    api = daemon.runtime["api"]
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    async with playwright.async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=args)
        page = await browser.new_page(viewport={"width": 360, "height": 780})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        try:
            await page.goto(api + "/")
            assert page.url.endswith("/login")  # no session: sent to log in
            await page.fill("#password", "not the password")
            await page.click("button[type=submit]")
            await page.wait_for_selector("#login-error:has-text('not right')", timeout=WAIT_MS)
            await page.screenshot(path=shots / "1-login-wrong.png")
            await page.fill("#password", PASSWORD)
            await page.click("button[type=submit]")
            await page.wait_for_url(api + "/", timeout=WAIT_MS)
            await page.wait_for_selector("#live:has-text('Live updates: on')", timeout=WAIT_MS)
            await page.wait_for_selector("#alerts-none:visible", timeout=WAIT_MS)
            await page.screenshot(path=shots / "2-logged-in.png")

            async with daemon.sim(DEVICE) as sim:
                await sim.hello(roles=("sensor",), user="mum")
                row = f"[data-device='{DEVICE}'][data-online='yes']"
                await page.wait_for_selector(row, timeout=WAIT_MS)  # live: no reload
                await page.screenshot(path=shots / "3-device-online.png")

                await sim.publish("event", encode(SensorEvent(1, "panic", time.time())))
                ack = "[data-alert] button:has-text('Acknowledge')"
                await page.wait_for_selector(ack, timeout=WAIT_MS)
                await page.wait_for_selector("#banner:has-text('critical alert')", timeout=WAIT_MS)
                await page.screenshot(path=shots / "4-alert.png")
                await page.click(ack)
                await page.wait_for_selector("[data-alert] .tag.acknowledged", timeout=WAIT_MS)
                await page.wait_for_selector("#alerts-none:visible", timeout=WAIT_MS)
                await page.screenshot(path=shots / "5-acknowledged.png")

                await page.locator("#devices-card").scroll_into_view_if_needed()
                await page.select_option("#set-device", DEVICE)
                await page.select_option("#set-key", "volume")
                await page.fill("#set-value", "30")
                await page.click("#setting button[type=submit]")
                result = "#setting-result:has-text('Saved for')"
                await page.wait_for_selector(result, timeout=WAIT_MS)
                await page.screenshot(path=shots / "6-setting.png")
                assert "volume=30" in await page.inner_text("#setting-result")
            offline = f"[data-device='{DEVICE}'][data-online='no']"
            await page.wait_for_selector(offline, timeout=WAIT_MS)  # gone, live

            await page.select_option("#memory-user", "mum")
            await page.fill("#memory-q", "tomatoes in the garden")
            await page.click("#memory-form button[type=submit]")
            await page.wait_for_selector("#memory li:has-text('tomatoes')", timeout=WAIT_MS)
            await page.locator("#memory-card").screenshot(path=shots / "7-memory.png")
            await page.screenshot(path=shots / "8-whole-page.png", full_page=True)

            await page.click("#logout")
            await page.wait_for_url(api + "/login", timeout=WAIT_MS)
            await page.goto(api + "/")
            assert page.url.endswith("/login")
            assert not errors, errors
        except Exception:
            await page.screenshot(path=shots / "failed.png", full_page=True)
            raise
        finally:
            await browser.close()


def test_the_household_page_in_a_browser(daemon: DaemonProcess, tmp_path: Path) -> None:
    run(daemon, "web", "password", stdin=PASSWORD + "\n")
    posts = Posts()
    try:
        run(daemon, "care", "caregivers", "add", "anna", posts.url("anna"))
        run(daemon, "devices", "add", DEVICE)  # known before its rule names it
        run(daemon, "devices", "set", DEVICE, "user=mum", "--wait", "0")
        run(daemon, "care", "rules", "add", "panic", "--user", "mum", "--kind", "event",
            "--sensor", "panic", "--ladder", "anna:5")  # fmt: skip
        memory = tmp_path / "memory.jsonl"
        line = {"content": "Mum grows tomatoes in the garden", "user": "mum", "importance": 6}
        memory.write_text(json.dumps(line) + "\n")
        run(daemon, "memory", "add", "--jsonl", str(memory), "--no-llm")
        shots = tmp_path / "screenshots"
        shots.mkdir()
        asyncio.run(scenario(daemon, shots))
        print(f"screenshots: {shots}")
    finally:
        posts.close()
    assert volume(daemon) == 30
    sent = daemon.api("POST", "/api/care/alerts.list", json={"all": True}, timeout=30).json()
    [alert] = sent["alerts"]
    assert alert["state"] == "acknowledged"
