"""What keeps the event loop responsive and an idle daemon asleep: model work on worker
threads below the loop's CPU priority, voice models loaded off the loop, no idle polling
where a change can be seen otherwise."""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import httpx
import pytest
import uvicorn

from fayd.config import load_config
from fayd.devices.hub import DeviceHub
from fayd.devices.microphones import Microphones
from fayd.devices.ports import VoiceModels
from fayd.devices.registry import DeviceRegistry, db_files
from fayd.models import resolve
from fayd.precedence import for_a_door
from fayd.protocol import AudioChunk
from fayd.service.api import ApiServer, QuietServer, build_app
from fayd.service.workers import DOOR_NICE, WORKER_NICE, thread_nice, worker_pool
from fayd.store import Store
from fayd.store import devices_records as reg

from .conftest import Frames

linux_only = pytest.mark.skipif(
    sys.platform != "linux", reason="per-thread nice values are Linux's (setpriority on a tid)"
)


def nice_of_a_thread_started_here() -> int:
    """What a library's thread pool started from this thread would run at."""
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(thread_nice()))
    thread.start()
    thread.join()
    return seen[0]


@linux_only
def test_worker_threads_run_below_the_loop_and_pass_it_on() -> None:
    async def scenario() -> tuple[int, int, int, int]:
        asyncio.get_running_loop().set_default_executor(worker_pool())
        base = thread_nice()
        worker = await asyncio.to_thread(thread_nice)
        child = await asyncio.to_thread(nice_of_a_thread_started_here)
        return base, worker, child, thread_nice()

    base, worker, child, loop_after = asyncio.run(scenario())
    assert worker == min(19, base + WORKER_NICE)
    assert child == worker  # onnxruntime / OpenMP / llama.cpp pools started from a worker
    assert loop_after == base  # the loop's own thread keeps its priority


def thread_nices(pid: int) -> dict[int, int]:
    out = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        out[int(task.name)] = int(fields[16])  # nice
    return out


@linux_only
def test_the_daemons_model_threads_run_below_its_loop(daemon) -> None:
    pid = daemon.runtime["pid"]
    nices = thread_nices(pid)
    loop_nice = nices.pop(pid)  # the main thread runs the event loop
    lowered = [tid for tid, nice in nices.items() if nice > loop_nice]
    # The models' thread pools (onnxruntime, CTranslate2's OpenMP, llama.cpp's) and the
    # workers that loaded them: far more than a handful.
    assert len(lowered) >= 4, nices


@pytest.mark.models
def test_a_devices_first_audio_loads_its_models_off_the_loop(tmp_path: Path) -> None:
    cfg = load_config(environ={"FAYD_PATHS_STATE_DIR": str(tmp_path)})
    store = Store(tmp_path / "fayd.db")
    models = VoiceModels(vad_path=resolve("vad").files["model"])

    class Silent:
        """The agent's side of the Listener port: nobody is being answered."""

        def speaking(self, device: str) -> bool:
            return False

        def playing_until(self, device: str) -> float:
            return 0.0

        def heard_early(self, device: str, *args: object) -> None:
            pass

        def resumed(self, device: str) -> None:
            pass

    async def scenario() -> tuple[int, DeviceHub]:
        mics = Microphones(models, cfg.speech, Silent())  # type: ignore[arg-type]
        registry = DeviceRegistry(store, Frames())
        hub = DeviceHub(store, registry, mics, Silent(), None, Frames())  # type: ignore[arg-type]
        assert not hub.talking
        ticks, stop = 0, False

        async def ticker() -> None:
            nonlocal ticks
            while not stop:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0)
        before = ticks
        chunk = AudioChunk(1, 0, 16000, b"\0\0" * 512, start=True)
        await hub.handle("mic-1", AudioChunk.KIND, chunk.encode())
        during = ticks - before
        stop = True
        await task
        return during, hub

    try:
        during, hub = asyncio.run(scenario())
    finally:
        store.close()
    mic = hub.microphones.mics["mic-1"]
    assert mic.voice.received == 1  # the frame reached a VAD
    assert mic.onset is not None  # barge-in is on by default
    # Loaded on the loop, the models would have kept every other task waiting meanwhile.
    assert during > 0
    assert hub.talking  # a device talks: the loop lag monitor samples closely


class StatusOnly:
    """The daemon's side of the API, as far as this test asks it."""

    async def status(self, lag_since: float = 0.0) -> dict:
        return {"ok": True}


def test_the_api_server_sleeps_until_told_to_exit() -> None:
    async def scenario() -> tuple[int, str | None]:
        api = ApiServer(build_app(StatusOnly()), "127.0.0.1", 0, "t" * 32)  # type: ignore[arg-type]
        config = uvicorn.Config(api.app, log_level="warning", lifespan="off", date_header=False)
        server = QuietServer(config)
        server.POLL_S = 3600.0  # no tick to fall back on: only exit() can end it
        serving = asyncio.create_task(server.serve(sockets=[api._bind()]))
        while not server.started:  # uvicorn has no event for it
            await asyncio.sleep(0.01)
        async with httpx.AsyncClient() as client:
            reply = await client.get(f"{api.url}/api/status")
        server.exit()
        await asyncio.wait_for(serving, 60)  # a bound on a hang, not a speed limit
        return reply.status_code, reply.headers.get("date")

    code, date = asyncio.run(scenario())
    assert code == 200
    assert date is None  # no Date header: nothing to refresh on a timer


def test_a_settings_write_by_another_process_changes_the_database_files(
    tmp_path: Path,
) -> None:
    daemon_store, cli_store = Store(tmp_path / "fayd.db"), None
    try:
        quiet = db_files(daemon_store.path)
        assert db_files(daemon_store.path) == quiet  # nothing written: no query needed
        cli_store = Store(tmp_path / "fayd.db")  # `fayd devices set` has its own connection
        cli_store.call(reg.set_settings, "k1", {"volume": 40})
        assert db_files(daemon_store.path) != quiet
    finally:
        daemon_store.close()
        if cli_store is not None:
            cli_store.close()


@linux_only
def test_a_doors_work_runs_below_the_rooms() -> None:
    """An OpenAI client's, an avatar's or fayd say's turn (fayd.precedence) runs its model
    work on threads of lower priority than a device's: the person in the room goes first."""

    async def scenario() -> tuple[int, int, int, int, int]:
        asyncio.get_running_loop().set_default_executor(worker_pool())
        base = thread_nice()
        room = await asyncio.to_thread(thread_nice)

        async def door_turn() -> tuple[int, int]:
            for_a_door()
            own = await asyncio.to_thread(thread_nice)
            started = await asyncio.create_task(asyncio.to_thread(thread_nice))
            return own, started

        door, door_child = await asyncio.create_task(door_turn())
        room_after = await asyncio.to_thread(thread_nice)  # the mark stayed in the door's task
        return base, room, door, door_child, room_after

    base, room, door, door_child, room_after = asyncio.run(scenario())
    assert room == room_after == min(19, base + WORKER_NICE)
    assert door == door_child == min(19, base + WORKER_NICE + DOOR_NICE)
    assert door > room or room == 19
