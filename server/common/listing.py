"""One page of a catalogue list: by id, or ranked by name search, behind a cursor."""

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from server.common.search import Hit, set_search_threshold
from server.pagination import Key, Keyset, Page, make_page, resolve_limit
from server.settings import ServerOptions

T = TypeVar("T")


class ListQuery(Protocol):
    """What every searchable list endpoint's query model has."""

    @property
    def search(self) -> str | None: ...

    @property
    def cursor(self) -> str | None: ...

    @property
    def limit(self) -> int | None: ...

    def scope(self) -> dict[str, Any]: ...


Q = TypeVar("Q", bound=ListQuery)
Fetch = Callable[[AsyncSession, Q, tuple[Key, ...] | None, int], Awaitable[Sequence[Hit[T]]]]


async def list_page(
    session: AsyncSession,
    query: Q,
    options: ServerOptions,
    keysets: tuple[Keyset, Keyset],
    fetch: Fetch[Q, T],
) -> Page[T]:
    """`keysets` is (by id, by search rank); `fetch` returns LIMIT n+1 hits after a position."""
    by_id, by_rank = keysets
    keyset = by_id if query.search is None else by_rank
    scope = query.scope()
    after = keyset.decode(query.cursor, scope)
    limit = resolve_limit(query.limit, options)
    if query.search is not None:
        await set_search_threshold(session, options.search_threshold)
    rows = await fetch(session, query, after, limit)
    page = make_page(rows, limit, keyset, scope, lambda hit: hit.key)
    return Page([hit.item for hit in page.items], page.next_cursor)
