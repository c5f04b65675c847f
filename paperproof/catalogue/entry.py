"""A callable found in a repository by reading its source with `ast` (never by importing it)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, PrivateAttr, model_validator

from paperproof.catalogue.closure import Closure
from paperproof.catalogue.evidence import Evidence

EntryKind = Literal["function", "method", "class"]
ParamKind = Literal["positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword"]


class Param(BaseModel):
    """One parameter as written: annotation and default are source text, never evaluated."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: ParamKind = "positional_or_keyword"
    annotation: str | None = None
    default: str | None = None
    doc: str | None = None
    # Where a default that is evaluated when the def runs (a call, not a literal) sits in the
    # file: (line, column, end line, end column), columns in UTF-8 bytes as `ast` counts them.
    default_span: tuple[int, int, int, int] | None = None

    @property
    def required(self) -> bool:
        return self.default is None and self.kind not in ("var_positional", "var_keyword")


CLOSURE_FIELDS = frozenset({"closure", "closure_names", "closure_imports", "closure_modules"})


class Entry(BaseModel):
    """An extracted function, method or class.

    `code_sha256` covers exactly `source`, the segment of the file from the first decorator to
    the last line. `closure` is a module that defines this entry together with the module-level
    imports, constants and helpers it needs, so it can run without executing the rest of its
    module; `closure_names` lists what was taken besides the entry itself. `closure_modules`
    gives the content hash of every module of the repository that the closure may import.
    The four are made the first time one is read (`catalogue.closure`): only entries that run need them.
    """

    model_config = ConfigDict(frozen=True)

    repo: str
    path: str
    module: str
    name: str
    qualname: str
    kind: EntryKind
    lineno: int
    end_lineno: int
    source: str
    code_sha256: str
    params: list[Param] = Field(default_factory=list)
    returns: str | None = None
    docstring: str | None = None
    returns_doc: str | None = None
    decorators: list[str] = Field(default_factory=list)
    methods: list[str] = Field(default_factory=list)
    method_params: dict[str, list[Param]] = Field(default_factory=dict)
    # How the repository imports it: the module's dotted name with its package root on `sys.path`
    # (`src/pkg/mod.py` is `pkg.mod`), and the checkout-relative folders on that path (`catalogue.imports`).
    import_name: str = ""
    sys_path: list[str] = Field(default_factory=list)
    evidence: Evidence = Field(default_factory=Evidence)
    _closure: Closure = PrivateAttr(default_factory=Closure)  # set by extraction, right after it makes the entry

    @model_validator(mode="wrap")
    @classmethod
    def _closure_given(cls, data: Any, handler: ModelWrapValidatorHandler[Entry]) -> Entry:
        """An entry made with its closure as values (`Entry(closure=..., closure_names=...)`) keeps them."""
        given = {}
        if isinstance(data, dict) and not CLOSURE_FIELDS.isdisjoint(data):
            data = dict(data)
            given = {name: data.pop(name) for name in CLOSURE_FIELDS if name in data}
        entry = handler(data)
        if given:
            entry._closure = Closure.fixed(list(given.get("closure_names", [])), list(given.get("closure_imports", [])),
                                           str(given.get("closure", "")), dict(given.get("closure_modules", {})))
        return entry

    @property
    def closure_source(self) -> Closure:
        return self._closure

    @property
    def closure(self) -> str:
        return self._closure.text

    @property
    def closure_names(self) -> list[str]:
        return self._closure.names

    @property
    def closure_imports(self) -> list[str]:
        return self._closure.imports

    @property
    def closure_modules(self) -> dict[str, str]:  # path -> sha256 of the modules it may import
        return self._closure.modules

    @property
    def code_sha256_prefix(self) -> str:
        return self.code_sha256[:16]
