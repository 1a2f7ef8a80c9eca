"""Run the PyPI Agda with GHC runtime options: ``python -I _agda_launch.py +RTS <opts> -RTS <args>``.

Why: the PyPI package's ``agda`` is a Python script that calls ``hs_init`` then ``hs_agda_main``
in ``agda/_binding*.so``; its runtime was linked without ``-rtsopts`` ("Most RTS options are
disabled"), so nothing on its command line can enlarge the garbage collector's nursery, and on a
judgment that imports agda-stdlib the collector takes about 45 % of the time with the defaults.
This script starts the same runtime the way ``-with-rtsopts`` would: it copies the runtime's
``defaultRtsConfig``, points its ``rts_opts`` field at the options of the leading
``+RTS ... -RTS`` block and calls ``hs_init_ghc`` with that copy (options given there are
processed like ``-with-rtsopts``; ``rts_opts_enabled`` is left as the package built it, so any
other ``+RTS`` on the command line, and ``GHCRTS``, are treated exactly as by the plain script).

Defensive by construction: it runs as a plain script inside the sandbox (no assay import, only
the standard library and the venv mounted). When anything does not match what it was written for
(the package's files, the runtime's exported symbols, the size and the default contents of
``RtsConfig`` in GHC 9.6), it drops its ``+RTS`` block and runs the package's own entry point, so
the verdict is the same, only slower. ``--assay-check`` prints ``ok`` or why it would fall back.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

CONFIG_SYMBOL = "defaultRtsConfig"
CONFIG_SIZE = 0x70
"""``sizeof(RtsConfig)`` in GHC 9.6 on x86-64: an enum, an ``HsBool`` (8 bytes), ``rts_opts``
(a ``const char *`` at offset 16), two ``HsBool``, the eventlog writer and eight hooks."""
RTS_OPTS_OFFSET = 16
SAFE_ONLY = 3
"""``RtsOptsSafeOnly``: what the PyPI runtime was built with (checked, then left unchanged)."""
RTS_LIBRARY_PREFIX = "libHSrts-"
RTS_LIBRARY_GHC = "ghc9.6."


class _Mismatch(Exception):
    """Something is not what this launcher was written for: fall back to the plain script."""


def split_rts(argv: list[str]) -> tuple[list[str], list[str]]:
    """The leading ``+RTS ... -RTS`` block's options and the remaining arguments."""
    if not argv or argv[0] != "+RTS" or "-RTS" not in argv:
        return [], argv
    end = argv.index("-RTS")
    return argv[1:end], argv[end + 1 :]


def site_folders() -> list[str]:
    """Where this Python finds installed packages: ``sys.path`` (PYTHONPATH first, as an import
    would), then the site-packages ``site`` would add. The launcher runs with ``-S`` (no
    ``site``: a judgment pays this interpreter's start-up every time), so those are derived as
    ``site`` derives them: the environment of the running interpreter, then its prefix."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    environment = os.path.dirname(os.path.dirname(os.path.abspath(sys.executable)))
    derived = [
        os.path.join(prefix, "lib", version, "site-packages")
        for prefix in (environment, sys.prefix)
    ]
    return [folder for folder in [*sys.path, *derived] if folder]


def package_dir() -> str:
    """The installed ``agda`` package's folder, found without importing it (its import loads
    ``pkg_resources``, a tenth of a second) nor ``importlib.util`` and ``pathlib`` (tens of
    milliseconds of imports on every judgment)."""
    for folder in site_folders():
        candidate = os.path.join(folder, "agda")
        if os.path.isfile(os.path.join(candidate, "__main__.py")):
            return candidate
    raise _Mismatch("the agda package is not installed in this Python")


def _one(folder: str, prefix: str, suffix: str) -> str:
    found = sorted(
        name for name in os.listdir(folder) if name.startswith(prefix) and name.endswith(suffix)
    )
    if len(found) != 1:
        raise _Mismatch(f"{len(found)} files match {folder}/{prefix}*{suffix}")
    return os.path.join(folder, found[0])


def symbol_size(library: str | os.PathLike[str], name: str) -> int | None:
    """The size of ``name`` in ``library``'s dynamic symbol table (``nm -D -S``), read from the
    ELF file itself (64-bit little-endian only); None when it is not defined there."""
    with open(library, "rb") as file:
        data = file.read()
    label = os.path.basename(os.fspath(library))
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise _Mismatch(f"{label} is not a 64-bit little-endian ELF file")
    shoff, shentsize, shnum = (
        struct.unpack_from("<Q", data, 0x28)[0],
        *struct.unpack_from("<HH", data, 0x3A),
    )
    sections = [
        struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)
    ]
    dynsym = next((s for s in sections if s[1] == 11), None)  # SHT_DYNSYM
    if dynsym is None:
        raise _Mismatch(f"{label} has no dynamic symbol table")
    strings = sections[dynsym[6]]  # sh_link: its string table
    wanted = name.encode()
    for at in range(dynsym[4], dynsym[4] + dynsym[5], dynsym[9] or 24):
        st_name, _info, _other, shndx, _value, size = struct.unpack_from("<IBBHQQ", data, at)
        start = strings[4] + st_name
        if shndx != 0 and data[start : start + len(wanted) + 1] == wanted + b"\0":
            return int(size)
    return None


def runtime_files(package: str) -> tuple[str, str]:
    """The binding and the GHC 9.6 runtime it is linked with, checked: the runtime exports
    ``defaultRtsConfig`` of the expected size and ``hs_init_ghc``; the binding ``hs_agda_main``."""
    binding = _one(package, "_binding", ".so")
    runtime = _one(os.path.join(os.path.dirname(package), "agda.libs"), RTS_LIBRARY_PREFIX, ".so")
    name = os.path.basename(runtime)
    if RTS_LIBRARY_GHC not in name:
        raise _Mismatch(f"{name} is not GHC 9.6's runtime")
    size = symbol_size(runtime, CONFIG_SYMBOL)
    if size != CONFIG_SIZE:
        raise _Mismatch(f"{CONFIG_SYMBOL} is {size} bytes in {name}, not {CONFIG_SIZE}")
    if symbol_size(runtime, "hs_init_ghc") is None or symbol_size(binding, "hs_agda_main") is None:
        raise _Mismatch("hs_init_ghc or hs_agda_main is not exported")
    return binding, runtime


class _Config(ctypes.Structure):
    _fields_ = [("raw", ctypes.c_ubyte * CONFIG_SIZE)]


def tuned_main(options: list[str], args: list[str]) -> int:
    """Agda with ``options`` given to its runtime as ``-with-rtsopts`` would; _Mismatch (before
    the runtime starts) when anything is not as expected."""
    package = package_dir()
    binding_file, runtime_file = runtime_files(package)
    binding = ctypes.CDLL(binding_file)  # loads the runtime and Agda (its RPATH)
    runtime = ctypes.CDLL(runtime_file)  # the same, already loaded, object
    default = _Config.in_dll(runtime, CONFIG_SYMBOL)
    config = _Config()
    ctypes.memmove(ctypes.byref(config), ctypes.byref(default), CONFIG_SIZE)
    enabled, opts = struct.unpack_from("<iQ", bytes(config.raw[:8]) + bytes(config.raw[16:24]))
    if enabled != SAFE_ONLY or opts != 0:
        raise _Mismatch(f"unexpected default runtime configuration ({enabled}, {opts:#x})")
    text = ctypes.create_string_buffer(" ".join(options).encode())
    struct.pack_into("<Q", config.raw, RTS_OPTS_OFFSET, ctypes.addressof(text))
    # As the package's own script does (Agda reads this exact, mixed-case name).
    os.environ["Agda_datadir"] = os.path.join(package, "data")  # noqa: SIM112
    words = [os.fsencode(word) for word in ["agda", *args]]
    argc = ctypes.c_int(len(words))
    argv = (ctypes.c_char_p * (len(words) + 1))(*words, None)
    pointer = ctypes.pointer(argv)
    runtime.hs_init_ghc.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_void_p, _Config]
    runtime.hs_init_ghc.restype = None
    binding.hs_agda_main.restype = ctypes.c_int
    runtime.hs_init_ghc(ctypes.byref(argc), ctypes.byref(pointer), config)
    try:
        return int(binding.hs_agda_main())
    finally:
        runtime.hs_exit()


def check() -> str:
    """``ok`` when the tuned start would be used here, else why not (nothing is run)."""
    try:
        runtime_files(package_dir())
    except (_Mismatch, OSError, struct.error, StopIteration) as exc:
        return f"fallback: {exc}"
    return "ok"


def plain_main(args: list[str]) -> int:
    """The package's own entry point, exactly as its ``agda`` script runs it."""
    if sys.flags.no_site:  # started with -S: the package is found as the script finds it
        import site

        site.main()
    from agda.__main__ import main as agda_main  # type: ignore[import-untyped]

    sys.argv = ["agda", *args]
    agda_main()  # exits
    return 0  # pragma: no cover (agda_main always exits)


def main(argv: list[str]) -> int:
    """See the module's docstring."""
    if argv[:1] == ["--assay-check"]:
        print(check())
        return 0
    options, args = split_rts(argv)
    if options:
        try:
            return tuned_main(options, args)
        except (_Mismatch, OSError, AttributeError, ValueError, struct.error, StopIteration):
            pass  # silently: Agda's output must be the plain script's (it is read for holes)
    return plain_main(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
