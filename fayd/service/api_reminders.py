"""The control API's reminders (``fayd reminders`` uses them while the daemon runs): list,
add, cancel; and, under the test harness only, moving the daemon's clock."""

from __future__ import annotations

from typing import Any, Protocol

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from fayd.reminders import BadReminder, ReminderBook
from fayd.reminders.clock import SystemClock


class Reminding(Protocol):
    @property
    def book(self) -> ReminderBook: ...

    @property
    def clock(self) -> SystemClock: ...

    @property
    def clock_movable(self) -> bool:
        """Only under the test harness (``FAYD_TEST_CLOCK``)."""
        ...


class Holder(Protocol):
    """What these routes ask of the daemon: its reminders, once it has started them."""

    @property
    def reminding(self) -> Reminding | None: ...


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def routes(holder: Holder, read_body: Any) -> list[Route]:
    """``read_body``: the API's JSON-object reader (it refuses what text cannot hold)."""

    def started() -> Reminding | JSONResponse:
        found = holder.reminding
        return found if found is not None else _error("fayd is still starting", 503)

    async def get_reminders(request: Request) -> JSONResponse:
        found = started()
        if isinstance(found, JSONResponse):
            return found
        user = request.query_params.get("user")
        everything = request.query_params.get("all") in ("1", "true")
        rows = await found.book.list(user, everything=everything)
        return JSONResponse({"reminders": rows})

    async def post_reminder(request: Request) -> JSONResponse:
        found = started()
        if isinstance(found, JSONResponse):
            return found
        try:
            body = await read_body(request)
            row = await found.book.add_request(body, source="api")
        except (ValueError, BadReminder) as exc:
            return _error(str(exc), 400)
        return JSONResponse(row)

    async def delete_reminder(request: Request) -> JSONResponse:
        found = started()
        if isinstance(found, JSONResponse):
            return found
        try:
            reminder = int(request.path_params["reminder"])
        except ValueError:
            return _error("the reminder's id must be a number", 400)
        if not await found.book.cancel(reminder):
            return _error(f"no active reminder {reminder}", 404)
        return JSONResponse({"id": reminder, "state": "cancelled"})

    async def post_clock(request: Request) -> JSONResponse:
        """Tests only: {"offset_s": S} runs the daemon's clock S seconds ahead."""
        found = started()
        if isinstance(found, JSONResponse):
            return found
        if not found.clock_movable:
            return _error("the clock can be moved only under the test harness", 403)
        try:
            body = await read_body(request)
        except ValueError as exc:
            return _error(str(exc), 400)
        offset = body.get("offset_s")
        if isinstance(offset, bool) or not isinstance(offset, int | float):
            return _error("'offset_s' must be a number of seconds", 400)
        found.clock.move(float(offset))
        return JSONResponse({"offset_s": float(offset), "now": found.clock.now().isoformat()})

    return [
        Route("/api/reminders", get_reminders, methods=["GET"]),
        Route("/api/reminders", post_reminder, methods=["POST"]),
        Route("/api/reminders/{reminder}", delete_reminder, methods=["DELETE"]),
        Route("/api/test/clock", post_clock, methods=["POST"]),
    ]
