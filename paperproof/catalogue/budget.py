"""The CPU time the static analysis of one repository may take, and the note its record gets when it is cut.

Reading a repository with `ast` (extraction with its evidence, then the call-site scan) is made near-linear in the
repository's size, but a hostile repository can still be large and dense within the caps on what is read. Each
repository therefore gets `ANALYSIS_SECONDS` of the builder's CPU time (the analysing thread's, so other threads of
the build are not charged to it) across both stages; past it the stage stops where it is, keeps what it finished,
and the repository's record says "analysis cut" with the reason. The build goes on with the next repository.
"""

from __future__ import annotations

import time

from paperproof.catalogue.repo_record import RepoRecord

ANALYSIS_SECONDS = 60.0  # CPU seconds per repository, extraction and call-site scan together
CUT = "analysis cut"  # how a record's note begins its part when the budget was spent


class Budget:
    """CPU seconds left to one repository's analysis; `spent` carries what an earlier stage already used."""

    def __init__(self, seconds: float | None = None, spent: float = 0.0) -> None:
        self.seconds = ANALYSIS_SECONDS if seconds is None else seconds
        self._before = spent
        self._start = time.thread_time()
        self.cut: str | None = None  # where it was spent, once it was

    @property
    def spent(self) -> float:
        """CPU seconds used so far, earlier stages included."""
        return self._before + time.thread_time() - self._start

    def over(self, where: str) -> bool:
        """Whether the budget is spent; the first time it is, remembers `where` (what was being read)."""
        if self.cut is None and self.spent > self.seconds:
            self.cut = where
        return self.cut is not None

    def note(self) -> str:
        return f"{CUT}: its static analysis passed {self.seconds:g} CPU seconds while reading {self.cut}; " \
               "what was read before is kept"


def cut_note(record: RepoRecord) -> str | None:
    """The record's note on the cut, if its analysis was cut (a sample of it says so: `verify` shows no record)."""
    note = record.note or ""
    return note[note.index(CUT):] if CUT in note else None


def noted(record: RepoRecord, budget: Budget) -> RepoRecord:
    """`record` with the cut in its note (once, whichever stage spent the budget); unchanged when not cut."""
    if budget.cut is None or CUT in (record.note or ""):
        return record
    return record.model_copy(update={"note": "; ".join(filter(None, (record.note, budget.note())))})
