"""Tables and documents as data (benchstat's benchtab): what the code that builds output returns, and what every
format module of render/ lays out (benchstat's texttab). A table knows its columns, its rows and the columns a narrow
terminal loses first; nothing here knows a format.

A Document is the blocks a reader sees (headings, notes, lines, tables, figures) and, for a program, the same
content as data: `data` (what JSON writes), `flat` (the one table CSV writes), `suite` (JUnit's test cases).
`Aside`s are said in place where a reader sees the blocks, and beside the output (stderr) where a program reads
the data.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Generic, Iterator, Sequence, TypeVar, Union, overload

from orchestrator.analysis.verdict import Case

T = TypeVar("T")


class Later(Sequence[T], Generic[T]):
    """Items made when a format first reads them: a document gives its rows for readers and for programs, and each
    format reads one of them (a 50,000-row diff builds only what its format writes)."""

    def __init__(self, make: Callable[[], Sequence[T]]) -> None:
        self._make: Callable[[], Sequence[T]] | None = make
        self._items: Sequence[T] = []

    @property
    def items(self) -> Sequence[T]:
        if self._make is not None:
            self._items, self._make = self._make(), None
        return self._items

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        return self.items[index]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)


@dataclass
class Table:
    """Columns and rows of cells: a cell is a str, a number (a figure kept raw: formats show it as they do) or None
    (empty)."""

    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    drop: Sequence[str] = ()  # the columns a terminal too narrow loses first, in that order (then from the right)
    readable: bool = False  # figures (floats) as people read them (units.fmt_number) where a person reads the format


@dataclass
class Heading:
    text: str
    level: int = 2


@dataclass
class Note:
    """A paragraph of prose about what is shown."""

    text: str


@dataclass
class Lines:
    """Lines of host text under an optional title (text of sslbench's own, shown as it is); `bullets`: a list."""

    lines: list[str]
    title: str = ""
    bullets: bool = False  # each line an item of a list, marked as the format marks one
    prefix: str = ""  # else before each line, as it is ("note: ")
    run_on: bool = False  # on the line after the block before, not a blank line apart


@dataclass
class Aside:
    """A line a reader sees in place, and a program beside its data (stderr)."""

    text: str
    run_on: bool = False


@dataclass
class Figure:
    slug: str
    title: str
    png: bytes


@dataclass
class Suite:
    """CI test cases under a name, judged against a threshold (None: nothing judged)."""

    name: str
    cases: Sequence[Case]
    pct: float | None = None


Block = Union[Heading, Note, Lines, Aside, Table, Figure]


@dataclass
class Document:
    blocks: list[Block] = field(default_factory=list)
    data: Any = None  # what JSON writes (a Later too); None: every table's rows as objects keyed by its columns
    data_lines: bool = False  # JSON: one record of `data` a line (json's C encoder: a 50,000-row diff)
    flat: Table | None = None  # what CSV writes; None: the document's one table
    suite: Suite | None = None  # what JUnit writes

    def tables(self) -> list[Table]:
        return [block for block in self.blocks if isinstance(block, Table)]
