"""The MCP client against a real MCP server that misbehaves (fayd.testing.bad_mcp_server):
a tool that hangs, a server that freezes, a 10 MB answer, a crash mid-call, garbage on the
wire, a command that does not exist, and stop leaving no child behind."""

from __future__ import annotations

import logging

from fayd.mcp.client import McpTools
from fayd.mcp.client_config import parse_server
from tests.mcp_client_helpers import alive, bad_server, children, state, until


async def _pid(tools: McpTools) -> int:
    answer = await tools.call("bad__pid", {})
    assert answer.ok, answer
    return int(answer.text)


async def test_a_hanging_tool_times_out_and_the_server_keeps_answering() -> None:
    async with McpTools([bad_server()]) as tools:
        await tools.wait_started(30)
        pid = await _pid(tools)
        hung = await tools.call("bad__hang", {})
        assert hung.error == "timed_out" and "2 s" in hung.detail
        echoed = await tools.call("bad__echo", {"text": "still here"})
        assert echoed.ok and echoed.text == "still here"
        # Only the tool hung: the health check passed and the server was not restarted.
        assert await _pid(tools) == pid and state(tools, "bad")["restarts"] == 0


async def test_a_frozen_server_is_restarted_and_then_answers() -> None:
    async with McpTools([bad_server()]) as tools:
        await tools.wait_started(30)
        frozen_pid = await _pid(tools)
        assert (await tools.call("bad__freeze", {})).error == "timed_out"
        # The health check after the timeout gets no answer either: down, then restarted.
        await until(lambda: state(tools, "bad")["restarts"] >= 1)
        assert "health check" in state(tools, "bad")["last_error"]
        await until(lambda: state(tools, "bad")["state"] == "up")
        assert await _pid(tools) != frozen_pid
        assert not alive(frozen_pid)  # the frozen one was killed, not abandoned


async def test_a_10_mb_answer_is_cut_to_the_limit() -> None:
    async with McpTools([bad_server(timeout_s=30)]) as tools:
        await tools.wait_started(30)
        big = await tools.call("bad__huge", {"chars": 10_000_000})
        assert big.ok and big.truncated, big.detail
        assert big.text.startswith("x" * 1000) and "x" * 1001 not in big.text
        assert "10,000,000 characters" in big.text  # the model is told it was cut
        assert len(big.text) < 1200
        small = await tools.call("bad__huge", {"chars": 1000})
        assert small.ok and not small.truncated and small.text == "x" * 1000


async def test_a_crash_mid_call_is_reported_and_the_server_restarted(caplog) -> None:
    caplog.set_level(logging.INFO, "fayd.mcp.client")
    async with McpTools([bad_server()]) as tools:
        await tools.wait_started(30)
        first = await _pid(tools)
        crashed = await tools.call("bad__crash", {})
        assert crashed.error == "server_down", crashed
        await until(lambda: state(tools, "bad")["restarts"] == 1)
        await until(lambda: state(tools, "bad")["state"] == "up")
        second = await _pid(tools)
        assert second != first and not alive(first)

        # Crash again: the back-off doubles (0.2 s, then 0.4 s) and it comes back again.
        assert (await tools.call("bad__crash", {})).error == "server_down"
        await until(lambda: state(tools, "bad")["restarts"] == 2)
        await until(lambda: state(tools, "bad")["state"] == "up")
        assert (await tools.call("bad__echo", {"text": "back"})).text == "back"
    downs = [r for r in caplog.records if "down" in r.getMessage()]
    ups = [r for r in caplog.records if " up:" in r.getMessage()]
    assert len(downs) == 2 and len(ups) == 3  # once per change


async def test_garbage_on_the_wire_restarts_the_server() -> None:
    async with McpTools([bad_server()]) as tools:
        await tools.wait_started(30)
        first = await _pid(tools)
        await tools.call("bad__garbage", {})
        await until(lambda: state(tools, "bad")["restarts"] >= 1)
        assert "not MCP" in state(tools, "bad")["last_error"]
        await until(lambda: state(tools, "bad")["state"] == "up")
        assert await _pid(tools) != first


async def test_a_tool_error_is_a_result_not_a_fault() -> None:
    async with McpTools([bad_server()]) as tools:
        await tools.wait_started(30)
        failed = await tools.call("bad__fail", {})
        assert failed.error == "tool_failed" and "on purpose" in failed.text
        assert state(tools, "bad")["state"] == "up" and state(tools, "bad")["restarts"] == 0


async def test_a_missing_command_is_reported_and_the_others_work(caplog) -> None:
    missing = parse_server(
        {"name": "gone", "command": ["/nonexistent/mcp-server"], "allow": ["*"], "backoff_s": 0.1}
    )
    async with McpTools([missing, bad_server()]) as tools:
        await tools.wait_started(30)
        gone = state(tools, "gone")
        assert gone["state"] == "down" and "no such command" in gone["reason"]
        assert gone["reason"].count("/nonexistent/mcp-server") == 1
        answer = await tools.call("gone__anything", {})
        assert answer.error == "unknown_tool"
        assert (await tools.call("bad__echo", {"text": "fine"})).text == "fine"
        await until(lambda: state(tools, "gone")["restarts"] >= 3)
    warnings = [
        r for r in caplog.records if r.levelno == logging.WARNING and "gone" in r.msg % r.args
    ]
    assert len(warnings) == 1  # down once, not once per retry


async def test_calls_to_one_server_do_not_wait_for_another() -> None:
    import asyncio

    slow, quick = bad_server(name="slow", timeout_s=3), bad_server(name="quick")
    async with McpTools([slow, quick]) as tools:
        await tools.wait_started(30)
        hanging = asyncio.create_task(tools.call("slow__hang", {}))
        echoed = await tools.call("quick__echo", {"text": "not blocked"})
        assert echoed.text == "not blocked" and not hanging.done()
        assert (await hanging).error == "timed_out"


async def test_stop_leaves_no_child_process_and_no_task() -> None:
    import asyncio

    before = children()
    tools = McpTools([bad_server(name="one"), bad_server(name="two")])
    await tools.start()
    await tools.wait_started(30)
    pids = {int((await tools.call(f"{n}__pid", {})).text) for n in ("one", "two")}
    assert len(pids) == 2 and pids <= children()
    hanging = asyncio.create_task(tools.call("one__hang", {}))  # a call in flight at stop
    await asyncio.sleep(0.2)
    await tools.stop()
    assert not any(alive(pid) for pid in pids)
    assert children() == before
    result = await asyncio.wait_for(hanging, 5)
    assert not result.ok
    assert {s["state"] for s in tools.status()} == {"stopped"}
    others = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    assert not [t for t in others if "mcp" in t.get_name()], others


async def test_arguments_that_are_not_a_json_object_are_refused() -> None:
    async with McpTools([bad_server()]) as tools:
        await tools.wait_started(30)
        for bad_args in (["a", "list"], {"text": float("nan")}, {1: "x"}, {"text": 5}):
            refused = await tools.call("bad__echo", bad_args)
            assert refused.error == "bad_arguments" and refused.detail, bad_args


async def test_an_answer_over_the_message_limit_is_dropped_and_the_server_restarted() -> None:
    async with McpTools([bad_server(max_message_mb=1)]) as tools:
        await tools.wait_started(30)
        first = await _pid(tools)
        big = await tools.call("bad__huge", {"chars": 3 * 2**20})
        assert big.error == "server_down" and "larger than 1 MB" in big.detail, big
        await until(lambda: state(tools, "bad")["restarts"] >= 1)
        await until(lambda: state(tools, "bad")["state"] == "up")
        assert await _pid(tools) != first
        # Under the limit it arrives whole (then cut for the model): the SDK's server sends
        # the text twice (content and structured content), 800 KB in all.
        fits = await tools.call("bad__huge", {"chars": 400_000})
        assert fits.ok and fits.truncated
