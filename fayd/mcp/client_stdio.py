"""The stdio transport, with a bound on one message's size.

The SDK's own ``stdio_client`` keeps reading a line until its newline: a server that
answers with 500 MB on one line would take the box's memory with it (a 10 MB answer
already costs about 100 MB while it is parsed). Here a line longer than ``max_bytes`` is
discarded as it arrives and reported as :class:`MessageTooLarge`, which the supervisor
treats as a fault of the server. Shutdown follows the MCP spec as the SDK does: stdin
closed, a grace period, then SIGTERM and SIGKILL to the server's own process group.
"""

from __future__ import annotations

import os
import signal
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress

import anyio
import mcp_types as types
from anyio.abc import Process
from mcp.client._transport import TransportStreams
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

#: Seconds for each step of the shutdown: exit after stdin closes, after SIGTERM, SIGKILL.
GRACE_S = 2.0
_GONE = (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError)


class MessageTooLarge(Exception):
    """The server sent one message longer than the transport's limit."""


def _parse(line: bytes) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        return exc


@asynccontextmanager
async def capped_stdio_client(
    params: StdioServerParameters, max_bytes: int
) -> AsyncIterator[TransportStreams]:
    process = await anyio.open_process(
        [params.command, *params.args],
        env=get_default_environment() | (params.env or {}),
        stderr=None,  # the server's complaints go to fayd's own stderr (the journal)
        start_new_session=True,  # its own process group: stopped whole, children too
    )
    read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)

    async def deliver(item: SessionMessage | Exception) -> None:
        with suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await read_send.send(item)  # after the session is gone: read on, and drop it

    async def read_stdout() -> None:
        assert process.stdout is not None
        line, oversized = bytearray(), False
        async with read_send:
            with suppress(*_GONE):
                async for chunk in process.stdout:
                    for i, piece in enumerate(chunk.split(b"\n")):
                        if i:  # a newline ended the line before this piece
                            if not oversized and line.strip():
                                await deliver(_parse(bytes(line)))
                            line, oversized = bytearray(), False
                        if oversized:
                            continue
                        line += piece
                        if len(line) > max_bytes:
                            line, oversized = bytearray(), True
                            limit = f"{max_bytes / 2**20:g} MB"
                            await deliver(MessageTooLarge(f"a message larger than {limit}"))

    async def write_stdin() -> None:
        assert process.stdin is not None
        async with write_recv:
            with suppress(*_GONE):
                async for message in write_recv:
                    json = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((json + "\n").encode())

    async with anyio.create_task_group() as group:
        group.start_soon(read_stdout)
        group.start_soon(write_stdin)
        try:
            yield read_recv, write_send
        finally:
            with anyio.CancelScope(shield=True):  # even when cancelled: no orphan server
                read_recv.close()
                write_send.close()
                await _stop(process)
            group.cancel_scope.cancel()


async def _stop(process: Process) -> None:
    assert process.stdin is not None
    with suppress(*_GONE):
        await process.stdin.aclose()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if await _exited(process, GRACE_S):
            break
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
    await _exited(process, GRACE_S)
    with anyio.move_on_after(GRACE_S):  # a grandchild outside the group may hold a pipe
        await process.aclose()


async def _exited(process: Process, timeout_s: float) -> bool:
    """Poll the return code: ``wait()`` would also wait for the pipes to close."""
    with anyio.move_on_after(timeout_s):
        while process.returncode is None:  # noqa: ASYNC110 - no event tells a child's exit
            await anyio.sleep(0.01)
    return process.returncode is not None
