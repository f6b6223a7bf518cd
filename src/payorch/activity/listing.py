"""Reading the activity log: the list (GET /v1/admin/activity, the dashboard's Activity page),
for a caller holding ``activity:read``. Apart from service.py (``record``), which the change sites
of every domain import: this module reads the caller, so writing never depends on it."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection

from payorch.activity import repository
from payorch.activity.records import Entry
from payorch.activity.schemas import ActivityListQuery
from payorch.auth.service import Caller
from payorch.errors import Forbidden
from payorch.pagination import Page, page_of

READ_SCOPE = "activity:read"


def require_read(caller: Caller) -> None:
    """403 FORBIDDEN naming the scope for a key or a person without ``activity:read``: for the
    dashboard's export download of the activity log (its page needs exports:read; the API's
    operations are checked in one place, payorch.access.operations)."""
    if not caller.permits(READ_SCOPE):
        raise Forbidden("This key or role may not read the activity log.", {"required_scope": READ_SCOPE})


async def list_entries(conn: AsyncConnection, caller: Caller, query: ActivityListQuery) -> Page[Entry]:
    """The caller's application's entries matching the query (the caller holds activity:read:
    payorch.access.operations, payorch.access.pages), newest first, a page at a time:
    the cursor is the seq of the previous page's last entry (the chain's own order; ids follow
    the wall clock at millisecond grain, so two entries of one millisecond would order by
    chance, and a test's frozen clock does not move them)."""
    found = await repository.newest(
        conn,
        query.of(caller.application_id),
        before_seq=None if query.cursor is None else int(query.cursor),
        limit=query.limit + 1,
    )
    return page_of(found, query.limit, _position)


def _position(entry: Entry) -> str:
    return str(entry.seq)
