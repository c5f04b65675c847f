"""The case process: define the entry, make one call on inputs it was given, hand back what came of it.

This runs inside the sandbox in a process of its own, forked by the harness (`runner.harness`)
for one fixture case, next to hostile code. It holds nothing of the run: no other case, no
report, no channel but the write end of its own hand-back pipe. What it hands back is the
call's value (or exception), as contents in the format `runner.wire` reads, never a summary:
the harness parses it strictly, summarises it, and decides the case's outcome itself.

After a hand-back the process stops itself (SIGSTOP); the harness accepts a hand-back only from
a process it finds stopped, with nothing else on the channel, then kills it. A process that
exits, is killed or runs out of time first "exited without returning", whatever it wrote.

Everything that runs after sample code (calling, packing the value, describing an exception,
writing, stopping) runs in generator frames started before the entry is defined, on names bound
as their locals then: a sample that rebinds this module's names, patches builtins or `sys.modules`,
or swaps the code object of any function changes nothing of what those frames run. What no
process can keep from the code inside it is the choice of bytes it hands back for its own case.
Imports: the standard library only; numpy, torch and pandas are found in `sys.modules`.
"""

from __future__ import annotations

import os
import signal
import struct
import sys
import types
from typing import NoReturn

TYPE_CHECKING = False  # true to a type checker only: annotations import nothing here (see the docstring)
if TYPE_CHECKING:
    from collections.abc import Generator
    from typing import Any

MAGIC = b"PPV1"  # the header of `runner.wire`
MAX_ITEMS = 64  # container elements sent individually
MAX_KEYS = 256
MAX_TEXT = 400
CONTAINERS = {"ndarray": 0, "Tensor": 1, "Series": 2, "list": 3, "tuple": 4, "PIL.Image": 5}
SENT_DTYPES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                         "float16", "float32", "float64"})


def _mib(size: float) -> str:
    return f"{size / 1024**2:.0f} MiB" if size < 1024**3 else f"{size / 1024**3:.1f} GiB"


# --- defining and calling ---------------------------------------------------------------------


# A module whose top level computes longer than this, in CPU seconds (a training script), is defined from its
# closure. CPU time, not wall time: heavy imports on a busy machine are slow, not a training loop.
LOAD_SECONDS = 6.0


class _LoadTimedOut(BaseException):
    """Raised by our alarm when a module's top level runs past LOAD_SECONDS; not an Exception, so few catch it."""


def _as_written_for(request: dict) -> None:
    """The libraries as the repository's code was written for: its environment after the runner's own packages
    (`runner.environment`), stand-ins for the modules the runner lacks (`fixtures.stubs`), and the shims that keep
    a GPU's, an older NumPy's and an older PyTorch's code running here."""
    if request.get("environment") and request["environment"] not in sys.path:
        sys.path.append(request["environment"])
    from paperproof.fixtures import stubs

    stubs.install(request.get("stubs", []))
    from paperproof.runner import cuda_on_cpu, legacy_numpy, legacy_torch

    cuda_on_cpu.install()  # without a GPU, code that moves tensors to CUDA keeps them on the CPU
    legacy_numpy.install()  # `np.Inf`, `np.float`: names NumPy removed, with their old meanings
    legacy_torch.install()  # `torch.load` of a pickled checkpoint, as before PyTorch 2.6


def _define(request: dict) -> tuple[object, str]:
    """The entry object, and how it was had: its module imported for real, as its repository imports it
    (its package root and the folders its scripts add on `sys.path`, `__main__` blocks left alone, so module
    globals built by running code exist), or, where that module's top level cannot run, its closure executed
    as its module would (`catalogue.extract`). The second value says which, and why."""
    import importlib

    root = request["snapshot"]
    filename = os.path.join(root, request["path"])
    module_dir = os.path.dirname(filename)
    name = request.get("import_name") or request["module"]
    roots = [os.path.normpath(os.path.join(root, rel)) for rel in request.get("sys_path") or [""]]
    package_root = os.path.normpath(os.path.join(root, *[".."] * name.count("."), os.path.dirname(request["path"])))
    if request["path"].endswith("__init__.py"):
        package_root = os.path.dirname(package_root)
    for directory in reversed(list(dict.fromkeys([module_dir, package_root, *roots, root]))):
        if directory in sys.path:
            sys.path.remove(directory)
        sys.path.insert(0, directory)
    _as_written_for(request)
    sys.argv = [filename]  # a top-level argparse reads its defaults, not the runner's arguments
    clash = sys.modules.get(name.split(".")[0])
    if request.get("closure_only"):  # an earlier case of this run found its top level cannot run
        why = str(request["closure_only"]).split(" raised ", 1)[-1] + " (on the run's first case)"
    elif clash is not None and not (getattr(clash, "__file__", None) or "").startswith(root + os.sep):
        why = f"the name `{name}` is taken by a module the runner imports"
    else:
        def timed_out(*_):
            raise _LoadTimedOut(f"its top level computed past {LOAD_SECONDS:g} s of CPU time")

        previous = signal.signal(signal.SIGPROF, timed_out)
        signal.setitimer(signal.ITIMER_PROF, LOAD_SECONDS)
        try:
            module = importlib.import_module(name)
            found = module.__dict__[request["name"]]
        except BaseException as exc:  # noqa: BLE001 - anything its top level does; the closure is the fallback
            why = f"{type(exc).__name__}: {str(exc)[:200]}"
        else:
            return found, f"imported `{name}` as its repository does"
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)
        for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[loaded]  # a half-run module is not the one the closure defines
    module = types.ModuleType(name)
    module.__file__ = filename
    is_package = request["path"].endswith("__init__.py")
    module.__package__ = name if is_package else name.rpartition(".")[0]
    sys.modules[name] = module
    code = compile(request["closure"], filename, "exec", dont_inherit=True)
    exec(code, module.__dict__)  # noqa: S102 - this is the sandbox; the code is the sample's own
    return module.__dict__[request["name"]], f"defined from its closure: importing `{name}` raised {why}"


def caller():
    """The one way sample code is called: send it (callable, args, kwargs), and it answers
    (value, None) or (None, exception). Start it (`next`) before any sample code runs."""
    _base = BaseException
    answer = None
    while True:
        target, args, kwargs = yield answer
        try:
            answer = (target(*args, **kwargs), None)
        except _base as exc:  # noqa: BLE001 - the sample's failure is the result
            answer = (None, exc)


def _protocols(call, drive):
    """How a case calls its entry, on `call` (a started `caller`'s send): once (`call`), once per
    sample collecting a list (`per_sample`), construct then call each method (`class`), or on a
    training run through the protocol its code declares (`protocol`: `drive` is
    `runner.protocols.drive`, bound before any sample code runs)."""
    _getattr, _list, _dict, _base = getattr, list, dict, BaseException
    answer = None
    while True:
        target, how, job = yield answer
        if how == "per_sample":
            values = _list()
            answer = (values, None)
            for args, kwargs in job:
                value, error = call((target, args, kwargs))
                if error is not None:
                    answer = (None, error)
                    break
                values.append(value)
        elif how == "class":
            (args, kwargs), methods = job
            instance, error = call((target, args, kwargs))
            answer = (None, error)
            if error is None:
                results = _dict()
                answer = (results, None)
                for name, (margs, mkwargs) in methods:
                    try:
                        method = _getattr(instance, name)
                    except _base as exc:  # noqa: BLE001 - the sample's own attribute
                        answer = (None, exc)
                        break
                    value, error = call((method, margs, mkwargs))
                    if error is not None:
                        answer = (None, error)
                        break
                    results[name] = value
        elif how == "protocol":
            case, device = job
            answer = call((drive, (target, case, device), {}))
        else:
            args, kwargs = job
            answer = call((target, args, kwargs))


def _binds(target, plan: dict) -> bool:
    """Whether our arguments fit the signature, so a TypeError can be told apart from a wrong call."""
    import inspect

    try:
        inspect.signature(target).bind(*[None] * plan["positional"], **{name: None for name in plan["keywords"]})
    except TypeError:
        return False
    except ValueError:  # no signature to inspect (builtins, some C extensions)
        pass
    return True


# --- packing a value --------------------------------------------------------------------------


def _packer(cap: int):
    """Send it a value; it answers (kind, body): `V` and the value's contents in the wire format,
    or `U` and why they cannot be sent (over `cap` bytes, a repr that fails). Iterative, bounded
    at depth 3 and at MAX_ITEMS elements per container, like the summary the harness makes."""
    _isinstance, _type, _len, _repr, _str, _int, _float, _all, _list, _dict, _vars, _reversed = (
        isinstance, type, len, repr, str, int, float, all, list, dict, vars, reversed)
    _base_exception, _value_error = BaseException, ValueError
    _bool, _str_t, _bytes, _bytearray, _list_t, _tuple, _dict_t, _range = bool, str, bytes, bytearray, list, tuple, dict, range
    text_encode, join, pack = str.encode, b"".join, struct.pack
    int_repr, float_hex = int.__repr__, struct.Struct("<d").pack
    numpy, torch, pandas = sys.modules.get("numpy"), sys.modules.get("torch"), sys.modules.get("pandas")
    ndarray = numpy.ndarray if numpy is not None else ()
    np_bool = numpy.bool_ if numpy is not None else ()
    np_integer = numpy.integer if numpy is not None else ()
    np_floating = numpy.floating if numpy is not None else ()
    # None where numpy is not loaded; an array to send is only ever made where it is
    asarray: Any = numpy.asarray if numpy is not None else None
    contiguous: Any = numpy.ascontiguousarray if numpy is not None else None
    tobytes: Any = numpy.ndarray.tobytes if numpy is not None else None
    np_dtype: Any = numpy.dtype if numpy is not None else None
    tensor = torch.Tensor if torch is not None else ()
    frame_type = pandas.DataFrame if pandas is not None else ()
    series_type = pandas.Series if pandas is not None else ()
    simple_namespace = types.SimpleNamespace
    containers, sent_dtypes, max_items, max_keys, max_text = CONTAINERS, SENT_DTYPES, MAX_ITEMS, MAX_KEYS, MAX_TEXT
    mib = _mib
    answer = None
    while True:
        value = yield answer
        out: list[bytes] = []
        size = 0
        stack: list[tuple[Any, int, bytes | None]] = [(value, 0, None)]  # (value, depth, or raw bytes to send)
        try:
            while stack:
                v, depth, raw = stack.pop()
                if raw is not None:
                    out.append(raw)
                    continue
                # refuse values over the cap before touching their contents
                claimed = None
                if _isinstance(v, ndarray):
                    claimed = v.nbytes
                elif _isinstance(v, tensor):
                    claimed = v.nelement() * v.element_size()
                elif _isinstance(v, (_str_t, _bytes, _bytearray)):
                    claimed = _len(v)
                elif _isinstance(v, (_list_t, _tuple, _dict_t)):
                    claimed = _len(v) * 8
                if claimed is not None and claimed > cap:
                    raise _value_error(f"the returned {_type(v).__name__} is {mib(claimed)}, over the {mib(cap)} cap on returned values")
                array, container = None, ""  # container: a key of CONTAINERS wherever array is set
                if v is None:
                    out.append(b"N")
                elif _isinstance(v, _bool) or _isinstance(v, np_bool):
                    out.append(b"B\x01" if v else b"B\x00")
                elif _isinstance(v, _int):
                    try:
                        digits = text_encode(int_repr(v), "ascii")
                        out.append(b"I" + pack("<I", _len(digits)) + digits)
                    except _value_error:  # more digits than int->str conversion allows
                        out.append(b"J" + pack("<BQ", v < 0, v.bit_length()))
                elif _isinstance(v, _float):
                    out.append(b"F" + float_hex(_float(v)))
                elif _isinstance(v, _str_t):
                    data = text_encode(v, "utf-8", "surrogatepass")
                    out.append(b"S" + pack("<I", _len(data)) + data)
                elif _isinstance(v, ndarray):
                    array, container = v, "ndarray"
                elif _isinstance(v, np_integer):
                    label = text_encode(_str(v.dtype), "utf-8")
                    digits = text_encode(int_repr(_int(v)), "ascii")
                    out.append(b"G" + pack("<I", _len(label)) + label + b"I" + pack("<I", _len(digits)) + digits)
                elif _isinstance(v, np_floating):
                    label = text_encode(_str(v.dtype), "utf-8")
                    out.append(b"G" + pack("<I", _len(label)) + label + b"F" + float_hex(_float(v)))
                elif _isinstance(v, tensor):
                    t = v.detach().cpu()
                    if _str(t.dtype) in ("torch.bfloat16",):
                        t = t.float()
                    array, container = t.numpy(), "Tensor"
                elif _isinstance(v, frame_type):
                    columns = [_str(c) for c in v.columns]
                    rows, cols = v.shape
                    head = [b"P", pack("<QQI", rows, cols, _len(columns))]
                    for name in columns:
                        data = text_encode(name, "utf-8", "surrogatepass")
                        head.append(pack("<I", _len(data)) + data)
                    shown = columns[:max_items] if depth < 3 else []
                    head.append(pack("<BI", depth < 3, _len(shown)))
                    out.append(join(head))
                    for index in _reversed(_range(_len(shown))):
                        stack.append((v.iloc[:, index].to_numpy(), depth + 1, None))
                        data = text_encode(shown[index], "utf-8", "surrogatepass")
                        stack.append((None, 0, pack("<I", _len(data)) + data))
                elif _isinstance(v, series_type):
                    array, container = v.to_numpy(), "Series"
                elif _isinstance(v, (_list_t, _tuple)):
                    kind = "tuple" if _isinstance(v, _tuple) else "list"
                    numeric = _len(v) > 0 and _all(_isinstance(x, (_int, _float)) and not _isinstance(x, _bool) for x in v)
                    if numeric and depth < 3 and asarray is not None:
                        array, container = asarray(_list(v)), kind
                    else:
                        items = _list(v[:max_items]) if depth < 3 else []
                        out.append((b"T" if kind == "tuple" else b"L") + pack("<QI", _len(v), _len(items)))
                        for item in _reversed(items):
                            stack.append((item, depth + 1, None))
                elif _isinstance(v, (_dict_t, simple_namespace)) or _type(v).__name__ == "Namespace":
                    tag = b"D"
                    if not _isinstance(v, _dict_t):
                        tag, v = b"M", _dict(_vars(v))
                    keys = [text_encode(_str(k)[:max_text], "utf-8", "surrogatepass") for k in _list(v)[:max_keys]]
                    pairs = _list(v.items())[:max_items] if depth < 3 else []
                    head = [tag, pack("<QI", _len(v), _len(keys))]
                    head.extend(pack("<I", _len(k)) + k for k in keys)
                    head.append(pack("<I", _len(pairs)))
                    out.append(join(head))
                    for key, item in _reversed(pairs):
                        stack.append((item, depth + 1, None))
                        data = text_encode(_str(key)[:max_text], "utf-8", "surrogatepass")
                        stack.append((None, 0, pack("<I", _len(data)) + data))
                elif _type(v).__module__.startswith("PIL.") and asarray is not None:
                    array, container = asarray(v), "PIL.Image"
                else:
                    name = f"{_type(v).__module__}.{_type(v).__qualname__}"
                    try:
                        text = _repr(v)
                    except _base_exception as exc:  # noqa: BLE001 - the value's own __repr__ is sample code
                        raise _value_error(f"cannot describe a value of type {name}: its repr raised {_type(exc).__name__}") from None
                    if not _isinstance(text, _str_t):
                        raise _value_error(f"cannot describe a value of type {name}: its repr is not a string")
                    name_bytes = text_encode(name, "utf-8", "surrogatepass")[:1024]
                    text_bytes = text_encode(text[:max_text], "utf-8", "surrogatepass")
                    out.append(b"O" + pack("<I", _len(name_bytes)) + name_bytes + pack("<I", _len(text_bytes)) + text_bytes)
                if array is not None:
                    array = asarray(array)
                    shape = pack("<B", array.ndim) + join(pack("<Q", d) for d in array.shape)
                    code = pack("<B", containers[container])
                    kind = array.dtype.kind
                    if kind in "biuf":
                        name = array.dtype.name
                        if name not in sent_dtypes:
                            name = {"f": "float64", "i": "int64", "u": "uint64", "b": "bool"}[kind]
                        data = tobytes(contiguous(array, dtype=np_dtype(name).newbyteorder("<")))
                        label = text_encode(name, "ascii")
                        out.append(b"A" + code + pack("<I", _len(label)) + label + shape + pack("<Q", _len(data)))
                        out.append(data)
                    else:
                        label = text_encode(_str(array.dtype), "utf-8", "surrogatepass")[:200]
                        reprs = [text_encode(_repr(x)[:40], "utf-8", "surrogatepass") for x in array.ravel()[:max_items]]
                        out.append(b"R" + code + pack("<I", _len(label)) + label + shape + pack("<I", _len(reprs))
                                   + join(pack("<I", _len(r)) + r for r in reprs))
                size += _len(out[-1]) if out else 0
                if size > cap:
                    raise _value_error(f"its contents pass the {mib(cap)} cap on returned values")
            answer = (b"V", join(out))
        except _base_exception as exc:  # noqa: BLE001 - the value's own methods are sample code
            try:
                reason = exc.args[0] if _isinstance(exc, _value_error) and exc.args and _isinstance(exc.args[0], _str_t) \
                    else f"cannot describe the value: {_type(exc).__name__}"
            except _base_exception:  # noqa: BLE001
                reason = "cannot describe the value"
            data = text_encode(reason[:max_text], "utf-8", "surrogatepass")
            answer = (b"U", b"S" + pack("<I", _len(data)) + data)
        del out, stack, value  # let the value go before the next one


# --- describing an exception ------------------------------------------------------------------


def _describer(entry_file: str, entry_name: str):
    """Send it (exception, binding); it answers a dict of plain fields for the harness to classify."""
    _isinstance, _type, _str, _getattr, _base_exception = isinstance, type, str, getattr, BaseException
    system_exit, os_error, memory_error, runtime_error = SystemExit, OSError, MemoryError, RuntimeError
    not_found, module_not_found = FileNotFoundError, ModuleNotFoundError
    gaierror = sys.modules["socket"].gaierror if "socket" in sys.modules else ()
    _int, max_text = int, MAX_TEXT
    answer = None
    while True:
        exc, binding = yield answer
        try:
            tb = exc.__traceback__
            innermost, line = None, None
            while tb is not None:
                innermost = tb
                if tb.tb_frame.f_code.co_filename == entry_file:  # the deepest line in the repository's file
                    line = tb.tb_lineno
                tb = tb.tb_next
            code = innermost.tb_frame.f_code if innermost is not None else None
            if binding:
                where = "binding"
            elif code is not None and code.co_filename == entry_file and code.co_name in (entry_name, "__init__"):
                where = "entry"
            else:
                where = "callee"
            kind = _type(exc)
            try:
                message = f"exit requested with status {exc.code!r}" if _isinstance(exc, system_exit) else _str(exc)
            except _base_exception:  # noqa: BLE001 - the exception's own __str__ is sample code
                message = "(its message could not be read)"
            module = kind.__module__
            errno = _getattr(exc, "errno", None) if _isinstance(exc, os_error) else None
            filename = _getattr(exc, "filename", None) if _isinstance(exc, os_error) else None
            answer = {
                "type": kind.__qualname__ if module in ("builtins", "__main__") else f"{module}.{kind.__qualname__}",
                "message": _str(message)[:max_text],
                "where": where,
                "missing_module": _str(exc.name) if _isinstance(exc, module_not_found) and exc.name else None,
                "line": line,
                "errno": errno if _isinstance(errno, _int) else None,
                "filename": _str(filename)[:max_text] if filename is not None else None,
                "os_error": _isinstance(exc, os_error),
                "not_found": _isinstance(exc, not_found),
                "gaierror": _isinstance(exc, gaierror),
                "memory_error": _isinstance(exc, memory_error),
                "runtime_error": _isinstance(exc, runtime_error),
            }
        except _base_exception:  # noqa: BLE001 - an exception object that fights being read
            answer = {"type": "Exception", "message": "(it could not be described)", "where": "callee"}


# --- the case process -------------------------------------------------------------------------


def _sender(fd: int) -> Generator[None, tuple[bytes, bytes], None]:
    """Send it (kind, body): it writes one hand-back on `fd`, then stops this process until the
    harness resumes it (for a repeated call) or kills it. A process the sample forked, returning
    through these frames, never writes: it exits."""
    write, pack, view, kill, pid, stop = os.write, struct.Struct("<4scQ").pack, memoryview, os.kill, os.getpid(), signal.SIGSTOP
    magic, _len, getpid, exit_now = MAGIC, len, os.getpid, os._exit
    while True:
        kind, body = yield
        if getpid() != pid:
            exit_now(0)
        data = view(pack(magic, kind, _len(body)) + body)
        while data:
            data = data[write(fd, data):]
        del data
        kill(pid, stop)


# --- running a driver -------------------------------------------------------------------------

# Of the case's CPU budget, the share a driver may spend before it is stopped so that what it called until then is
# handed back (past the budget the harness kills the process, and nothing comes back).
DRIVER_SHARE = 0.75


DRIVER_ENVIRONMENT = {"WANDB_MODE": "disabled", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                      "HF_DATASETS_OFFLINE": "1", "MPLBACKEND": "Agg"}


class _DriverCut(BaseException):
    """Raised by our timer in a driver that ran past its share of the budget; not an Exception, so few catch it."""


def _prepare_driver(request: dict) -> None:
    """The interpreter as the repository's own tools would have it: its root and the driver's folder on `sys.path`
    (as `python -m pytest` or `python examples/x.py` from the root puts them), its environment after the runner's
    packages, stand-ins for what is missing, `sys.argv` the driver's own."""
    root = request["snapshot"]
    here = os.path.dirname(os.path.join(root, request["driver"]["path"]))
    for directory in reversed(list(dict.fromkeys([here, root]))):
        if directory not in sys.path:
            sys.path.insert(0, directory)
    _as_written_for(request)
    from paperproof.fixtures import pretrained, standins

    standins.install(pretrained.AFTER_IMPORT)  # planted datasets and random-weight models for downloads, loops shortened
    copy = _working_copy(root)
    if copy is not None:  # where its authors ran it: a notebook from its folder, the rest from the root
        folder = os.path.dirname(request["driver"]["path"]) if request["driver"]["kind"] == "notebook" else ""
        os.chdir(os.path.join(copy, folder))
    from paperproof.fixtures import local_files

    local_files.install()  # the folders it writes into and the array files it reads that its authors had
    sys.argv = [os.path.join(root, request["driver"]["path"])]
    # The sandbox has no network: experiment trackers log nothing and model hubs answer from their (empty) cache at
    # once, instead of a driver failing on a login or waiting on a connection it cannot open.
    for name, value in DRIVER_ENVIRONMENT.items():
        os.environ.setdefault(name, value)


MAX_COPIED = 20_000  # files of a checkout linked into a driver's working copy; a larger one runs in scratch


def _working_copy(root: str) -> str | None:
    """The checkout as a tree of folders in the scratch folder, each file a link to the read-only original: a
    driver's relative paths (`../lib`, `./results/run.pkl`, `data/train.csv`) resolve as in its authors' checkout,
    and what it writes lands in scratch. None when the checkout has more files than `MAX_COPIED`."""
    copy, made = os.path.join(os.getcwd(), "checkout"), 0
    try:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".git"]
            here = os.path.join(copy, os.path.relpath(folder, root))
            os.makedirs(here, exist_ok=True)
            for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
                made += 1
                if made > MAX_COPIED:
                    return None
                os.symlink(os.path.join(folder, name), os.path.join(here, name))
            dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
    except OSError:
        return None
    return copy


class _PytestFailures:
    """The first failure pytest reported while running a test driver (collecting it, setting it up, running it),
    as one line: why it failed, which pytest's exit code does not say."""

    def __init__(self) -> None:
        self.first: str | None = None

    def _saw(self, report: object, stage: str) -> None:
        if self.first is None and getattr(report, "failed", False):
            lines = [line.strip() for line in str(getattr(report, "longrepr", "")).splitlines() if line.strip()]
            said = [line[1:].strip() for line in lines if line.startswith("E ")]
            why = (said or lines or ["no detail"])[-1]
            self.first = f"{stage} {getattr(report, 'nodeid', '') or 'the test'} failed: {why}"[:300]

    def pytest_collectreport(self, report: object) -> None:
        self._saw(report, "collecting")

    def pytest_runtest_logreport(self, report: object) -> None:
        self._saw(report, getattr(report, "when", "running"))


def _argparse_refusals() -> list[str]:
    """What argparse refused of a driver's command line (a required option, say), in the order it did: the
    reason a script exits 2 before reaching anything."""
    import argparse

    refused: list[str] = []
    error = argparse.ArgumentParser.error

    def refuse(self: argparse.ArgumentParser, message: str) -> NoReturn:
        refused.append(message)
        error(self, message)

    argparse.ArgumentParser.error = refuse  # type: ignore[method-assign]
    return refused


def _module_name(path: str) -> str | None:
    """The dotted name of a script that lies in a package (its folder has an `__init__.py`), its top package's
    parent put on `sys.path`; None for a plain script."""
    folder, parts = os.path.dirname(path), [os.path.splitext(os.path.basename(path))[0]]
    while os.path.isfile(os.path.join(folder, "__init__.py")):
        parts.insert(0, os.path.basename(folder))
        folder = os.path.dirname(folder)
    if len(parts) == 1:
        return None
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return ".".join(parts)


def _run_driver(request: dict, cpu_seconds: float, wall_seconds: float = 0.0) -> str:
    """Run the driver under the tracer (`runner.tracer`) until it ends or spends its share of the budget; how it
    ended and every call it made into the repository's code, as JSON. The share is of CPU time, with the same share
    of the case's wall-clock backstop beside it: a driver waiting on a process it forked spends no CPU time of its
    own while that process spends the case's, and what it called before must still come back."""
    import json
    import time

    from paperproof.runner.tracer import Tracer

    driver, root = request["driver"], request["snapshot"]
    path = os.path.join(root, driver["path"])
    share = cpu_seconds * DRIVER_SHARE
    cut = []

    def stop(signum, _frame):
        cut.append(signum)
        raise _DriverCut(f"stopped after {share:.0f} s of CPU time")

    ended, error = "returned", None
    refused = _argparse_refusals()
    start = time.process_time()
    previous = signal.signal(signal.SIGPROF, stop)
    previous_alarm = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_PROF, share)
    if wall_seconds > 0:
        signal.setitimer(signal.ITIMER_REAL, wall_seconds * DRIVER_SHARE)
    tracer = Tracer(root, owners=set(request.get("entry_files") or ()))
    try:
        with tracer:
            if driver["kind"] == "test":
                import pytest

                failures = _PytestFailures()
                code = pytest.main([os.path.join(root, driver["target"]), "-q", "-x", "--no-header", "-p",
                                    "no:cacheprovider", "-o", "addopts=", "--rootdir", root, "-W", "ignore"],
                                   plugins=[failures])
                ended = "passed" if int(code) == 0 else f"pytest exit {int(code)}"
                error = failures.first
            elif driver.get("code") is not None:  # a notebook's cells, a README block after the blocks before it
                namespace = {"__name__": "__main__"}
                for block in driver.get("setup") or ():
                    try:
                        exec(compile(block, path, "exec", dont_inherit=True), namespace)  # noqa: S102
                    except Exception:  # noqa: BLE001, S110 - a shell line or a sketch before the block that runs
                        pass
                exec(compile(driver["code"], path, "exec", dont_inherit=True), namespace)  # noqa: S102
            else:
                import runpy

                module = _module_name(path)
                if module is None:
                    runpy.run_path(path, run_name="__main__")
                else:  # a module of a package, as `python -m` runs it: its relative imports resolve
                    runpy.run_module(module, run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        ended = "returned" if exc.code in (None, 0) else f"exited {str(exc.code)[:80]}"
        if refused and exc.code not in (None, 0):
            error = f"its argparse options were refused: {refused[-1][:240]}"
    except BaseException as exc:  # noqa: BLE001 - the driver's own failure is what the record says
        ended, error = "raised", f"{type(exc).__name__}: {str(exc)[:300]}"
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous)
        signal.signal(signal.SIGALRM, previous_alarm)
    if cut and cut[0] == signal.SIGALRM:
        ended, error = "cut", ("stopped at its share of the case's budget, spent by the processes it started or by "
                               "waiting on them")
    elif cut:
        ended, error = "cut", f"stopped after {share:.0f} s of CPU time, its share of the budget"
    from paperproof.fixtures.standins import planted_sets, used

    report = {"ended": ended, "error": error, "cpu_seconds": round(time.process_time() - start, 3),
              "replaced": sorted(set(used)), **tracer.report(), **_scores_on_planted(tracer, planted_sets)}
    return json.dumps(report, default=str)


MAX_VALUED = 16  # code objects whose per-sample results on a planted set are handed back as values


def _scores_on_planted(tracer: object, planted_sets: dict) -> dict:
    """The values of what the driver's calls returned one per sample of a planted stand-in (a vector as long as a
    planted set), first call of each code object, with the planted samples of those sets: so that a score the
    repository's own pipeline computed is judged on what was planted. Empty when no stand-in was used."""
    sizes = {n: kinds for n, kinds in planted_sets.items() if kinds is not None}
    if not sizes:
        return {}
    import numpy as np

    values: dict[str, list[float]] = {}
    for key, seen in getattr(tracer, "observed", {}).items():
        for _, result in seen.replay:
            try:
                plain = result.detach().cpu() if callable(getattr(result, "detach", None)) else result
                vector = np.asarray(plain, dtype=float)
            except Exception:  # noqa: BLE001 - anything the repository returned: not a vector of numbers
                continue
            if vector.ndim == 2 and 1 in vector.shape:
                vector = vector.ravel()
            if vector.ndim == 1 and len(vector) in sizes and np.isfinite(vector).any():
                values[key] = [round(float(v), 6) for v in vector]
                break
        if len(values) >= MAX_VALUED:
            break
    used_sizes = {len(v) for v in values.values()}
    return {"values": values, "planted": {str(n): sizes[n] for n in sorted(used_sizes)}} if values else {}


def run(request: dict, plan: dict, fd: int) -> None:
    """Define the entry, make the plan's calls (one, or two for a repeated case), hand back each
    result on `fd`; or, for a driver, run it and hand back what it called. Never returns: the harness ends this
    process."""
    if plan["how"] == "driver":
        _drive(request, plan, fd)
    entry_file = os.path.join(request["snapshot"], request["path"])
    exit_now, _base = os._exit, BaseException
    from paperproof.runner.protocols import drive  # the training-run driver, bound before sample code runs

    call = caller()
    next(call)
    protocols = _protocols(call.send, drive)
    next(protocols)
    invoke = protocols.send
    packer = _packer(int(plan["cap"]))
    next(packer)
    pack = packer.send
    describer = _describer(entry_file, request["name"])
    next(describer)
    describe = describer.send
    sender = _sender(fd)
    next(sender)
    send = sender.send
    calls, how, kind_is_class = list(plan["calls"]), plan["how"], request["kind"] == "class"
    try:
        target, loaded = _define(request)
    except _base as exc:  # noqa: BLE001 - anything the module does at definition time
        send((b"D", pack(describe((exc, False)))[1]))
        exit_now(0)
    send((b"L", pack(loaded)[1]))  # how it was loaded: the first hand-back, before any call's
    binding = not kind_is_class and not _binds(target, plan)
    for job in calls:
        value, error = invoke((target, how, job))
        if error is None:
            message = pack(value)
        else:
            message = (b"E", pack(describe((error, binding)))[1])
        value = error = None
        send(message)
    exit_now(0)


def _drive(request: dict, plan: dict, fd: int) -> None:
    """A driver's run: one hand-back saying it was set up, then one carrying its trace as text (JSON the harness
    parses and bounds). Never returns."""
    packer = _packer(int(plan["cap"]))
    next(packer)
    sender = _sender(fd)
    next(sender)
    send, pack, exit_now = sender.send, packer.send, os._exit
    _prepare_driver(request)
    send((b"L", pack(f"ran the repository's {request['driver']['kind']} {request['driver']['target']}"[:400])[1]))
    send(pack(_run_driver(request, float(plan["cpu_seconds"]), float(plan.get("wall_seconds", 0)))))
    exit_now(0)
